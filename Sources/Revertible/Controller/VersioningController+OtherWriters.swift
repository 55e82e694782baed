extension VersioningController {
    /// Reads the history again when another writer changed it since this controller last read
    /// or wrote it — another process (an app extension, a second instance), or another
    /// controller on the same durable history (a document open in two windows) — so that
    /// ``value``, the undo and redo stacks, observers and the reference root show that
    /// writer's versions. Every change pending here (held back by debouncing, or made to an
    /// observed root and not recorded yet) is recorded first, as every operation does, carried
    /// over onto the other writer's version.
    ///
    /// A controller learns of another writer's versions by itself only when it writes; call
    /// this when they may matter before then, say when the app becomes active again:
    ///
    /// ```swift
    /// .onChange(of: scenePhase) { _, phase in
    ///     if phase == .active { controller.refresh() }
    /// }
    /// ```
    ///
    /// In memory, no other writer exists, and nothing is read.
    ///
    /// - Returns: Whether another writer's versions were read, here or by recording what was
    ///   pending.
    /// - Throws: ``ReversionError/storage(_:)`` in the throwing mode when the history cannot be
    ///   read (a durable history deleted since: `historyConflict`); pending changes recorded
    ///   before stay recorded.
    @discardableResult
    public func refresh() throws(Failure) -> Bool {
        try performForResult { () throws(ReversionError) -> Bool in
            let readsBefore = readsAfterConflicts
            try recordPending()
            let reloaded: Bool
            do throws(ReversionError) {
                reloaded = try storage.reloadIfChanged()
            } catch {
                // The stacks may be the ones kept already.
                didChange()
                throw error
            }
            if reloaded { didChange() }
            return reloaded || readsAfterConflicts != readsBefore
        } ?? false
    }

    /// Runs `write`, a write to the storage that stores no edit of the value (an undo, a tag, a
    /// scope). When another writer changed the versions first (another process, another
    /// controller on the same history), the storage reads them again
    /// (``VersionStorage/reload(after:)``), observers are told, the reference root is written
    /// the version read, and `write` runs again from there: up to eight times in all, then the
    /// conflict is thrown.
    ///
    /// - Parameter write: The write.
    /// - Returns: What `write` returned.
    @discardableResult
    package func writingThroughConflicts<T>(_ write: () throws(ReversionError) -> T) throws(ReversionError)
        -> T
    {
        do {
            return try write()
        } catch {
            return try writeAgain(after: error, edit: nil, editedFrom: nil, announcing: true) {
                _ throws(ReversionError) in try write()
            }
        }
    }

    /// Runs `write`, which stores `edit`, an edit of the current version (or of `held`);
    /// after another writer's version, runs it again with the edit carried over onto that
    /// version (``carriedOver(_:from:onto:)``), up to eight times in all, then the conflict is
    /// thrown; see ``writingThroughConflicts(_:)``. Observers are told of the version read
    /// again, and the reference root is written the edit carried over, once it is stored (not
    /// before: the root holds the app's edit, which stays pending if the write fails).
    ///
    /// Nothing here is an optional `Value` until a write fails: code not specialized for
    /// `Value` would look its metadata up at run time on every append.
    ///
    /// - Parameters:
    ///   - edit: The edit `write` stores.
    ///   - write: The write, given the edit to store.
    /// - Returns: What `write` returned.
    func writingThroughConflicts<T>(_ edit: Value, _ write: (Value) throws(ReversionError) -> T)
        throws(ReversionError) -> T
    {
        do {
            return try write(edit)
        } catch {
            return try writeAgain(after: error, edit: edit, editedFrom: nil, announcing: true, write)
        }
    }

    /// ``writingThroughConflicts(_:_:)`` for an edit made from `held`, the change held back by
    /// debouncing, which the storage holds: after another writer's version, `held` is carried
    /// over first (that writer's open may have recorded it: it is then there already), then
    /// the edit made since.
    ///
    /// - Parameters:
    ///   - edit: The edit `write` stores.
    ///   - held: The held change `edit` was made from, if any.
    ///   - announcing: Whether to tell observers and write the root (not as the controller is
    ///     let go of).
    ///   - write: The write, given the edit to store.
    /// - Returns: What `write` returned.
    func writingThroughConflicts<T>(
        _ edit: Value, editedFrom held: Value?, announcing: Bool = true,
        _ write: (Value) throws(ReversionError) -> T
    ) throws(ReversionError) -> T {
        do {
            return try write(edit)
        } catch {
            return try writeAgain(after: error, edit: edit, editedFrom: held, announcing: announcing, write)
        }
    }

    /// After `error` from a write: when the storage reads the versions again (another writer
    /// wrote first), runs `write` again from there, given `edit` carried over onto that
    /// writer's version (the current version when `edit` is `nil`); up to seven times more.
    /// Throws `error` otherwise.
    ///
    /// When a write fails after the edit was carried over (a busy store, a full disk, reading
    /// again itself), the edit carried over is what stays pending: ``carriedOver(onFailureOf:)``
    /// gives it to the caller that keeps the edit, or that passes it again. Kept as the app
    /// made it, it would be recorded whole on that writer's version (read by then, so no
    /// conflict would carry it again), losing that writer's change. So with `held`, which
    /// debouncing holds on: ``holdingAfterFailure(_:)`` gives it carried over.
    @inline(never)
    private func writeAgain<T>(
        after error: ReversionError, edit: Value?, editedFrom held: Value?, announcing: Bool,
        _ write: (Value) throws(ReversionError) -> T
    ) throws(ReversionError) -> T {
        let made = edit
        var (error, edit, held, onto) = (error, edit, held, Value?.none)
        var readAgain = false
        (carriedBeforeFailure, heldCarriedBeforeFailure) = (nil, nil)
        for _ in 1..<8 {
            let base = storage.current
            var failure: ReversionError?
            do throws(ReversionError) {
                guard try storage.reload(after: error) else { break }
                readsAfterConflicts += 1
            } catch {
                // Reading again may have got as far as taking that writer's version.
                failure = error
            }
            readAgain = true
            // The held change on that writer's version (itself, when reading again recorded it).
            let heldBefore = held
            held = held.map { carriedOver($0, from: base, onto: storage.current) }
            if let mine = edit {
                let theirs = held ?? storage.current
                (edit, onto) = (carriedOver(mine, from: heldBefore ?? base, onto: theirs), theirs)
            }
            if announcing { didChange(writingRoot: edit == nil) }
            if let failure {
                error = failure
                break
            }
            do {
                let result = try write(edit ?? storage.current)
                if announcing, let edit { writeRoot(edit) }
                return result
            } catch let again {
                error = again
            }
        }
        if readAgain {
            if let made, let edit, let onto { carriedBeforeFailure = (made, edit, onto) }
            heldCarriedBeforeFailure = held
        }
        throw error
    }

    /// `made`, an edit whose write failed, as that write carried it over onto another writer's
    /// version (see ``writeAgain(after:edit:editedFrom:announcing:_:)``), for the caller that
    /// keeps it pending, or that passes it again (the throwing mode's append, after its
    /// error); the reference root is written it, as a write that succeeded would have. `nil`
    /// when that write carried nothing over, or was of another edit; once asked, `nil` from
    /// then on.
    ///
    /// Carried over once more, from that writer's version onto what debouncing holds, or else
    /// the current version: the storage may have read again since (a ``refresh()`` before the
    /// edit is passed again).
    func carriedOver(onFailureOf made: Value) -> Value? {
        guard let (asMade, carried, onto) = carriedBeforeFailure else { return nil }
        carriedBeforeFailure = nil
        guard asMade.reversion(to: made) == nil else { return nil }
        let value = carriedOver(carried, from: onto, onto: heldOrCurrent)
        writeRoot(value)
        return value
    }

    /// Runs `write`, which stores `value`, a value the caller keeps when it fails (the
    /// throwing mode's append, `setWithoutTracking`): given `value` carried over again when it
    /// is the edit whose write failed after carrying it over onto another writer's version
    /// (``carriedOver(onFailureOf:)``). When `write` fails, `value` passed again is carried over
    /// again from there: the app may try as often as the store refuses it.
    ///
    /// - Parameters:
    ///   - value: The value as the caller passes it.
    ///   - write: The write, given the value to store.
    func passingAgain(_ value: Value, _ write: (Value) throws(ReversionError) -> Void) throws(ReversionError)
    {
        guard hasCarriedBeforeFailure, let carried = carriedOver(onFailureOf: value) else {
            return try write(value)
        }
        do {
            try write(carried)
        } catch {
            // The edit the caller passes again is `value`, not the one carried over.
            if hasCarriedBeforeFailure {
                carriedBeforeFailure?.made = value
            } else {
                carriedBeforeFailure = (value, carried, heldOrCurrent)
            }
            throw error
        }
    }

    /// Holds `held` again, a change held back by debouncing whose recording failed (`nil`:
    /// the change debouncing holds, left where it is unless carried over): as the write carried
    /// it over onto another writer's version, when it did
    /// (``writeAgain(after:edit:editedFrom:announcing:_:)``). Held as it was, made from the
    /// version before, it would be recorded whole on that writer's version, losing its change.
    func holdingAfterFailure(_ held: Value?) {
        guard let value = heldCarriedBeforeFailure ?? held else { return }
        heldCarriedBeforeFailure = nil
        debouncer?.hold(value)
    }

    /// `value`, an edit of `base`, carried over onto `target`, which another writer made from
    /// `base`: where that writer left every leaf the edit changed as it was in `base`, the edit
    /// made on `target` (the rest of that writer's version stays); where it changed every one
    /// of them alike, `target` itself; otherwise `value`, the edit kept whole, that writer's
    /// version the one below it. Each is decided by the edit's own check of the version it is
    /// applied to (``Reversion/revert(_:)``).
    func carriedOver(_ value: Value, from base: Value, onto target: Value) -> Value {
        guard let edit = value.reversion(to: base) else { return target }
        if let made = try? edit.inverse.reverted(target) { return made }
        if (try? edit.reverted(target)) != nil { return target }
        return value
    }
}
