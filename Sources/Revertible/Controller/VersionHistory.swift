/// The undo/redo state of one value: a stack of scopes, each with its undo and redo steps and
/// the tags of its versions.
///
/// A pure value type: every operation either completes or throws and leaves the history as it
/// was (operations run on a copy that replaces `self` only on success). ``VersioningController``
/// adds tracking modes, errors, debouncing and observation on top of it; Keepsake's durable
/// controller stores it.
public struct VersionHistory<Value: Versionable> {
    /// One version of a scope: the reversion back to the version before it, and its tag.
    public struct Step {
        /// Reverts this version to the one before it.
        public var reversion: Reversion<Value>
        /// The tag of this version, if any.
        public var tag: VersionTag?
    }

    /// One scope: the versions made since it was pushed.
    public struct Scope {
        /// The tag of the scope's first version (the value when the scope was pushed).
        public var baseTag: VersionTag?
        /// The value when the scope was pushed, which ``VersionHistory/undoAndPopScope()``
        /// returns to and ``VersionHistory/popScope()`` squashes against; `nil` for the root
        /// scope, which is never popped (so the first value is not kept alive by it).
        public var start: Value?
        /// Versions after the first, oldest first; the last is the current version.
        public var undo: [Step]
        /// Undone versions, the next to redo last.
        public var redo: [Step]
    }

    /// The stacks' sizes, kept as the stacks change. Reading them from ``scopes`` in code not
    /// specialized for `Value` (the controller's) looks up the metadata of the scope, step and
    /// array types on every read: a few thousand instructions an append, more than the diff of
    /// a small value. Declared first, so that its place does not depend on `Value`'s size.
    private var counts = StackCounts()
    /// The current version. (Set only through the operations; tests set it directly to build a
    /// history whose steps no longer apply, which ``replaceCurrent(with:)`` refuses to.)
    public internal(set) var current: Value
    /// The scopes, the root scope first; never empty.
    public private(set) var scopes: [Scope]
    /// The most versions kept across all scopes (undo and redo steps); the oldest undo steps of
    /// the root scope are dropped first, then the furthest redo steps of the current scope, as a
    /// durable history does. Steps inside an inner scope are not dropped: popping the scope
    /// squashes them into one. `nil` keeps every version.
    ///
    /// Appends drop the oldest versions in batches: once the history holds an eighth of the
    /// limit more than it (1,125 versions under a limit of 1,000), it drops back to the limit
    /// at once. Dropping one per append would move the whole stack, every append, once the
    /// limit is reached. Setting the limit drops down to it at once.
    ///
    /// A limit of 0 keeps no version besides the current one: nothing to undo or redo. A limit
    /// below 0 is kept as 0. (Unlike `UndoManager`'s `levelsOfUndo`, 0 does not mean "no
    /// limit": `nil` does.)
    public var maximumVersions: Int? {
        didSet {
            if maximumVersions != Self.keptLimit(maximumVersions) {
                maximumVersions = Self.keptLimit(maximumVersions)
            }
            enforceLimit(allowingSlack: false)
        }
    }

    /// Starts a history whose only version is `value`.
    ///
    /// - Parameters:
    ///   - value: The first version.
    ///   - maximumVersions: The most versions kept; `nil` for no limit, 0 or less for none
    ///     besides the current version.
    public init(_ value: Value, maximumVersions: Int? = nil) {
        current = value
        scopes = [Scope(baseTag: nil, start: nil, undo: [], redo: [])]
        self.maximumVersions = Self.keptLimit(maximumVersions)
    }

    /// The limit kept for `maximumVersions`: a limit below 0 is 0 (no version besides the
    /// current one); `nil` stays no limit.
    package static func keptLimit(_ maximumVersions: Int?) -> Int? {
        maximumVersions.map { max($0, 0) }
    }

    /// The 0-based level of the current scope.
    public var scopeLevel: Int {
        @inline(__always) get { counts.level }
    }
    /// Whether the current scope has a version to undo to.
    public var hasUndo: Bool {
        @inline(__always) get { counts.undo > 0 }
    }
    /// Whether the current scope has a version to redo to.
    public var hasRedo: Bool {
        @inline(__always) get { counts.redo > 0 }
    }
    /// The number of versions the current scope can undo to.
    public var undoCount: Int {
        @inline(__always) get { counts.undo }
    }
    /// The number of versions the current scope can redo to.
    public var redoCount: Int {
        @inline(__always) get { counts.redo }
    }
    /// The number of undo and redo steps kept in all scopes.
    public var versionCount: Int {
        @inline(__always) get { counts.versions }
    }
    /// The current version's tag.
    public var currentTag: VersionTag? {
        let scope = scopes[scopeLevel]
        return scope.undo.isEmpty ? scope.baseTag : scope.undo[scope.undo.count - 1].tag
    }

