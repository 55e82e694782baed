import Foundation
import Revertible

/// The SQL of one history, in one place. Every function runs inside a transaction the caller
/// opened.
struct HistoryRows {
    let connection: SQLiteConnection
    let blobs: BlobCoding
    let historyID: Int64

    struct Version {
        let id: Int64
        let position: Int
        let tag: VersionTag?

        init(id: Int64, position: Int, tag: VersionTag? = nil) {
            (self.id, self.position, self.tag) = (id, position, tag)
        }

        /// Reads `SELECT id, position, tag FROM version …`.
        init(row: SQLiteStatement) throws {
            id = try row.requiredInt64(0)
            position = Int(try row.requiredInt64(1))
            tag = try HistoryRows.decodeTag(row.text(2), version: position)
        }
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    /// Whether the store has schema 2's tables and columns (a schema 1 store opened read-only
    /// has not).
    var hasSchema2: Bool { connection.schemaVersion >= 2 }

    /// The digest column in queries, or `NULL` (read unchecked) in a store without one.
    private var digestColumn: String { hasSchema2 ? "digest" : "NULL" }

    // MARK: Tags

    static func encodeTag(_ tag: VersionTag?) -> SQLiteValue {
        tag.map { .text($0.json) } ?? .null
    }

    /// A stored tag; text that is not JSON is damage, reported rather than read as no tag.
    static func decodeTag(_ json: String?, version: Int?) throws -> VersionTag? {
        guard let json else { return nil }
        guard let tag = VersionTag(json: json) else {
            throw ReversionError.undecodable(
                path: [], type: "VersionTag",
                reason:
                    "the tag of \(version.map { "version \($0)" } ?? "a scope's first version") is not JSON")
        }
        return tag
    }

    // MARK: Versions

    /// Applied versions of a scope, oldest first, or undone ones, next to redo first.
    func versions(scope: Int, undone: Bool, newestFirst: Bool = false, limit: Int? = nil) throws -> [Version]
    {
        let order = newestFirst ? "DESC" : "ASC"
        let limitClause = limit.map { " LIMIT \($0)" } ?? ""
        return try connection.query(
            """
            SELECT id, position, tag FROM version
            WHERE history_id = ? AND scope_level = ? AND is_undone = ? ORDER BY position \(order)\(limitClause)
            """, [.integer(historyID), .integer(Int64(scope)), .integer(undone ? 1 : 0)]
        ) { try Version(row: $0) }
    }

    func count(scope: Int, undone: Bool) throws -> Int {
        Int(
            try connection.scalarInt(
                "SELECT count(*) FROM version WHERE history_id = ? AND scope_level = ? AND is_undone = ?",
                [.integer(historyID), .integer(Int64(scope)), .integer(undone ? 1 : 0)]) ?? 0)
    }

    func totalCount() throws -> Int {
        Int(
            try connection.scalarInt(
                "SELECT count(*) FROM version WHERE history_id = ?", [.integer(historyID)]) ?? 0)
    }

    /// The change records of `version`, each checked against its digest (rows written before
    /// schema 2 have none).
    func records(of version: Version) throws -> [ChangeRecord] {
        try connection.query(
            "SELECT ordinal, path, kind, patch, \(digestColumn) FROM change WHERE version_id = ? ORDER BY ordinal",
            [.integer(version.id)]
        ) { row in
            let (ordinal, path, kind, patch) = (
                row.int64(0) ?? 0, row.text(1) ?? "", row.text(2) ?? "", row.text(3) ?? ""
            )
            if let stored = row.int64(4),
                stored != Self.digest(position: version.position, ordinal: ordinal, path, kind, patch)
            {
                throw KeepsakeError.damaged(
                    history: "",
                    reason:
                        "change \(ordinal) of version \(version.position) (at \(path.isEmpty ? "(root)" : path)) does not match its digest"
                )
            }
            return ChangeRecord(
                path: try PathDescriptor(parsing: path), kind: kind, payload: Data(patch.utf8))
        }
    }

    /// The digest of a stored row: XXH64 of its parts, each followed by a NUL, as a signed
    /// 64-bit integer (SQLite's INTEGER).
    static func digest(position: Int, ordinal: Int64? = nil, _ parts: String...) -> Int64 {
        var text = "\(position)\u{0}"
        if let ordinal { text += "\(ordinal)\u{0}" }
        for part in parts { text += part + "\u{0}" }
        let digest =
            text.utf8.withContiguousStorageIfAvailable { StableDigest.of(UnsafeRawBufferPointer($0)) }
            ?? Array(text.utf8).withUnsafeBytes { StableDigest.of($0) }
        return Int64(bitPattern: digest)
    }

    /// Inserts a version after every other one; returns its id and the bytes its changes took.
    func maxPosition() throws -> Int {
        let highest = Int(
            try connection.scalarInt(
                "SELECT max(position) FROM version WHERE history_id = ?", [.integer(historyID)]) ?? 0)
        // The next version takes the position after it: a damaged number must not overflow.
        guard highest <= Self.largestNumber else {
            throw KeepsakeError.damaged(
                history: "", reason: "a version's position is \(highest), out of range")
        }
        return highest
    }

    /// The largest number a store's counters and positions may hold: far beyond any real
    /// history (a trillion versions), far below where adding to it could overflow.
    static let largestNumber = 1 << 40

    func insertVersion(position: Int, scope: Int, tag: VersionTag?, records: [ChangeRecord]) throws -> (
        id: Int64, bytes: Int
    ) {
        let position = Int64(position)
        try connection.execute(
            "INSERT INTO version (history_id, position, scope_level, tag, created_at) VALUES (?, ?, ?, ?, ?)",
            [
                .integer(historyID), .integer(position), .integer(Int64(scope)), Self.encodeTag(tag),
                .real(Self.now()),
            ])
        let versionID = connection.lastInsertRowID
        var bytes = 0
        for (ordinal, record) in records.enumerated() {
            let patch = String(decoding: record.payload, as: UTF8.self)
            let path = record.path.description
            bytes += record.payload.count + path.utf8.count
            try connection.execute(
                "INSERT INTO change (version_id, ordinal, path, kind, patch, digest) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .integer(versionID), .integer(Int64(ordinal)), .text(path), .text(record.kind),
                    .text(patch),
                    .integer(
                        Self.digest(
                            position: Int(position), ordinal: Int64(ordinal), path, record.kind, patch)),
                ])
        }
        return (versionID, bytes)
    }

