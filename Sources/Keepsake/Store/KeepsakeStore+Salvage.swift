import Foundation
import Revertible

extension KeepsakeStore {
    /// Copies what can still be read and checked in a damaged store into a new store: each
    /// history's newest value that its stored rows prove, and every snapshot whose rows are
    /// all intact.
    ///
    /// Opening a damaged store gives a typed error rather than a wrong value, and the document
    /// is then out of the app's reach. `salvage` gets it back: it reads `damaged` read-only
    /// (the file is left as it is) and writes `output`, a new store in which every history
    /// starts at the value salvaged, with no version to undo, and every snapshot kept is as
    /// saved.
    ///
    /// ```swift
    /// let report = try KeepsakeStore.salvage(from: damagedPath, to: damagedPath + ".salvaged")
    /// for history in report.histories where history.damage != nil {
    ///     print("\(history.name): version \(history.version) of \(history.newestVersion)")
    /// }
    /// ```
    ///
    /// A history's value is its newest checkpoint that matches its digest, with every applied
    /// version after it redone on its stored JSON, as ``valueJSON(ofHistory:atVersion:)``
    /// computes it, each change checked against the value it expects, and the change a
    /// debounced controller held; the first version that cannot be read or does not apply
    /// stops it, and the value is the one before. Where the versions are not as opening finds
    /// them (a flag or a scope that damage changed), only those that follow one another, in
    /// one scope or from the version a scope started from, are redone, and the held change is
    /// left out: each was made on the one before. Versions and checkpoints are read from their
    /// tables, past the indexes a damaged page can empty; a history whose row cannot be read
    /// is rebuilt from its name and id in the index of names, and its versions. Nothing is
    /// guessed: every value salvaged is one the history had. A history whose value cannot be computed at all, and a snapshot
    /// with a row lost or damaged, are left out, and the report says why. A store whose
    /// write-ahead log is damaged is read as of the damage, and the report lists the commits
    /// after it as lost. A store another process writes meanwhile is read as of one moment,
    /// in one read transaction (unless a read finds a page corrupt, which ends it: a commit
    /// between that read and the next can then read as damage). Salvage reads no app type: for a model whose `CodingKeys` store
    /// properties under other keys, see ``valueJSON(ofHistory:atVersion:)``.
    ///
    /// - Parameters:
    ///   - damaged: The store to read.
    ///   - output: Where to write the new store; no file may be there.
    /// - Returns: What was copied and what was lost.
    /// - Throws: ``KeepsakeError/cannotOpen(path:reason:)`` when a file is at `output`, or
    ///   `damaged` cannot be opened; `.notAStore` or `.newerSchema` when `damaged` is no store
    ///   this code reads (nothing can be salvaged from it then); `.sqlite` when `output`
    ///   cannot be written (nothing is left there then).
    public static func salvage(from damaged: String, to output: String) throws(KeepsakeError)
        -> SalvageReport
    {
        guard !FileManager.default.fileExists(atPath: output) else {
            throw outputExists(output, "salvage writes a new store")
        }
        let source = try KeepsakeStore(path: damaged, options: .init(readOnly: true, readsDamagedLog: true))
        defer { source.close() }
        // Every row is read in one read transaction, one state of the store, even while another
        // process writes it: a commit between two reads used to read as damage (a snapshot
        // saved again meanwhile was left out as lost). A file read as immutable that a writer
        // touches meanwhile is read again, through its log.
        let contents: SalvageReader.Contents
        do {
            contents = try source.database.readFollowingWriters { connection in
                try SalvageReader(connection: connection, file: source.file).readAll()
            }
        } catch {
            throw keepsakeError(error, path: damaged)
        }
        let (report, histories, snapshots) = (contents.report, contents.histories, contents.snapshots)
        // Written beside `output` and put there whole: half a salvage would read as a whole one.
        let installed = try NewStoreFile.install(at: output) { temporary throws(KeepsakeError) in
            let store = try KeepsakeStore(path: temporary)
            defer { store.close() }
            try store.write { connection, blobs in
                for (row, json) in histories {
                    try HistoryRows.insertHistory(
                        named: row.name, valueType: row.valueType, limit: row.limit, createdAt: row.createdAt,
                        in: connection, blobs: blobs
                    ).insertCheckpoint(
                        json, position: nil, digest: HistoryRows.checkpointDigest(json, position: nil))
                }
                for (row, properties) in snapshots {
                    try Caretaker.insertSnapshot(
                        namespace: row.namespace, name: row.name, valueType: row.valueType,
                        createdAt: row.createdAt,
                        properties: properties, in: connection, blobs: blobs)
                }
            }
            try store.foldLog()
        }
        guard installed else { throw Self.outputExists(output, "salvage writes a new store") }
        return report
    }