    /// Records `value` as a new version when it differs from the current one, and clears redo.
    ///
    /// - Parameters:
    ///   - value: The new version.
    ///   - tag: A tag for the new version (or, when nothing changed, for the current one).
    /// - Returns: The reversion recorded, or `nil` when nothing changed.
    /// - Complexity: The cost of ``Revertible/reversion(to:)``.
    @discardableResult
    public mutating func append(_ value: Value, tag: VersionTag? = nil) -> Reversion<Value>? {
        guard let reversion = value.reversion(to: current) else {
            if let tag { self.tag(tag) }
            return nil
        }
        push(reversion, resulting: value, tag: tag)
        return reversion
    }

    /// Records an already computed reversion from the current version to `value`.
    ///
    /// - Parameters:
    ///   - reversion: Reverts `value` to ``current``.
    ///   - value: The new version.
    ///   - tag: A tag for the new version.
    public mutating func push(_ reversion: Reversion<Value>, resulting value: Value, tag: VersionTag? = nil) {
        scopes[scopeLevel].undo.append(Step(reversion: reversion, tag: tag))
        scopes[scopeLevel].redo.removeAll()
        counts.versions += 1 - counts.redo
        counts.undo += 1
        counts.redo = 0
        current = value
        enforceLimit(allowingSlack: true)
    }

    /// Replaces the current version without recording a step: the change cannot be undone.
    ///
    /// Undo steps check only the paths they change, so they still apply as long as the new
    /// value differs from the old one elsewhere; a value that changes a path a step of any
    /// scope changes (its undo or its redo would no longer apply) is refused, and nothing
    /// changes. Accepted, it would leave that step refusing for good, as a durable history
    /// refuses it. The value each open scope started from takes the change too, so that
    /// ending a scope does not squash it into an undoable step, nor discarding one take it
    /// back (as a durable history, which computes a scope's start by undoing its steps, has
    /// it).
    ///
    /// - Parameter value: The new current version.
    /// - Throws: ``ReversionError`` of the first step that would not apply from `value`,
    ///   walking each scope's steps as ``checkInvariants()`` does; nothing changes.
    /// - Complexity: O(steps), plus a copy of the value and a diff against each open scope's
    ///   start: it is meant for rare changes, such as a server's.
    public mutating func replaceCurrent(with value: Value) throws(ReversionError) {
        var replaced = self
        if scopes.count > 1, let change = value.reversion(to: current)?.inverse {
            for level in scopes.indices.dropFirst() {
                // A start the change does not apply to (the scope's own steps changed the same
                // paths) is left as it was, and the walk below refuses the value.
                if var start = scopes[level].start, (try? change.revert(&start)) != nil {
                    replaced.scopes[level].start = start
                }
            }
        }
        replaced.current = value
        try replaced.checkSteps()
        self = replaced
    }

    /// Goes back one version in the current scope.
    ///
    /// - Returns: The step undone, or `nil` when there is nothing to undo.
    /// - Throws: ``ReversionError`` when the stored reversion does not apply; nothing changes.
    @discardableResult
    public mutating func undo() throws(ReversionError) -> Step? {
        guard let step = scopes[scopeLevel].undo.last else { return nil }
        try undo(count: 1)
        return step
    }

    /// Goes forward one version in the current scope.
    ///
    /// - Returns: The step redone, or `nil` when there is nothing to redo.
    /// - Throws: ``ReversionError`` when the stored reversion does not apply; nothing changes.
    @discardableResult
    public mutating func redo() throws(ReversionError) -> Step? {
        guard let step = scopes[scopeLevel].redo.last else { return nil }
        try redo(count: 1)
        return step
    }

    /// Goes back `count` versions of the current scope (fewer when it has fewer).
    ///
    /// The reversions are applied to the current value in place, so a change to one element of
    /// a large array costs O(change), not a copy of the value.
    ///
    /// - Parameter count: How many versions to undo.
    /// - Throws: ``ReversionError`` when a reversion does not apply; nothing changes. (A type
    ///   whose `==` refuses a reversion it has just applied, going back, leaves the history
    ///   moved that far, its value and stacks agreeing.)
    /// - Complexity: O(`count`) plus the cost of the reversions.
    public mutating func undo(count: Int) throws(ReversionError) {
        try move(count, undoing: true)
    }

    /// Goes forward `count` versions of the current scope (fewer when it has fewer).
    ///
    /// - Parameter count: How many versions to redo.
    /// - Throws: ``ReversionError`` when a reversion does not apply; nothing changes (but for a
    ///   value whose `==` disagrees with itself, see ``undo(count:)``).
    /// - Complexity: O(`count`) plus the cost of the reversions.
    public mutating func redo(count: Int) throws(ReversionError) {
        try move(count, undoing: false)
    }