    // MARK: Pending changes

    /// Replaces the history's held change with `records` (none: no change is held).
    func replacePending(with records: [ChangeRecord]) throws {
        try connection.execute("DELETE FROM pending_change WHERE history_id = ?", [.integer(historyID)])
        for (ordinal, record) in records.enumerated() {
            try connection.execute(
                "INSERT INTO pending_change (history_id, ordinal, path, kind, patch) VALUES (?, ?, ?, ?, ?)",
                [
                    .integer(historyID), .integer(Int64(ordinal)), .text(record.path.description),
                    .text(record.kind), .text(String(decoding: record.payload, as: UTF8.self)),
                ])
        }
    }

    /// The held change's records, in order; empty when no change is held.
    func pendingRecords() throws -> [ChangeRecord] {
        // A store of schema 1, opened read-only, has no such table: nothing is held then.
        guard hasSchema2 else { return [] }
        return try connection.query(
            "SELECT path, kind, patch FROM pending_change WHERE history_id = ? ORDER BY ordinal",
            [.integer(historyID)]
        ) { row in
            let path = try PathDescriptor(parsing: row.text(0) ?? "")
            return ChangeRecord(path: path, kind: row.text(1) ?? "", payload: Data((row.text(2) ?? "").utf8))
        }
    }

    func setUndone(_ ids: [Int64], _ undone: Bool) throws {
        for id in ids {
            try connection.execute(
                "UPDATE version SET is_undone = ? WHERE id = ?", [.integer(undone ? 1 : 0), .integer(id)])
        }
    }

    func deleteVersions(scope: Int, undoneOnly: Bool) throws {
        try connection.execute(
            "DELETE FROM version WHERE history_id = ? AND scope_level = ?"
                + (undoneOnly ? " AND is_undone = 1" : ""),
            [.integer(historyID), .integer(Int64(scope))])
    }

    func setTag(_ tag: VersionTag?, version id: Int64) throws {
        try connection.execute(
            "UPDATE version SET tag = ? WHERE id = ?", [Self.encodeTag(tag), .integer(id)])
    }

    // MARK: Scopes

    func baseTag(scope: Int) throws -> VersionTag? {
        try Self.decodeTag(
            try connection.scalarText(
                "SELECT base_tag FROM scope WHERE history_id = ? AND level = ?",
                [.integer(historyID), .integer(Int64(scope))]), version: nil)
    }

    func setBaseTag(_ tag: VersionTag?, scope: Int) throws {
        try connection.execute(
            "UPDATE scope SET base_tag = ? WHERE history_id = ? AND level = ?",
            [Self.encodeTag(tag), .integer(historyID), .integer(Int64(scope))])
    }

    func insertScope(level: Int) throws {
        try connection.execute(
            "INSERT INTO scope (history_id, level) VALUES (?, ?)",
            [.integer(historyID), .integer(Int64(level))])
    }

    func deleteScope(level: Int) throws {
        try connection.execute(
            "DELETE FROM scope WHERE history_id = ? AND level = ?",
            [.integer(historyID), .integer(Int64(level))])
    }

    func scopeCount() throws -> Int {
        Int(
            try connection.scalarInt("SELECT count(*) FROM scope WHERE history_id = ?", [.integer(historyID)])
                ?? 0)
    }

    // MARK: Checkpoints

