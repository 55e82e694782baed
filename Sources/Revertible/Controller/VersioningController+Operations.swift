import Observation

extension VersioningController {
    // MARK: - Appending versions

    /// Records `newValue` as a new version when it differs from the current one.
    ///
    /// With debouncing on, the version is held back until changes pause; see
    /// ``withDebouncing(clock:interval:maximumWait:isolation:)``.
    ///
    /// In the assigning error modes (what `@Versioned` uses), a value the storage refuses (a
    /// full disk, a busy store) is not dropped: the error goes to ``error`` and the value stays
    /// pending, as a held change does — ``value`` is it, ``hasUndo`` counts it, and the next
    /// append or operation records it. In the throwing mode the caller keeps it; when its
    /// write failed after another writer's version was read and the edit carried over onto
    /// it, appending it again carries it over again, so that writer's change stays.
    ///
    /// - Parameters:
    ///   - newValue: The new version.
    ///   - tag: A tag for the new version (or, when nothing changed, for the current one): any
    ///     `Hashable & Encodable` value, such as a string or an enum case.
    /// - Throws: ``ReversionError`` in the throwing mode: `.storage` when the storage could not
    ///   write (nothing changed then), `.notEncodable` for a tag that is not `Encodable`.
    public func append(_ newValue: Value, tag: AnyHashable? = nil) throws(Failure) {
        try perform { () throws(ReversionError) in
            let tag = try tag.map { tag throws(ReversionError) in try VersionTag(tagging: tag) }
            try keepingOnFailureWhenAssigning(newValue) { newValue throws(ReversionError) in
                try record(newValue, tag: tag)
            }
        }
    }

    /// ``keepingOnFailure(_:_:)`` in the assigning error modes, whose caller gets no error;
    /// in the throwing mode the caller gets it and still has `newValue`, so `recording` just
    /// runs (``passingAgain(_:_:)``: an app that appends an edit again after its write failed
    /// once carried over onto another writer's version keeps that writer's change).
    private func keepingOnFailureWhenAssigning(
        _ newValue: Value, _ recording: (Value) throws(ReversionError) -> Void
    ) throws(ReversionError) {
        guard errorMode.assignsToController else { return try passingAgain(newValue, recording) }
        try keepingOnFailure(newValue) { () throws(ReversionError) in try recording(newValue) }
    }

    /// Runs `recording`, which records `newValue`, for a caller that cannot keep `newValue` if
    /// it fails (an assigning error mode's, whose error goes to ``error``; work no caller
    /// waits for): then `newValue` stays pending, as a held change does — ``value`` is it,
    /// ``hasUndo`` counts it, and the next recording or operation records it (or, when the
    /// controller is let go of, its storage holds it).
    ///
    /// `newValue` holds the edits of a value pending before it (the app read it from ``value``,
    /// or from the observed root), so it replaces that one.
    func keepingOnFailure(_ newValue: Value, _ recording: () throws(ReversionError) -> Void)
        throws(ReversionError)
    {
        let replaced = hasUnrecorded
        unrecorded = nil
        do {
            try recording()
        } catch {
            unrecorded = carriedOver(onFailureOf: newValue) ?? newValue
            announceHeldChange()
            throw error
        }
        if replaced { announceHeldChange() }
    }

    /// Appends `newValue`, or holds it back when debouncing and untagged.
    func record(_ newValue: Value, tag: VersionTag?) throws(ReversionError) {
        if let debouncer, tag == nil {
            let held: Value
            do {
                held = try writingThroughConflicts(newValue, editedFrom: debouncer.pending) {
                    held throws(ReversionError) in
                    try storage.holdPending(held)
                    return held
                }
            } catch {
                holdingAfterFailure(nil)
                throw error
            }
            debouncer.hold(held)
            announceHeldChange()
            return
        }
        try recordPending()
        try commit(newValue, tag: tag)
    }

    /// Runs work that no caller waits for (a debounce timer, an observed change): an error
    /// goes to ``error`` (and the error mode's property), since there is no one to throw to.
    func performInBackground(_ work: () throws(ReversionError) -> Void) {
        do {
            try work()
            if storedError != nil { setError(nil) }
        } catch {
            setError(error)
            do throws(Failure) {
                try errorMode.handle(error, object as? Root)
            } catch {
                // The throwing mode: nobody to throw to; the error is in `error`.
            }
        }
    }