    /// Why something could not be salvaged.
    private struct Unread: Error {
        let reason: String

        init(reason: String) {
            self.reason = reason
        }

        /// What `error` says of a row of `history` that could not be read.
        init(_ error: any Error, history: String) {
            switch error {
            case let error as KeepsakeError: reason = error.naming(history: history).description
            // A page found corrupt while reading a row: the row is lost, not the store.
            case let error as SQLiteError where error.code == .corrupt:
                reason = "a page holding it is corrupt (\(error.message))"
            case let error as SQLiteError: reason = KeepsakeError.sqlite(error).description
            case let error as DecodingError: reason = RecordCoding.describe(error)
            default: reason = "\(error)"
            }
        }
    }

    /// A `history` row as salvage reads it.
    private struct HistoryRow {
        let id: Int64
        let name: String
        let valueType: String
        var createdAt: Double
        var limit: Int64?
        /// Whether the row could not be read, and this one was made from its entry in the index
        /// of names (``init(id:indexedName:)``).
        var isRebuilt = false

        static let columns = "name, value_type, created_at, maximum_versions"

        /// Replaces a creation date no clock gives by the salvage's, and a limit no history of
        /// `schemaVersion` has by none (damage no digest covers: copied, they would make the new
        /// store fail ``KeepsakeStore/verify()``); says what it replaced.
        mutating func replacingWhatIsOutOfRange(schemaVersion: Int) -> [String] {
            var replaced: [String] = []
            if !HistoryRows.dates.contains(createdAt) {
                replaced.append(
                    "its creation date is out of range (\(createdAt)): the salvage's date is given")
                createdAt = HistoryRows.now()
            }
            if let limit, !HistoryRows.limits(schemaVersion: schemaVersion).contains(Int(limit)) {
                replaced.append("its limit of versions is out of range (\(limit)): it is copied without one")
                self.limit = nil
            }
            return replaced
        }

        /// The row of a history whose row cannot be read, made from what the index of names
        /// holds of it: its id and name. Its value type, creation date and limit are lost: none,
        /// the salvage's date, and no limit. Its versions and checkpoints, under its id, prove
        /// its value as any history's do.
        init(id: Int64, indexedName: String) {
            (self.id, name, valueType, createdAt, limit, isRebuilt) = (
                id, indexedName, "", HistoryRows.now(), nil, true
            )
        }

        init(id: Int64, row: SQLiteStatement) throws {
            guard let name = row.text(0) else {
                throw KeepsakeError.damaged(history: "", reason: "the history of row \(id) has no name")
            }
            (self.id, self.name, valueType) = (id, name, row.text(1) ?? "")
            (createdAt, limit) = (row.double(2) ?? 0, row.int64(3))
        }
    }

    /// A `snapshot` row as salvage reads it.
    private struct SnapshotRow {
        let id: Int64
        let namespace: String
        let name: String
        let valueType: String
        var createdAt: Double

        static let columns = "namespace, name, value_type, created_at"