    /// A stored whole value (a checkpoint) as today's `Value`: what it lacks (properties added
    /// since) is filled from `template`, renamed and converted properties are read as declared.
    func decodeStored<Value: Versionable & Codable>(
        _ json: String, history name: String, template: () -> Value?
    ) throws -> Value {
        do {
            return try EvolvingDecoding.decode(
                Value.self, from: Data(json.utf8),
                template: { template().flatMap { try? ChangeRecord.makeEncoder().encode($0) } },
                decoder: blobs.decoder)
        } catch let error as KeepsakeError {
            throw error
        } catch {
            throw KeepsakeError.undecodableValue(history: name, reason: RecordCoding.describe(error))
        }
    }

    /// Stores `value` whole, as the value right after `version` (the base value when `nil`);
    /// returns its size, blobs included.
    func writeCheckpoint<Value: Encodable>(_ value: Value, version: Int64?) throws -> Int {
        let blobBytesBefore = blobs.blobBytesEncoded
        let json = String(decoding: try blobs.encoder.encode(value), as: UTF8.self)
        let size = json.utf8.count + blobs.blobBytesEncoded - blobBytesBefore
        var position = 0
        if let version {
            position = Int(
                try connection.scalarInt("SELECT position FROM version WHERE id = ?", [.integer(version)])
                    ?? 0)
            try connection.execute("DELETE FROM checkpoint WHERE version_id = ?", [.integer(version)])
        } else {
            try connection.execute(
                "DELETE FROM checkpoint WHERE history_id = ? AND version_id IS NULL", [.integer(historyID)])
        }
        try connection.execute(
            "INSERT INTO checkpoint (history_id, version_id, value, created_at, digest) VALUES (?, ?, ?, ?, ?)",
            [
                .integer(historyID), version.map { .integer($0) } ?? .null, .text(json), .real(Self.now()),
                .integer(Self.digest(position: position, json)),
            ])
        return size
    }

    /// The newest checkpoint on an applied version (its position and JSON), else the base.
    func bestCheckpoint() throws -> (position: Int, json: String)? {
        let applied = try connection.query(
            """
            SELECT v.position, c.value, \(hasSchema2 ? "c.digest" : "NULL") FROM version v JOIN checkpoint c ON c.version_id = v.id
            WHERE v.history_id = ? AND v.is_undone = 0 ORDER BY v.position DESC LIMIT 1
            """, [.integer(historyID)]
        ) {
            try Self.checkedCheckpoint(
                position: Int(try $0.requiredInt64(0)), json: $0.text(1), digest: $0.int64(2))
        }
        if let applied = applied.first { return applied }
        return try baseCheckpoint().map { (0, $0) }
    }

    /// The base value's JSON: the value before every version kept.
    func baseCheckpoint() throws -> String? {
        try connection.query(
            "SELECT value, \(digestColumn) FROM checkpoint WHERE history_id = ? AND version_id IS NULL",
            [.integer(historyID)]
        ) { try Self.checkedCheckpoint(position: 0, json: $0.text(0), digest: $0.int64(1)).json }.first
    }

    /// A checkpoint read back, checked against its digest.
    private static func checkedCheckpoint(position: Int, json: String?, digest: Int64?) throws -> (
        position: Int, json: String
    ) {
        let json = json ?? ""
        if let digest, digest != Self.digest(position: position, json) {
            throw KeepsakeError.damaged(
                history: "",
                reason: position == 0
                    ? "its base value does not match its digest"
                    : "the checkpoint of version \(position) does not match its digest")
        }
        return (position, json)
    }

    /// Applied versions after `position`, oldest first.
    func appliedVersions(after position: Int) throws -> [Version] {
        try connection.query(
            "SELECT id, position, tag FROM version WHERE history_id = ? AND is_undone = 0 AND position > ? ORDER BY position",
            [.integer(historyID), .integer(Int64(position))]
        ) { try Version(row: $0) }
    }

    // MARK: History row

    /// Bumps the revision when it is still `expected` and stores the stack sizes; otherwise
    /// another writer got there first, and the caller's whole transaction rolls back.
    func claim(revision expected: Int64, name: String, undo: Int, redo: Int, total: Int) throws {
        try connection.execute(
            """
            UPDATE history SET revision = revision + 1, modified_at = ?, undo_count = ?, redo_count = ?,
                version_count = ?
            WHERE id = ? AND revision = ?
            """,
            [
                .real(Self.now()), .integer(Int64(undo)), .integer(Int64(redo)), .integer(Int64(total)),
                .integer(historyID), .integer(expected),
            ])
        guard connection.changes == 1 else { throw KeepsakeError.historyConflict(history: name) }
    }

    /// The size of the blobs a checkpoint's JSON refers to.
    func blobBytes(inJSON json: String) throws -> Int {
        Int(
            try connection.scalarInt(
                "SELECT coalesce(sum(b.size), 0) FROM json_tree(?) AS j JOIN blob b ON b.id = j.value WHERE j.key = '$blob'",
                [.text(json)]) ?? 0)
    }
}
