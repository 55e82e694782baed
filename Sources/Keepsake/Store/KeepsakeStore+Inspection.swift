public import Foundation

/// What a store holds, for tools and for looking at a store that seems wrong. Nothing here
/// needs the value types, and nothing writes.
extension KeepsakeStore {
    /// A store at a glance.
    public struct Summary: Codable, Sendable, Equatable {
        /// The schema version (`PRAGMA user_version`).
        public var schemaVersion: Int
        /// The file's size in bytes, write-ahead log included (0 in memory).
        public var fileSize: Int
        /// Every history.
        public var histories: [HistorySummary]
        /// Every snapshot.
        public var snapshots: [SnapshotInfo]
    }

    /// One history at a glance.
    public struct HistorySummary: Codable, Sendable, Equatable {
        /// The history's name.
        public var name: String
        /// The Swift type of its value.
        public var valueType: String
        /// Versions stored (undo and redo, all scopes).
        public var versions: Int
        /// Versions to undo in the current scope.
        public var undoDepth: Int
        /// Versions to redo in the current scope.
        public var redoDepth: Int
        /// The current scope level.
        public var scopeLevel: Int
        /// The tags in use, in version order: a string tag as itself, any other as its JSON.
        public var tags: [String]
        /// The version limit, if any.
        public var maximumVersions: Int?
        /// The paths of a change held back and not yet a version, in the order undo applies
        /// them: one debouncing held, or one a controller let go of gave the store. The next
        /// open records it as a version. Empty when nothing is held, and when decoding a
        /// summary an earlier release wrote, which had no such key.
        public var heldPaths: [String]
        /// When the history was created.
        public var created: Date
        /// When it was last written.
        public var modified: Date
        /// Why the history is damaged, as opening it or reading its timeline would say, when its
        /// versions (their numbers, scopes, flags and counts), its tags or its held change do
        /// not check out; `nil` when they do. Its changes are not read here: the timeline and
        /// ``KeepsakeStore/verify()`` check them against their digests too. The other fields
        /// are as stored (the tags or held paths that could not be read are empty); `verify()`
        /// lists every problem of the store.
        public var damage: String?

        init(
            name: String, valueType: String, versions: Int, undoDepth: Int, redoDepth: Int, scopeLevel: Int,
            tags: [String], maximumVersions: Int?, heldPaths: [String], created: Date, modified: Date,
            damage: String? = nil
        ) {
            (self.name, self.valueType, self.versions) = (name, valueType, versions)
            (self.undoDepth, self.redoDepth, self.scopeLevel) = (undoDepth, redoDepth, scopeLevel)
            (self.tags, self.maximumVersions, self.heldPaths) = (tags, maximumVersions, heldPaths)
            (self.created, self.modified, self.damage) = (created, modified, damage)
        }

