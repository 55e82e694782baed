extension VersioningController {
    /// Runs `write`, a write to the storage, given `value` — an edit of the current version, for
    /// a write that stores one — or the current version. When another writer changed the
    /// versions first (another process, another controller on the same history), the storage
    /// reads them again (``VersionStorage/reload(after:)``), observers are told, and `write`
    /// runs again from there, given `value`'s edit carried over onto that writer's version
    /// (``carriedOver(_:from:onto:)``): up to eight times in all, then the conflict is thrown.
    ///
    /// A reference root is written the version read again (not while an edit is being
    /// written: it holds the app's edit, which stays pending if the write fails), and the edit
    /// carried over once written.
    ///
    /// - Parameters:
    ///   - value: The edit `write` stores; `nil` when it stores none.
    ///   - held: The change held back by debouncing that `value` was edited from, which the
    ///     storage holds: carried over first, where the other writer did not record it.
    ///   - announcing: Whether to tell observers and write the root (not as the controller is
    ///     let go of).
    ///   - write: The write, given the edit to store (the current version when `value` is nil).
    /// - Returns: What `write` returned.
    @discardableResult
    package func writingThroughConflicts<T>(
        _ value: Value? = nil, editedFrom held: Value? = nil, announcing: Bool = true,
        _ write: (Value) throws(ReversionError) -> T
    ) throws(ReversionError) -> T {
        var (value, held) = (value, held)
        var conflicts = 0
        while true {
            do {
                let result = try write(value ?? storage.current)
                if conflicts > 0, announcing, let value { writeRoot(value) }
                return result
            } catch {
                guard conflicts < 7 else { throw error }
                let base = storage.current
                let reloaded: Bool
                do throws(ReversionError) {
                    reloaded = try storage.reload(after: error)
                } catch let failure {
                    if announcing { didChange(writingRoot: value == nil) }
                    throw failure
                }
                guard reloaded else { throw error }
                conflicts += 1
                if let edit = value {
                    // The held change first (another writer's open may have recorded it: then
                    // it is there already), then the edit made since.
                    let theirs =
                        held.map { carriedOver($0, from: base, onto: storage.current) } ?? storage.current
                    value = carriedOver(edit, from: held ?? base, onto: theirs)
                }
                held = nil
                if announcing { didChange(writingRoot: value == nil) }
            }
        }
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
