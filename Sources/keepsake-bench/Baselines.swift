import CSQLite
import Foundation
import Keepsake

/// What a user writes instead of Keepsake: every change encodes the whole value with
/// `JSONEncoder` and inserts it; undo reads and decodes the previous row.
final class NaiveSnapshotStore<Value: Codable> {
    let connection: SQLiteConnection
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()

    init(path: String, synchronous: SQLiteConnection.Synchronous) throws {
        connection = try SQLiteConnection(path: path)
        try connection.enableWAL(synchronous: synchronous)
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS version (id INTEGER PRIMARY KEY, value BLOB NOT NULL)")
    }

    func append(_ value: Value) throws {
        let data = try encoder.encode(value)
        try connection.transaction {
            try connection.execute("INSERT INTO version (value) VALUES (?)", [.blob(data)])
        }
    }

    func undo() throws -> Value {
        try connection.transaction {
            try connection.execute("DELETE FROM version WHERE id = (SELECT max(id) FROM version)")
            let data = try connection.query("SELECT value FROM version ORDER BY id DESC LIMIT 1") {
                $0.blob(0) ?? Data()
            }
            return try decoder.decode(Value.self, from: data[0])
        }
    }
}

/// SQLite's own limit: one ~200-byte row inserted per transaction through a prepared statement,
/// with the C API directly.
enum SQLiteLimit {
    /// Each commit timed alone: p50, p99 and maximum.
    static func commits(path: String, synchronous: SQLiteConnection.Synchronous, rows: Int) throws
        -> Measure.Percentiles
    {
        let table = try OneRow(path: path, synchronous: synchronous)
        return Measure.sample(runs: rows) { table.commit() }
    }

    /// Each commit timed alone, in turns with `body`, a hundred runs of each a turn
    /// (``Measure/paired(runs:block:baselineSetup:baseline:bodySetup:_:)``): the shared
    /// machine's phases fall on both, and each runs warm, as it would alone. Returns the
    /// commits' and `body`'s p50, p99 and maximum.
    static func commits<State>(
        path: String, synchronous: SQLiteConnection.Synchronous, rows: Int,
        inTurnsWith setup: () throws -> State,
        _ body: (inout State) throws -> Void
    ) throws -> (baseline: Measure.Percentiles, body: Measure.Percentiles) {
        let table = try OneRow(path: path, synchronous: synchronous)
        return try Measure.paired(
            runs: rows, block: 100, baselineSetup: {}, baseline: { _ in table.commit() }, bodySetup: setup,
            body)
    }

    /// Bytes written per commit (WAL frames included), over `rows` commits.
    static func bytesWrittenPerCommit(path: String, synchronous: SQLiteConnection.Synchronous, rows: Int)
        throws -> Double
    {
        let table = try OneRow(path: path, synchronous: synchronous)
        let before = Measure.bytesWritten() ?? 0
        for _ in 0..<rows { table.commit() }
        return Double((Measure.bytesWritten() ?? 0) - before) / Double(rows)
    }

    /// Keepsake's own rows at SQLite's speed: what appending a version of the small document
    /// writes — the version row carrying the history's counters, and the previous newest
    /// version's counters cleared (the witness that makes a lost newest row an error) — with
    /// the statements Keepsake runs, through the C API, in a store Keepsake created. The floor
    /// under a tiny append with this schema: the rest of an append is Keepsake's Swift work.
    ///
    /// - Parameters:
    ///   - changes: The `changes` text each version carries (one of a real history's).
    ///   - witness: Whether the previous newest version's counters are cleared; without it, the
    ///     figure says what that one `UPDATE` costs an append.
    static func versionCommits(
        path: String, synchronous: SQLiteConnection.Synchronous, rows: Int, changes: String,
        witness: Bool = true
    ) throws -> Measure.Percentiles {
        let store = try KeepsakeStore(path: path, options: .init(synchronous: synchronous))
        _ = try store.history("rows", initialValue: SmallDocument())
        store.close()
        let versions = try VersionRows(
            path: path, synchronous: synchronous, changes: changes, witness: witness)
        let times = Measure.sample(runs: rows) { versions.commit() }
        // A statement that failed would make the baseline fast and wrong.
        let stored = try versions.storedVersions()
        guard stored == rows else {
            throw SQLiteError(code: .error, message: "the baseline stored \(stored) versions of \(rows)")
        }
        return times
    }

