/// The simplest possible undo history: every version kept whole, with string tags. The
/// randomized tests check the real histories against it after every operation.
public struct FullCopyHistory<Value> {
    struct Scope {
        var versions: [(value: Value, tag: String?)]
        var position: Int
    }

    private var scopes: [Scope]
    private let same: (Value, Value) -> Bool
    private var maximumVersions: Int?
    private var slack: Int

    /// A history whose only version is `value`; `same` decides when two versions are equal.
    ///
    /// With `maximumVersions`, an append that leaves more than it and `slack` versions drops
    /// the oldest down to it: the oldest versions of the root scope first, then the furthest
    /// redo versions of the current scope.
    public init(
        _ value: Value, maximumVersions: Int? = nil, slack: Int = 0, same: @escaping (Value, Value) -> Bool
    ) {
        scopes = [Scope(versions: [(value, nil)], position: 0)]
        self.same = same
        self.maximumVersions = maximumVersions
        self.slack = slack
    }

    /// The versions kept besides each scope's first.
    public var versionCount: Int { scopes.reduce(0) { $0 + $1.versions.count - 1 } }

    public var level: Int { scopes.count - 1 }
    public var current: Value { scopes[level].versions[scopes[level].position].value }
    public var hasUndo: Bool { scopes[level].position > 0 }
    public var hasRedo: Bool { scopes[level].position < scopes[level].versions.count - 1 }
    public var tags: (undo: [String?], redo: [String?]) {
        let scope = scopes[level]
        return (
            scope.versions[...scope.position].map(\.tag), scope.versions[(scope.position + 1)...].map(\.tag)
        )
    }

    public mutating func append(_ value: Value, tag: String?) {
        if same(value, current) {
            if let tag { self.tag(tag) }
            return
        }
        scopes[level].versions.removeSubrange((scopes[level].position + 1)...)
        scopes[level].versions.append((value, tag))
        scopes[level].position += 1
        dropOverLimit()
    }

    private mutating func dropOverLimit() {
        guard let maximumVersions, versionCount > maximumVersions + slack else { return }
        var excess = versionCount - maximumVersions
        while excess > 0, scopes[0].position > 0 {
            scopes[0].versions.removeFirst()
            scopes[0].position -= 1
            excess -= 1
        }
        while excess > 0, hasRedo {
            scopes[level].versions.removeLast()
            excess -= 1
        }
    }

    /// Makes `maximumVersions` the limit, with `slack` for later appends: the versions over it
    /// are dropped at once, with no slack, as by ``append(_:tag:)``.
    public mutating func setMaximumVersions(_ maximumVersions: Int?, slack: Int) {
        (self.maximumVersions, self.slack) = (maximumVersions, 0)
        dropOverLimit()
        self.slack = slack
    }

    public mutating func tag(_ tag: String) { scopes[level].versions[scopes[level].position].tag = tag }
    public mutating func undo() { if hasUndo { scopes[level].position -= 1 } }
    public mutating func redo() { if hasRedo { scopes[level].position += 1 } }

    public mutating func undo(to tag: String) {
        if let index = scopes[level].versions[...scopes[level].position].lastIndex(where: { $0.tag == tag }) {
            scopes[level].position = index
        }
    }

    public mutating func redo(to tag: String) {
        let scope = scopes[level]
        if let index = scope.versions[(scope.position + 1)...].firstIndex(where: { $0.tag == tag }) {
            scopes[level].position = index
        }
    }

    public mutating func push() { scopes.append(Scope(versions: [(current, nil)], position: 0)) }

    public mutating func pop() {
        guard level > 0 else { return }
        let scope = scopes.removeLast()
        let value = scope.versions[scope.position].value
        if !same(value, current) {
            append(value, tag: scope.position > 0 ? scope.versions[scope.position].tag : nil)
        }
    }

    /// Every version kept, of every scope (a scope's first is the version the scope started
    /// from).
    public var versions: [Value] { scopes.flatMap { $0.versions.map(\.value) } }

    /// Makes `change` to every version kept, as a change made without tracking reaches every
    /// version undo and redo go to when no step changes what it changes.
    public mutating func changeEveryVersion(_ change: (inout Value) -> Void) {
        for scope in scopes.indices {
            for version in scopes[scope].versions.indices { change(&scopes[scope].versions[version].value) }
        }
    }

    public mutating func undoAndPop() {
        guard level > 0 else { return }
        scopes.removeLast()
    }
}