        init(id: Int64, row: SQLiteStatement) throws {
            guard let namespace = row.text(0), let name = row.text(1) else {
                throw KeepsakeError.damaged(history: "", reason: "the snapshot of row \(id) has no name")
            }
            (self.id, self.namespace, self.name) = (id, namespace, name)
            (valueType, createdAt) = (row.text(2) ?? "", row.double(3) ?? 0)
        }
    }

    /// Reads what a salvage copies, on the source store's connection.
    private final class SalvageReader {
        /// What was read: the report so far, each history's value as JSON, each snapshot's
        /// properties.
        struct Contents {
            var report: SalvageReport
            var histories: [(row: HistoryRow, json: String)]
            var snapshots: [(row: SnapshotRow, properties: [(path: String, json: String)])]
        }

        let connection: SQLiteConnection
        /// The file read, for the report.
        let file: String

        init(connection: SQLiteConnection, file: String) {
            (self.connection, self.file) = (connection, file)
        }

        /// Reads every history's value and every snapshot that can be read, and says what
        /// could not be; the transaction it reads in is ended when it returns.
        func readAll() throws -> Contents {
            defer { if !connection.isAutocommit { try? connection.execute("ROLLBACK") } }
            // Checkpoints are looked up through their index (history, position), undone versions
            // through theirs: a damaged index page hides them without a word, and every history
            // whose base value it hid would be lost, or stop at a version it only seemed to lose,
            // though its rows are intact. Here they are read from their tables, past the indexes (a
            // scan per look-up: a store holds a few checkpoints per history; and one scan of the
            // versions per history). A store before schema 4 is read through views of these names
            // already, which read no index of it.
            if connection.schemaVersion >= 4 {
                connection.readsPastIndexes = true
                try connection.execute(
                    "CREATE TEMP VIEW IF NOT EXISTS checkpoint AS SELECT * FROM main.checkpoint NOT INDEXED")
            }
            var report = SalvageReport(histories: [], snapshots: [], lost: [])
            if let damage = connection.logDamage {
                report.lost.append(
                    .init(
                        what: "\(damage.lostCommits) commits of the write-ahead log (\(file)-wal)",
                        reason: "the log is damaged: \(damage.summary)"))
            }
            var histories: [(row: HistoryRow, json: String)] = []
            var snapshots: [(row: SnapshotRow, properties: [(path: String, json: String)])] = []
            // A history's name is checked by no digest: a damaged one is told by the index of
            // names, which holds each name again (with its row's id).
            let indexedNames: [Int64: String] =
                (try? read { connection, _ in
                    try connection.query("SELECT id, name FROM history ORDER BY name") {
                        (try $0.requiredInt64(0), $0.text(1) ?? "")
                    }
                }.get()).map { Dictionary($0, uniquingKeysWith: { first, _ in first }) } ?? [:]
            for row in rows(
                of: "history", columns: HistoryRow.columns, indexedBy: "name", into: &report, HistoryRow.init,
                rebuilding: { id in indexedNames[id].map { HistoryRow(id: id, indexedName: $0) } })
            {
                switch value(of: row) {
                case .success(let (json, salvaged)):
                    var (row, salvaged) = (row, salvaged)
                    var rowDamage = row.replacingWhatIsOutOfRange(schemaVersion: connection.schemaVersion)
                    if row.isRebuilt {
                        rowDamage.append(
                            "its row cannot be read: its name is the index of names', and its value type, "
                                + "creation date and limit are lost (the salvage's date is given, and no limit)"
                        )
                    }
                    if let indexed = indexedNames[row.id], indexed != row.name {
                        rowDamage.append(
                            "its name reads \"\(row.name)\" in its row but \"\(indexed)\" in the index of names: "
                                + "one of them is damaged (it is copied under the first)")
                    }
                    if !rowDamage.isEmpty {
                        salvaged.damage = ([salvaged.damage].compactMap { $0 } + rowDamage).joined(
                            separator: "; ")
                    }
                    histories.append((row, json))
                    report.histories.append(salvaged)
                case .failure(let unread):
                    report.lost.append(.init(what: "history \"\(row.name)\"", reason: unread.reason))
                }
            }
            for row in rows(
                of: "snapshot", columns: SnapshotRow.columns, indexedBy: "namespace, name", into: &report,
                SnapshotRow.init)
            {
                switch properties(of: row) {
                case .success(let properties):
                    var row = row
                    if !HistoryRows.dates.contains(row.createdAt) {
                        report.lost.append(
                            .init(
                                what: "the date of snapshot \"\(row.name)\" of \(row.namespace)",
                                reason: "it is out of range (\(row.createdAt)): the salvage's date is given"))
                        row.createdAt = HistoryRows.now()
                    }
                    snapshots.append((row, properties))
                    report.snapshots.append(
                        SnapshotInfo(
                            namespace: row.namespace, name: row.name, valueType: row.valueType,
                            date: Date(timeIntervalSince1970: row.createdAt), propertyCount: properties.count)
                    )
                case .failure(let unread):
                    report.lost.append(
                        .init(what: "snapshot \"\(row.name)\" of \(row.namespace)", reason: unread.reason))
                }
            }
            return Contents(report: report, histories: histories, snapshots: snapshots)
        }

