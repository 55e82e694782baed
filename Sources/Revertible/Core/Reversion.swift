/// The changes between two versions of a value, which turn the later version back into the
/// earlier one.
///
/// A reversion holds only the changed leaves, each at its ``PathDescriptor``. It checks before
/// it changes anything: reverting a value that is not the version it was made from throws
/// ``ReversionError/wrongVersion(path:reason:)`` and leaves the value untouched. The check reads
/// only the changed paths.
///
/// ```swift
/// var user = User(name: "", imageData: Data())
/// let original = user
/// user.name = "Johnny"
/// let reversion1 = user.reversion(to: original)!
/// user.name = "Johnny Appleseed"
/// let reversion2 = user.reversion(to: original.with(name: "Johnny"))!
///
/// try reversion2.revert(&user)  // "Johnny"
/// try reversion1.revert(&user)  // ""
/// ```
public struct Reversion<Root> {
    struct Change {
        let path: PathDescriptor
        let node: any EditNode<Root>
    }

    let changes: [Change]
    /// `false`: reverting turns the `.new` side into `.old`; `true` for an ``inverse``.
    let isInverse: Bool

    init(changes: [Change], isInverse: Bool = false) {
        self.changes = changes
        self.isInverse = isInverse
    }

    /// The paths of the changed leaves, in the order they are reverted.
    public var paths: [PathDescriptor] {
        isInverse ? changes.reversed().map { $0.path } : changes.map { $0.path }
    }

    /// The reversion that undoes this one: it turns the earlier version back into the later.
    ///
    /// Costs nothing: every change already records both sides.
    public var inverse: Reversion<Root> {
        Reversion(changes: changes, isInverse: !isInverse)
    }

    /// Turns `value` back into the version this reversion was made to.
    ///
    /// - Parameter value: The version the reversion was made from.
    /// - Throws: ``ReversionError/wrongVersion(path:reason:)`` when `value` differs from that
    ///   version at a changed path; `value` is then unchanged.
    /// - Complexity: O(changed leaves), plus O(*n*) for a trimmed `String` or `Data` leaf of
    ///   length *n*, whose content digest is checked.
    public func revert(_ value: inout Root) throws(ReversionError) {
        let expected: PatchSide = isInverse ? .old : .new
        for change in changes {
            if let reason = change.node.mismatch(in: value, expecting: expected) {
                throw .wrongVersion(path: change.path, reason: reason)
            }
        }
        if isInverse {
            for change in changes.reversed() { change.node.apply(to: &value, toward: .new) }
        } else {
            for change in changes { change.node.apply(to: &value, toward: .old) }
        }
    }

    /// Returns `value` reverted; see ``revert(_:)``.
    ///
    /// - Parameter value: The version the reversion was made from.
    /// - Returns: The earlier version.
    /// - Throws: ``ReversionError/wrongVersion(path:reason:)`` when `value` is not that version.
    public func reverted(_ value: Root) throws(ReversionError) -> Root {
        var copy = value
        try revert(&copy)
        return copy
    }

    /// This reversion, applied to `Parent` values through `keyPath`.
    ///
    /// ```swift
    /// let titleChange: Reversion<Activity> = activity.reversion(to: before)!
    /// let modelChange = titleChange.lifted(into: \Model.activity, at: ["activity"])
    /// modelChange.paths  // [activity.title]
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: Where a `Root` lives inside `Parent`.
    ///   - prefix: The path of `keyPath` in `Parent`, prepended to every change's path.
    /// - Returns: A reversion of `Parent`.
    public func lifted<Parent>(
        into keyPath: WritableKeyPath<Parent, Root>, at prefix: PathDescriptor
    ) -> Reversion<Parent> {
        Reversion<Parent>(
            changes: changes.map {
                .init(path: prefix.appending($0.path), node: PropertyNode(keyPath: keyPath, inner: $0.node))
            },
            isInverse: isInverse)
    }
}

extension Reversion: @unchecked Sendable where Root: Sendable {}
// Sound because a reversion holds only key paths into `Root` and values read out of `Root`
// values, which are Sendable when `Root` is.

extension Reversion: CustomStringConvertible {
    /// The changed paths, such as `Reversion<User>(name, imageData)`.
    public var description: String {
        "Reversion<\(Root.self)>(\(paths.map { $0.isRoot ? "(root)" : $0.description }.joined(separator: ", ")))"
    }
}
