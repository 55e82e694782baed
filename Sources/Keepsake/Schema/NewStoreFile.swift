import Foundation

/// A new store file, written whole beside its path and then put in place: whatever stops the
/// process, the path names no new file or a whole one, never half of one.
///
/// Creating a store, salvaging one and copying one all write their file this way.
enum NewStoreFile {
    /// Puts a file at a path unless something is there (`link(2)`); tests replace it.
    typealias Link = (_ existing: String, _ new: String) -> Int32

    /// The start of a temporary file's name: `.keepsake-creating-<pid>-<random hex>`, in the folder
    /// of the file it becomes. Its length does not depend on that file's name, so that any
    /// name SQLite can open (up to 247 bytes, with room for `-journal`) can be created.
    static let temporaryPrefix = ".keepsake-creating-"

    /// Builds a new file at a temporary path beside `path` (`.keepsake-creating-<pid>-<random hex>`,
    /// which ``Schema/removeCreationLeftovers(of:)`` removes once its process is gone), syncs
    /// it, and puts it at `path` unless a file is there by then.
    ///
    /// A write-ahead log at `path` with no file beside it (left by a process killed while it
    /// had a store there, whose file was deleted or renamed since) is set aside first
    /// (``setAsideOrphanedLog(of:)``): SQLite would read its pages into the new file.
    ///
    /// - Parameters:
    ///   - path: Where the file goes.
    ///   - linking: `link(2)`; on a file system without hard links (FAT, exFAT) the file is
    ///     renamed into place instead, after checking that nothing is there.
    ///   - build: Writes the complete file at the path it is given. It must leave no
    ///     write-ahead log holding pages: the file alone is put in place.
    /// - Returns: Whether the new file is at `path`; `false` when a file was there already
    ///   (it is kept, and nothing is built or the new file is discarded).
    /// - Throws: What `build` throws, naming `path` where it named the temporary file;
    ///   ``KeepsakeError/cannotOpen(path:reason:)`` when the folder does not exist or the file
    ///   cannot be put in place.
    ///   Nothing is left at `path` then.
    static func install(
        at path: String, linking: Link = { link($0, $1) },
        build: (_ temporary: String) throws(KeepsakeError) -> Void
    ) throws(KeepsakeError) -> Bool {
        if exists(path) { return false }
        try checkPath(path)
        try checkFolder(of: path)
        let folder = folder(of: path)
        // Short, so that a store can be made wherever SQLite can open it but for names shorter
        // than this one: the process and 32 random bits tell creations apart.
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        let temporary =
            folder + "/" + temporaryPrefix + "\(ProcessInfo.processInfo.processIdentifier)-"
            + String(repeating: "0", count: 8 - random.count) + random
        if let length = tooLong(temporary) {
            throw .cannotOpen(
                path: path,
                reason: """
                    a new store is built beside it under a temporary name, whose full path is \(length) \
                    bytes long: longer than the \(SQLiteConnection.longestPath) bytes SQLite opens; give \
                    the store a shorter path
                    """)
        }
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: temporary + suffix)
            }
        }
        do {
            try build(temporary)
        } catch {
            throw error.replacingPath(temporary, with: path)
        }
        if let pages = FileState.logSize(of: temporary), pages > 0 {
            throw .cannotOpen(path: path, reason: "the new file's write-ahead log still holds \(pages) bytes")
        }
        if let failure = sync(temporary) {
            throw .cannotOpen(path: path, reason: "the new file could not be synced to disk: \(failure)")
        }
        // Creators of stores in the folder take turns from here until the file is in place:
        // else one could find no file at `path`, and set aside as orphaned the log of the store
        // another had just put there and opened (its commits then gone with the log's name).
        let turn = FolderLock(folder)
        defer { turn.release() }
        if exists(path) { return false }
        try setAsideOrphanedLog(of: path)
        // link(2) fails when `path` exists, unlike rename(2), so a file another process put
        // there meanwhile is never replaced.
        if linking(temporary, path) != 0 {
            switch errno {
            case EEXIST:
                return false
            // No hard links on this file system: check, then rename.
            case EPERM, ENOTSUP, EOPNOTSUPP, EMLINK, ENOSYS:
                if exists(path) { return false }
                if rename(temporary, path) != 0 {
                    throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
                }
            default:
                throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
            }
        }
        // The file's only name from now on: a store with two is not opened for writing.
        unlink(temporary)
        // The new name on disk, as the file is; best effort (the file is whole either way).
        _ = sync(folder)
        return true
    }

    /// Moves the write-ahead log at `path` aside when no file is at `path`, to
    /// `<path>-wal.orphaned-<seconds since 1970>` (with `-2`, `-3`… when that name is taken),
    /// and removes its index (`-shm`), so that a new store put at `path` does not read that
    /// log's pages as its own. A log that holds no frame is removed.
    ///
    /// Such a log is left by a process killed while it had a store at `path`, once that file
    /// is deleted or renamed: it holds the commits made since the file was last checkpointed.
    /// It is kept, not deleted: renamed to the file's new name plus `-wal`, beside a file
    /// not written since, it gives those commits back.
    ///
    /// - Throws: ``KeepsakeError/cannotOpen(path:reason:)`` when the log cannot be moved.
    static func setAsideOrphanedLog(of path: String) throws(KeepsakeError) {
        let log = path + "-wal"
        guard FileState.logSize(of: path) != nil, !exists(path) else { return }
        // A log emptied by the process that wrote it holds nothing to keep.
        if !FileState.logHoldsFrames(of: path) {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: path + "-shm")
            return
        }
        // Never over a log set aside before (in the same second, or on a clock set back).
        let aside = untakenName(log + ".orphaned-\(Int(Date().timeIntervalSince1970))")
        if rename(log, aside) != 0 {
            // Another process creating the store set it aside first (and may have the new
            // store's index at `-shm` by now).
            if errno == ENOENT { return }
            throw .cannotOpen(
                path: path,
                reason: """
                    a write-ahead log with no store beside it is at \(log), and it cannot be moved \
                    aside (\(String(cString: strerror(errno)))): a new store there would read its pages
                    """)
        }
        try? FileManager.default.removeItem(atPath: path + "-shm")
    }

    /// Refuses a path whose folder does not exist or cannot be written, saying so (SQLite says
    /// only that it cannot open the file, and names the wrong reason).
    ///
    /// - Throws: ``KeepsakeError/cannotOpen(path:reason:)``.
    static func checkFolder(of path: String) throws(KeepsakeError) {
        let folder = folder(of: path)
        if !FileManager.default.fileExists(atPath: folder) {
            throw .cannotOpen(path: path, reason: "the folder \(folder) does not exist")
        }
        if let reason = unwritableFolder(of: path) { throw .cannotOpen(path: path, reason: reason) }
    }

    /// Why no file can be made in the folder of `path` (a locked folder, read-only media,
    /// permissions), or `nil` when one can.
    static func unwritableFolder(of path: String) -> String? {
        let folder = folder(of: path)
        guard access(folder, W_OK) != 0 else { return nil }
        return "the folder \(folder) cannot be written (\(String(cString: strerror(errno))))"
    }

    /// Refuses a path SQLite would not open, or would open as another, saying so.
    ///
    /// - Throws: ``KeepsakeError/cannotOpen(path:reason:)`` when ``tooLong(_:)``, when the
    ///   path ends with a slash (SQLite opens `notes.keepsake/` as `notes.keepsake`, where
    ///   every check of the file — its kind and header, its names, its log's damage, the files
    ///   beside it — found no file, and a store opened for writing wrote past them), when it
    ///   is a file URL's text (`file:///Users/…`) rather than a path, or `:memory:` (a store in
    ///   memory is opened as such, never installed as a file).
    static func checkPath(_ path: String) throws(KeepsakeError) {
        if path.hasSuffix("/") {
            throw .cannotOpen(path: path, reason: "the path ends with a slash, which names a directory")
        }
        // A copy or a salvage written there made a file of that name, which no open reads.
        if path == ":memory:" {
            throw .cannotOpen(
                path: path, reason: "it is SQLite's name for a database in memory: give a file's path")
        }
        // A URL's `absoluteString` where its `path` was meant: read as a path, its folder is
        // "file:" (and "the folder file:/Users/… does not exist" said nothing of why).
        if path.hasPrefix("file://"), let url = URL(string: path), url.isFileURL,
            !FileManager.default.fileExists(atPath: folder(of: path))
        {
            throw .cannotOpen(
                path: path, reason: "it is a URL, not a path: give the URL's path (\(url.path))")
        }
        guard let length = tooLong(path) else { return }
        throw .cannotOpen(
            path: path,
            reason: """
                its full path is \(length) bytes long: longer than the \(SQLiteConnection.longestPath) bytes \
                SQLite opens; give it a shorter path
                """)
    }

    /// The length in bytes of the full path SQLite makes of `path` (absolute, with its
    /// symbolic links resolved) when it is longer than SQLite opens
    /// (``SQLiteConnection/longestPath``), else `nil`: SQLite says only that it cannot open
    /// the file, and the system's reason it adds is another call's ("No such file or
    /// directory").
    static func tooLong(_ path: String) -> Int? {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        func resolved(_ path: String) -> String? {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        // A file not made yet: its folder resolved, and its name.
        let full =
            resolved(absolute)
            ?? resolved(folder(of: absolute)).map { $0 + "/" + (absolute as NSString).lastPathComponent }
            ?? absolute
        let length = full.utf8.count
        return length > SQLiteConnection.longestPath ? length : nil
    }

    /// `name`, or when something is there, the first of `name-2`, `name-3`… that nothing is:
    /// a file set aside never replaces one set aside before.
    static func untakenName(_ name: String) -> String {
        var candidate = name
        var suffix = 1
        while exists(candidate) {
            suffix += 1
            candidate = name + "-\(suffix)"
        }
        return candidate
    }

    /// Whether anything is at `path` (a dangling symbolic link too).
    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The folder `path` is in: `.` for a bare file name.
    static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    /// Flushes the file or folder at `path` to disk; returns why it failed, or `nil`.
    static func sync(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        return fsync(descriptor) == 0 ? nil : String(cString: strerror(errno))
    }
}