    /// Records the tracked property of `root` as a new version.
    ///
    /// - Parameters:
    ///   - root: A root holding the new version.
    ///   - tag: A tag for the new version.
    /// - Throws: As ``append(_:tag:)``.
    public func append(root: Root, tag: AnyHashable? = nil) throws(Failure) {
        try append(root[keyPath: keyPath], tag: tag)
    }

    /// Records the tracked property of the reference root as a new version.
    ///
    /// Does nothing when the root has been deallocated.
    ///
    /// - Parameter tag: A tag for the new version.
    /// - Throws: As ``append(_:tag:)``.
    public func appendCurrentVersion(tag: AnyHashable? = nil) throws(Failure) {
        guard let value = readRoot() else { return }
        try append(value, tag: tag)
    }

    /// Records any version held back by debouncing now.
    ///
    /// - Throws: ``ReversionError/storage(_:)`` in the throwing mode; the change stays held.
    public func flush() throws(Failure) {
        try perform { () throws(ReversionError) in try recordPending() }
    }

    /// Records every change the app made that is not a version yet — one held back by
    /// debouncing, and one made to an observed root in this turn of the actor, before its
    /// observation is delivered — as one version. Every operation starts with this, so that
    /// what it acts on includes every edit, and what it reports is what will be undone.
    package func recordPending() throws(ReversionError) {
        // Neither debouncing nor observing (most appends): nothing can be pending. The rest is
        // a function of its own, whose `Value?` (a type that code not specialized for `Value`
        // looks up at run time, where the function starts) such an append does not pay for.
        guard debouncer != nil || observedChange != nil || hasUnrecorded else { return }
        try recordHeldOrObserved()
    }

    /// ``recordPending()`` while debouncing, observing, or keeping a value whose recording
    /// failed.
    @inline(never)
    private func recordHeldOrObserved() throws(ReversionError) {
        // A value kept after a failure is newer than what debouncing held before it.
        var newest = unrecorded ?? debouncer?.pending
        let observed = observedChange?.lower() as? Root
        if let observed {
            // The change's tracking has ended; the delivery on the next turn will find the
            // flag lowered, so the next edit (made in this very turn, perhaps) is tracked here.
            observeAgain?()
            newest = observed[keyPath: keyPath]
        }
        guard let newest else { return }
        let held = debouncer?.take()
        let kept = unrecorded != nil || observed != nil
        unrecorded = nil
        do {
            // The version clears the stored held change in its own transaction; with no change
            // (typing undone by hand) the stored one is cleared here.
            if try !commit(newest, editedFrom: held) {
                if held != nil {
                    try writingThroughConflicts { () throws(ReversionError) in try storage.holdPending(nil) }
                }
                if kept { announceHeldChange() }
            }
        } catch {
            if let held { holdingAfterFailure(held) }
            // Kept as a value, not by raising the flag again: no delivery is on its way. A
            // change carried over onto another writer's version is newer than what is held.
            let carried = carriedOver(onFailureOf: newest)
            if kept || carried != nil {
                unrecorded = carried ?? newest
                announceHeldChange()
            }
            throw error
        }
    }

    /// Records every pending change, then stops recording: debouncing is turned off and
    /// changes to an observed root are no longer appended. Call it when a document closes or
    /// the app quits. A durable storage also stores the current value whole, so that the next
    /// open — perhaps by an updated app whose model changed — reads it and replays nothing
    /// (unless the model's `encode(to:)` refuses the value: then the next open replays).
    ///
    /// A change held back by debouncing is also in a durable store as it is held, so if the
    /// process ends without `close()` — even by `kill -9` — the next open records it as a
    /// version; `close()` just does it now. So is an edit to an observed root not recorded
    /// yet, once the controller is let go of (a command-line tool whose function returns);
    /// but `exit()` in the turn of the edit releases nothing, and the edit goes with it.
    ///
    /// - Throws: ``ReversionError/storage(_:)`` in the throwing mode; nothing is stopped then,
    ///   and the change stays held.
    public func close() throws(Failure) {
        try perform { () throws(ReversionError) in
            try recordPending()
            try writingThroughConflicts { () throws(ReversionError) in try storage.close() }
        }
        debouncer = nil
        observedChange = nil
        observeAgain = nil
    }

    /// Records what is held back by debouncing, reporting a failure in ``error``: for callers
    /// that read ``value`` next and cannot throw the controller's error (a snapshot save).
    package func recordPendingInBackground() {
        performInBackground { () throws(ReversionError) in try recordPending() }
    }

