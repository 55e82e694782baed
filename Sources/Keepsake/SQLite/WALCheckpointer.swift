internal import CSQLite
import Foundation

/// Copies the write-ahead log back into the database on a thread of its own, with a connection
/// of its own, so that no commit waits for it.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000
/// pages): that one commit then copies megabytes and, with `synchronous=NORMAL`, syncs the
/// database file — a stall of milliseconds every hundred-odd small commits. Here the writer's
/// connection asks for a checkpoint when its log passes ``threshold`` pages and goes on; a
/// `PASSIVE` checkpoint on this thread never blocks writers or readers.
///
/// A log is reused from its start only once a checkpoint has copied all of it; while commits
/// keep coming (an import, a benchmark), this thread is always a little behind. So when the log
/// passes twice the threshold and this thread is idle — it has copied nearly all of it — the
/// commit copies the few pages left itself, and the log starts over. Past ``hardLimit`` pages
/// (a reader holds old pages, say) the commit checkpoints whatever this thread is doing, as
/// SQLite would have at the threshold.
///
/// Related SQLite documentation: https://www.sqlite.org/wal.html#ckpt
final class WALCheckpointer: @unchecked Sendable {
    // Sound because every mutable property is touched only while `condition` is locked, and
    // `connection` only by the checkpointing thread (and by `stop()` after that thread ended).
    static let threshold: Int32 = 1_000
    static let hardLimit: Int32 = 4_000

    private let connection: SQLiteConnection
    private let condition = NSCondition()
    private var requested = false
    private var stopping = false
    private var finished = false
    private var busy = false
    private var completed = 0

    /// Opens a second connection to the store at `path` and starts the thread.
    init(path: String, busyTimeout: Duration) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, create: false, busyTimeout: busyTimeout)
        let thread = Thread { [self] in run() }
        thread.name = "Keepsake WAL checkpoints"
        thread.qualityOfService = .utility
        thread.start()
    }

    /// Asks for a checkpoint soon; returns at once.
    func request() {
        condition.lock()
        requested = true
        condition.signal()
        condition.unlock()
    }

    /// Whether no checkpoint is asked for or running.
    var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !requested && !busy
    }

    /// Waits until no checkpoint is asked for or running (for tests).
    func waitUntilIdle() {
        condition.lock()
        while (requested || busy) && !finished { condition.wait() }
        condition.unlock()
    }

    /// Ends the thread after the checkpoint in progress, and closes its connection.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
        connection.close()
    }

    /// Checkpoints this thread has run (for tests).
    var checkpointsCompleted: Int {
        condition.lock()
        defer { condition.unlock() }
        return completed
    }

    private func run() {
        condition.lock()
        while true {
            while !requested && !stopping { condition.wait() }
            if stopping { break }
            requested = false
            busy = true
            condition.unlock()
            // PASSIVE: copies what no reader still needs, without waiting for anyone. A busy or
            // failed checkpoint is simply tried again at the next request.
            _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            condition.lock()
            busy = false
            completed += 1
            condition.broadcast()
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Makes `writer` ask this checkpointer for checkpoints instead of running them itself.
    func install(on writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, walHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives `writer` back SQLite's own automatic checkpoints.
    static func uninstall(from writer: SQLiteConnection) {
        sqlite3_wal_autocheckpoint(writer.handle, threshold)
    }
}

/// Called by SQLite after each commit with the number of pages in the log.
private func walHook(
    _ context: UnsafeMutableRawPointer?, _ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ pages: Int32
) -> Int32 {
    guard let context, pages >= WALCheckpointer.threshold else { return SQLITE_OK }
    let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
    if pages >= WALCheckpointer.hardLimit || (pages >= 2 * WALCheckpointer.threshold && checkpointer.isIdle) {
        // Copies what the thread has not copied yet, so that the log can start over.
        _ = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    } else {
        checkpointer.request()
    }
    return SQLITE_OK
}
