internal import CSQLite
import Foundation

/// One SQLite connection: open, prepared-statement cache, transactions.
///
/// A connection is not `Sendable`: use it from one thread at a time. ``SQLiteDatabase`` is the
/// `Sendable` facade that serializes access to one. Opening configures what does not write to
/// the file (busy timeout, extended result codes, `foreign_keys=ON`, `trusted_schema=OFF`);
/// ``enableWAL(synchronous:)`` then switches the journal, which does write the header, so callers
/// check a file's identity first.
public final class SQLiteConnection {
    /// How durable a commit is. Related SQLite documentation:
    /// https://www.sqlite.org/pragma.html#pragma_synchronous
    ///
    /// On Apple's systems `fsync` leaves the writes in the drive's cache, where a power loss
    /// can lose them or write them out of order; only `F_FULLFSYNC` flushes it. So each mode
    /// also sets which syncs use `F_FULLFSYNC` (``SQLiteConnection/enableWAL(synchronous:)`` does;
    /// other systems ignore it).
    public enum Synchronous: String, Sendable {
        /// In WAL mode, a commit survives a process crash; the last commits before a power loss
        /// or OS crash may roll back. The database is never corrupted: the syncs of a
        /// checkpoint, which copies the log into the file, use `F_FULLFSYNC`
        /// (`checkpoint_fullfsync`). The default.
        case normal = "NORMAL"
        /// Every commit is also synced to disk: it survives a power loss, at the price of a
        /// sync per commit (`F_FULLFSYNC` on Apple's systems: `fullfsync`).
        case full = "FULL"
    }

    let handle: OpaquePointer
    /// The file's path, or `:memory:`.
    public let path: String
    /// The file's path made absolute when it was opened.
    private let absolutePath: String
    /// Whether the file is read as immutable: SQLite takes no lock and never looks for changes.
    let isImmutable: Bool
    /// The Keepsake schema version of the store this connection reads: older than the current
    /// one only for a store opened read-only, whose readers then leave out what it lacks.
    var schemaVersion = Int.max
    /// The damage of the write-ahead log the store was opened with, read as of it (see
    /// ``KeepsakeStore/Options/readsDamagedLog``); `nil` for a log with none.
    var logDamage: WriteAheadLog.Damage?
    /// What this connection knows of each table's unique indexes (``keyedRow(in:columns:key:)``).
    var indexChecks: [String: IndexCheck] = [:]
    /// Whether Keepsake's reads look for undone versions in their table rather than through
    /// their index, which a damaged page can empty without a word: set by a salvage, for which a
    /// scan per history is a fair price (it reads checkpoints past their index too, through a
    /// temporary view, so a base value its index lost is not looked for again).
    var readsPastIndexes = false
    /// Whether the store, opened read-only, has views of Keepsake's that this SQLite cannot
    /// parse, and is read without them (`Schema.readSchema`): ``KeepsakeStore/verify()`` says so.
    var readsWithoutUnreadableViews = false
    private var statements: [StatementKey: SQLiteStatement] = [:]
    /// The statements prepared last, found by where their SQL text lies in memory (the same
    /// literal always lies at the same address) before the dictionary above is searched;
    /// another text at that place is told apart by comparing the two.
    private var recent = [RecentStatement?](repeating: nil, count: 64)
    /// Write transactions this connection has committed, and the ``dataVersion`` right after
    /// the last of them.
    private(set) var writeCommits = 0
    private var dataVersionAfterCommit: UInt32?
    /// Asked inside a transaction when another connection or process has committed since this
    /// connection last looked (``dataVersion`` moved): a store's check that no app update changed
    /// its schema meanwhile. Throwing refuses the transaction; `true` says the connection now
    /// reads the changed schema, and a read transaction whose body ran before it did runs again.
    var onChangeByOthers: ((SQLiteConnection) throws -> Bool)?
    /// The ``dataVersion`` ``onChangeByOthers`` last saw, or this connection's last commit made.
    private var seenDataVersion: UInt32?
    private(set) var isClosed = false
    /// The busy handler's state; SQLite holds an unretained pointer to it.
    private let busyWait: BusyWait