        /// Decodes a summary; one an earlier release wrote, without `heldPaths` or `damage`,
        /// holds none.
        ///
        /// - Parameter decoder: The decoder to read from.
        /// - Throws: `DecodingError` when a key other than `heldPaths`, `maximumVersions` or
        ///   `damage` is missing or of another type.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                name: try container.decode(String.self, forKey: .name),
                valueType: try container.decode(String.self, forKey: .valueType),
                versions: try container.decode(Int.self, forKey: .versions),
                undoDepth: try container.decode(Int.self, forKey: .undoDepth),
                redoDepth: try container.decode(Int.self, forKey: .redoDepth),
                scopeLevel: try container.decode(Int.self, forKey: .scopeLevel),
                tags: try container.decode([String].self, forKey: .tags),
                maximumVersions: try container.decodeIfPresent(Int.self, forKey: .maximumVersions),
                heldPaths: try container.decodeIfPresent([String].self, forKey: .heldPaths) ?? [],
                created: try container.decode(Date.self, forKey: .created),
                modified: try container.decode(Date.self, forKey: .modified),
                damage: try container.decodeIfPresent(String.self, forKey: .damage))
        }
    }

    /// One version of a history's timeline.
    public struct VersionSummary: Codable, Sendable, Equatable {
        /// The version's number (its position in the history); 0 for the base value.
        public var version: Int
        /// When it was written.
        public var date: Date
        /// Its tag: a string tag as itself, any other as its JSON.
        public var tag: String?
        /// The scope it belongs to.
        public var scopeLevel: Int
        /// Whether it is on the redo stack.
        public var undone: Bool
        /// The paths it changed.
        public var paths: [String]
    }

    /// One stored change.
    public struct ChangeSummary: Codable, Sendable, Equatable {
        /// The changed path.
        public var path: String
        /// The patch kind.
        public var kind: String
        /// The patch as JSON text.
        public var patch: String
    }

    /// The outcome of ``verify()``.
    public struct Verification: Codable, Sendable, Equatable {
        /// `PRAGMA integrity_check`'s answer: `["ok"]` when sound.
        public var integrity: [String]
        /// The schema version.
        public var schemaVersion: Int
        /// Whether the application id is Keepsake's.
        public var applicationIDMatches: Bool
        /// Problems found in the histories and snapshots; empty when consistent.
        public var problems: [String]

        /// Whether everything checked out.
        public var isOK: Bool { integrity == ["ok"] && applicationIDMatches && problems.isEmpty }
    }

    /// The store at a glance.
    ///
    /// - Throws: ``KeepsakeError``.
    public func summary() throws(KeepsakeError) -> Summary {
        let path = file
        return try read { connection, blobs in
            let histories = try connection.query(
                """
                SELECT h.id, h.name, h.value_type, h.maximum_versions, h.created_at,
                       coalesce((SELECT modified_at FROM version WHERE history_id = h.id
                                 ORDER BY position DESC LIMIT 1), h.modified_at),
                       (SELECT count(*) FROM version WHERE history_id = h.id AND position > (SELECT floor FROM scope WHERE history_id = h.id AND level = 0)),
                       (SELECT count(*) - 1 FROM scope WHERE history_id = h.id)
                FROM history AS h NOT INDEXED ORDER BY h.name
                """
            ) { row in
                (
                    id: try row.requiredInt64(0),
                    summary: HistorySummary(
                        name: row.text(1) ?? "", valueType: row.text(2) ?? "",
                        versions: Int(row.int64(6) ?? 0), undoDepth: 0,
                        redoDepth: 0, scopeLevel: Int(row.int64(7) ?? 0), tags: [],
                        maximumVersions: row.int64(3).map(Int.init), heldPaths: [],
                        created: Date(timeIntervalSince1970: row.double(4) ?? 0),
                        modified: Date(timeIntervalSince1970: row.double(5) ?? 0))
                )
            }
            var summaries: [HistorySummary] = []
            for (id, base) in histories {
                var summary = base
                let depth = { (undone: Int64) in
                    Int(
                        try connection.scalarInt(
                            "SELECT count(*) FROM version WHERE history_id = ?1 AND scope_level = ?2 AND is_undone = "
                                + String(undone) + " AND " + HistoryRows.aboveFloor,
                            [.integer(id), .integer(Int64(summary.scopeLevel))]) ?? 0)
                }
                summary.undoDepth = try depth(0)
                summary.redoDepth = try depth(1)
                // A damaged history is listed, saying why, as opening and the timeline would:
                // its counts above are as stored, and what could not be read is left empty.
                func noting(_ read: () throws -> Void) throws {
                    do {
                        if let reason = try Self.damage(of: read) {
                            summary.damage = summary.damage ?? reason
                        }
                    } catch let error as SQLiteError
                        where Schema.damagedSchema(failing: error, connection, path: path) != nil
                    {
                        // A statement damaged so that a column is gone: the rest is listed.
                        summary.damage = summary.damage ?? "its versions cannot be checked: \(error.message)"
                    }
                }
                let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
                try noting { try rows.checkVersions(rows.places(), floor: rows.floor()) }
                try noting {
                    summary.heldPaths = try Self.heldPaths(of: id, history: summary.name, connection, blobs)
                }
                try noting { summary.tags = try Self.tags(of: id, connection) }
                summaries.append(summary)
            }
            let snapshots = try Caretaker.snapshotInfos(connection, prefix: "")
            let size = [path, path + "-wal"].reduce(0) { total, file in
                total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
            }
            return Summary(
                schemaVersion: Int(try connection.scalarInt("PRAGMA user_version") ?? 0),
                fileSize: path == ":memory:" ? 0 : size, histories: summaries, snapshots: snapshots)
        }
    }

    /// Why `body` found a history damaged (the reason of the
    /// ``KeepsakeError/damaged(history:reason:)`` it throws), or `nil` when it did not throw.
    ///
    /// - Throws: Any other error `body` throws.
    private static func damage(of body: () throws -> Void) throws -> String? {
        do {
            try body()
            return nil
        } catch KeepsakeError.damaged(_, let reason) {
            return reason
        }
    }

    /// The tags of history `id`, as ``HistorySummary/tags`` lists them.
    ///
    /// - Throws: `.damaged`, naming no history, when a tag does not match its digest.
    private static func tags(of id: Int64, _ connection: SQLiteConnection) throws -> [String] {
        let (digest, baseDigest) = (
            connection.column("tag_digest", since: 7), connection.column("base_tag_digest", since: 7)
        )
        return try connection.query(
            """
            SELECT tag, digest, position, level FROM (
                SELECT base_tag AS tag, \(baseDigest) AS digest, -1 AS position, level FROM scope WHERE history_id = ?1
                UNION ALL SELECT tag, \(digest), position, 0 FROM version WHERE history_id = ?1 AND \(HistoryRows.aboveFloor))
            WHERE tag IS NOT NULL ORDER BY position, level
            """, [.integer(id)]
        ) { row in
            let position = row.int64(2).map(Int.init)
            return try HistoryRows.decodeTag(
                row.text(0), digest: row.int64(1), version: position == -1 ? nil : position,
                level: Int(row.int64(3) ?? 0))?.description ?? ""
        }
    }

    /// A history's versions, oldest first, starting with version 0: the base value (before every
    /// version kept), with its tag.
    ///
    /// - Parameter history: The history's name.
    /// - Returns: The timeline, or `nil` when there is no such history.
    /// - Throws: ``KeepsakeError``; ``KeepsakeError/damaged(history:reason:)`` naming the first
    ///   version whose changes are not readable or do not match their digests, or that is
    ///   marked neither applied nor undone; when the root scope's row is missing, or the
    ///   versions are not as opening finds them (as
    ///   ``value(ofHistory:atVersion:as:fillingMissingFrom:)`` checks them: a version lost,
    ///   renumbered, or flagged applied or undone otherwise than the app left it).
    public func timeline(of history: String) throws(KeepsakeError) -> [VersionSummary]? {
        try read { connection, blobs -> [VersionSummary]? in
            guard let id = try HistoryRows.historyID(named: history, in: connection) else { return nil }
            try Self.checkRootScope(of: id, history: history, connection, blobs)
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            // Version 0 is the base: the value before every version kept, with the tag of the
            // root scope's first version.
            let (baseDigest, digest) = (
                connection.column("s.base_tag_digest", since: 7), connection.column("v.tag_digest", since: 7)
            )
            let base = try connection.query(
                "SELECT h.created_at, s.base_tag, \(baseDigest) FROM history h "
                    + "JOIN scope s ON s.history_id = h.id AND s.level = 0 WHERE h.id = ?", [.integer(id)]
            ) { row in
                VersionSummary(
                    version: 0, date: Date(timeIntervalSince1970: row.double(0) ?? 0),
                    tag: try HistoryRows.decodeTag(row.text(1), digest: row.int64(2), version: nil)?
                        .description,
                    scopeLevel: 0, undone: false, paths: [])
            }
            let versions = try connection.query(
                """
                SELECT v.position, v.created_at, v.tag, v.scope_level, v.is_undone,
                       v.changes, \(digest)
                FROM version v WHERE v.history_id = ?1 AND \(HistoryRows.aboveFloor) ORDER BY v.position
                """, [.integer(id)]
            ) { row in
                let position = Int(try row.requiredInt64(0))
                // A flag neither 0 nor 1 is damage, not a version shown as applied.
                let place = try HistoryRows.Place(row: row, from: 3, position: position, of: rows)
                let paths: [String]
                do throws(KeepsakeError) {
                    paths = try StoredChanges.checkedEntries(row.text(5) ?? "", position: position).map(
                        \.path)
                } catch {
                    throw error.naming(history: history)
                }
                return VersionSummary(
                    version: position,
                    date: Date(timeIntervalSince1970: row.double(1) ?? 0),
                    tag: try HistoryRows.decodeTag(
                        row.text(2), digest: row.int64(6), version: position)?.description,
                    scopeLevel: place.level,
                    undone: place.undone,
                    paths: paths)
            }
            // A version lost, renumbered, or flagged otherwise is damage, as opening finds it.
            try Self.naming(history) {
                try rows.checkVersions(
                    versions.map { ($0.version, HistoryRows.Place(level: $0.scopeLevel, undone: $0.undone)) },
                    floor: try rows.floor())
            }
            return base + versions
        }
    }

    /// The changes of one version, in the order undo applies them.
    ///
    /// - Parameters:
    ///   - version: The version's number, as ``timeline(of:)`` lists it.
    ///   - history: The history's name.
    /// - Returns: The changes, or `nil` when there is no such history or version.
    /// - Throws: ``KeepsakeError``; ``KeepsakeError/damaged(history:reason:)`` when the
    ///   version's changes are not readable or one does not match its digest, or when the root
    ///   scope's row is missing.
    public func changes(ofVersion version: Int, in history: String) throws(KeepsakeError) -> [ChangeSummary]?
    {
        try read { connection, blobs -> [ChangeSummary]? in
            guard let id = try HistoryRows.historyID(named: history, in: connection) else { return nil }
            try Self.checkRootScope(of: id, history: history, connection, blobs)
            guard
                let changes = try connection.scalarText(
                    """
                    SELECT changes FROM version
                    WHERE history_id = ?1 AND position = ?2 AND position > (SELECT floor FROM scope WHERE history_id = ?1 AND level = 0)
                    """, [.integer(id), .integer(Int64(version))])
            else { return nil }
            do throws(KeepsakeError) {
                return try StoredChanges.checkedEntries(changes, position: version).map {
                    ChangeSummary(path: $0.path, kind: $0.kind, patch: $0.patch)
                }
            } catch {
                throw error.naming(history: history)
            }
        }
    }

    /// The paths of the change `history` holds back, in the order undo applies them;
    /// `nil` when there is no such history, empty when nothing is held. The next open of the
    /// history records the change as a version (``HistorySummary/heldPaths``).
    ///
    /// - Parameter history: The history's name.
    /// - Throws: ``KeepsakeError``; ``KeepsakeError/damaged(history:reason:)`` when the held
    ///   rows do not match their digest.
    public func heldPaths(of history: String) throws(KeepsakeError) -> [String]? {
        try read { connection, blobs -> [String]? in
            guard let id = try HistoryRows.historyID(named: history, in: connection) else { return nil }
            return try Self.heldPaths(of: id, history: history, connection, blobs)
        }
    }

    /// The held change's paths, its rows checked against the digest the history's counters hold.
    static func heldPaths(
        of id: Int64, history: String, _ connection: SQLiteConnection, _ blobs: BlobCoding
    ) throws -> [String] {
        try naming(history) {
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            // Nothing held (most histories): the counters are not read, so inspecting a store
            // whose version table lost a column it does not need still works. Held rows lost
            // while the counters keep their digest are for verify() to find.
            guard rows.hasSchema2,
                try connection.scalarInt(
                    "SELECT count(*) FROM pending_change WHERE history_id = ?", [.integer(id)]) ?? 0 > 0
            else { return [] }
            let digest = connection.schemaVersion >= 5 ? try rows.storedCounters().counters.held : nil
            return try rows.pendingRecords(digest: digest, history: history).map(\.path.description)
        }
    }

    /// Checks that history `id` (named `history`) has its root scope's row, before its versions
    /// are listed: a history without one is damaged, not empty.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` naming `history`.
    static func checkRootScope(
        of id: Int64, history: String, _ connection: SQLiteConnection, _ blobs: BlobCoding
    ) throws {
        _ = try naming(history) {
            try HistoryRows(connection: connection, blobs: blobs, historyID: id).floor()
        }
    }

    /// What `body` returns, the errors it throws naming `history` (those of ``HistoryRows``
    /// name none).
    static func naming<T>(_ history: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeepsakeError {
            throw error.naming(history: history)
        }
    }

    /// The condition on a row `j` of `json_tree(json)` that it is a blob reference as Keepsake
    /// reads one: the integer member of an object whose one member is `"$blob"`. An app's own
    /// object with a `"$blob"` key and other members, or text there, is not one (until 2026-11
    /// `verify` said a blob it named was missing, of a sound store).
    private static func blobReference(_ json: String) -> String {
        "j.key = '$blob' AND j.type = 'integer' AND (SELECT count(*) FROM json_each(\(json), j.path)) = 1"
    }

    /// Checks the whole store: SQLite's integrity check, the application id and schema version,
    /// the schema's tables, columns and indexes against Keepsake's (a damaged `CREATE`
    /// statement that still parses), foreign keys, the invariants of every history (scopes,
    /// undo/redo order, a base value, well-formed paths and patches, the versions and the held
    /// change as opening checks them), every snapshot property against its digest, and the
    /// blob references of versions, checkpoints, held changes and snapshots. What makes a read
    /// or an open say the store is damaged, it reports.
    ///
    /// ```swift
    /// let verification = try store.verify()
    /// if !verification.isOK { print(verification.problems.joined(separator: "\n")) }
    /// ```
    ///
    /// Blob references are checked without the app's types: an object of the app's own whose
    /// one member is `"$blob"` holding a number that names no blob is reported as a reference
    /// to a missing blob.
    ///
    /// - Returns: What was found; ``Verification/isOK`` says whether all is well.
    /// - Throws: ``KeepsakeError`` when the store cannot be read at all.
    public func verify() throws(KeepsakeError) -> Verification {
        try read { connection, blobs in
            let integrity = try connection.query("PRAGMA integrity_check") { $0.text(0) ?? "" }
            func verification(_ problems: [String]) throws -> Verification {
                Verification(
                    integrity: integrity,
                    schemaVersion: Int(try connection.scalarInt("PRAGMA user_version") ?? 0),
                    applicationIDMatches: try connection.scalarInt("PRAGMA application_id")
                        == Int64(Schema.applicationID),
                    problems: problems)
            }
            // A table's damaged CREATE statement that still parses: the checks below read the
            // tables through it, and would report SQL errors instead of the damage. (An index's
            // fails SQLite's integrity check too; this says which statement.)
            func schemaProblems() throws -> [String] {
                try (Schema.shapeDifferences(connection) + Schema.unparsableStatements(connection)).map {
                    "the schema is not Keepsake's: \($0)"
                }
            }
            var problems: [String] = []
            if integrity != ["ok"] {
                return try verification(
                    ["the file is corrupt; the history checks were skipped"] + ((try? schemaProblems()) ?? [])
                )
            }
            // Each check reports what it finds; one that cannot even run (damage SQLite trips
            // over, such as malformed JSON) is a problem too, never a thrown error.
            func check(_ what: String, _ body: () throws -> [String]) {
                do {
                    problems += try body()
                } catch {
                    problems.append("\(what) could not be checked: \(error)")
                }
            }
            check("the schema", schemaProblems)
            if !problems.isEmpty {
                return try verification(
                    problems + ["the history checks were skipped: they read the tables above"])
            }
            if connection.readsWithoutUnreadableViews {
                check("views") {
                    let names = try Schema.staleViews(connection).joined(separator: ", ")
                    let version = try connection.scalarText("SELECT sqlite_version()") ?? "?"
                    return [
                        "the views \(names) do not parse in this SQLite (\(version)), nor in its sqlite3 shell "
                            + "(the first release wrote them with a JSON operator SQLite has only since 3.38, or they are "
                            + "damaged): they hold no data, and opening the store for writing rewrites them"
                    ]
                }
            }
            check("foreign keys") {
                try connection.query("PRAGMA foreign_key_check") {
                    "foreign key violation in \($0.text(0) ?? "") row \($0.int64(1) ?? 0)"
                }
            }
            for (sql, message) in Self.verificationQueries(schemaVersion: connection.schemaVersion) {
                check(message.replacingOccurrences(of: "%@", with: "…")) {
                    try connection.query(sql) {
                        message.replacingOccurrences(of: "%@", with: $0.text(0) ?? "?")
                    }
                }
            }
            check("paths and digests of changes") {
                try connection.query(
                    "SELECT h.name, v.position, v.changes FROM version v JOIN history h ON h.id = v.history_id"
                ) { row -> [String] in
                    let (history, position) = (row.text(0) ?? "", row.int64(1) ?? 0)
                    let entries: [StoredChanges.Entry]
                    do throws(StoredChanges.Malformed) {
                        entries = try StoredChanges.entries(row.text(2) ?? "")
                    } catch {
                        return [
                            "history \(history), version \(position): its changes are not readable: \(error.reason)"
                        ]
                    }
                    return entries.enumerated().compactMap { ordinal, entry -> String? in
                        if (try? PathDescriptor(parsing: entry.path)) == nil {
                            return
                                "history \(history), version \(position): the path \(entry.path.debugDescription) does not parse"
                        }
                        if !entry.matchesDigest(position: position, ordinal: ordinal) {
                            return
                                "history \(history), version \(position): change \(ordinal) does not match its digest"
                        }
                        return nil
                    }
                }.flatMap { $0 }
            }
            check("digests of checkpoints") {
                try connection.query(
                    "SELECT h.name, coalesce(c.position, 0), c.value, c.digest FROM checkpoint c "
                        + "JOIN history h ON h.id = c.history_id"
                ) { row -> String? in
                    let (history, position) = (row.text(0) ?? "", row.int64(1) ?? 0)
                    guard let digest = row.int64(3),
                        (0...Int64(HistoryRows.largestNumber)).contains(position),
                        digest != HistoryRows.digest(position: Int(position), row.text(2) ?? "")
                    else { return nil }
                    return position == 0
                        ? "history \(history): its base value does not match its digest"
                        : "history \(history), version \(position): its checkpoint does not match its digest"
                }.compactMap { $0 }
            }
            check("blobs") {
                try connection.query("SELECT id, size, digest, bytes FROM blob") { row -> String? in
                    let bytes = row.blob(3) ?? Data()
                    guard row.int64(1) != Int64(bytes.count) || row.text(2) != BlobCoding.digest(bytes) else {
                        return nil
                    }
                    return "blob \(row.int64(0) ?? 0): its bytes do not match their stored size and digest"
                }.compactMap { $0 }
            }
            if connection.schemaVersion >= 6 {
                check("snapshots' property counts") {
                    try connection.query(
                        """
                        SELECT name, property_count, (SELECT count(*) FROM snapshot_property WHERE snapshot_id = s.id)
                        FROM snapshot s NOT INDEXED
                        WHERE property_count IS NOT (SELECT count(*) FROM snapshot_property WHERE snapshot_id = s.id)
                        """
                    ) {
                        "snapshot \($0.text(0) ?? ""): it holds \($0.int64(2) ?? 0) of the "
                            + "\($0.int64(1).map(String.init) ?? "NULL") property rows it was saved with"
                    }
                }
            }
            check("snapshots' properties") {
                let digest = connection.column("p.digest", since: 2)
                let stored = Set(try connection.query("SELECT id FROM blob") { try $0.requiredInt64(0) })
                return try connection.query(
                    "SELECT s.namespace, s.name, p.path, p.value, \(digest) FROM snapshot_property p "
                        + "JOIN snapshot s ON s.id = p.snapshot_id ORDER BY s.namespace, s.name, p.path"
                ) { row -> [String] in
                    let (namespace, name) = (row.text(0) ?? "", row.text(1) ?? "")
                    let (path, value) = (row.text(2) ?? "", row.text(3) ?? "")
                    let place = "snapshot \(name), property \(path.isEmpty ? "(root)" : path)"
                    if let digest = row.int64(4), digest != Caretaker.digest(namespace, name, path, value) {
                        return ["\(place): it does not match its digest"]
                    }
                    // Its JSON, or the blob holding it when long; then the blobs it refers to.
                    var json = value
                    if let id = BlobCoding.textReference(value) {
                        guard stored.contains(id) else {
                            return ["blob \(id) is referred to by \(place) but missing"]
                        }
                        // A blob whose bytes are damaged: the check of blobs reports it.
                        guard let text = try? blobs.resolvedText(value) else { return [] }
                        json = text
                    }
                    guard json.contains("\"$blob\""), let form = try? StoredForm(json: json) else {
                        return []
                    }
                    return Set(form.integers(under: "$blob")).subtracting(stored).sorted().map {
                        "blob \($0) is referred to by \(place) but missing"
                    }
                }.flatMap { $0 }
            }
            // Each history's versions and held change, checked as reading and opening check
            // them, so that what makes a read say damaged is reported: the versions of a
            // history the queries above found nothing wrong with (where they did, this would
            // say the same again in other words).
            let named = problems
            check("the histories' versions and held changes") {
                try connection.query("SELECT id, name FROM history NOT INDEXED") {
                    (id: try $0.requiredInt64(0), name: $0.text(1) ?? "")
                }.flatMap { history -> [String] in
                    let rows = HistoryRows(connection: connection, blobs: blobs, historyID: history.id)
                    let checkingVersions = !named.contains {
                        $0.hasPrefix("history \(history.name):") || $0.hasPrefix("history \(history.name), ")
                    }
                    let versions = try Self.damage {
                        if checkingVersions { try rows.checkVersions(rows.places(), floor: rows.floor()) }
                    }
                    let held = try Self.damage {
                        guard connection.schemaVersion >= 5 else { return }
                        let digest = try rows.storedCounters().counters.held
                        _ = try rows.pendingRecords(digest: digest, history: history.name)
                    }
                    return [versions, held].compactMap { $0.map { "history \(history.name): \($0)" } }
                }
            }
            check("tags") {
                let (digest, baseDigest) = (
                    connection.column("v.tag_digest", since: 7),
                    connection.column("s.base_tag_digest", since: 7)
                )
                return try connection.query(
                    "SELECT h.name, v.position, v.tag, \(digest), 0 FROM version v JOIN history h ON h.id = v.history_id "
                        + "WHERE v.tag IS NOT NULL OR \(digest) IS NOT NULL "
                        + "UNION ALL SELECT h.name, NULL, s.base_tag, \(baseDigest), s.level "
                        + "FROM scope s JOIN history h ON h.id = s.history_id "
                        + "WHERE s.base_tag IS NOT NULL OR \(baseDigest) IS NOT NULL"
                ) { row -> String? in
                    let position = row.int64(1).map(Int.init)
                    let place =
                        "history \(row.text(0) ?? ""), \(position.map { "version \($0)" } ?? "scope \(row.int64(4) ?? 0)")"
                    guard let json = row.text(2) else {
                        return "\(place): its tag is lost: its digest remains"
                    }
                    if let stored = row.int64(3),
                        stored
                            != HistoryRows.tagDigest(json, version: position, level: Int(row.int64(4) ?? 0))
                    {
                        return "\(place): its tag does not match its digest"
                    }
                    return VersionTag(json: json) == nil ? "\(place): its tag is not JSON" : nil
                }.compactMap { $0 }
            }
            return try verification(problems)
        }
    }

    /// A common table `counters`: every history row with the counters it holds or, when its
    /// newest version holds them (schema 4), those.
    static let counters = """
        WITH counters AS (SELECT h.id, h.name, h.maximum_versions,
            CASE WHEN v.revision IS NULL THEN h.revision ELSE v.revision END AS revision,
            CASE WHEN v.revision IS NULL THEN h.undo_count ELSE v.undo_count END AS undo_count,
            CASE WHEN v.revision IS NULL THEN h.redo_count ELSE v.redo_count END AS redo_count,
            CASE WHEN v.revision IS NULL THEN h.version_count ELSE v.version_count END AS version_count
          FROM history h LEFT JOIN version v ON v.history_id = h.id
            AND v.position = (SELECT max(position) FROM version WHERE history_id = h.id))

        """

    /// The structural checks of ``verify()``: SQL listing what is wrong, and how to say it.
    static func verificationQueries(schemaVersion: Int) -> [(String, String)] {
        let hasSchema2 = schemaVersion >= 2
        /// Whether a date column (seconds since 1970) lies outside the years 1970 to 9999.
        func outOfRange(_ column: String) -> String {
            "\(column) NOT BETWEEN \(Int(HistoryRows.dates.lowerBound)) AND \(Int(HistoryRows.dates.upperBound))"
        }
        let largest = HistoryRows.largestNumber
        let limits = HistoryRows.limits(schemaVersion: schemaVersion)
        let floor = "(SELECT floor FROM scope WHERE history_id = h.id AND level = 0)"
        var queries: [(String, String)] = [
            (
                "SELECT h.name FROM history h WHERE (SELECT count(*) FROM scope WHERE history_id = h.id) != "
                    + "(SELECT coalesce(max(level), -1) + 1 FROM scope WHERE history_id = h.id) "
                    + "OR NOT EXISTS (SELECT 1 FROM scope WHERE history_id = h.id AND level = 0)",
                "history %@: its scope levels are not 0…n"
            ),
            (
                "SELECT h.name FROM history h JOIN version v ON v.history_id = h.id "
                    + "WHERE v.scope_level >= (SELECT count(*) FROM scope WHERE history_id = h.id) GROUP BY h.id",
                "history %@: a version belongs to a scope that does not exist"
            ),
            // Both orders are checked on per-scope extremes, in one pass over the versions.
            (
                "SELECT h.name FROM history h JOIN (SELECT history_id, "
                    + "max(CASE WHEN is_undone = 0 THEN position END) AS applied, "
                    + "min(CASE WHEN is_undone = 1 THEN position END) AS undone "
                    + "FROM version GROUP BY history_id, scope_level) s ON s.history_id = h.id "
                    + "WHERE s.applied > s.undone GROUP BY h.id",
                "history %@: an applied version comes after an undone one in the same scope"
            ),
            (
                "WITH s AS (SELECT history_id, scope_level, min(position) AS low, max(position) AS high "
                    + "FROM version GROUP BY history_id, scope_level) "
                    + "SELECT h.name FROM s AS outer_scope JOIN s AS inner_scope "
                    + "ON inner_scope.history_id = outer_scope.history_id "
                    + "AND outer_scope.scope_level < inner_scope.scope_level "
                    + "JOIN history h ON h.id = outer_scope.history_id "
                    + "WHERE outer_scope.high > inner_scope.low GROUP BY h.id",
                "history %@: a version of an outer scope comes after one of an inner scope"
            ),
            (
                Self.counters
                    + "SELECT name FROM counters h WHERE h.version_count IS NOT "
                    + "(SELECT count(*) FROM version WHERE history_id = h.id AND position > \(floor)) "
                    + "OR h.undo_count IS NOT (SELECT count(*) FROM version v WHERE v.history_id = h.id "
                    + "AND v.position > \(floor) "
                    + "AND v.is_undone = 0 AND v.scope_level = (SELECT max(level) FROM scope WHERE history_id = h.id)) "
                    + "OR h.redo_count IS NOT (SELECT count(*) FROM version v WHERE v.history_id = h.id "
                    + "AND v.position > \(floor) "
                    + "AND v.is_undone = 1 AND v.scope_level = (SELECT max(level) FROM scope WHERE history_id = h.id))",
                "history %@: its stored stack sizes do not match its versions"
            ),
            // Version 0 is the base value with the versions folded and not yet compacted away
            // redone on it: they run one after another up to the floor.
            (
                "SELECT h.name FROM history h JOIN scope s ON s.history_id = h.id AND s.level = 0 "
                    + "JOIN (SELECT history_id, min(position) AS low, max(position) AS high, count(*) AS n "
                    + "FROM version v WHERE position <= "
                    + "(SELECT floor FROM scope WHERE history_id = v.history_id AND level = 0) GROUP BY history_id) f "
                    + "ON f.history_id = h.id WHERE f.high != s.floor OR f.n != f.high - f.low + 1",
                "history %@: a version folded under its floor is missing"
            ),
            (
                Self.counters
                    + "SELECT h.name FROM counters h WHERE coalesce(h.revision, -1) NOT BETWEEN 0 AND \(largest) "
                    + "OR coalesce(h.maximum_versions, 1) NOT BETWEEN \(limits.lowerBound) AND \(limits.upperBound) "
                    + "OR EXISTS (SELECT 1 FROM version WHERE history_id = h.id AND (position NOT BETWEEN 1 AND \(largest) "
                    + "OR is_undone NOT IN (0, 1) OR scope_level < 0))",
                "history %@: a stored number is out of range"
            ),
            // Dates, which no digest covers: every one Keepsake writes is a clock's reading.
            (
                "SELECT h.name FROM history h WHERE \(outOfRange("h.created_at")) OR \(outOfRange("h.modified_at")) "
                    + "OR EXISTS (SELECT 1 FROM version WHERE history_id = h.id AND (\(outOfRange("created_at")) "
                    + (schemaVersion >= 4 ? "OR \(outOfRange("coalesce(modified_at, 0)"))" : "") + ")) "
                    + "OR EXISTS (SELECT 1 FROM checkpoint WHERE history_id = h.id AND \(outOfRange("created_at")))",
                "history %@: a stored date is out of range (before 1970 or after 9999)"
            ),
            (
                "SELECT name FROM snapshot WHERE \(outOfRange("created_at"))",
                "snapshot %@: its date is out of range (before 1970 or after 9999)"
            ),
            (
                "SELECT h.name FROM history h WHERE NOT EXISTS "
                    + "(SELECT 1 FROM checkpoint WHERE history_id = h.id AND position IS NULL)",
                "history %@: it has no base value"
            ),
            (
                "SELECT h.name || ', version ' || v.position FROM version v "
                    + "JOIN history h ON h.id = v.history_id WHERE NOT json_valid(v.changes)",
                "history %@: a change holds invalid JSON"
            ),
            (
                "SELECT h.name FROM checkpoint c JOIN history h ON h.id = c.history_id WHERE NOT json_valid(c.value) "
                    + "GROUP BY h.id",
                "history %@: a checkpoint holds invalid JSON"
            ),
            (
                "SELECT DISTINCT j.value FROM (SELECT changes FROM version WHERE json_valid(changes)) AS c, "
                    + "json_tree(c.changes) AS j WHERE \(Self.blobReference("c.changes")) "
                    + "AND j.value NOT IN (SELECT id FROM blob)",
                "blob %@ is referred to but missing"
            ),
            (
                "SELECT DISTINCT j.value FROM (SELECT value FROM checkpoint WHERE json_valid(value)) AS c, "
                    + "json_tree(c.value) AS j WHERE \(Self.blobReference("c.value")) "
                    + "AND j.value NOT IN (SELECT id FROM blob)",
                "blob %@ is referred to by a checkpoint but missing"
            ),
        ]
        if hasSchema2 {
            queries += [
                (
                    "SELECT h.name FROM pending_change p JOIN history h ON h.id = p.history_id "
                        + "WHERE NOT json_valid(p.patch) GROUP BY h.id",
                    "history %@: its held change holds invalid JSON"
                ),
                (
                    "SELECT DISTINCT j.value FROM (SELECT patch FROM pending_change WHERE json_valid(patch)) AS c, "
                        + "json_tree(c.patch) AS j WHERE \(Self.blobReference("c.patch")) "
                        + "AND j.value NOT IN (SELECT id FROM blob)",
                    "blob %@ is referred to by a held change but missing"
                ),
            ]
        }
        if schemaVersion >= 9 {
            // As HistoryRows.checkScopeStarts: the version a scope started from is applied, of
            // an outer scope, and the one above it is not an applied one of an outer scope.
            let outerApplied = "v.history_id = s.history_id AND v.is_undone = 0 AND v.scope_level < s.level"
            queries.append(
                (
                    "SELECT h.name || ', scope ' || s.level FROM scope s JOIN history h ON h.id = s.history_id "
                        + "WHERE s.level > 0 AND s.base_position > (SELECT floor FROM scope "
                        + "WHERE history_id = s.history_id AND level = 0) "
                        + "AND (NOT EXISTS (SELECT 1 FROM version v WHERE \(outerApplied) AND v.position = s.base_position) "
                        + "OR EXISTS (SELECT 1 FROM version v WHERE \(outerApplied) AND v.position = s.base_position + 1))",
                    "history %@: the version it started from is no longer applied, or one above it is"
                ))
        }
        if schemaVersion >= 10 {
            // As the replays from the base value: the versions left begin just above the version
            // the base value is.
            queries.append(
                (
                    "SELECT h.name FROM scope s JOIN history h ON h.id = s.history_id WHERE s.level = 0 "
                        + "AND (s.base_position IS NULL OR s.base_position NOT BETWEEN 0 AND \(largest) "
                        + "OR s.base_position + 1 != coalesce((SELECT min(position) FROM version "
                        + "WHERE history_id = s.history_id), s.base_position + 1))",
                    "history %@: its versions do not begin just above its base value"
                ))
        }
        return queries
    }
}
