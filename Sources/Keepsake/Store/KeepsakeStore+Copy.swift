import Foundation

extension KeepsakeStore {
    /// Writes a copy of the store to a new file, complete on its own: every history with its
    /// undo and redo stacks, scopes, tags and held change, and every snapshot, as committed
    /// when the copy starts. The store stays open and in use.
    ///
    /// While a store is open, its newest commits are in its write-ahead log (`<path>-wal`),
    /// not yet in its file. A copy of the file alone — `FileManager.copyItem`, a backup tool,
    /// a drag in the Finder, an upload — opens without them, silently older. `copy(to:)` is
    /// the copy to make instead: for Save As, Duplicate, an export, a backup, or to save an
    /// untitled document kept in an in-memory store (``inMemory()``) to its first file.
    ///
    /// ```swift
    /// try store.copy(to: backups.appendingPathComponent("Notes 2026-11-26.keepsake").path)
    /// ```
    ///
    /// The copy is compacted (`VACUUM INTO`: no free pages, no blob that nothing refers to),
    /// written beside `path` under a temporary name, synced to disk, and only then put at
    /// `path`: whatever stops the process, `path` holds no file or the whole copy. The copy
    /// reads on a connection of its own, so the store's other operations go on meanwhile
    /// (from any thread; they are not in the copy), and call it from a background task for a
    /// large store. Only its log's background checkpoints wait, so the log grows while the
    /// copy is written.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/lang_vacuum.html#vacuuminto
    ///
    /// - Parameter path: Where to write the copy; no file may be there.
    /// - Throws: ``KeepsakeError/cannotOpen(path:reason:)`` when a file is at `path` or its
    ///   folder does not exist or cannot be written; ``KeepsakeError/sqlite(_:)`` when the copy cannot be written
    ///   (a full disk: code ``SQLiteError/Code/full``). Nothing is left at `path` then, and
    ///   this store is unchanged.
    public func copy(to path: String) throws(KeepsakeError) {
        let installed = try NewStoreFile.install(at: path) { temporary throws(KeepsakeError) in
            do {
                let vacuum = { (connection: SQLiteConnection) throws in
                    // Read again when a writer changed an immutable file meanwhile: start over.
                    try? FileManager.default.removeItem(atPath: temporary)
                    try connection.execute("VACUUM INTO ?", [.text(SQLiteConnection.literalName(temporary))])
                }
                // On the checkpoint connection, which reads its own snapshot of the log: the
                // store's connection, and its lock, stay free for the app's operations. A
                // store without one (in memory, read-only) copies on its own connection.
                if try checkpointer?.read(vacuum) == nil {
                    try database.readFollowingWriters(vacuum)
                }
                // `VACUUM INTO` writes a file in rollback-journal mode: make it a store in
                // write-ahead-log mode, as every other one is.
                let copy = try SQLiteConnection(path: temporary, create: false)
                defer { copy.close() }
                try copy.enableWAL(synchronous: options.synchronous)
            } catch {
                throw Self.keepsakeError(error, path: temporary)
            }
        }
        guard installed else { throw Self.outputExists(path, "copy writes a new file") }
    }

    /// The error of a copy or salvage whose output path is taken.
    static func outputExists(_ path: String, _ what: String) -> KeepsakeError {
        .cannotOpen(path: path, reason: "a file is already there; \(what)")
    }

    /// Copies the write-ahead log into the file and empties it (a `TRUNCATE` checkpoint), so
    /// that the file alone holds every commit.
    ///
    /// - Throws: ``KeepsakeError/sqlite(_:)`` with code ``SQLiteError/Code/busy`` when another
    ///   connection's read kept the log from emptying.
    func foldLog() throws(KeepsakeError) {
        let busy: Int64
        do {
            busy = try database.read { connection in
                try connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int64(0) ?? 1 }.first ?? 1
            }
        } catch {
            throw Self.keepsakeError(error, path: path)
        }
        if busy != 0 {
            throw .sqlite(
                SQLiteError(
                    code: .busy,
                    message:
                        "the write-ahead log of \(path) could not be emptied: another connection reads it"))
        }
    }
}