        /// What `body` reads, or what kept it from reading it, described for the report (the
        /// history's name filled in where the rows did not know it). Every step reads in the
        /// transaction the first one began; after one that ended it (SQLite ends a transaction in
        /// which it found a page corrupt), the next begins another, and a commit another process
        /// makes between the two can then read as damage.
        func read<T>(history: String = "", _ body: (SQLiteConnection, BlobCoding) throws -> T) -> Result<
            T, Unread
        > {
            do {
                if connection.isAutocommit { try connection.execute("BEGIN DEFERRED") }
                return .success(try body(connection, BlobCoding(connection)))
            } catch {
                return .failure(Unread(error, history: history))
            }
        }

        /// The rows of `table` that can be read, by row id: the ids listed from the table itself
        /// and from its index of names (a row whose key damage changed is listed by the table
        /// under another id, and by the index under its own), or from the index alone when a
        /// page of the table is damaged; then each row on its own, found by its id or, where a
        /// damaged page hides it from that search, by reading the table through; one only the
        /// index lists and found nowhere is what `rebuild` makes of it, if anything. What cannot
        /// be read, or is listed but found nowhere, goes into `report`.
        func rows<Row>(
            of table: String, columns: String, indexedBy index: String, into report: inout SalvageReport,
            _ make: (Int64, SQLiteStatement) throws -> Row, rebuilding rebuild: (Int64) -> Row? = { _ in nil }
        ) -> [Row] {
            // The unique index on the names holds every row's id too.
            let indexed = read { connection, _ in
                try connection.query("SELECT id FROM \(table) ORDER BY \(index)") { try $0.requiredInt64(0) }
            }
            let listed: [Int64]
            switch read({ connection, _ in
                try connection.query("SELECT id FROM \(table) NOT INDEXED ORDER BY id") {
                    try $0.requiredInt64(0)
                }
            }) {
            case .success(let ids): listed = ids
            case .failure(let unread):
                guard case .success(let ids) = indexed else {
                    report.lost.append(.init(what: "the rows of the \(table) table", reason: unread.reason))
                    return []
                }
                report.lost.append(
                    .init(
                        what: "part of the \(table) table",
                        reason:
                            "\(unread.reason); its \(ids.count) rows were found through the index of names"))
                listed = []
            }
            let fromIndex = Set((try? indexed.get()) ?? []).subtracting(listed)
            var rows: [Row] = []
            for id in Set(listed).union(fromIndex).sorted() {
                switch read({ connection, _ in
                    try connection.query("SELECT \(columns) FROM \(table) WHERE id = ?", [.integer(id)]) {
                        try make(id, $0)
                    }.first
                        ?? connection.query(
                            "SELECT \(columns) FROM \(table) NOT INDEXED WHERE +id = ?", [.integer(id)]
                        ) { try make(id, $0) }.first
                }) {
                case .success(let row?): rows.append(row)
                case .success(nil):
                    if fromIndex.contains(id), let rebuilt = rebuild(id) {
                        rows.append(rebuilt)
                        continue
                    }
                    let listing = fromIndex.contains(id) ? "its index of names" : "the table"
                    report.lost.append(
                        .init(
                            what: "the \(table) of row \(id)",
                            reason:
                                "\(listing) lists it, but no row of that id can be read: the file is damaged")
                    )
                case .failure(let unread):
                    report.lost.append(.init(what: "the \(table) of row \(id)", reason: unread.reason))
                }
            }
            return rows
        }

