import Foundation
import TestSupport

@testable import Keepsake

extension Array where Element == VersionTag? {
    /// String tags as strings, for comparing with the full-copy model's.
    var strings: [String?] { map { $0?.value(as: String.self) } }
}

/// Rewrites the stored changes of every version (`version.changes`), as damage, a hand edit in
/// the `sqlite3` shell or an older release would have left them; `edit` gets each version's
/// position and its entries. Nothing else is touched: a changed entry keeps its digest unless
/// `edit` changes that too.
func editStoredChanges(
    _ connection: SQLiteConnection, _ edit: (_ position: Int, inout [StoredChanges.Entry]) throws -> Void
) throws {
    let versions = try connection.query("SELECT history_id, position, changes FROM version") {
        ($0.int64(0)!, Int($0.int64(1)!), $0.text(2)!)
    }
    for (history, position, text) in versions {
        var entries = try StoredChanges.entries(text)
        let original = entries
        try edit(position, &entries)
        guard entries != original else { continue }
        try connection.execute(
            "UPDATE version SET changes = ? WHERE history_id = ? AND position = ?",
            [.text(StoredChanges.text(of: entries)), .integer(history), .integer(Int64(position))])
    }
}

/// Every stored change as `(position, entry)`, in version order.
func storedChanges(_ connection: SQLiteConnection) throws -> [(position: Int, entry: StoredChanges.Entry)] {
    try connection.query("SELECT position, changes FROM version ORDER BY history_id, position") {
        (Int($0.int64(0)!), $0.text(1)!)
    }.flatMap { position, text in try StoredChanges.entries(text).map { (position, $0) } }
}

/// Moves every stored change at `path` to `newPath`, its digest cleared as in a store written
/// before digests (an edited entry that keeps its digest is damage).
func moveStoredChanges(_ connection: SQLiteConnection, at path: String, to newPath: String) throws {
    try editStoredChanges(connection) { _, entries in
        for index in entries.indices where entries[index].path == path {
            (entries[index].path, entries[index].digest) = (newPath, nil)
        }
    }
}