    /// Appends `newValue` to the storage when it differs from the current version, else tags
    /// the current version; carried over onto another writer's version, when one wrote first
    /// (``writingThroughConflicts(_:_:)``).
    ///
    /// - Returns: Whether a version was appended.
    @discardableResult
    func commit(_ newValue: Value, tag: VersionTag?) throws(ReversionError) -> Bool {
        try writingThroughConflicts(newValue) { newValue throws(ReversionError) in
            try appendOrTag(newValue, tag: tag)
        }
    }

    /// ``commit(_:tag:)`` of `newValue`, which holds `held`, the change held back by
    /// debouncing (``writingThroughConflicts(_:editedFrom:announcing:_:)``).
    func commit(_ newValue: Value, editedFrom held: Value?) throws(ReversionError) -> Bool {
        try writingThroughConflicts(newValue, editedFrom: held) { newValue throws(ReversionError) in
            try appendOrTag(newValue, tag: nil)
        }
    }

    /// Appends `newValue` to the storage when it differs from the current version, else tags
    /// the current version; once.
    private func appendOrTag(_ newValue: Value, tag: VersionTag?) throws(ReversionError) -> Bool {
        guard let reversion = newValue.reversion(to: storage.current) else {
            if let tag {
                try storage.tag(tag)
                didChange(writingRoot: false)
            }
            return false
        }
        try storage.append(reversion, resulting: newValue, tag: tag)
        didChange(writingRoot: false)
        return true
    }

    /// Tells observers that ``value`` and ``hasUndo`` now count a held change.
    func announceHeldChange() {
        let paths = observed
        registrar.withMutation(of: self, keyPath: paths.value) {}
        registrar.withMutation(of: self, keyPath: paths.hasUndo) {}
        registrar.withMutation(of: self, keyPath: paths.hasRedo) {}
    }

    // MARK: - Undo and redo

    /// Goes back one version in the current scope and returns it; the reference root, if any,
    /// is updated too. A debounced change is recorded first, so it is what gets undone.
    ///
    /// A pending change the storage refuses outright — one it can never store, such as a value
    /// nested deeper than JSON is written, where no caller received the error (an observed
    /// edit, a `@Versioned` setter) — is taken back instead: the value returns to the current
    /// version, and nothing is recorded. Otherwise every later edit and undo would meet the
    /// same refusal.
    ///
    /// - Returns: The current version afterwards (unchanged when there is nothing to undo).
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func undo() throws(Failure) -> Value {
        try move(takingBackRefused: true) { () throws(ReversionError) in
            storage.undoCount > 0 ? (undo: true, count: 1) : nil
        }
    }

