import Foundation
import Revertible

extension KeepsakeHistoryStorage {
    /// Checks the stored history against itself, for tests and `keepsake verify`: SQLite's
    /// integrity check, foreign keys, the stack sizes and stored counters, and that reverting the current value
    /// through every applied version reaches the stored base value.
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
            guard try rows.scopeCount() == level + 1 else { throw fail("scope rows") }
            let counts = try Counts(rows, level: level)
            guard (counts.undo, counts.redo, counts.total) == expected else { throw fail("stack sizes") }
            let counters = try rows.storedCounters().counters
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
            var value = current
            for version in try rows.appliedVersions(after: 0).reversed() {
                try Self.apply(rows, version, to: &value, inverted: false, history: name)
            }
            guard let base = try rows.baseCheckpoint() else { throw fail("no base value") }
            let stored: Value = try rows.decodeStored(base, history: name) { current }
            guard value.reversion(to: stored) == nil else {
                throw fail("undoing every version does not reach the base")
            }
        }
    }
}
