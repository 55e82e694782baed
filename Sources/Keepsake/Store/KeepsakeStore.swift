import Foundation

/// A Keepsake store: one SQLite file holding many durable histories and named snapshots.
///
/// ```swift
/// let store = try KeepsakeStore(path: "Notes.keepsake")
/// let history = try store.history("note-42", initialValue: Note(title: "", body: "", tags: []))
/// var note = history.value
/// note.title = "Groceries"
/// try history.append(note)   // one small transaction
/// // … after a restart, the same two lines give back the value and its undo stack.
/// ```
///
/// The store is `Sendable`: its one connection is guarded by a lock, so histories and
/// caretakers on any thread or actor take turns. Opening checks the file first and refuses
/// anything that is not a Keepsake store, without writing to it (see ``KeepsakeError``).
public final class KeepsakeStore: Sendable {
    /// How a store is opened.
    public struct Options: Sendable {
        /// How durable each commit is; `.normal` by default. See
        /// ``SQLiteConnection/Synchronous``.
        public var synchronous: SQLiteConnection.Synchronous
        /// How long a write waits for another process's lock before failing with
        /// ``SQLiteError/Code/busy``; 5 seconds by default.
        public var busyTimeout: Duration
        /// Open without write access; nothing is created, migrated or written.
        public var readOnly: Bool
        /// Open a store whose write-ahead log is damaged as SQLite reads it: with the log's
        /// commits before the damage, without those after it. Off by default: such a store is
        /// refused with ``KeepsakeError/notAStore(path:reason:)``, whose reason names the damage.
        ///
        /// Opened for writing, the store's next commits overwrite the frames SQLite could not
        /// read, so the log is first copied aside, to `<path>-wal.damaged-<seconds since
        /// 1970>`: it keeps them (once: another open before the store has written keeps that
        /// copy). A store whose log is not damaged opens as it would without this option.
        public var readsDamagedLog: Bool

        /// Options for opening a store.
        ///
        /// - Parameters:
        ///   - synchronous: `.normal` (the default) or `.full`.
        ///   - busyTimeout: How long to wait for a lock; 5 seconds by default.
        ///   - readOnly: Open without write access.
        ///   - readsDamagedLog: Open a store whose write-ahead log is damaged, as of the
        ///     damage (see ``readsDamagedLog``).
        public init(
            synchronous: SQLiteConnection.Synchronous = .normal, busyTimeout: Duration = .seconds(5),
            readOnly: Bool = false, readsDamagedLog: Bool = false
        ) {
            self.synchronous = synchronous
            self.busyTimeout = busyTimeout
            self.readOnly = readOnly
            self.readsDamagedLog = readsDamagedLog
        }
    }

    /// The schema version this code writes (stores of older ones are upgraded when opened for
    /// writing; newer ones are refused).
    public static var schemaVersion: Int { Schema.currentVersion }

    /// The file's path, or `:memory:`.
    public let path: String
    /// The file the store reads: ``path``, or the file a symbolic link at it points to, beside
    /// which SQLite keeps the write-ahead log (`<file>-wal`).
    let file: String
    /// The options the store was opened with.
    public let options: Options
    let database: SQLiteDatabase
    /// Runs the write-ahead log's checkpoints off the committing thread (`nil` for read-only and
    /// in-memory stores, which have none to run).
    let checkpointer: WALCheckpointer?