    /// Moves up to `count` steps of the current scope from one stack to the other, newest
    /// first — undo steps to the redo stack when `undoing`, else back — reverting the current
    /// value in place through each step (through its inverse when redoing). When one does not
    /// apply, those already applied are taken back, and nothing changes; if one of those is
    /// refused going back, the move stops there, as far as it got.
    ///
    /// Indices and single-step moves, not slices, lazy maps and `append(contentsOf:)`: in
    /// code not specialized for `Value`, those look up several types' metadata on each call
    /// (an undo of one step cost four times what it costs now).
    private mutating func move(_ count: Int, undoing: Bool) throws(ReversionError) {
        let level = scopeLevel
        var moved = min(max(count, 0), undoing ? counts.undo : counts.redo)
        var failure: ReversionError?
        do {
            // Scoped, so that this second reference to the stack is gone before the moves
            // below: kept, it would make the first removal copy the whole stack.
            let stack = undoing ? scopes[level].undo : scopes[level].redo
            func reversion(_ offset: Int, forward: Bool) -> Reversion<Value> {
                let reversion = stack[stack.count - 1 - offset].reversion
                return forward == undoing ? reversion : reversion.inverse
            }
            var applied = 0
            do throws(ReversionError) {
                while applied < moved {
                    try reversion(applied, forward: true).revert(&current)
                    applied += 1
                }
            } catch {
                // Back to where the move started. A reversion refused right after it applied (a
                // type whose `==` disagrees with itself over time) leaves the history where it
                // stands instead: moved that far, its value and stacks still agreeing.
                while applied > 0 {
                    do throws(ReversionError) {
                        try reversion(applied - 1, forward: false).revert(&current)
                        applied -= 1
                    } catch { break }
                }
                failure = error
                moved = applied
            }
        }
        for _ in 0..<moved {
            if undoing {
                scopes[level].redo.append(scopes[level].undo.removeLast())
            } else {
                scopes[level].undo.append(scopes[level].redo.removeLast())
            }
        }
        counts.undo += undoing ? -moved : moved
        counts.redo += undoing ? moved : -moved
        if let failure { throw failure }
    }

    /// Undoes until the current version is the nearest earlier one tagged `tag`.
    ///
    /// Nothing happens when no version of the current scope up to the current one has the tag.
    ///
    /// - Returns: The number of versions undone.
    /// - Throws: ``ReversionError`` when a reversion does not apply; nothing changes.
    @discardableResult
    public mutating func undo(to tag: VersionTag) throws(ReversionError) -> Int {
        let scope = scopes[scopeLevel]
        let tags = [scope.baseTag] + scope.undo.map { $0.tag }
        guard let target = tags.lastIndex(of: tag) else { return 0 }
        let count = scope.undo.count - target
        try undo(count: count)
        return count
    }

    /// Redoes until the current version is the nearest later one tagged `tag` (the tagged
    /// change included).
    ///
    /// Nothing happens when no undone version of the current scope has the tag.
    ///
    /// - Returns: The number of versions redone.
    /// - Throws: ``ReversionError`` when a reversion does not apply; nothing changes.
    @discardableResult
    public mutating func redo(to tag: VersionTag) throws(ReversionError) -> Int {
        let redo = scopes[scopeLevel].redo
        guard let target = redo.lastIndex(where: { $0.tag == tag }) else { return 0 }
        let count = redo.count - target
        try self.redo(count: count)
        return count
    }

    /// Tags the current version, replacing its tag.
    ///
    /// - Parameter tag: The tag, or `nil` to remove it.
    public mutating func tag(_ tag: VersionTag?) {
        if scopes[scopeLevel].undo.isEmpty {
            scopes[scopeLevel].baseTag = tag
        } else {
            scopes[scopeLevel].undo[scopes[scopeLevel].undo.count - 1].tag = tag
        }
    }

    /// The tags of a scope's versions: up to and including the current one, and after it.
    ///
    /// - Parameter level: The scope level; the current scope when `nil`.
    /// - Returns: One entry per version, `nil` for an untagged one.
    public func tags(inScopeLevel level: Int? = nil) -> (undo: [VersionTag?], redo: [VersionTag?]) {
        let scope = scopes[level ?? scopeLevel]
        return ([scope.baseTag] + scope.undo.map { $0.tag }, scope.redo.reversed().map { $0.tag })
    }

