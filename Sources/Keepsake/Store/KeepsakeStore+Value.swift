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
    /// writes it: without the app's types, every object whose one member is `"$blob"` holding
    /// a number is taken for Keepsake's reference to a blob and written as its bytes, an app's
    /// own dictionary of that one key too; the typed
    /// ``value(ofHistory:atVersion:as:fillingMissingFrom:)`` reads it as stored.
    ///
    /// Without the app's types, a property is looked up under its own name. For a model whose
    /// `CodingKeys` store properties under other keys, a change that sets an optional from
    /// `nil` (left out of the JSON) is written under the property's name, which that model does
    /// not read: ``value(ofHistory:atVersion:as:fillingMissingFrom:)`` reads the keys from the
    /// type, and is exact.
    ///
    /// - Parameters:
    ///   - name: The history's name.
    ///   - version: A version number as ``timeline(of:)`` lists it; the current version when `nil`.
    /// - Returns: Pretty-printed JSON with sorted keys, or `nil` when there is no such history or
    ///   version.
    /// - Throws: ``KeepsakeError``; `.reversion` naming the version and path of a change that
    ///   cannot be applied without the app's type (a patch kind of the app's own, say);
    ///   `.damaged` as ``value(ofHistory:atVersion:as:fillingMissingFrom:)`` throws it.
    public func valueJSON(ofHistory name: String, atVersion version: Int? = nil) throws(KeepsakeError)
        -> String?
    {
        // Written outside the read, which then holds no snapshot of the store while it is.
        let form = try read { connection, blobs -> StoredForm? in
            guard let id = try HistoryRows.historyID(named: name, in: connection) else { return nil }
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            guard
                var form = try Self.alongRoute(
                    to: version, rows, history: name,
                    { json, redoing in try rows.storedForm(json, redoing: redoing, history: name) })
            else { return nil }
            try blobs.inlineBlobs(in: &form)
            return form
        }
        return form?.prettyJSON
    }

    /// The value of a history at one of its versions, as `Value`, read from the store without
    /// opening the history or moving it: a version history to browse, in a store opened
    /// read-only too.
    ///
    /// ```swift
    /// for version in try store.timeline(of: "note-42") ?? [] {
    ///     let note = try store.value(ofHistory: "note-42", atVersion: version.version, as: Note.self)
    ///     print(version.version, note?.body ?? "")  // 0 "", 1 "", 2 "Milk, bread"
    /// }
    /// ```
    ///
    /// Version 0 is the base value; a version on the redo stack, or in an inner scope, gives the
    /// value that redoing up to it would give, as ``valueJSON(ofHistory:atVersion:)`` does. The
    /// value is the newest checkpoint on the way to it, decoded as `Value`, with the versions
    /// after it redone by the model; a change the model can no longer read is redone on the
    /// stored JSON instead, as undo does (see <doc:ChangingYourModel>). A change held back by
    /// debouncing is not a version yet, and is not in it.
    ///
    /// - Parameters:
    ///   - name: The history's name.
    ///   - version: A version number as ``timeline(of:)`` lists it; the current version when `nil`.
    ///   - type: The value type.
    ///   - template: A value whose properties fill those the stored value lacks (properties added
    ///     to `Value` since it was stored).
    /// - Returns: The value, or `nil` when there is no such history or version.
    /// - Throws: ``KeepsakeError``: `.reversion` naming the version and path of a change that
    ///   does not apply, `.undecodableValue` when the value does not decode as `Value`,
    ///   `.damaged` when a row does not match its digest, or the history's versions are not
    ///   as opening finds them: numbered one after another, as many above the floor as its
    ///   stored count, as many undone in its current scope as its stored redo count, none
    ///   applied above one undone in its own scope, an outer scope's before an inner one's,
    ///   and each inner scope on the version it started from.
    public func value<Value: Versionable & Codable & SendableMetatype>(
        ofHistory name: String, atVersion version: Int? = nil, as type: Value.Type = Value.self,
        fillingMissingFrom template: Value? = nil
    ) throws(KeepsakeError) -> Value? {
        try read { connection, blobs -> Value? in
            guard let id = try HistoryRows.historyID(named: name, in: connection) else { return nil }
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            // A change or a checkpoint the model cannot read: the versions redone on the stored
            // JSON.
            return try Self.alongRoute(to: version, rows, history: name) { json, redoing in
                try rows.replayed(from: json, redoing: redoing, history: name, template: { template }).value
            }
        }
    }

    /// `body` given the way to `version` (``route(to:_:history:below:)``): the stored whole
    /// value to start from and the versions to redo on it; `nil` when the history has no such
    /// version. Where the versions do not fit that value (a `.reversion` error: a checkpoint
    /// today's model stored, below versions an old app undid, as undo and opening pass over
    /// too), `body` is given the way from the checkpoint below it, down to the base value; the
    /// first error is thrown when none fits.
    private static func alongRoute<T>(
        to version: Int?, _ rows: HistoryRows, history name: String,
        _ body: (_ json: String, _ redoing: [HistoryRows.Version]) throws -> T
    ) throws -> T? {
        guard let route = try route(to: version, rows, history: name) else { return nil }
        return try HistoryRows.passingOverUnfit(
            from: route, at: \.start, below: { try Self.route(to: version, rows, history: name, below: $0) },
            { route in try body(route.json, route.redoing) })
    }

    /// The way to `version` of a history (its current version when `nil`): the stored whole
    /// value to start from — the newest checkpoint on the way, else the base value — and the
    /// versions to redo on it, oldest first; `nil` when the history has no such version.
    ///
    /// The way is the versions undo would pass from `version` to the base: the applied ones of
    /// every outer scope, then those of its own scope up to it. A checkpoint holds the value
    /// after an applied version, so only one below every undone version on the way is a start.
    /// `start` is the checkpoint's version (0: the base value); with `limit`, only a checkpoint
    /// below that version is one.
    private static func route(
        to version: Int?, _ rows: HistoryRows, history name: String, below limit: Int = .max
    ) throws -> (json: String, redoing: [HistoryRows.Version], start: Int)? {
        let places = try rows.places()
        let versions = places.map { (version: HistoryRows.Version(position: $0.position), place: $0.place) }
        // Versions at or below the floor are folded into the base value: version 0 is the
        // value at the floor, which the stored base value and they give.
        let floor = try naming(name) {
            let floor = try rows.floor()
            try rows.checkVersions(places, floor: floor)
            return floor
        }
        let newestApplied = versions.last(where: { !$0.place.undone })?.version.position ?? 0
        var target = version ?? (newestApplied > floor ? newestApplied : 0)
        let level: Int
        if target == 0 {
            (target, level) = (floor, 0)
        } else if target > floor, let found = versions.first(where: { $0.version.position == target }) {
            level = found.place.level
        } else {
            return nil
        }
        let way = versions.filter {
            target > 0
                && (($0.place.level < level && !$0.place.undone)
                    || ($0.place.level == level && $0.version.position <= target))
        }
        let firstUndone = way.first(where: \.place.undone)?.version.position ?? Int.max
        let starts = Set(way.map(\.version.position).filter { $0 < firstUndone })
        let checkpoints = try rows.connection.query(
            "SELECT position FROM checkpoint WHERE history_id = ? AND position IS NOT NULL ORDER BY position DESC",
            [.integer(rows.historyID)]
        ) { Int(try $0.requiredInt64(0)) }
        // The rows' own errors (a checkpoint that does not match its digest, one an index lost)
        // name no history.
        if let start = checkpoints.first(where: { $0 < limit && starts.contains($0) }),
            let json = try naming(name, { try rows.checkpoint(at: start) })
        {
            let redoing = way.filter { $0.version.position > start }.map(\.version)
            try checkConsecutive([start] + redoing.map(\.position), of: versions, history: name)
            return (json, redoing, start)
        }
        guard let base = try naming(name, { try rows.baseCheckpoint() }) else {
            throw KeepsakeError.damaged(history: name, reason: "it has no base value")
        }
        // From the version the base value is (schema 10), up to the target: versions folded and
        // hidden from look-ups would otherwise leave their changes out of version 0 unseen.
        let basePosition = try naming(name) { try rows.basePosition() }
        // (Version 0 of a store pruned before schema 4, with no floor, is the base value itself.)
        if let basePosition, (way.last?.version.position ?? basePosition) != max(target, basePosition) {
            throw KeepsakeError.damaged(
                history: name,
                reason:
                    "its versions from its base value (version \(basePosition)) do not reach version \(target)"
            )
        }
        try checkConsecutive(
            [basePosition].compactMap { $0 } + way.map(\.version.position), of: versions, history: name)
        return (base, way.map(\.version), 0)
    }

    /// Checks that each version redone follows the one before, or the versions between them
    /// are an outer scope's undone ones: a version row lost (or renumbered, or its flag or
    /// scope changed) by damage would otherwise have its change left out of the value, which
    /// the next version's check does not see when that change's paths are not its own.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` naming the missing version.
    private static func checkConsecutive(
        _ positions: [Int], of versions: [(version: HistoryRows.Version, place: HistoryRows.Place)],
        history name: String
    ) throws {
        let places = versions.map { ($0.version.position, $0.place) }
        if let gap = HistoryRows.firstGap(in: positions, places: Dictionary(places, uniquingKeysWith: { $1 }))
        {
            throw KeepsakeError.damaged(history: name, reason: gap)
        }
    }
}