        /// Redoes `records` on `form` in place, outside the step that read them; a record that
        /// does not apply leaves `form` as it was, the value of the last version redone. (A copy of the form per version, to keep that value, had every version
        /// copy the arrays on its path: 53 s to salvage a history of 500,000 items.)
        func redo(_ records: [ChangeRecord], on form: inout StoredForm, history: String) -> Result<
            Void, Unread
        > {
            do {
                try form.revert(records, inverted: true)
                return .success(())
            } catch {
                return .failure(Unread(error, history: history))
            }
        }

        /// The newest value of `history` that its rows prove, as JSON (blobs inlined), and what
        /// the report says of it; or why there is none.
        ///
        /// Each step's failure is its own: the steps after one that failed still read what they
        /// can (in a transaction of their own, when SQLite ended the one the failure found a page
        /// corrupt in: a writer committing between the two can only make them disagree, which is
        /// said as damage).
        func value(of history: HistoryRow) -> Result<(String, SalvageReport.History), Unread> {
            func attempt<T>(_ body: (HistoryRows) throws -> T) -> Result<T, Unread> {
                read(history: history.name) { connection, blobs in
                    try body(HistoryRows(connection: connection, blobs: blobs, historyID: history.id))
                }
            }
            var damage: [String] = []
            // Applied versions, oldest first: the undo stack. Listed from the table and sorted
            // here: an index page with a damaged key would list a position the table does not
            // hold, out of order.
            var applied: [Int]
            var rowPlaces: [Int: HistoryRows.Place] = [:]
            switch attempt({ rows in
                try rows.connection.query(
                    "SELECT position, scope_level, is_undone FROM version NOT INDEXED WHERE history_id = ?",
                    [.integer(history.id)]
                ) {
                    let position = Int(try $0.requiredInt64(0))
                    return (
                        position: position,
                        place: try HistoryRows.Place(row: $0, from: 1, position: position, of: rows)
                    )
                }
            }) {
            case .success(let rows):
                applied = rows.filter { !$0.place.undone }.map(\.position).sorted()
                rowPlaces = Dictionary(rows.map { ($0.position, $0.place) }, uniquingKeysWith: { $1 })
            case .failure(let unread):
                applied = []
                damage.append(
                    "its versions cannot be listed (\(unread.reason)): only its base value was read")
            }
            if let wrong = applied.first(where: { $0 < 1 }) {
                damage.append("a version's position is out of range (\(wrong))")
                applied.removeAll { $0 < 1 }
            }
            // The counters, on the newest version's row, say what change is held; a newest row
            // without them is a page that lost its last rows.
            var counters: HistoryRows.Counters?
            switch attempt({ try $0.storedCounters().counters }) {
            case .success(let read): counters = read
            case .failure(let unread):
                damage.append("its counters cannot be read (\(unread.reason)): newer versions may be lost")
            }
            // Checkpoints on applied versions, newest first, then the base value.
            let places: [Int?]
            switch attempt({ rows in
                try rows.connection.query(
                    "SELECT position FROM checkpoint WHERE history_id = ? AND position IS NOT NULL ORDER BY position DESC",
                    [.integer(history.id)]
                ) { Int(try $0.requiredInt64(0)) }
            }) {
            case .success(let positions): places = Set(applied).intersection(positions).sorted(by: >) + [nil]
            case .failure(let unread):
                places = [nil]
                damage.append("its checkpoints cannot be listed (\(unread.reason))")
            }
            for place in places {
                let start = attempt { rows -> StoredForm in
                    guard let json = try rows.checkpoint(at: place) else {
                        throw KeepsakeError.damaged(history: history.name, reason: "its checkpoint vanished")
                    }
                    // Blobs inlined: the new store has blobs of its own, and the versions are
                    // redone after this read's transaction, the decoder that reads references
                    // with it.
                    var form = try rows.storedForm(json, redoing: [], history: history.name)
                    try rows.blobs.inlineBlobs(in: &form)
                    return form
                }
                var form: StoredForm
                switch start {
                case .success(let read): form = read
                case .failure(let unread):
                    let what = place.map { "the checkpoint of version \($0)" } ?? "the base value"
                    damage.append("\(what): \(unread.reason)")
                    continue
                }
                // The versions are checked as opening checks them, against the scopes, the undone
                // ones and the counters. A version lost, or flagged undone, only stops the replay
                // short, at a value the history had; but a flag or a scope damage changed otherwise
                // can put on the way a version undone under a scope, or one the app undid last:
                // the versions redone, and the change held back on them, would then make a value
                // the history never had. Where the check fails, only versions that follow one
                // another in one scope, or from the version a scope started from, are redone (each
                // was made on the one before), and the change held back is left out.
                var unproven: String?
                if let counters,
                    case .failure(let unread) = attempt({ rows in
                        try rows.checkLoaded(
                            replayed: applied.filter { $0 > (place ?? 0) }, from: place ?? 0,
                            level: try rows.scopeCount() - 1, redo: counters.redo, total: counters.total,
                            history: history.name)
                    })
                {
                    unproven = "its versions, checked as opening checks them: \(unread.reason)"
                }
                // The version each inner scope started from (schema 9): where the way enters one.
                let scopeStarts = unproven == nil ? [:] : (try? attempt { try $0.scopeStarts() }.get()) ?? [:]
                // The base value is the value below the oldest version kept (pruning replaces it
                // by a checkpoint's and deletes the versions under that).
                var reached = place ?? ((applied.first ?? 1) - 1)
                replay: for position in applied where position > (place ?? 0) {
                    // Each version follows the one before, or an outer scope's undone versions lie
                    // between: a row lost or renumbered, or its flag or scope changed, by damage
                    // would otherwise have its change left out of the value.
                    if let gap = HistoryRows.gap(between: reached, and: position, places: { rowPlaces[$0] }) {
                        damage.append(gap)
                        break replay
                    }
                    // On unproven rows, a version follows the one before in its scope, or the version
                    // its scope started from (the outer scope's undone versions lying between).
                    if let reason = unproven, let level = rowPlaces[position]?.level,
                        level == rowPlaces[reached]?.level ?? 0
                            ? position != reached + 1 : scopeStarts[level] != reached
                    {
                        damage.append(
                            "\(reason); version \(position) is left out, with those after it: only versions that follow one another, in one scope or from where a scope started, are redone on unproven rows"
                        )
                        break replay
                    }
                    let redone = attempt { rows in
                        try rows.blobs.inliningBlobs(in: rows.records(of: .init(position: position)))
                    }.flatMap { records in redo(records, on: &form, history: history.name) }
                    switch redone {
                    case .success: reached = position
                    case .failure(let unread):
                        damage.append("version \(position): \(unread.reason)")
                        break replay
                    }
                }
                // (Where the check cut the replay short, it said so above.)
                if let unproven, reached == (applied.last ?? 0) { damage.append(unproven) }
                // The change held back lies on the newest applied version (stores older than
                // schema 5 hold no digest of it: their rows are read unchecked, as opening does).
                if reached == (applied.last ?? 0), let counters {
                    let withHeld = attempt { rows in
                        try rows.blobs.inliningBlobs(
                            in: rows.pendingRecords(digest: counters.held, history: history.name))
                    }.flatMap { records -> Result<Void, Unread> in
                        guard unproven == nil || records.isEmpty else {
                            return .failure(
                                Unread(reason: "left out, as the rows do not prove the version it lies on"))
                        }
                        return redo(records, on: &form, history: history.name)
                    }
                    if case .failure(let unread) = withHeld {
                        damage.append("the change held back by debouncing: \(unread.reason)")
                    }
                }
                // Whatever stopped the replay short of the newest version is said.
                if reached != (applied.last ?? 0), damage.isEmpty {
                    damage.append("its versions stop at \(reached) of \(applied.last ?? 0)")
                }
                return .success(
                    (
                        form.json,
                        SalvageReport.History(
                            name: history.name, valueType: history.valueType, version: reached,
                            newestVersion: applied.last ?? 0,
                            damage: damage.isEmpty ? nil : damage.joined(separator: "; "))
                    ))
            }
            return .failure(Unread(reason: damage.joined(separator: "; ")))
        }

