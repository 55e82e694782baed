import Foundation

/// The `Sendable` face of one ``SQLiteConnection``: every access holds a lock, so any number of
/// tasks and threads may share it; they take turns.
///
/// ```swift
/// let count = try database.read { try $0.scalarInt("SELECT count(*) FROM history") }
/// try database.write { try $0.execute("DELETE FROM snapshot WHERE name = ?", [.text(name)]) }
/// ```
public final class SQLiteDatabase: @unchecked Sendable {
    // Sound because `connection` is only touched while `lock` is held.
    private let lock = NSLock()
    private var connection: SQLiteConnection
    /// For a connection that reads its file as immutable (``SQLiteConnection/isImmutable``):
    /// the file as it was when the connection was opened, and how to open it again.
    private var immutableFile:
        (state: FileState?, reopen: @Sendable (_ throughLog: Bool) throws -> SQLiteConnection)?

    /// Wraps a connection; the database owns it from now on.
    public init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Wraps a connection, and for one that reads its file as immutable, the file's state
    /// taken before it was opened and how to open the file again once a writer has touched it
    /// (``readFollowingWriters(_:)``): `reopen(true)` through its log, even an empty or
    /// missing one; `reopen(false)` as the first open did.
    init(
        _ connection: SQLiteConnection, openedAt state: FileState?,
        reopen: @escaping @Sendable (_ throughLog: Bool) throws -> SQLiteConnection
    ) {
        self.connection = connection
        if connection.isImmutable { immutableFile = (state, reopen) }
    }

    /// Runs `body` with the connection, holding the lock; no transaction is opened.
    ///
    /// - Parameter body: The work; it must not keep the connection.
    /// - Returns: What `body` returns.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction, holding the lock: committed when it
    /// returns, rolled back when it throws.
    ///
    /// - Parameter body: The work; it must not keep the connection.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError``, or what `body` throws.
    public func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try connection.transaction { try body(connection) }
    }

    /// Runs `body` with the connection, holding the lock, as ``read(_:)`` does; a connection
    /// that reads its file as immutable is first replaced by a new one when a writer has
    /// touched the file since it was opened, and `body` runs again on a new one when a writer
    /// touched the file while it ran — one that reads through the log, since that writer is
    /// at work. SQLite never looks for changes in an immutable file: its cached pages and the
    /// file's new ones would make a torn read.
    ///
    /// - Parameter body: The work; it must not keep the connection.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` or opening the file again throws; ``SQLiteError/Code/busy`` when
    ///   the file changed under every one of five reads.
    func readFollowingWriters<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        var writerAtWork = false
        for _ in 0..<5 {
            // Taken before opening again: a write while it opens makes the next comparison differ.
            if let file = immutableFile, case let state = FileState(path: connection.path),
                state != file.state
            {
                let reopened = try file.reopen(writerAtWork)
                connection.close()
                connection = reopened
                immutableFile = reopened.isImmutable ? (state, file.reopen) : nil
            }
            guard let file = immutableFile else { return try body(connection) }
            do {
                let result = try body(connection)
                if FileState(path: connection.path) == file.state { return result }
            } catch {
                if FileState(path: connection.path) == file.state { throw error }
            }
            // A writer touched the file while it was read, and may go on: read through its log
            // from now on, even when the log is empty or gone at that moment (a writer that
            // opens and closes the store for each write removes it as it closes), so that its
            // next commit does not make the read run again.
            writerAtWork = true
        }
        throw SQLiteError(code: .busy, message: Self.changedUnderEveryRead)
    }

    /// The message of the ``SQLiteError/Code/busy`` error of ``readFollowingWriters(_:)``.
    static let changedUnderEveryRead = "a writer changed the file under each of five reads"

    /// Whether ``close()`` has closed the connection.
    var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return connection.isClosed
    }

    /// Closes the connection; later calls fail with `SQLITE_MISUSE`.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        connection.close()
    }
}

/// What tells that a file has been written since it was last looked at: its device and inode
/// (a file replaced by another), its size and modification time, and the size of the
/// write-ahead log beside it, if any (a writer has the file open; one that committed has
/// written to it).
struct FileState: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: timespec
    let logSize: Int64?

    /// The state of the file at `path`, or `nil` when it cannot be read.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
            modified = info.st_mtimespec
        #else
            modified = info.st_mtim
        #endif
        logSize = Self.logSize(of: path)
    }

    /// Whether the write-ahead log beside the file at `path` is long enough to hold a frame
    /// (its 32-byte header and one frame's 24-byte header at least): one that SQLite would
    /// read pages from, not one its writer emptied.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/fileformat2.html#walformat
    static func logHoldsFrames(of path: String) -> Bool {
        (logSize(of: path) ?? 0) >= 32 + 24
    }

    /// How many names (hard links) the file at `path` has; 0 when it cannot be read.
    static func nameCount(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_nlink) : 0
    }

    /// The file a symbolic link at `path` points to (every link on the way followed), or `nil`
    /// when no link is at `path`. A link to no file yet gives the path it points to, where
    /// SQLite would create the file.
    static func linkTarget(of path: String) -> String? {
        var current = path
        // 40 links at most, as the system follows.
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { break }
            if let resolved = realpath(current, nil) {
                defer { free(resolved) }
                return String(cString: resolved)
            }
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &target, target.count - 1)
            guard count > 0 else { return nil }
            let next = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let folder = (current as NSString).deletingLastPathComponent
            current = next.hasPrefix("/") || folder.isEmpty ? next : folder + "/" + next
        }
        return current == path ? nil : current
    }

    /// The size of the write-ahead log beside the file at `path`, or `nil` when there is none:
    /// no file there, or something else (a directory, a named pipe), which holds no commit.
    static func logSize(of path: String) -> Int64? {
        var info = stat()
        guard stat(path + "-wal", &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    static func == (a: FileState, b: FileState) -> Bool {
        (a.device, a.inode, a.size, a.logSize) == (b.device, b.inode, b.size, b.logSize)
            && (a.modified.tv_sec, a.modified.tv_nsec) == (b.modified.tv_sec, b.modified.tv_nsec)
    }
}