    /// Opens the store at `path`, creating it when the file does not exist.
    ///
    /// - Parameters:
    ///   - path: The store file.
    ///   - options: Durability, busy timeout, read-only.
    /// - Throws: ``KeepsakeError``: `.cannotOpen`, `.notAStore` or `.newerSchema` when the file
    ///   is refused (it is then left untouched; a full path longer than the 504 bytes SQLite
    ///   opens is `.cannotOpen`), `.sqlite` for other failures. A store whose
    ///   write-ahead log is damaged, so that SQLite would silently drop the commits after the
    ///   damage, is `.notAStore`: ``Options/readsDamagedLog`` opens it as of the damage, and
    ///   ``salvage(from:to:)`` saves its values as of the damage. With that option, a log
    ///   that cannot be copied aside is `.cannotOpen`. Opened for
    ///   writing, a file that cannot be written (locked, on read-only media, not permitted),
    ///   whose folder cannot be, or that has another name (a hard link) is `.cannotOpen`, whose
    ///   reason says to open it with ``Options/readOnly`` to read it; a disk too full for
    ///   what opening for writing writes (the log's shared-memory index, an upgrade) is
    ///   `.sqlite` (code `.full`, or the index's I/O error), whose message says so too. Both
    ///   have ``KeepsakeError/remedy`` `.openReadOnly`.
    public init(path: String, options: Options = Options()) throws(KeepsakeError) {
        self.path = path
        self.options = options
        // SQLite follows a link to the file, and keeps the log beside the file it points to:
        // every look at the log here must find it there. Looking beside the link found none,
        // and a read-only open read the file as immutable, silently without the log's commits.
        let file = FileState.linkTarget(of: path) ?? path
        self.file = file
        let open: @Sendable (String, Bool) throws -> SQLiteConnection = { path, throughLog in
            try Schema.open(
                path: path, readOnly: options.readOnly, synchronous: options.synchronous,
                busyTimeout: options.busyTimeout, readsDamagedLog: options.readsDamagedLog,
                throughLog: throughLog)
        }
        // A store read as immutable is opened again once a writer appears: the same file, even
        // after the process has changed its working directory. Asked to read through the log
        // (a writer touched the file while it was read), where the log cannot be read (a
        // folder the reader may not create its index in), the file is read as immutable again.
        let absolute = file == ":memory:" ? file : URL(fileURLWithPath: file).path
        do {
            // The file's state is taken before it opens: a writer's commit while it opens makes
            // the first read see a change, and read again.
            let state = FileState(path: file)
            database = SQLiteDatabase(
                try open(file, false), openedAt: state,
                reopen: { throughLog in
                    if throughLog, let connection = try? open(absolute, true) { return connection }
                    return try open(absolute, false)
                })
        } catch {
            let error = Self.keepsakeError(error, path: path)
            throw options.readOnly ? error : error.advisingReadOnlyWhenOutOfRoom
        }
        // Without its own connection (a file that cannot be opened twice), SQLite's automatic
        // checkpoints stay in place.
        if !options.readOnly, file != ":memory:",
            let checkpointer = try? WALCheckpointer(
                path: file, synchronous: options.synchronous, busyTimeout: options.busyTimeout)
        {
            database.read { checkpointer.install(on: $0) }
            self.checkpointer = checkpointer
        } else {
            checkpointer = nil
        }
    }

    deinit { stopCheckpointer() }

    /// Hands checkpoints back to the writer's connection and ends the checkpointing thread.
    private func stopCheckpointer() {
        guard let checkpointer else { return }
        database.read { connection in
            if !connection.isClosed { WALCheckpointer.uninstall(from: connection) }
        }
        checkpointer.stop()
    }

    /// A private store in memory, gone when the value is released.
    ///
    /// - Throws: ``KeepsakeError/sqlite(_:)`` if SQLite cannot allocate it.
    public static func inMemory() throws(KeepsakeError) -> KeepsakeStore {
        try KeepsakeStore(path: ":memory:")
    }

    /// Closes the store's connection. Histories and caretakers on it fail afterwards, with
    /// ``KeepsakeError/sqlite(_:)`` of code `SQLITE_MISUSE` naming the file, and change
    /// nothing, in memory or in the file — but for an edit no one could record: made to an
    /// observed model in the turn of `close()` (a window's close handler writing a field back,
    /// then closing the store), its recording fails; the controller keeps it (``VersioningController/error``
    /// says why), and once let go of, its history opens the file again to hold it as a
    /// change held back, which the next open records as a version — when the file there still
    /// holds the history as it was left. Close the controllers first
    /// (``VersioningController/close()``) to have every edit recorded now.
    ///
    /// The store's background work ends first, without waiting for the pause in the writing
    /// it waits for: a checkpoint of a history's value that is built and waiting to be stored
    /// is stored now, so that the next opening replays fewer versions; a compaction waiting to
    /// start is left to the next folding of the history's oldest versions.
    public func close() {
        stopCheckpointer()
        database.close()
    }

    /// Whether ``close()`` has closed the store.
    var isClosed: Bool { database.isClosed }

    /// Runs `body` in one write transaction, mapping failures to ``KeepsakeError``. A store
    /// opened read-only refuses before anything runs, saying so (SQLite's own refusal names
    /// only the statement it stopped).
    func write<T>(_ body: (SQLiteConnection, BlobCoding) throws -> T) throws(KeepsakeError) -> T {
        if options.readOnly { throw .sqlite(Self.readOnlyRefusal(path)) }
        do {
            return try database.write { try body($0, BlobCoding($0)) }
        } catch {
            throw Self.keepsakeError(error, path: path)
        }
    }

    /// Runs `body` with the connection, without a write transaction. A statement that names a
    /// column or table the store lacks is a damaged schema (a store opened for writing is
    /// refused at once), said so rather than as SQLite's "no such column".
    func read<T>(_ body: (SQLiteConnection, BlobCoding) throws -> T) throws(KeepsakeError) -> T {
        do {
            return try database.readFollowingWriters { connection in
                do {
                    return try connection.transaction(immediate: false) {
                        try body(connection, BlobCoding(connection))
                    }
                } catch let error as SQLiteError {
                    throw Schema.damagedSchema(failing: error, connection, path: path) ?? error
                }
            }
        } catch {
            throw Self.keepsakeError(error, path: path)
        }
    }

