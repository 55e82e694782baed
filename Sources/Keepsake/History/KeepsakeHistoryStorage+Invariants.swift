import Foundation
import Revertible

extension KeepsakeHistoryStorage {
    /// Checks the stored history against itself, for tests: SQLite's integrity check, foreign
    /// keys, the stack sizes and stored counters, that every undone
    /// version redoes from the value its scope is at (as in memory), and that reverting the
    /// current value through every applied version reaches each applied version's checkpoint
    /// and the stored base value, on every property they hold: one an old model stored lacks
    /// the properties added since.
    ///
    /// A version today's model cannot read is reverted as undo does, on the stored form, where
    /// redoing it must reach the value above it; below a value today's model cannot hold, where
    /// undo stops, the versions redone on the base value's stored form must reach the value
    /// above it. Last, ``KeepsakeStore/verify()`` must find nothing wrong with the store, and
    /// ``KeepsakeStore/summary()`` nothing with the history.
    ///
    /// - Throws: ``KeepsakeError`` describing the first problem.
    func checkStoredInvariants() throws(KeepsakeError) {
        let (id, name, current, level, revision, held) = (
            self.id, self.name, self.current, self.level, self.revision, self.heldDigest
        )
        let expected = (undoCount, redoCount, total)
        try store.read { connection, blobs in
            func fail(_ reason: String) -> KeepsakeError {
                .undecodableValue(history: name, reason: "invariant: \(reason)")
            }
            let integrity = try connection.query("PRAGMA integrity_check") { $0.text(0) ?? "" }
            guard integrity == ["ok"] else {
                throw fail("integrity_check: \(integrity.joined(separator: "; "))")
            }
            guard try connection.query("PRAGMA foreign_key_check", row: { _ in 0 }).isEmpty else {
                throw fail("foreign keys")
            }
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            // Memory is legitimately not the stored history then: said so, not as damage.
            let counters = try rows.storedCounters().counters
            guard counters.revision == revision else {
                throw fail(
                    "another writer changed the history since this controller read it (revision "
                        + "\(counters.revision), not \(revision)): refresh() first")
            }
            guard try rows.scopeCount() == level + 1 else { throw fail("scope rows") }
            let counts = try Counts(rows, level: level)
            guard (counts.undo, counts.redo, counts.total) == expected else { throw fail("stack sizes") }
            guard
                counters
                    == .init(
                        revision: revision, undo: counts.undo, redo: counts.redo, total: counts.total,
                        held: held)
            else { throw fail("stored counters \(counters)") }
            _ = try rows.pendingRecords(digest: held, history: name)
            // Only the newest version carries them.
            guard
                try connection.scalarInt(
                    """
                    SELECT count(*) FROM version WHERE history_id = ?1 AND revision IS NOT NULL
                    AND position < (SELECT max(position) FROM version WHERE history_id = ?1)
                    """, [.integer(id)]) == 0
            else { throw fail("counters on an older version") }
            let applied = try rows.appliedVersions(after: 0)
            do {
                _ = try Self.base(rows, below: current, level: level, history: name)
            } catch KeepsakeError.reversion(_, let position?, let error)
                where !applied.contains(where: { $0.position == position })
            {
                throw fail(
                    "undone version \(position) does not redo from the value its scope is at: \(RecordCoding.sentence("\(error)"))"
                )
            } catch KeepsakeError.reversion {
                // An applied version: the walk below says why, reading it on the stored form
                // when today's model cannot.
            }
            guard let base = try rows.baseCheckpoint() else { throw fail("no base value") }
            let checkpointed = Set(
                try connection.query(
                    "SELECT position FROM checkpoint WHERE history_id = ? AND position IS NOT NULL",
                    [.integer(id)]
                ) { try $0.requiredInt64(0) })
            var value = current
            var onStoredForm = false
            for version in applied.reversed() {
                // A checkpoint holds the value undoing reaches (only what it holds compared: an
                // old model's lacks the properties added since), until a version the model
                // cannot read is met: from there on, undo's value is the stored form's.
                if !onStoredForm, checkpointed.contains(Int64(version.position)),
                    let json = try rows.checkpoint(at: version.position),
                    let stored: Value = try? rows.decodeStored(json, history: name, template: { value }),
                    value.reversion(to: stored) != nil
                {
                    throw fail(
                        "the checkpoint of version \(version.position) is not the value undoing reaches")
                }
                do {
                    try Self.apply(rows, version, to: &value, inverted: false, history: name)
                } catch let error as KeepsakeError {
                    // A version today's model cannot read: undo computes the value below it on
                    // the stored form (the newest checkpoint below it and the versions between,
                    // redone on its JSON), and redo the value above it. Redone, it must reach
                    // the value undoing came down to. (Not one replay of every version on the
                    // base value's stored form: the changes today's model stored name its
                    // elements as today's model does, by ids the old JSON may not hold.)
                    guard case .reversion = error else { throw error }
                    onStoredForm = true
                    // What the stored form lacks (added since) is filled from the value above
                    // it, as undo fills it: only what it holds is compared.
                    let redone = try storedFormValue(rows, moving: [version], undo: false, filling: value)
                        .value
                    guard redone.reversion(to: value) == nil else {
                        throw fail(
                            "redoing version \(version.position) on the stored form does not reach the value above it"
                        )
                    }
                    do {
                        value = try storedFormValue(rows, moving: [version], undo: true, filling: value).value
                    } catch KeepsakeError.undecodableValue {
                        // The value below it is one today's model cannot hold (a case removed
                        // since): undo stops here. The versions up to it, all stored by the old
                        // model, redone on the base value's stored form must reach the value
                        // above it.
                        let form = try rows.storedForm(
                            base, redoing: applied.filter { $0.position <= version.position }, history: name,
                            keys: CodingKeyTree(for: Value.self))
                        let reached: Value = try rows.decodeStored(form.json, history: name) { value }
                        guard reached.reversion(to: value) == nil else {
                            throw fail(
                                "redoing the versions up to \(version.position) on the base value's stored form does not reach the value above it"
                            )
                        }
                        return
                    }
                }
            }
            // What the base value lacks (a property added since the old model stored it) is
            // filled from the value undo reached: only what it holds is compared.
            let stored: Value = try rows.decodeStored(base, history: name) { value }
            guard value.reversion(to: stored) == nil else {
                throw fail("undoing every version does not reach the base")
            }
        }
        // What the tools say of the store: nothing, when it is sound. A problem `verify` or
        // `inspect` reported of a sound store would send its user to salvage for nothing.
        let problems = try store.verify().problems
        guard problems.isEmpty else {
            throw .undecodableValue(history: name, reason: "invariant: verify reports \(problems)")
        }
        if let damage = try store.summary().histories.first(where: { $0.name == name })?.damage {
            throw .undecodableValue(history: name, reason: "invariant: inspect says it is damaged: \(damage)")
        }
    }
}