        /// The property rows of `snapshot`, each checked against its digest (blobs inlined) and
        /// their number against the one it was saved with; or why they cannot all be read.
        func properties(of snapshot: SnapshotRow) -> Result<[(path: String, json: String)], Unread> {
            read { connection, blobs in
                let rows = try connection.query(
                    "SELECT path, value, \(connection.column("digest", since: 2)) FROM snapshot_property "
                        + "WHERE snapshot_id = ? ORDER BY path",
                    [.integer(snapshot.id)]
                ) {
                    (
                        path: $0.text(0) ?? "",
                        json: try Caretaker.checkedJSON(
                            $0, blobs, namespace: snapshot.namespace, name: snapshot.name, inliningBlobs: true
                        )
                    )
                }
                try Caretaker.checkPropertyCount(
                    connection, id: snapshot.id, read: rows.count, name: snapshot.name)
                return rows
            }
        }
    }

}

/// What ``KeepsakeStore/salvage(from:to:)`` copied out of a damaged store, and what it could not.
public struct SalvageReport: Codable, Sendable, Equatable {
    /// A history copied into the new store.
    public struct History: Codable, Sendable, Equatable {
        /// The history's name.
        public var name: String
        /// The name of the type its values were stored from.
        public var valueType: String
        /// The version whose value the copy starts from, as ``KeepsakeStore/timeline(of:)``
        /// numbers them (0: the base value).
        public var version: Int
        /// The newest applied version the damaged store lists (0: none).
        public var newestVersion: Int
        /// What was damaged, when the value salvaged may not be the history's newest: a version
        /// that could not be read or applied, lost counters, a checkpoint that did not match its
        /// digest; `nil` when nothing was.
        public var damage: String?
    }

    /// Something left out of the new store, and why.
    public struct Loss: Codable, Sendable, Equatable {
        /// What was left out: `history "note"`, `snapshot "v1" of App.Note`, `the history of row 3`.
        public var what: String
        /// Why: the error reading it gave.
        public var reason: String
    }

    /// The histories copied, each at the newest value its rows prove.
    public var histories: [History]
    /// The snapshots copied, each whole.
    public var snapshots: [SnapshotInfo]
    /// What could not be copied.
    public var lost: [Loss]

    /// Whether everything was copied, every history at its newest value: nothing was damaged.
    public var isComplete: Bool {
        lost.isEmpty && histories.allSatisfy { $0.damage == nil && $0.version == $0.newestVersion }
    }
}