extension KeepsakeError {
    /// This error with `path` in place of `temporary` wherever it names a file: an error of
    /// a file built under a temporary name reads as one of the file it becomes.
    func replacingPath(_ temporary: String, with path: String) -> KeepsakeError {
        func replaced(_ text: String) -> String { text.replacingOccurrences(of: temporary, with: path) }
        return switch self {
        case .cannotOpen(let file, let reason): .cannotOpen(path: replaced(file), reason: replaced(reason))
        case .notAStore(let file, let reason): .notAStore(path: replaced(file), reason: replaced(reason))
        case .newerSchema(let file, let version, let supported):
            .newerSchema(path: replaced(file), version: version, supported: supported)
        case .sqlite(let error):
            .sqlite(SQLiteError(code: error.code, message: replaced(error.message), sql: error.sql))
        default: self
        }
    }
}

/// An exclusive `flock(2)` on a folder, which store creators in it take in turn (another
/// process's too): released by ``release()``, or when the process ends. Best effort: where the
/// folder cannot be opened or locked (a file system without locks), creators go unserialized,
/// as before.
private struct FolderLock {
    private let descriptor: Int32

    init(_ folder: String) {
        descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        while flock(descriptor, LOCK_EX) != 0, errno == EINTR {}
    }

    func release() {
        // Closing the descriptor releases the lock.
        if descriptor >= 0 { close(descriptor) }
    }
}
