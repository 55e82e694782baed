import Foundation
import Revertible

extension KeepsakeStore {
    /// The value of a history at one of its versions, as JSON, computed from the stored base
    /// value and change records alone — without the app's types, as `keepsake value` shows it.
    ///
    /// ```swift
    /// let json = try store.valueJSON(ofHistory: "note-42", atVersion: 1)
    /// // {"body": "", "tags": [], "title": "Groceries"}
    /// ```
    ///
    /// Version 0 is the base value; a version on the redo stack, or in an inner scope, gives the
    /// value that redoing up to it would give. `Data` is written as base64, as `JSONEncoder`
    /// writes it.
    ///
    /// - Parameters:
    ///   - name: The history's name.
    ///   - version: A version number as ``timeline(of:)`` lists it; the current version when `nil`.
    /// - Returns: Pretty-printed JSON with sorted keys, or `nil` when there is no such history or
    ///   version.
    /// - Throws: ``KeepsakeError``; `.reversion` naming the version and path of a change that
    ///   cannot be applied without the app's type (a patch kind of the app's own, say).
    public func valueJSON(ofHistory name: String, atVersion version: Int? = nil) throws(KeepsakeError)
        -> String?
    {
        try read { connection, blobs -> String? in
            guard let id = try HistoryRows.historyID(named: name, in: connection) else { return nil }
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            let versions = try connection.query(
                "SELECT position, scope_level, is_undone FROM version WHERE history_id = ? ORDER BY position",
                [.integer(id)]
            ) {
                (
                    version: HistoryRows.Version(position: Int(try $0.requiredInt64(0))),
                    level: Int(try $0.requiredInt64(1)), undone: $0.int64(2) == 1
                )
            }
            // Versions at or below the floor are folded into the base value: version 0 is the
            // value at the floor, which the stored base value and they give.
            let floor = try rows.floor()
            let newestApplied = versions.last(where: { !$0.undone })?.version.position ?? 0
            var target = version ?? (newestApplied > floor ? newestApplied : 0)
            let level: Int
            if target == 0 {
                (target, level) = (floor, 0)
            } else if target > floor, let found = versions.first(where: { $0.version.position == target }) {
                level = found.level
            } else {
                return nil
            }
            // The versions undo would pass from `target` to the base: the applied ones of every
            // outer scope, then those of its own scope up to it.
            let chain = versions.filter {
                target > 0
                    && (($0.level < level && !$0.undone)
                        || ($0.level == level && $0.version.position <= target))
            }
            guard let base = try rows.baseCheckpoint() else {
                throw KeepsakeError.damaged(history: name, reason: "it has no base value")
            }
            let form = try rows.storedForm(base, redoing: chain.map(\.version), history: name)
            let object = try JSONSerialization.jsonObject(
                with: Data(form.json.utf8), options: .fragmentsAllowed)
            let data = try JSONSerialization.data(
                withJSONObject: object,
                options: [.fragmentsAllowed, .prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        }
    }
}