    /// Goes forward one version in the current scope and returns it.
    ///
    /// - Returns: The current version afterwards (unchanged when there is nothing to redo).
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func redo() throws(Failure) -> Value {
        try move { () throws(ReversionError) in storage.redoCount > 0 ? (undo: false, count: 1) : nil }
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

    /// Records what is pending, then moves as many versions as `steps` says, if any; when
    /// `takingBackRefused`, a pending change the storage refuses outright is taken back
    /// instead (``takeBackRefusedChange()``).
    private func move(
        takingBackRefused: Bool = false, _ steps: () throws(ReversionError) -> (undo: Bool, count: Int)?
    ) throws(Failure) -> Value {
        try perform { () throws(ReversionError) in
            do throws(ReversionError) {
                try recordPending()
            } catch {
                guard takingBackRefused, error.refusesValue, hasUnrecorded else { throw error }
                return try takeBackRefusedChange()
            }
            try writingThroughConflicts { () throws(ReversionError) in
                guard let (undo, count) = try steps(), count > 0 else { return }
                if undo { try storage.undo(count) } else { try storage.redo(count) }
                didChange()
            }
        }
        return storage.current
    }

    /// Drops the pending change that recording just failed to store, as the storage can
    /// never store it (``ReversionError/refusesValue``): the value and the tracked property
    /// return to the current version; a change held back before it, stored as held, goes
    /// with it, as undoing the version recording them would take both back — held by
    /// debouncing, or by the last writer (a storage that opened without room to record it
    /// stores it as held until then; a storage holding nothing writes nothing).
    private func takeBackRefusedChange() throws(ReversionError) {
        unrecorded = nil
        _ = debouncer?.take()
        try writingThroughConflicts { () throws(ReversionError) in try storage.holdPending(nil) }
        didChange()
    }

    // MARK: - Tags

    /// Tags the current version; a debounced change is recorded first, so it is what gets
    /// tagged.
    ///
    /// - Parameter tag: The tag: any `Hashable & Encodable` value, such as a string or an enum
    ///   case. It is kept as JSON, so an enum tag set by an earlier process is found again.
    /// - Throws: ``ReversionError`` in the throwing mode.
    public func tag(_ tag: AnyHashable) throws(Failure) {
        try perform { () throws(ReversionError) in
            let tag = try VersionTag(tagging: tag)
            try recordPending()
            try writingThroughConflicts { () throws(ReversionError) in
                try storage.tag(tag)
                didChange(writingRoot: false)
            }
        }
    }

    /// Tags the current version; the same as ``tag(_:)``.
    public func tagCurrentVersion(_ tag: AnyHashable) throws(Failure) {
        try self.tag(tag)
    }

    /// Undoes until the current version is the nearest earlier one tagged `tag`, within the
    /// current scope. Does nothing when no such version exists.
    ///
    /// - Returns: The current version afterwards.
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func undo(to tag: AnyHashable) throws(Failure) -> Value {
        try move { () throws(ReversionError) in
            let tag = try VersionTag(tagging: tag)
            let tags = try storage.tags(inScopeLevel: storage.scopeLevel).undo
            return tags.lastIndex(of: tag).map { (undo: true, count: tags.count - 1 - $0) }
        }
    }

    /// Redoes until the current version is the nearest later one tagged `tag`, the tagged
    /// change included, within the current scope. Does nothing when no such version exists.
    ///
    /// - Returns: The current version afterwards.
    /// - Throws: ``ReversionError`` in the throwing error mode; nothing changes then.
    @discardableResult
    public func redo(to tag: AnyHashable) throws(Failure) -> Value {
        try move { () throws(ReversionError) in
            let tag = try VersionTag(tagging: tag)
            let tags = try storage.tags(inScopeLevel: storage.scopeLevel).redo
            return tags.firstIndex(of: tag).map { (undo: false, count: $0 + 1) }
        }
    }

    /// The tags of a scope's versions, `nil` for untagged ones: those up to and including the
    /// current version, and those after it. A debounced change is recorded first.
    ///
    /// ```swift
    /// controller.tags()  // (["original", nil, "without-child"], ["with-child"])
    /// ```
    ///
    /// - Parameter level: A scope level; the current scope when `nil`.
    /// - Returns: The tags; empty lists when they could not be read (the error is reported as
    ///   the error mode says).
    /// - Throws: ``ReversionError`` in the throwing mode.
    public func tags(inScopeLevel level: Int? = nil) throws(Failure) -> (
        undo: [VersionTag?], redo: [VersionTag?]
    ) {
        try performForResult { () throws(ReversionError) in
            try recordPending()
            return try storage.tags(inScopeLevel: level ?? storage.scopeLevel)
        } ?? ([], [])
    }

    // MARK: - Scopes

    /// Starts a scope: undo and redo stay inside it until it is popped.
    ///
    /// - Throws: ``ReversionError`` in the throwing mode.
    public func pushNewScope() throws(Failure) {
        try perform { () throws(ReversionError) in
            try recordPending()
            try writingThroughConflicts { () throws(ReversionError) in
                try storage.pushScope()
                didChange(writingRoot: false)
            }
        }
    }

    /// Ends the current scope, squashing everything it changed into one version of the parent
    /// scope. Does nothing in the root scope.
    ///
    /// - Throws: ``ReversionError`` in the throwing mode; nothing changes then.
    public func popCurrentScope() throws(Failure) {
        try perform { () throws(ReversionError) in
            try recordPending()
            try writingThroughConflicts { () throws(ReversionError) in
                guard storage.scopeLevel > 0 else { return }
                try storage.popScope()
                didChange(writingRoot: false)
            }
        }
    }

    /// Ends the current scope and discards its changes, returning to the value it started
    /// from. Does nothing in the root scope.
    ///
    /// - Returns: The current version afterwards.
    /// - Throws: ``ReversionError`` in the throwing mode; nothing changes then.
    @discardableResult
    public func undoAndPopCurrentScope() throws(Failure) -> Value {
        try perform { () throws(ReversionError) in
            try recordPending()
            try writingThroughConflicts { () throws(ReversionError) in
                guard storage.scopeLevel > 0 else { return }
                try storage.undoAndPopScope()
                didChange()
            }
        }
        return storage.current
    }

    // MARK: - Transactions

    /// Applies several changes as one version, undone by a single ``undo()``.
    ///
    /// The closure works on a copy: when it throws, the tracked value (and the reference root)
    /// is exactly as before and no version is recorded, in memory and in a durable store.
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
    /// - Throws: Whatever `body` throws. A storage failure goes to the error mode: in the
    ///   throwing mode it is thrown as ``ReversionError``.
    @discardableResult
    public func setWithTransaction<E: Error>(tag: AnyHashable? = nil, _ body: (inout Value) throws(E) -> Void)
        throws -> Value
    {
        try flush()
        var copy = storage.current
        try body(&copy)
        try append(copy, transactionTag: tag)
        return storage.current
    }

    /// Applies several changes, some asynchronous, as one version; see
    /// ``setWithTransaction(tag:_:)``.
    ///
    /// Versions appended while the closure is suspended are recorded before the transaction's
    /// own version, which is diffed against the version current when it completes.
    @discardableResult
    nonisolated(nonsending) public func setWithTransaction(
        tag: AnyHashable? = nil, _ body: nonisolated(nonsending) (inout Value) async throws -> Void
    ) async throws -> Value {
        try flush()
        var copy = storage.current
        try await body(&copy)
        try append(copy, transactionTag: tag)
        return storage.current
    }

    /// Applies several changes as one version; see ``setWithTransaction(tag:_:)``. In the
    /// assigning error modes only `body`'s own error is thrown: a storage failure goes to
    /// ``error``.
    @discardableResult
    public func setWithTransaction<E: Error>(tag: AnyHashable? = nil, _ body: (inout Value) throws(E) -> Void)
        throws(E) -> Value where Failure == Never
    {
        flush()
        // A change the flush could not record is the value the body edits.
        var copy = value
        try body(&copy)
        append(copy, transactionTag: tag)
        return storage.current
    }

    /// Appends a transaction's result as one version, never held back by debouncing, and
    /// writes it into the reference root.
    private func append(_ value: Value, transactionTag tag: AnyHashable?) throws(Failure) {
        try perform { () throws(ReversionError) in
            try appendAsTransaction(
                value, tag: try tag.map { tag throws(ReversionError) in try VersionTag(tagging: tag) })
        }
    }

    /// Records what is pending, then `value` as one version (kept pending if that fails, in the
    /// assigning modes), and writes it into the reference root.
    private func appendAsTransaction(_ value: Value, tag: VersionTag?) throws(ReversionError) {
        try keepingOnFailureWhenAssigning(value) { value throws(ReversionError) in
            try recordPending()
            try commit(value, tag: tag)
        }
        writeRoot()
    }

    /// Appends `value` as one version, as ``setWithTransaction(tag:_:)`` setting it does, for a
    /// caller that reports a failure in an error type of its own (a caretaker's restore, which
    /// throws `KeepsakeError`): the throwing modes throw the ``ReversionError`` itself, not the
    /// mode's transform of it, which may be any type; the assigning modes report it as usual.
    package func appendReportingReversionError(_ value: Value) throws(ReversionError) {
        do {
            try appendAsTransaction(value, tag: nil)
            if storedError != nil { setError(nil) }
        } catch {
            guard errorMode.assignsToController else { throw error }
            // An assigning mode's report throws nothing.
            try? report(error)
        }
    }

    /// Replaces the current version without recording a new one: the change cannot be undone,
    /// and earlier versions are reverted relative to it.
    ///
    /// Use it for changes that must not be undoable (a server's update, a migration). The
    /// change may touch only paths no undo or redo step changes: one that changes such a path
    /// (a title the user edited, then the server set) is refused, in memory as durably,
    /// because that step could never apply again. Append such a change as a version instead,
    /// or clear the history first. Made inside a scope, the change outlives it: ending the
    /// scope does not squash it into the scope's step, and ``undoAndPopCurrentScope()`` does
    /// not take it back.
    ///
    /// ```swift
    /// var doc = controller.value
    /// doc.serverRevision += 1          // a path no undo step changes: accepted
    /// try controller.setWithoutTracking(doc)
    /// ```
    ///
    /// - Parameter value: The new current version.
    /// - Throws: ``ReversionError`` in the throwing mode (in the assigning modes, to ``error``)
    ///   when a step would no longer apply from `value` — the step's own error, such as
    ///   ``ReversionError/wrongVersion(path:reason:)`` naming the path — or when the storage
    ///   fails; nothing changes then.
    /// - Complexity: O(steps held): every step is checked against `value`.
    public func setWithoutTracking(_ value: Value) throws(Failure) {
        try perform { () throws(ReversionError) in
            try recordPending()
            try passingAgain(value) { value throws(ReversionError) in
                try writingThroughConflicts(value) { value throws(ReversionError) in
                    try storage.replaceCurrent(with: value)
                    didChange()
                }
            }
        }
    }
}