    /// Starts a new scope whose first version is the current one.
    public mutating func pushScope() {
        scopes.append(Scope(baseTag: nil, start: current, undo: [], redo: []))
        counts.level += 1
        counts.undo = 0
        counts.redo = 0
    }

    /// Ends the current scope, squashing its net change into one version of the parent.
    ///
    /// - Returns: The squashed reversion, or `nil` when the scope changed nothing (or the
    ///   current scope is the root, which cannot be popped).
    @discardableResult
    public mutating func popScope() -> Reversion<Value>? {
        guard scopeLevel > 0 else { return nil }
        let scope = removeLastScope()
        guard let start = scope.start, let reversion = current.reversion(to: start) else { return nil }
        push(reversion, resulting: current, tag: scope.undo.last?.tag)
        return reversion
    }

    /// Ends the current scope and returns to the value it started from.
    ///
    /// - Returns: `false` when the current scope is the root.
    @discardableResult
    public mutating func undoAndPopScope() -> Bool {
        guard scopeLevel > 0, let start = removeLastScope().start else { return false }
        current = start
        return true
    }

    /// Removes the current scope, whose parent becomes the current one.
    private mutating func removeLastScope() -> Scope {
        let scope = scopes.removeLast()
        let parent = scopes[scopes.count - 1]
        counts.versions -= scope.undo.count + scope.redo.count
        counts.level -= 1
        counts.undo = parent.undo.count
        counts.redo = parent.redo.count
        return scope
    }

    /// The versions a history may hold over `limit` before an append drops back to it: an
    /// eighth of it, so that the stacks are moved once per `limit / 8` appends. A durable
    /// history folds by the same rule.
    package static func slack(over limit: Int) -> Int { limit / 8 }

    /// Drops the oldest versions down to the limit, when the history holds more than it (and
    /// its slack, when `allowingSlack`).
    private mutating func enforceLimit(allowingSlack: Bool) {
        guard let maximumVersions else { return }
        var excess = versionCount - maximumVersions
        guard excess > (allowingSlack ? Self.slack(over: maximumVersions) : 0) else { return }
        let dropped = min(excess, scopes[0].undo.count)
        if dropped > 0 {
            scopes[0].baseTag = scopes[0].undo[dropped - 1].tag
            scopes[0].undo.removeFirst(dropped)
            counts.versions -= dropped
            if counts.level == 0 { counts.undo -= dropped }
            excess -= dropped
        }
        // Only redo steps remain over the limit: drop the furthest ones of the current scope.
        if excess > 0 {
            let redone = min(excess, counts.redo)
            scopes[scopeLevel].redo.removeFirst(redone)
            counts.versions -= redone
            counts.redo -= redone
        }
    }

    /// Checks the history's own invariants; for tests.
    ///
    /// Reverting the current value through every undo step of every scope (innermost first)
    /// must reach each scope's start, and redoing must come back.
    ///
    /// - Throws: ``ReversionError`` from the first step that does not apply.
    public func checkInvariants() throws(ReversionError) {
        precondition(!scopes.isEmpty, "a history always has a root scope")
        let recounted = StackCounts(
            versions: scopes.reduce(0) { $0 + $1.undo.count + $1.redo.count }, level: scopes.count - 1,
            undo: scopes[scopes.count - 1].undo.count, redo: scopes[scopes.count - 1].redo.count)
        guard counts == recounted else {
            throw .wrongVersion(path: [], reason: "the stacks hold \(recounted), but \(counts) were counted")
        }
        try checkSteps()
    }

    /// Walks every scope from the current value, innermost first: its redo steps must redo
    /// and its undo steps undo, down to the value the scope started from.
    private func checkSteps() throws(ReversionError) {
        var value = current
        for scope in scopes.reversed() {
            var forward = value
            for step in scope.redo.reversed() { try step.reversion.inverse.revert(&forward) }
            for step in scope.undo.reversed() { try step.reversion.revert(&value) }
            if let start = scope.start, value.reversion(to: start) != nil {
                throw .wrongVersion(path: [], reason: "undoing a scope does not reach its start")
            }
        }
    }
}

extension VersionHistory: Sendable where Value: Sendable {}
extension VersionHistory.Step: Sendable where Value: Sendable {}
extension VersionHistory.Scope: Sendable where Value: Sendable {}

/// The sizes of a history's stacks (not nested in the generic type, so that using it needs no
/// metadata looked up).
struct StackCounts: Equatable, Sendable, CustomStringConvertible {
    /// Undo and redo steps in all scopes.
    var versions = 0
    /// The current scope's level.
    var level = 0
    /// The current scope's undo steps.
    var undo = 0
    /// The current scope's redo steps.
    var redo = 0

    var description: String { "\(versions) versions (level \(level): \(undo) undo, \(redo) redo)" }
}