    /// Opens (or creates) a database.
    ///
    /// - Parameters:
    ///   - path: A file path, or `":memory:"` for a private in-memory database.
    ///   - readOnly: Open without write access; the file must exist.
    ///   - create: Create the file when it is missing (ignored when `readOnly`).
    ///   - immutable: With `readOnly`, open with SQLite's `immutable` flag: no lock, no `-wal` or
    ///     `-shm` file, so it works on read-only media and leaves the folder as it was. Only for a
    ///     file nothing is writing to.
    ///   - busyTimeout: How long a statement waits for another connection's lock before failing
    ///     with ``SQLiteError/Code/busy``.
    /// - Throws: ``SQLiteError`` when the file cannot be opened.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/uri.html#uriimmutable
    public init(
        path: String, readOnly: Bool = false, create: Bool = true, immutable: Bool = false,
        busyTimeout: Duration = .seconds(5)
    )
        throws(SQLiteError)
    {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        var name = Self.literalName(path)
        if readOnly, immutable, path != ":memory:" {
            flags |= SQLITE_OPEN_URI
            name = "file:" + Self.uriEscaped(path) + "?immutable=1"
        }
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(name, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message =
                handle.map { Self.message(of: $0, code: result) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_close_v2(handle)
            throw SQLiteError(code: .init(result), message: "\(message): \(path)")
        }
        self.handle = handle
        self.path = path
        // As SQLite keeps it: a later change of the working directory does not move it.
        absolutePath = URL(fileURLWithPath: path).path
        isImmutable = readOnly && immutable && path != ":memory:"
        sqlite3_extended_result_codes(handle, 1)
        busyWait = BusyWait(timeout: busyTimeout)
        sqlite3_busy_handler(handle, busyHandler, Unmanaged.passUnretained(busyWait).toOpaque())
        do {
            // Neither writes to the file. trusted_schema=OFF stops SQL functions with side
            // effects from running inside a hostile file's views and triggers.
            // Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_trusted_schema
            try execute("PRAGMA foreign_keys = ON")
            try execute("PRAGMA trusted_schema = OFF")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Finalizes every cached statement and closes the connection. Safe to call twice.
    public func close() {
        close(leavingLog: false)
    }

    /// Closes the connection leaving the file and its write-ahead log as they are. SQLite's
    /// last connection to a file otherwise copies the log into the file as it closes, and a
    /// store refused on open must not be written: its log may be another file's (one the file
    /// replaced since a crash), whose pages would land on it.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/c_dbconfig_defensive.html
    func closeLeavingLog() {
        close(leavingLog: true)
    }

    private func close(leavingLog: Bool) {
        guard !isClosed else { return }
        if leavingLog {
            _ = keepsake_sqlite_db_config_flag(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        } else {
            emptyLogIfMovedAway()
        }
        isClosed = true
        statements.removeAll()
        recent = []
        sqlite3_close_v2(handle)
    }

    /// The bytes the write-ahead log file is cut back to when it starts over
    /// (`journal_size_limit`): SQLite otherwise keeps the file at the largest size it ever
    /// reached until the store is closed, and one large commit (a snapshot of a big value) left
    /// a log as large as itself on the disk for the rest of the session. The limit is the most
    /// the log holds in steady writing (``WALCheckpointer/hardLimit`` pages), so that only such
    /// a commit makes SQLite cut the file: cutting it at every start over (at 4 MiB) doubled the
    /// slowest of 5,000 appends to the big document, the one that started the log over.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_journal_size_limit
    static let logSizeLimit = Int(WALCheckpointer.hardLimit) * (4_096 + 24)

    /// Switches to write-ahead logging and sets the sync mode, checking that WAL took effect,
    /// and the size the log file is cut back to when the log starts over
    /// (`journal_size_limit`, 16 MiB: the most the log holds in steady writing).
    ///
    /// In-memory databases keep their `memory` journal.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/wal.html
    ///
    /// - Parameter synchronous: The durability of commits.
    /// - Throws: ``SQLiteError`` when WAL cannot be enabled.
    public func enableWAL(synchronous: Synchronous) throws(SQLiteError) {
        let mode = try scalarText("PRAGMA journal_mode = WAL")
        guard mode == "wal" || (path == ":memory:" && mode == "memory") else {
            throw SQLiteError(
                code: .error, message: "journal_mode is \(mode ?? "unknown"), expected wal", sql: nil)
        }
        try setSynchronous(synchronous)
        try execute("PRAGMA journal_size_limit = \(Self.logSizeLimit)")
    }

    /// Sets the durability of this connection's commits and checkpoints: `synchronous`, and
    /// which syncs use `F_FULLFSYNC` on Apple's systems (every sync with `.full`, a
    /// checkpoint's with `.normal`), where `fsync` alone does not reach the disk. SQLite's own
    /// default is neither; other systems ignore both settings.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_fullfsync
    ///
    /// - Throws: ``SQLiteError``.
    func setSynchronous(_ synchronous: Synchronous) throws(SQLiteError) {
        try execute("PRAGMA synchronous = \(synchronous.rawValue)")
        try execute("PRAGMA fullfsync = \(synchronous == .full ? "ON" : "OFF")")
        try execute("PRAGMA checkpoint_fullfsync = ON")
    }

    /// The statement for `sql`, prepared once and then reused from a cache.
    ///
    /// - Parameter sql: One SQL statement.
    /// - Returns: The statement, reset and with no bindings.
    /// - Throws: ``SQLiteError`` when the SQL does not compile.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try checkOpen(sql)
        // A text of up to 15 bytes lies inside the `String` itself, copied to the stack here:
        // its length then keeps two such texts apart.
        let address = sql.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) } ?? 0
        let slot = Int(truncatingIfNeeded: ((address >> 4) &+ UInt(sql.utf8.count) &* 7) & 63)
        if let recent = recent[slot], recent.address == address, recent.statement.sql == sql {
            recent.statement.reset()
            return recent.statement
        }
        if let statement = statements[StatementKey(sql)] {
            statement.reset()
            recent[slot] = RecentStatement(address: address, statement: statement)
            return statement
        }
        var handle: OpaquePointer?
        let result = sqlite3_prepare_v3(self.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard result == SQLITE_OK, let handle else { throw error(code: result, sql: sql) }
        let statement = SQLiteStatement(handle: handle, sql: sql, connection: self)
        statements[StatementKey(sql)] = statement
        recent[slot] = RecentStatement(address: address, statement: statement)
        return statement
    }

    /// Runs SQL that returns no rows; several statements separated by `;` are allowed when no
    /// values are bound.
    ///
    /// - Parameters:
    ///   - sql: The SQL.
    ///   - values: Values bound by position.
    /// - Throws: ``SQLiteError``.
    public func execute(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
        // A byte search: Foundation's `contains` on a String costs more than a small commit.
        if values.isEmpty, sql.utf8.contains(UInt8(ascii: ";")) {
            try checkOpen(sql)
            var message: UnsafeMutablePointer<CChar>?
            let result = sqlite3_exec(handle, sql, nil, nil, &message)
            defer { sqlite3_free(message) }
            guard result == SQLITE_OK else { throw error(code: result, sql: sql) }
            return
        }
        try prepare(sql).run(binding: values)
    }

    /// Runs one statement without values, known to be one (``execute(_:_:)`` looks for a `;`).
    private func run(_ sql: String) throws(SQLiteError) {
        let statement = try prepare(sql)
        while try statement.step() {}
    }

    /// Runs a query and maps each row.
    ///
    /// - Parameters:
    ///   - sql: A query.
    ///   - values: Values bound by position.
    ///   - row: Reads one row from the statement.
    /// - Returns: The mapped rows.
    /// - Throws: ``SQLiteError``, or what `row` throws.
    public func query<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> T)
        throws -> [T]
    {
        let statement = try prepare(sql)
        try statement.bind(values)
        var rows: [T] = []
        while try statement.step() { rows.append(try row(statement)) }
        return rows
    }

    /// The first column of the first row as an integer, or `nil` when there is none.
    public func scalarInt(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        try statement.bind(values)
        guard try statement.step() else { return nil }
        defer { statement.reset() }
        return statement.int64(0)
    }

    /// The first column of the first row as text, or `nil` when there is none.
    public func scalarText(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        try statement.bind(values)
        guard try statement.step() else { return nil }
        defer { statement.reset() }
        return statement.text(0)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// Write transactions start with `BEGIN IMMEDIATE`, taking the write lock at once (waiting
    /// up to the busy timeout) so they never fail half way with a busy error. After any error
    /// the connection is out of the transaction and usable again. On a store's connection, a
    /// read transaction's body runs a second time when the store's schema changed under it
    /// while it ran, so it should have no effect but its result.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/lang_transaction.html
    ///
    /// - Parameters:
    ///   - immediate: `true` for a write transaction (the default), `false` for `BEGIN DEFERRED`.
    ///   - body: The work; for a read, free of effects but its result.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` from `BEGIN`/`COMMIT`, or what `body` throws.
    public func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        var again = false
        while true {
            try run(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
            do {
                if immediate, let reason = movedAway() {
                    try? run("ROLLBACK")
                    emptyLogIfMovedAway()
                    throw SQLiteError(
                        code: .databaseMoved,
                        message: "the file was \(reason) while it was open: \(path); nothing more is "
                            + "written through this connection, open it again")
                }
                // A write transaction holds the lock from its start, so it sees every other
                // commit now; a read sees them once its body has read something.
                if immediate { _ = try noticeChangesByOthers() }
                let result = try body()
                if !immediate, !again, try noticeChangesByOthers() {
                    again = true
                    try run("ROLLBACK")
                    continue
                }
                try run("COMMIT")
                if immediate {
                    (writeCommits, dataVersionAfterCommit) = (writeCommits + 1, dataVersion)
                    seenDataVersion = dataVersionAfterCommit
                }
                return result
            } catch {
                // Some errors (a full disk, for one) roll the transaction back by themselves.
                if !isAutocommit { try? execute("ROLLBACK") }
                // A read may have failed on a schema changed under it: the check says so (or
                // refuses the store), and the body runs once more.
                if !immediate, !again, try noticeChangesByOthers(afterFailure: true) {
                    again = true
                    continue
                }
                throw error
            }
        }
    }

    /// Why a write through this connection would be lost, or `nil` when it would not: the file
    /// it opened is no longer at its path. SQLite keeps writing to the file it opened, and to
    /// the write-ahead log at the path: writes to a file deleted since vanish when it closes,
    /// and those to a file another replaced (as a sync tool replaces a document) are not in
    /// the file the path names, whose next open would read this file's log. A file moved
    /// together with its log (its folder renamed) is written on, as SQLite writes it.
    ///
    /// One `stat` of the path per write transaction (1.3–2 µs on the development machine,
    /// whose system calls are slow; a tiny append takes about 40 µs there).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html
    private func movedAway() -> String? {
        var moved: Int32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK, moved != 0
        else { return nil }
        var info = stat()
        if stat(absolutePath, &info) == 0 { return "replaced by another" }
        return stat(absolutePath + "-wal", &info) == 0
            ? "deleted, or moved away from its write-ahead log" : nil
    }

    /// Copies the write-ahead log at the path, which is the log of the file this connection
    /// opened, into that file and empties it, when that file is no longer at the path
    /// (``movedAway()``): SQLite leaves such a log behind when it closes, and the next open of
    /// the path would read its pages into whatever file is there then. Best effort: a reader
    /// of the log keeps it from emptying.
    private func emptyLogIfMovedAway() {
        guard !isImmutable, movedAway() != nil else { return }
        var busiest: Int32 = 0
        var copied: Int32 = 0
        _ = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_TRUNCATE, &busiest, &copied)
    }

    /// Runs ``onChangeByOthers`` when ``dataVersion`` has moved since it last ran; returns what
    /// it returns. After a failure, outside any transaction, it reads the newest state.
    private func noticeChangesByOthers(afterFailure: Bool = false) throws -> Bool {
        guard let onChangeByOthers else { return false }
        if afterFailure {
            seenDataVersion = nil
            return try onChangeByOthers(self)
        }
        guard let version = dataVersion, version != seenDataVersion else { return false }
        // Seen only once the check passes: a refusal holds for every later transaction.
        let changed = try onChangeByOthers(self)
        seenDataVersion = version
        return changed
    }

    /// A number that changes whenever the main database changes: with each commit of this
    /// connection, and when a transaction begins after another connection or process changed
    /// it. `nil` when SQLite does not tell.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html
    var dataVersion: UInt32? {
        var version: UInt32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else {
            return nil
        }
        return version
    }

    /// Whether nothing has changed the database since this connection's write transaction
    /// numbered `commit` (its ``writeCommits`` once it committed) — no later transaction of its
    /// own, no other connection or process. Asked inside a transaction, whose start is when
    /// SQLite notices other connections' commits.
    func isUnchanged(sinceCommit commit: Int) -> Bool {
        guard commit == writeCommits, let after = dataVersionAfterCommit else { return false }
        return dataVersion == after
    }

    /// Whether SQLite reads the file without being able to write it: opened read-only, or
    /// opened for writing a file it could only open for reading (a locked file, read-only
    /// media, permissions), which it does without saying so; every write then fails.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/db_readonly.html
    public var isReadOnly: Bool { !isClosed && sqlite3_db_readonly(handle, "main") == 1 }

    /// Whether no transaction is open.
    public var isAutocommit: Bool { isClosed || sqlite3_get_autocommit(handle) != 0 }

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    private func checkOpen(_ sql: String) throws(SQLiteError) {
        guard !isClosed else {
            throw SQLiteError(
                code: .init(SQLITE_MISUSE),
                message: "the connection to \(path) is closed; open the store again",
                sql: sql)
        }
    }

    func error(code: Int32, sql: String?) -> SQLiteError {
        // A failed statement is dropped from the cache and prepared anew next time.
        if let sql, let statement = statements.removeValue(forKey: StatementKey(sql)) {
            for slot in recent.indices where recent[slot]?.statement === statement { recent[slot] = nil }
        }
        let extended = sqlite3_extended_errcode(handle)
        let message = Self.message(of: handle, code: code)
        return SQLiteError(
            code: .init(extended != 0 && extended & 0xFF == code & 0xFF ? extended : code), message: message,
            sql: sql)
    }

    /// SQLite's message for a failure, with the operating system's reason when it refused to
    /// open a file or do I/O: "unable to open database file (Too many open files)".
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/system_errno.html
    static func message(of handle: OpaquePointer, code: Int32) -> String {
        let message = String(cString: sqlite3_errmsg(handle))
        let system = sqlite3_system_errno(handle)
        guard code & 0xFF == SQLITE_CANTOPEN || code & 0xFF == SQLITE_IOERR, system != 0 else {
            return message
        }
        return "\(message) (\(String(cString: strerror(system))))"
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}

extension SQLiteConnection {
    /// The longest full path, in bytes, of a database SQLite opens: its file system's limit
    /// (512 bytes on Unix) less the 8 bytes of the longest name it gives a file beside it
    /// (`-journal`), which it refuses to open a database without.
    static let longestPath = Int(sqlite3_vfs_find(nil)?.pointee.mxPathname ?? 512) - 8
}

extension SQLiteConnection {
    /// `path` as SQLite takes it for the file of that name: `./` before a path that begins
    /// with `file:`, which a SQLite built to read URI filenames everywhere (`SQLITE_USE_URI`, as
    /// Debian's is) reads as a URI — `file:notes.keepsake` as `notes.keepsake`, and
    /// `file:notes.keepsake?mode=memory` as a database in memory — while every check before it
    /// read the file named so.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/uri.html#uri_filenames_in_sqlite
    static func literalName(_ path: String) -> String {
        path.hasPrefix("file:") ? "./" + path : path
    }

    /// `path` with the characters a `file:` URI gives a meaning to escaped.
    static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7F...:
                escaped += String(format: "%%%02X", byte)
            default:
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return escaped
    }
}

/// How a connection waits for another connection's lock: retried after short sleeps (50 µs, then
/// 250 µs, then 2 ms) until the busy timeout has passed since the first refusal.
///
/// SQLite's own `sqlite3_busy_timeout` sleeps 1, 2, 5, 10, 15, 20… ms between attempts, so a
/// write that waits for another connection's 3 ms transaction (a checkpoint being stored by the
/// background connection, say) waits 8 ms, and one that waits for 10 ms waits 18 ms: here it
/// waits about as long as the lock is held.
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/busy_handler.html
final class BusyWait {
    let timeout: Duration
    private var start = ContinuousClock.now