    /// A database in WAL mode with `synchronous` set and `BEGIN IMMEDIATE` and `COMMIT` prepared.
    private class Database {
        let db: OpaquePointer
        private let begin: OpaquePointer?
        private let end: OpaquePointer?

        init(path: String, synchronous: SQLiteConnection.Synchronous, setup: String) throws {
            var db: OpaquePointer?
            guard sqlite3_open(path, &db) == SQLITE_OK, let db else {
                throw SQLiteError(code: .cannotOpen, message: path)
            }
            self.db = db
            sqlite3_exec(
                db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=\(synchronous.rawValue); \(setup)", nil, nil,
                nil)
            (begin, end) = (Self.prepare(db, "BEGIN IMMEDIATE"), Self.prepare(db, "COMMIT"))
        }

        static func prepare(_ db: OpaquePointer, _ sql: String) -> OpaquePointer? {
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, sql, -1, &statement, nil)
            return statement
        }

        /// Runs `statement` once (its parameters bound).
        func step(_ statement: OpaquePointer?) {
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }

        /// One write transaction around `body`.
        func transaction(_ body: () -> Void) {
            step(begin)
            body()
            step(end)
        }

        deinit {
            sqlite3_finalize(begin)
            sqlite3_finalize(end)
            sqlite3_close(db)
        }
    }

    /// The baseline's table: one 200-byte row per commit.
    private final class OneRow: Database {
        private var insert: OpaquePointer?
        private let payload = [UInt8](repeating: 0x5A, count: 200)

        init(path: String, synchronous: SQLiteConnection.Synchronous) throws {
            try super.init(
                path: path, synchronous: synchronous,
                setup: "CREATE TABLE IF NOT EXISTS row (id INTEGER PRIMARY KEY, payload BLOB)")
            insert = Self.prepare(db, "INSERT INTO row (payload) VALUES (?)")
        }

        func commit() {
            transaction {
                payload.withUnsafeBytes { bytes in
                    _ = sqlite3_bind_blob(insert, 1, bytes.baseAddress, Int32(bytes.count), nil)
                }
                step(insert)
            }
        }

        deinit { sqlite3_finalize(insert) }
    }

    /// A history's versions, appended as Keepsake appends them (its `AppendStatements`,
    /// `foreign_keys` on).
    private final class VersionRows: Database {
        private var insert: OpaquePointer?
        private var clear: OpaquePointer?
        private let history: Int64
        private let changes: [UInt8]
        private var position: Int64 = 0
        private let path: String
        private let witness: Bool

        init(path: String, synchronous: SQLiteConnection.Synchronous, changes: String, witness: Bool) throws {
            (self.changes, self.path, self.witness) = (Array(changes.utf8), path, witness)
            let connection = try SQLiteConnection(path: path)
            history = try connection.scalarInt("SELECT id FROM history WHERE name = 'rows'") ?? 0
            connection.close()
            try super.init(path: path, synchronous: synchronous, setup: "PRAGMA foreign_keys=ON")
            insert = Self.prepare(db, AppendStatements.insertVersion)
            clear = Self.prepare(db, AppendStatements.clearCounters)
        }

        /// The versions the history holds, counted by Keepsake's connection type.
        func storedVersions() throws -> Int {
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            return Int(try connection.scalarInt("SELECT count(*) FROM version") ?? 0)
        }

        func commit() {
            position += 1
            let now = Date().timeIntervalSince1970
            transaction {
                sqlite3_bind_int64(insert, 1, history)
                sqlite3_bind_int64(insert, 2, position)
                sqlite3_bind_int64(insert, 3, 0)
                sqlite3_bind_null(insert, 4)
                sqlite3_bind_double(insert, 5, now)
                changes.withUnsafeBytes { bytes in
                    _ = sqlite3_bind_text(
                        insert, 6, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                        nil)
                }
                sqlite3_bind_int64(insert, 7, position)  // revision
                sqlite3_bind_int64(insert, 8, position)  // undo_count
                sqlite3_bind_int64(insert, 9, 0)  // redo_count
                sqlite3_bind_int64(insert, 10, position)  // version_count
                sqlite3_bind_double(insert, 11, now)
                step(insert)
                guard witness, position > 1 else { return }
                sqlite3_bind_int64(clear, 1, history)
                sqlite3_bind_int64(clear, 2, position - 1)
                step(clear)
            }
        }

        deinit {
            sqlite3_finalize(insert)
            sqlite3_finalize(clear)
        }
    }
}
