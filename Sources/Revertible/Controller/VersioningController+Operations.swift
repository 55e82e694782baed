import Observation

extension VersioningController {
    // MARK: - Appending versions

    /// Records `newValue` as a new version when it differs from the current one.
    ///
    /// With debouncing on, the version is held back until changes pause; see
    /// ``withDebouncing(clock:interval:maximumWait:isolation:)``.
    ///
    /// - Parameters:
    ///   - newValue: The new version.
    ///   - tag: A tag for the new version (or, when nothing changed, for the current one).
    public func append(_ newValue: Value, tag: AnyHashable? = nil) {
        if let debouncer, tag == nil {
            debouncer.hold(newValue)
            registrar.withMutation(of: self, keyPath: \.hasUndo) {}
            return
        }
        flush()
        mutate { $0.append(newValue, tag: tag) }
    }

    /// Records the tracked property of `root` as a new version.
    ///
    /// - Parameters:
    ///   - root: A root holding the new version.
    ///   - tag: A tag for the new version.
    public func append(root: Root, tag: AnyHashable? = nil) {
        append(root[keyPath: keyPath], tag: tag)
    }

    /// Records the tracked property of the reference root as a new version.
    ///
    /// Does nothing when the root has been deallocated.
    ///
    /// - Parameter tag: A tag for the new version.
    public func appendCurrentVersion(tag: AnyHashable? = nil) {
        guard let value = readRoot() else { return }
        append(value, tag: tag)
    }

    /// Records any version held back by debouncing now.
    public func flush() {
        guard let pending = debouncer?.take() else { return }
        mutate { $0.append(pending) }
    }

    // MARK: - Undo and redo

    /// Goes back one version in the current scope and returns it; the reference root, if any,
    /// is updated too. A debounced change is recorded first, so it is what gets undone.
    ///
    /// - Returns: The current version afterwards (unchanged when there is nothing to undo).
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func undo() throws(Failure) -> Value {
        flush()
        _ = try perform { () throws(ReversionError) in
            try mutate { history throws(ReversionError) in try history.undo() }
        }
        return history.current
    }

    /// Goes forward one version in the current scope and returns it.
    ///
    /// - Returns: The current version afterwards (unchanged when there is nothing to redo).
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func redo() throws(Failure) -> Value {
        flush()
        _ = try perform { () throws(ReversionError) in
            try mutate { history throws(ReversionError) in try history.redo() }
        }
        return history.current
    }

    /// Undoes one version and writes it to `value`.
    public func undo(_ value: inout Value) throws(Failure) {
        value = try undo()
    }

    /// Redoes one version and writes it to `value`.
    public func redo(_ value: inout Value) throws(Failure) {
        value = try redo()
    }

    /// Undoes one version and writes it to the tracked property of `root`.
    public func undo(root: inout Root) throws(Failure) {
        root[keyPath: keyPath] = try undo()
    }

    /// Redoes one version and writes it to the tracked property of `root`.
    public func redo(root: inout Root) throws(Failure) {
        root[keyPath: keyPath] = try redo()
    }

    // MARK: - Tags

    /// Tags the current version; a debounced change is recorded first, so it is what gets
    /// tagged.
    ///
    /// - Parameter tag: The tag, such as a string or an enum case.
    public func tag(_ tag: AnyHashable) {
        flush()
        mutate { $0.tag(tag) }
    }

    /// Tags the current version; the same as ``tag(_:)``.
    public func tagCurrentVersion(_ tag: AnyHashable) {
        self.tag(tag)
    }

    /// Undoes until the current version is the nearest earlier one tagged `tag`, within the
    /// current scope. Does nothing when no such version exists.
    ///
    /// - Returns: The current version afterwards.
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func undo(to tag: AnyHashable) throws(Failure) -> Value {
        flush()
        _ = try perform { () throws(ReversionError) in
            try mutate { history throws(ReversionError) in try history.undo(to: tag) }
        }
        return history.current
    }

    /// Redoes until the current version is the nearest later one tagged `tag`, the tagged
    /// change included, within the current scope. Does nothing when no such version exists.
    ///
    /// - Returns: The current version afterwards.
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func redo(to tag: AnyHashable) throws(Failure) -> Value {
        flush()
        _ = try perform { () throws(ReversionError) in
            try mutate { history throws(ReversionError) in try history.redo(to: tag) }
        }
        return history.current
    }

    /// The tags of a scope's versions, `nil` for untagged ones: those up to and including the
    /// current version, and those after it.
    ///
    /// ```swift
    /// controller.tags()  // (["original", nil, "without-child"], ["with-child"])
    /// ```
    ///
    /// - Parameter level: A scope level; the current scope when `nil`.
    public func tags(inScopeLevel level: Int? = nil) -> (undo: [AnyHashable?], redo: [AnyHashable?]) {
        flush()
        return history.tags(inScopeLevel: level)
    }

    // MARK: - Scopes

    /// Starts a scope: undo and redo stay inside it until it is popped.
    public func pushNewScope() {
        flush()
        mutate { $0.pushScope() }
    }

    /// Ends the current scope, squashing everything it changed into one version of the parent
    /// scope. Does nothing in the root scope.
    public func popCurrentScope() {
        flush()
        mutate { $0.popScope() }
    }

    /// Ends the current scope and discards its changes, returning to the value it started
    /// from. Does nothing in the root scope.
    ///
    /// - Returns: The current version afterwards.
    @discardableResult
    public func undoAndPopCurrentScope() -> Value {
        flush()
        mutate { $0.undoAndPopScope() }
        return history.current
    }

    // MARK: - Transactions

    /// Applies several changes as one version, undone by a single ``undo()``.
    ///
    /// The closure works on a copy: when it throws, the tracked value (and the reference root)
    /// is exactly as before and no version is recorded.
    ///
    /// ```swift
    /// try controller.setWithTransaction { activity in
    ///     activity.title = "New title"
    ///     activity.priority = .medium(dueDate: nil)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - tag: A tag for the new version.
    ///   - body: Changes the value.
    /// - Returns: The current version afterwards.
    /// - Throws: Whatever `body` throws.
    @discardableResult
    public func setWithTransaction<E: Error>(
        tag: AnyHashable? = nil, _ body: (inout Value) throws(E) -> Void
    ) throws(E) -> Value {
        flush()
        var copy = history.current
        try body(&copy)
        mutate { $0.append(copy, tag: tag) }
        return history.current
    }

    /// Applies several changes, some asynchronous, as one version; see
    /// ``setWithTransaction(tag:_:)``.
    ///
    /// Versions appended while the closure is suspended are recorded before the transaction's
    /// own version, which is diffed against the version current when it completes.
    @discardableResult
    nonisolated(nonsending) public func setWithTransaction<E: Error>(
        tag: AnyHashable? = nil, _ body: nonisolated(nonsending) (inout Value) async throws(E) -> Void
    ) async throws(E) -> Value {
        flush()
        var copy = history.current
        try await body(&copy)
        flush()
        mutate { $0.append(copy, tag: tag) }
        return history.current
    }

    /// Replaces the current version without recording a new one: the change cannot be undone,
    /// and earlier versions are reverted relative to it.
    ///
    /// Use it for changes that must not be undoable (a server's update, a migration). Only
    /// paths the undo steps do not touch should change, or those steps will refuse to apply.
    ///
    /// - Parameter value: The new current version.
    public func setWithoutTracking(_ value: Value) {
        flush()
        mutate { $0.replaceCurrent(with: value) }
    }
}
