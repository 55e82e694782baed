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
        let database = try Database(path: path, synchronous: synchronous)
        return Measure.sample(runs: rows) { database.commitOneRow() }
    }

    /// Bytes written per commit (WAL frames included), over `rows` commits.
    static func bytesWrittenPerCommit(path: String, synchronous: SQLiteConnection.Synchronous, rows: Int)
        throws -> Double
    {
        let database = try Database(path: path, synchronous: synchronous)
        let before = Measure.bytesWritten() ?? 0
        for _ in 0..<rows { database.commitOneRow() }
        return Double((Measure.bytesWritten() ?? 0) - before) / Double(rows)
    }

    private final class Database {
        let db: OpaquePointer
        var insert: OpaquePointer?
        var begin: OpaquePointer?
        var commit: OpaquePointer?
        let payload = [UInt8](repeating: 0x5A, count: 200)

        init(path: String, synchronous: SQLiteConnection.Synchronous) throws {
            var db: OpaquePointer?
            guard sqlite3_open(path, &db) == SQLITE_OK, let db else {
                throw SQLiteError(code: .cannotOpen, message: path)
            }
            self.db = db
            sqlite3_exec(
                db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=\(synchronous.rawValue);", nil, nil, nil)
            sqlite3_exec(
                db, "CREATE TABLE IF NOT EXISTS row (id INTEGER PRIMARY KEY, payload BLOB)", nil, nil, nil)
            sqlite3_prepare_v2(db, "INSERT INTO row (payload) VALUES (?)", -1, &insert, nil)
            sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, nil)
            sqlite3_prepare_v2(db, "COMMIT", -1, &commit, nil)
        }

        func commitOneRow() {
            sqlite3_step(begin)
            sqlite3_reset(begin)
            payload.withUnsafeBytes { bytes in
                _ = sqlite3_bind_blob(insert, 1, bytes.baseAddress, Int32(bytes.count), nil)
            }
            sqlite3_step(insert)
            sqlite3_reset(insert)
            sqlite3_step(commit)
            sqlite3_reset(commit)
        }

        deinit {
            sqlite3_finalize(insert)
            sqlite3_finalize(begin)
            sqlite3_finalize(commit)
            sqlite3_close(db)
        }
    }
}