    init(timeout: Duration) { self.timeout = timeout }

    /// Whether to try again after the `count`-th refusal in a row (0 for the first).
    func retry(_ count: Int32) -> Bool {
        let now = ContinuousClock.now
        if count == 0 { start = now }
        guard now - start < timeout else { return false }
        usleep(count < 40 ? 50 : count < 200 ? 250 : 2_000)
        return true
    }
}

/// SQLite's busy callback: `context` is the connection's ``BusyWait``.
private func busyHandler(_ context: UnsafeMutableRawPointer?, _ count: Int32) -> Int32 {
    guard let context else { return 0 }
    return Unmanaged<BusyWait>.fromOpaque(context).takeUnretainedValue().retry(count) ? 1 : 0
}

/// A statement of the connection's cache, and where its SQL text lay when last asked for.
private struct RecentStatement {
    let address: UInt
    let statement: SQLiteStatement
}

/// The statement cache's key: the SQL text, hashed by its length and its first and last bytes
/// only. Hashing all of it cost more than a tenth of a small commit; statements that share
/// those bytes are told apart by comparing their text, which is instant for the same literal.
private struct StatementKey: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    func hash(into hasher: inout Hasher) {
        var sql = sql
        sql.withUTF8 { bytes in
            hasher.combine(bytes.count)
            let ends = min(bytes.count, 16)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<ends])))
            hasher.combine(
                bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[(bytes.count - ends)...])))
        }
    }
}
