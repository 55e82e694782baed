import Foundation

/// The store's identity and schema: the application id, the migrations, and the checks made
/// before a file is touched.
enum Schema {
    struct Migration: Sendable {
        let version: Int
        let name: String
        let sql: String

        /// Whether the migration runs with foreign keys off: one that rebuilds a table other
        /// tables refer to says so on a line of its own (``foreignKeysOffLine``), since
        /// dropping that table with them on would delete the rows that refer to it.
        var runsWithForeignKeysOff: Bool {
            sql.split(separator: "\n").contains { $0 == Schema.foreignKeysOffLine }
        }
    }

    /// The line of a migration that runs with foreign keys off (``Migration/runsWithForeignKeysOff``).
    static let foreignKeysOffLine = "-- keepsake: foreign keys off"

    /// `PRAGMA application_id` of every Keepsake store: "Kpsk" in ASCII.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_application_id
    static let applicationID: Int32 = 0x4B70_736B

    /// The schema version this code writes: the number of the last migration.
    static var currentVersion: Int { migrations.count }

    /// Opens a store file: checks that it is one (or a new, empty database), then enables WAL
    /// and runs the missing migrations, each in its own transaction. A file that fails a check
    /// is closed without being written. A store whose write-ahead log is damaged
    /// (``WriteAheadLog``) is refused before SQLite reads it, unless `readsDamagedLog`; opened
    /// for writing then, its log is copied aside first. A file opened read-only with no log
    /// beside it is read as immutable, unless `throughLog`: a file a writer has been seen to
    /// change since (``SQLiteDatabase/readFollowingWriters(_:)``).
    static func open(
        path: String, readOnly: Bool, synchronous: SQLiteConnection.Synchronous, busyTimeout: Duration,
        readsDamagedLog: Bool = false, throughLog: Bool = false
    ) throws(KeepsakeError) -> SQLiteConnection {
        try checkFile(path: path, readOnly: readOnly)
        // A store with no write-ahead log beside it, or an empty one, holds every commit in
        // its file (a connection in WAL mode keeps the log while it is open, and writes to it
        // before it changes the file): read it as an immutable file, so that nothing is created
        // beside it and read-only media work — and a disk too full for the log's index (which
        // a writer that could not open leaves empty) does not refuse it. Once a writer's log
        // holds a page, the reader opens it again, through the log (`FileState`). With a log
        // that holds pages, read through it. Only then do the files beside it matter.
        let immutable = readOnly && !throughLog && (FileState.logSize(of: path) ?? 0) == 0
        if !immutable, path != ":memory:" { try checkCompanions(of: path, forWriting: !readOnly) }
        if !readOnly, path != ":memory:" {
            removeCreationLeftovers(of: path)
            if !FileManager.default.fileExists(atPath: path) {
                try create(path: path, synchronous: synchronous, busyTimeout: busyTimeout)
            }
            try checkOneName(path)
        }
        let damage =
            path == ":memory:" || !FileState.logHoldsFrames(of: path)
            ? nil : WriteAheadLog.damage(ofLogBeside: path)
        if let damage {
            guard readsDamagedLog else {
                throw .notAStore(path: path, reason: damage.reason(log: path + "-wal"))
            }
            if !readOnly { try WriteAheadLog.keepCopy(ofLogBeside: path) }
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(
                path: path, readOnly: readOnly, immutable: immutable, busyTimeout: busyTimeout)
        } catch {
            throw .cannotOpen(path: path, reason: error.message)
        }
        if !readOnly, connection.isReadOnly {
            connection.closeLeavingLog()
            throw .cannotOpen(
                path: path,
                reason: unwritable(
                    "the file cannot be written (it is locked, on read-only media, or not permitted)"))
        }
        do {
            let (objects, unreadableViews) = try readSchema(connection, readOnly: readOnly, path: path)
            let version = try checkIdentity(connection, objects: objects, path: path, readOnly: readOnly)
            connection.schemaVersion = readOnly ? version : currentVersion
            connection.logDamage = damage
            connection.readsWithoutUnreadableViews = readOnly && unreadableViews
            if !readOnly {
                try connection.enableWAL(synchronous: synchronous)
                if unreadableViews { try dropUnreadableViews(connection) }
                do {
                    try migrate(connection, from: version)
                } catch let error as SQLiteError {
                    throw upgradeFailure(error, connection, from: version, path: path)
                }
                try refreshViews(connection)
                try checkShape(connection, path: path)
            } else if version < 4 {
                try createSchema4Views(connection, over: version)
            }
            connection.onChangeByOthers = { try followUpgrade(of: $0, path: path) }
            return connection
        } catch let error as KeepsakeError {
            connection.closeLeavingLog()
            throw withLogHint(error, path: path)
        } catch let error as SQLiteError {
            connection.closeLeavingLog()
            // Without its log beside the file, the first read fails "unable to open database file".
            if !readOnly, error.code == .cannotOpen, let folder = NewStoreFile.unwritableFolder(of: path) {
                let name = (path as NSString).lastPathComponent
                throw .cannotOpen(
                    path: path,
                    reason: unwritable(
                        "\(folder), and a store open for writing keeps its write-ahead log beside the file "
                            + "(\(name)-wal)"))
            }
            throw withLogHint(Self.classify(error, path: path), path: path)
        } catch {
            connection.closeLeavingLog()
            throw .cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// Refuses to write a file that has other names (hard links): SQLite keeps the write-ahead
    /// log beside the name it opens, so writers through two names keep two logs, each
    /// checkpointed over the other's pages, and the file reads through each name as a mixture
    /// of both, silently. A store being created has two names for a moment (``NewStoreFile``
    /// links it into place, then removes its temporary name): that moment is waited out.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/howtocorrupt.html#_multiple_links_to_the_same_file
    private static func checkOneName(_ path: String) throws(KeepsakeError) {
        let deadline = ContinuousClock.now + .milliseconds(200)
        var names = FileState.nameCount(of: path)
        while names > 1, ContinuousClock.now < deadline {
            usleep(1_000)
            names = FileState.nameCount(of: path)
        }
        guard names > 1 else { return }
        throw .cannotOpen(
            path: path,
            reason: unwritable(
                "the file has \(names) names (hard links), and SQLite keeps the write-ahead log beside the "
                    + "name it opens: writers through two names would keep two logs and corrupt the file"
            ) + ", or copy it from there (copy(to:)) and write the copy")
    }

    /// The reason a store opened for writing cannot be written, with what to do: SQLite opens
    /// a file it can only read without saying so (a locked file, read-only media,
    /// permissions), and every write would fail later, at the app's first edit.
    private static func unwritable(_ what: String) -> String {
        "\(what); \(readOnlyAdvice)"
    }

    /// The advice ending the reason a store opened for writing cannot be written, which
    /// ``KeepsakeError/remedy`` reads.
    static let readOnlyAdvice = "open it with KeepsakeStore.Options(readOnly: true) to read it"

    /// What a migration's failure while upgrading a store from `version` is to the app. One
    /// that the rows refused (a constraint, a malformed page, a missing table or column: a
    /// damaged store, or one edited by hand) leaves the store at the last migration committed,
    /// which a read-only open reads and salvage copies: a `cannotOpen` naming the migration and
    /// saying so, with the read-only ``KeepsakeError/remedy``, rather than SQLite's error
    /// printing the whole migration. A failure of the moment (a busy store, a full disk, an I/O
    /// error) is classified as any other, to be tried again.
    private static func upgradeFailure(
        _ error: SQLiteError, _ connection: SQLiteConnection, from version: Int, path: String
    ) -> KeepsakeError {
        guard [.constraint, .corrupt, .error].contains(error.code),
            let reached = (try? connection.scalarInt("PRAGMA user_version")).flatMap({ $0 }).map(Int.init),
            migrations.indices.contains(reached)
        else { return classify(error, path: path) }
        let failed = migrations[reached]
        return .cannotOpen(
            path: path,
            reason: "it could not be upgraded from schema \(version) to \(currentVersion): migration "
                + "\(failed.version) (\(failed.name)) failed on what the store holds (\(error.message)), so it is "
                + "damaged or was changed by hand; it is left at schema \(reached): \(readOnlyAdvice), and "
                + "KeepsakeStore.salvage(from:to:) to copy what it holds into a new store")
    }

    /// `error` with a hint when a corrupt store has a write-ahead log with frames beside it:
    /// SQLite reads any log at `<path>-wal` as the file's own, so a file restored from a backup
    /// or replaced since a crash reads as corrupt through the log the crash left, which
    /// belongs to the file it replaced.
    private static func withLogHint(_ error: KeepsakeError, path: String) -> KeepsakeError {
        guard case .notAStore(let file, let reason) = error, reason.hasPrefix("it is corrupt"),
            FileState.logHoldsFrames(of: path)
        else { return error }
        return .notAStore(
            path: file,
            reason: """
                \(reason); a write-ahead log is beside it (\(path)-wal), which SQLite reads as the \
                file's own: if the file was restored or replaced since a crash, that log is the \
                replaced file's, and moving it away (with \(path)-shm) lets the file open as it is
                """)
    }

    /// Creates a store atomically (``NewStoreFile``): built and migrated in a temporary file
    /// beside `path`, then linked into place. A crash leaves no store or a whole one, never an
    /// empty file that later opens would refuse. If another process creates `path` first, its
    /// store is kept.
    private static func create(path: String, synchronous: SQLiteConnection.Synchronous, busyTimeout: Duration)
        throws(KeepsakeError)
    {
        _ = try NewStoreFile.install(at: path) { temporary throws(KeepsakeError) in
            do {
                let connection = try SQLiteConnection(path: temporary, busyTimeout: busyTimeout)
                defer { connection.close() }
                try connection.enableWAL(synchronous: synchronous)
                try migrate(connection, from: 0)
                // Fold the log into the file, so that the linked file is complete on its own.
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            } catch let error as SQLiteError {
                throw .cannotOpen(path: path, reason: "the new store could not be created: \(error.message)")
            } catch {
                throw .cannotOpen(path: path, reason: "the new store could not be created: \(error)")
            }
        }
    }

    /// Removes the files creations interrupted by a crash left in the folder of `path`
    /// (``NewStoreFile/temporaryPrefix``, and `<path>.creating-` as earlier versions named
    /// them, then `<pid>-<random>` and `-wal`, `-shm`, `-journal`), when their process is gone;
    /// a creation still running in another process is left alone.
    static func removeCreationLeftovers(of path: String) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let prefixes = [NewStoreFile.temporaryPrefix, url.lastPathComponent + ".creating-"]
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            guard let prefix = prefixes.first(where: { name.hasPrefix($0) }),
                let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" })
            else { continue }
            if pid == ProcessInfo.processInfo.processIdentifier { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
    }

    /// What a file of kind `kind` (`st_mode & S_IFMT`) is, said in a reason: "a directory",
    /// "a named pipe".
    private static func name(ofKind kind: mode_t) -> String {
        switch kind {
        case S_IFREG: "a file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a named pipe"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "a special file"
        }
    }

    /// The files SQLite keeps beside a store, under its name with a suffix, and what each is.
    static let companions = [
        ("-wal", "the store's write-ahead log"), ("-shm", "the index of the store's write-ahead log"),
        ("-journal", "the store's rollback journal"),
    ]

    /// Refuses a store beside which something other than a file stands where SQLite keeps one
    /// of its own (``companions``), or, to write it, a file this process may not write: a
    /// directory or a device made SQLite fail with a disk I/O error naming the store, a named
    /// pipe at `-journal` made the open wait forever, and a log or index the process may not
    /// write (another user's, or made read-only) let the store open and fail "attempt to write
    /// a readonly database" at the app's first edit.
    private static func checkCompanions(of path: String, forWriting: Bool) throws(KeepsakeError) {
        for (suffix, what) in companions {
            var info = stat()
            guard stat(path + suffix, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            guard kind == S_IFREG else {
                throw .cannotOpen(
                    path: path,
                    reason:
                        "SQLite keeps \(what) at \(path + suffix), and \(name(ofKind: kind)) is there: move it away"
                )
            }
            // Asked as SQLite will open it: with the effective user and group. Gone since the
            // `stat` (another connection's close removes the log and its index), it is no one's.
            guard forWriting, faccessat(AT_FDCWD, path + suffix, R_OK | W_OK, AT_EACCESS) != 0,
                errno != ENOENT
            else { continue }
            throw .cannotOpen(
                path: path,
                reason: unwritable(
                    "SQLite keeps \(what) at \(path + suffix), and this process may not write it"))
        }
    }

    /// Checks that can be made before SQLite opens the file.
    private static func checkFile(path: String, readOnly: Bool) throws(KeepsakeError) {
        guard path != ":memory:" else { return }
        // SQLite would open a private temporary database for it, gone at close.
        if path.isEmpty { throw .cannotOpen(path: path, reason: "the path is empty") }
        try NewStoreFile.checkPath(path)
        var info = stat()
        guard stat(path, &info) == 0 else {
            if readOnly { throw .cannotOpen(path: path, reason: "no such file") }
            try NewStoreFile.checkFolder(of: path)
            return
        }
        // Reading a named pipe waits for a writer that may never come: the open would hang.
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw .cannotOpen(path: path, reason: "it is a directory")
        case let kind:
            throw .cannotOpen(path: path, reason: "it is not a regular file (it is \(name(ofKind: kind)))")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .cannotOpen(path: path, reason: "the file cannot be read")
        }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 100)) ?? Data()
        let size = (try? handle.seekToEnd()) ?? 0
        if header.isEmpty { throw .notAStore(path: path, reason: "the file is empty") }
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw .notAStore(path: path, reason: "it is not a SQLite database")
        }
        // The header's page count is valid when its change counter matches "version valid for".
        // Related SQLite documentation: https://www.sqlite.org/fileformat2.html#the_database_header
        func bigEndian(_ offset: Int, _ count: Int) -> UInt64 {
            header[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let pageSize = bigEndian(16, 2) == 1 ? 65_536 : bigEndian(16, 2)
        let pageCount = bigEndian(28, 4)
        // In WAL mode the file can be shorter than its header says while the log holds the
        // pages: a checkpoint writes page 1 first and grows the file page by page, and a crash
        // or a full disk can stop it there. SQLite reads such a store whole, through the log,
        // so only a file with no log beside it is judged truncated by its size.
        let logSize =
            (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        if bigEndian(24, 4) == bigEndian(92, 4), pageCount > 0, pageCount * pageSize > size, logSize == 0 {
            throw .notAStore(
                path: path, reason: "it is truncated (\(size) bytes, the header says \(pageCount * pageSize))"
            )
        }
    }

    /// Has SQLite read the schema: returns how many objects it holds, and whether some of
    /// Keepsake's views (``views``) could not be read.
    ///
    /// SQLite reads every object of the schema before the first statement that needs one, and
    /// refuses the whole file ("malformed database schema") when one does not parse: a view
    /// written with syntax this SQLite lacks, such as the first release's, which read JSON with
    /// `->>` (SQLite 3.38), on Ubuntu 22.04's SQLite 3.37. Views hold no data: such a store is
    /// read without them (`PRAGMA writable_schema` has SQLite go on past them; left on for a
    /// reader, whose later re-reads of the schema need it too, and which cannot write), and one
    /// opened for writing is given them again (``dropUnreadableViews(_:)``). An object of any
    /// other kind or name that does not parse is damage, reported as before.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_writable_schema
    private static func readSchema(
        _ connection: SQLiteConnection, readOnly: Bool, path: String
    ) throws -> (objects: Int64, unreadableViews: Bool) {
        let count = "SELECT count(*) FROM sqlite_schema"
        do {
            let objects = try connection.scalarInt(count) ?? 0
            return (objects, false)
        } catch {
            guard error.code == .corrupt, let object = unreadableObject(in: error.message),
                views[object] != nil
            else {
                if !readOnly, let unparsable = unparsableSchema(failing: error, connection, path: path) {
                    throw unparsable
                }
                throw error
            }
        }
        try connection.execute("PRAGMA writable_schema = ON")
        let objects = try connection.scalarInt(count) ?? 0
        if !readOnly { try connection.execute("PRAGMA writable_schema = OFF") }
        return (objects, true)
    }

    /// The object named by SQLite's "malformed database schema (name) - …" message, if it is one.
    static func unreadableObject(in message: String) -> String? {
        let prefix = "malformed database schema ("
        guard message.hasPrefix(prefix) else { return nil }
        let rest = message.dropFirst(prefix.count)
        return rest.firstIndex(of: ")").map { String(rest[..<$0]) }
    }

    /// Deletes Keepsake's views that differ from ``views`` from `sqlite_schema`, when some of them
    /// could not be read (``readSchema(_:readOnly:path:)``): `DROP VIEW` cannot drop a view SQLite did
    /// not read, but deleting its row is what `DROP VIEW` does (a view has no pages). The schema's
    /// version is raised in the same transaction, so that every connection reads the schema
    /// again; ``refreshViews(_:)`` then creates the views. A crash in between leaves a store
    /// without some views, which the next open for writing creates.
    private static func dropUnreadableViews(_ connection: SQLiteConnection) throws {
        try connection.execute("PRAGMA writable_schema = ON")
        defer { try? connection.execute("PRAGMA writable_schema = OFF") }
        try connection.transaction {
            let stale = try staleViews(connection)
            guard !stale.isEmpty else { return }
            for name in stale {
                try connection.execute(
                    "DELETE FROM sqlite_schema WHERE type = 'view' AND name = ?1", [.text(name)])
            }
            let version = try connection.scalarInt("PRAGMA schema_version") ?? 0
            try connection.execute("PRAGMA schema_version = \(version + 1)")
        }
    }

    /// The names of Keepsake's views whose text in the store differs from ``views``, sorted.
    static func staleViews(_ connection: SQLiteConnection) throws -> [String] {
        let stored = Dictionary(
            try connection.query("SELECT name, sql FROM sqlite_schema WHERE type = 'view'") {
                ($0.text(0) ?? "", $0.text(1) ?? "")
            }, uniquingKeysWith: { first, _ in first })
        return views.keys.filter { stored[$0] != views[$0] }.sorted()
    }

    /// Gives the store Keepsake's views as ``views`` defines them, replacing any that differ
    /// (a store the first release created has views that read JSON with `->>`, which SQLite
    /// before 3.38 cannot read) and creating any missing; nothing is written when all match.
    /// Older Keepsake builds read the store as before: the views show the same columns, and
    /// Keepsake itself reads none.
    static func refreshViews(_ connection: SQLiteConnection) throws {
        guard try !staleViews(connection).isEmpty else { return }
        try connection.transaction {
            for name in try staleViews(connection) {
                try connection.execute("DROP VIEW IF EXISTS \(name)")
                try connection.execute(views[name]!)
            }
        }
    }

    /// Reads the application id and schema version; returns the version. `objects` is the
    /// schema's count of objects (``readSchema(_:readOnly:path:)``): none in a new, empty database.
    private static func checkIdentity(
        _ connection: SQLiteConnection, objects: Int64, path: String, readOnly: Bool
    ) throws -> Int {
        let applicationID = try connection.scalarInt("PRAGMA application_id") ?? 0
        let version = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        switch applicationID {
        case Int64(Self.applicationID):
            if version > currentVersion {
                throw KeepsakeError.newerSchema(path: path, version: version, supported: currentVersion)
            }
        // An older schema is read as it is when opened read-only; every reader handles the
        // tables it lacks. Opening it for writing upgrades it.
        case 0 where objects == 0:
            if readOnly { throw KeepsakeError.notAStore(path: path, reason: "the database is empty") }
        case 0:
            throw KeepsakeError.notAStore(
                path: path, reason: "it is a SQLite database of another application")
        default:
            let hex = String(UInt32(truncatingIfNeeded: applicationID), radix: 16)
            throw KeepsakeError.notAStore(
                path: path, reason: "it is a SQLite database of another application (application_id 0x\(hex))"
            )
        }
        try checkRootPages(connection, path: path)
        return version
    }

    /// Refuses a schema whose tables and indexes do not each have a b-tree of their own: a
    /// damaged root page number in `sqlite_schema` makes SQLite read one object's pages as
    /// another's, and report nothing (a table read from an index's page finds no rows, and
    /// the history opens with none). Writing then would damage the other object too.
    private static func checkRootPages(_ connection: SQLiteConnection, path: String) throws {
        let objects = try connection.query(
            "SELECT rootpage, name FROM sqlite_schema WHERE rootpage > 0 ORDER BY rootpage, name"
        ) { (page: $0.int64(0) ?? 0, name: $0.text(1) ?? "") }
        let shared = Dictionary(grouping: objects, by: \.page).filter { $0.value.count > 1 }.min {
            $0.key < $1.key
        }
        if let (page, objects) = shared {
            let names = objects.map(\.name).joined(separator: " and ")
            throw KeepsakeError.notAStore(
                path: path, reason: "it is corrupt (\(names) share the root page \(page))")
        }
    }

    /// Checks, after another connection or process has committed, that no app update changed
    /// the schema under `connection` (``SQLiteConnection/onChangeByOthers``): a store upgraded
    /// by newer code than this is refused from then on, as it is when opened, since this code
    /// would read its rows wrongly and write them without what that code checks. A store this
    /// connection reads at an older schema (opened read-only) that a writer upgraded is read
    /// at its new schema from then on.
    ///
    /// - Returns: Whether the connection now reads a newer schema.
    /// - Throws: ``KeepsakeError/newerSchema(path:version:supported:)``.
    static func followUpgrade(of connection: SQLiteConnection, path: String) throws -> Bool {
        let version = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        if version > currentVersion {
            throw KeepsakeError.newerSchema(path: path, version: version, supported: currentVersion)
        }
        guard version > connection.schemaVersion else { return false }
        if connection.schemaVersion < 4 {
            try connection.execute("DROP VIEW temp.version; DROP VIEW temp.scope; DROP VIEW temp.checkpoint")
            if version < 4 { try createSchema4Views(connection, over: version) }
        }
        connection.schemaVersion = version
        return true
    }

    /// Shows a store older than schema 4, opened read-only (so not upgraded), in schema 4's
    /// form: temporary views named `version`, `scope` and `checkpoint`, which hide the file's tables of
    /// those names from this connection and join its `change` rows into each version's
    /// `changes` text as migration `0004` does (the counters stay on the history row). Nothing
    /// is written to the file.
    private static func createSchema4Views(_ connection: SQLiteConnection, over version: Int) throws {
        // Schema 1 has no digests, nor a record format.
        let (digest, checkpointDigest, format) =
            version >= 2 ? ("digest", "c.digest", "v.format") : ("NULL", "NULL", "1")
        try connection.execute(
            """
            CREATE TEMP VIEW version AS
            SELECT v.history_id, v.position, v.scope_level, v.is_undone, v.tag, v.created_at, \(format) AS format,
                   coalesce((SELECT '[' || group_concat('[' || json_quote(c.path) || ',' || json_quote(c.kind) || ','
                                                        || c.patch || ',' || coalesce(c.digest, 'null') || ']', ',') || ']'
                             FROM (SELECT path, kind, patch, \(digest) AS digest
                                   FROM main.change WHERE version_id = v.id ORDER BY ordinal) AS c),
                            '[]') AS changes,
                   NULL AS revision, NULL AS undo_count, NULL AS redo_count, NULL AS version_count,
                   NULL AS modified_at
            FROM main.version v;
            CREATE TEMP VIEW scope AS SELECT history_id, level, base_tag, 0 AS floor FROM main.scope;
            CREATE TEMP VIEW checkpoint AS
            SELECT c.id, c.history_id, v.position, c.value, c.created_at, \(checkpointDigest) AS digest
            FROM main.checkpoint c LEFT JOIN main.version v ON v.id = c.version_id;
            """)
    }

    /// Runs the migrations after `version` through `last`, each in its own transaction,
    /// re-reading the version inside it in case another process migrated meanwhile. A crash
    /// between two of them leaves the store at the schema of the last one committed, and the
    /// next open runs the rest (`last` below the current version makes that store in a test;
    /// `list`, migrations of a test's own).
    ///
    /// A migration that ``Migration/runsWithForeignKeysOff`` is run as SQLite's documentation
    /// says a table is rebuilt: foreign keys off around its transaction (a transaction cannot
    /// turn them off), and checked before it commits: it must leave no row referring to a
    /// missing one that did not before.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/lang_altertable.html#otheralter
    static func migrate(
        _ connection: SQLiteConnection, from version: Int, through last: Int = currentVersion,
        using list: [Migration] = migrations
    ) throws {
        for migration in list where migration.version > version && migration.version <= last {
            let foreignKeysOff = migration.runsWithForeignKeysOff
            if foreignKeysOff { try connection.execute("PRAGMA foreign_keys = OFF") }
            do {
                try connection.transaction {
                    let current = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
                    guard current < migration.version else { return }
                    let dangling = foreignKeysOff ? try danglingReferences(connection) : 0
                    try connection.execute(migration.sql)
                    if foreignKeysOff, try danglingReferences(connection) > dangling {
                        throw SQLiteError(
                            code: .constraint,
                            message:
                                "migration \(migration.version) (\(migration.name)) left rows referring to "
                                + "missing ones; nothing was changed",
                            sql: "PRAGMA foreign_key_check")
                    }
                    try connection.execute("PRAGMA application_id = \(applicationID)")
                    try connection.execute("PRAGMA user_version = \(migration.version)")
                }
            } catch {
                if foreignKeysOff { try? connection.execute("PRAGMA foreign_keys = ON") }
                throw error
            }
            if foreignKeysOff { try connection.execute("PRAGMA foreign_keys = ON") }
        }
    }

    /// The rows that refer to a missing row (a store written with foreign keys on has none,
    /// unless damaged).
    private static func danglingReferences(_ connection: SQLiteConnection) throws -> Int {
        try connection.query("PRAGMA foreign_key_check") { _ in () }.count
    }

    static func classify(_ error: SQLiteError, path: String) -> KeepsakeError {
        switch error.code {
        case .notADatabase: .notAStore(path: path, reason: "it is not a SQLite database")
        case .corrupt: .notAStore(path: path, reason: "it is corrupt (\(error.message))")
        // SQLite calls a shared-memory file it cannot grow a disk I/O error; on a full disk
        // that is the first thing to fail.
        case .ioError where error.code.extended == SQLiteError.Code.sharedMemorySize.extended:
            .sqlite(error.saying("\(path)-shm could not grow (is the disk full?)"))
        // The two an app meets while it runs: they say which store, and that nothing was written
        // (the transaction was rolled back; the write can be tried again).
        case .full:
            .sqlite(
                error.saying(
                    "\(path) or its write-ahead log could not grow (is the disk full?); nothing was written"))
        case .busy where error.message == SQLiteDatabase.changedUnderEveryRead:
            .sqlite(error.saying("\(path) could not be read; try again"))
        case .busy:
            .sqlite(
                error.saying(
                    "another connection kept \(path) locked for longer than the busy timeout; nothing was written"
                ))
        case .ioError: .sqlite(error.saying("in \(path)"))
        default: .sqlite(error)
        }
    }
}

extension SQLiteConnection {
    /// `column` as a query names it, or `NULL` in a store older than schema `version`, whose
    /// tables lack it (one opened read-only, which is read as it is).
    ///
    /// ```swift
    /// "SELECT tag, \(connection.column("tag_digest", since: 7)) FROM version …"
    /// ```
    func column(_ column: String, since version: Int) -> String {
        schemaVersion >= version ? column : "NULL"
    }
}