    /// The error of a write to a store opened read-only: code ``SQLiteError/Code/readOnly``.
    static func readOnlyRefusal(_ path: String) -> SQLiteError {
        SQLiteError(
            code: .readOnly, message: "\(path) is open read-only (Options.readOnly); nothing was written")
    }

    static func keepsakeError(_ error: any Error, path: String) -> KeepsakeError {
        switch error {
        case let error as KeepsakeError: error
        case let error as SQLiteError: Schema.classify(error, path: path)
        // From a stored record: the history fills in its name (``KeepsakeHistoryStorage/durably(_:)``).
        case let error as ReversionError: .reversion(history: "", version: nil, error: error)
        default: .sqlite(SQLiteError(code: .error, message: "\(error)"))
        }
    }

    // MARK: - Maintenance

    /// Runs `PRAGMA integrity_check`.
    ///
    /// - Returns: `["ok"]` for a sound file, otherwise SQLite's list of problems.
    /// - Throws: ``KeepsakeError``.
    public func integrityCheck() throws(KeepsakeError) -> [String] {
        try read { connection, _ in try connection.query("PRAGMA integrity_check") { $0.text(0) ?? "" } }
    }

    /// Deletes blobs nothing refers to any more, then rebuilds the file to its smallest size
    /// (`VACUUM`) and truncates the write-ahead log.
    ///
    /// A checkpoint being built off the committing thread meanwhile may refer to a blob this
    /// deletes (stored for it, and referred to by nothing stored yet): that checkpoint is then
    /// not stored, and the next one is built at its turn.
    ///
    /// - Throws: ``KeepsakeError``.
    public func compact() throws(KeepsakeError) {
        try write { connection, _ in
            try connection.execute(
                """
                DELETE FROM blob WHERE id NOT IN (
                    SELECT j.value FROM version, json_tree(version.changes) AS j WHERE j.key = '$blob'
                    UNION SELECT j.value FROM pending_change, json_tree(pending_change.patch) AS j WHERE j.key = '$blob'
                    UNION SELECT j.value FROM checkpoint, json_tree(checkpoint.value) AS j WHERE j.key = '$blob'
                    UNION SELECT j.value FROM snapshot_property, json_tree(snapshot_property.value) AS j
                        WHERE j.key IN ('$blob', '$json')
                    UNION SELECT j.value FROM snapshot_property, blob AS text, json_tree(CAST(text.bytes AS TEXT)) AS j
                        WHERE snapshot_property.value = '{"$json":' || text.id || '}' AND j.key = '$blob')
                """)
        }
        do {
            try database.read { connection in
                try connection.execute("VACUUM")
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch {
            throw Self.keepsakeError(error, path: path)
        }
    }

    /// `name` as new histories and snapshots are named: composed (Unicode's NFC), the form
    /// text typed on a keyboard mostly takes, so that the `sqlite3` shell finds it as typed.
    /// Lookups compare names as Swift compares strings, so another form finds it too.
    static func canonicalName(_ name: String) -> String { name.precomposedStringWithCanonicalMapping }

    /// Whether `name` can be spelled in another form that Swift takes for the same string: only
    /// text that is not ASCII can (but for a few signs, such as the Kelvin sign, which is `K`),
    /// so an ASCII name, as most ids are, is looked up by its bytes alone.
    static func hasOtherForms(_ name: String) -> Bool { !name.utf8.allSatisfy { $0 < 0x80 } }

    /// The names of the histories in the store, sorted, as stored: composed (NFC), unless an
    /// earlier release stored one in the form the app gave it.
    ///
    /// - Throws: ``KeepsakeError``.
    public func historyNames() throws(KeepsakeError) -> [String] {
        try read { connection, _ in
            // Read from the table, not its name index: a damaged index page must not hide a
            // history from the list (`verify()` reports the index).
            try connection.query("SELECT name FROM history NOT INDEXED ORDER BY name") { $0.text(0) ?? "" }
        }
    }

    /// Deletes a history with all its versions.
    ///
    /// A controller still open on the history, in this process or another, writes nothing
    /// more: its next write throws ``KeepsakeError/historyConflict(history:)`` (it is not read
    /// again, as a history another writer changed is). A history
    /// created later, under any name, never takes over the deleted one's rows (its id is never
    /// used again), so that controller cannot write into it.
    ///
    /// - Parameter name: The history's name.
    /// - Returns: Whether there was such a history.
    /// - Throws: ``KeepsakeError``; ``KeepsakeError/damaged(history:reason:)`` when the index of
    ///   history names disagrees with the table (nothing is deleted then).
    @discardableResult
    public func deleteHistory(_ name: String) throws(KeepsakeError) -> Bool {
        try write { connection, _ in
            guard let id = try HistoryRows.historyID(named: name, in: connection) else { return false }
            try connection.execute("DELETE FROM history WHERE id = ?", [.integer(id)])
            return connection.changes > 0
        }
    }
}
