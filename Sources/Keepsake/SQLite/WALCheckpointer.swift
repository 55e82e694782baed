internal import CSQLite
import Foundation

/// Copies the write-ahead log back into the database off the committing thread (a serial queue
/// of the store's own), with a connection of its own, so that no commit waits for it; runs other
/// work that must not hold up commits on a second queue with a third connection
/// (``perform(_:)``), so that neither waits for the other.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000
/// pages): that one commit then copies megabytes and, with `synchronous=NORMAL`, syncs the
/// database file — a stall of milliseconds every hundred-odd small commits. Here the writer's
/// connection asks for a checkpoint when its log passes ``threshold`` pages and goes on; a
/// `PASSIVE` checkpoint on that queue never blocks writers or readers. Runs are at least
/// ``interval`` apart, so that commits that never pause do not each bring a sync of the
/// database file along.
///
/// A log is reused from its start only once a checkpoint has copied all of it. While commits
/// come back to back (an import, a benchmark), the queue stays a little behind and the log
/// grows; the first pause lets it catch up, and the next commit starts the log over. Copying
/// the last pages in a commit instead would sync the database file there, the stall this type
/// exists to avoid. Past ``hardLimit`` pages (a reader holds old pages, or the commits never
/// pause) the commit checkpoints itself, as SQLite would have at the threshold.
///
/// Related SQLite documentation: https://www.sqlite.org/wal.html#ckpt
final class WALCheckpointer: @unchecked Sendable {
    // Sound because the mutable state is touched only while `lock` is held, `connection` only
    // on `queue` and `jobConnection` only on `jobQueue` (and both by `stop()` once their queues
    // are done with them).
    static let threshold: Int32 = 1_000
    static let hardLimit: Int32 = 4_000

    /// The store's serial queues, for checkpoints and for jobs: no thread waits while nothing
    /// is asked, and closing one store waits only for its own work.
    private let queue = DispatchQueue(label: "Keepsake WAL checkpoints")
    private let jobQueue = DispatchQueue(label: "Keepsake background work")
    private let path: String
    private let synchronous: SQLiteConnection.Synchronous
    private let busyTimeout: Duration
    /// Opened by the first job.
    private var jobConnection: SQLiteConnection?

    private let connection: SQLiteConnection
    private let lock = NSLock()
    private var scheduled = false
    private var stopped = false
    private var completed = 0
    private var copiedFrames = 0
    /// When the last run ended, and what it found copied.
    private var lastRun: ContinuousClock.Instant?
    private var lastCopied: Int32 = 0
    /// Runs and jobs asked for and not yet over, for ``waitUntilIdle()``.
    private let pending = DispatchGroup()
    /// The jobs waiting for a pause, each as the call that tries it again, by a number of its
    /// own: ``stop()`` takes them and runs them at once, rather than waiting out their waits.
    private var waiting: [Int: @Sendable () -> Void] = [:]
    private var nextWaiting = 0
    /// When the store's writer last committed, and the pages its log held then.
    private var lastCommit: ContinuousClock.Instant?
    private var logPages: Int32 = 0

    /// The least time between two runs: while commits never pause, each commit past the
    /// threshold would otherwise start a run (a sync of the database file each), competing
    /// with the commits' own writes; one run copies what all those commits added.
    static let interval: Duration = .milliseconds(20)

    /// Opens a second connection to the store at `path`.
    ///
    /// - Parameter synchronous: The store's durability, for this type's connections too:
    ///   SQLite's default, `FULL`, would make each of their commits (a checkpoint of a
    ///   history's value stored, versions compacted) sync the log, and that sync holds up the
    ///   writer's own writes to the log.
    init(path: String, synchronous: SQLiteConnection.Synchronous, busyTimeout: Duration) throws(SQLiteError) {
        connection = try Self.open(path, synchronous: synchronous, busyTimeout: busyTimeout)
        (self.path, self.synchronous, self.busyTimeout) = (path, synchronous, busyTimeout)
    }

    /// A connection of this type's to the store at `path`, in the store's durability.
    private static func open(_ path: String, synchronous: SQLiteConnection.Synchronous, busyTimeout: Duration)
        throws(SQLiteError) -> SQLiteConnection
    {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeout: busyTimeout)
        // A connection finds the database in WAL mode when it first reads it: until then its
        // checkpoints do nothing (and say so only by a log size of -1).
        _ = try connection.scalarText("PRAGMA journal_mode")
        try connection.setSynchronous(synchronous)
        try connection.execute("PRAGMA journal_size_limit = \(SQLiteConnection.logSizeLimit)")
        // Its work stops, as the writer's does, once newer code has upgraded the store.
        connection.onChangeByOthers = { try Schema.followUpgrade(of: $0, path: path) }
        return connection
    }

    /// Asks for a checkpoint soon — at once, or ``interval`` after the last run ended; returns
    /// at once.
    func request() {
        lock.lock()
        let schedule = !scheduled && !stopped
        var delay = Duration.zero
        if schedule {
            scheduled = true
            pending.enter()
            if let lastRun { delay = max(.zero, Self.interval - (ContinuousClock.now - lastRun)) }
        }
        lock.unlock()
        guard schedule else { return }
        if delay == .zero {
            queue.async { self.run() }
        } else {
            queue.asyncAfter(deadline: Self.deadline(after: delay)) { self.run() }
        }
    }

    /// The dispatch time `delay` from now.
    private static func deadline(after delay: Duration) -> DispatchTime {
        let (seconds, attoseconds) = delay.components
        return .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// Notes that the store's writer committed, leaving `pages` in the log (its WAL hook calls
    /// this).
    fileprivate func noteCommit(pages: Int32) {
        lock.lock()
        (lastCommit, logPages) = (ContinuousClock.now, pages)
        lock.unlock()
    }

    /// Whether the log held ``threshold`` pages or more at the writer's last commit: it then
    /// starts over only once a checkpoint has copied all of it and the next commit finds no
    /// other commit came in between. Jobs' own commits come in between: one that can wait
    /// (a checkpoint of a history's value stored) waits for a pause in the writing then
    /// (``perform(whenQuietFor:patience:runsAtStop:_:)``); else a writer that never pauses and a job
    /// that stores a checkpoint after each of its builds keep the log from starting over,
    /// and past ``hardLimit`` every commit would copy the log itself.
    var logIsLong: Bool {
        lock.lock()
        defer { lock.unlock() }
        return logPages >= Self.threshold
    }

    /// The log frames this checkpointer's runs found copied into the database, summed over
    /// its runs (a frame copied by an earlier run is counted again by the next, until the log
    /// starts over): zero means its checkpoints copied nothing (for tests).
    var framesCopied: Int {
        lock.lock()
        defer { lock.unlock() }
        return copiedFrames
    }

    /// Checkpoints this store's queue work has run (for tests).
    var checkpointsCompleted: Int {
        lock.lock()
        defer { lock.unlock() }
        return completed
    }

    /// Waits until the checkpoints and jobs asked for so far have run, and the checkpoints
    /// those asked for in turn (for tests).
    func waitUntilIdle() {
        jobQueue.sync {}
        pending.wait()
    }

    /// Runs `job` on the jobs' queue with a connection of its own (opened by the first job),
    /// after the jobs asked for before; returns at once. For work that must not hold up the
    /// committing thread: a history's checkpoint of its whole value is built here from the
    /// stored rows. A job asked for after ``stop()`` does not run; nor does one still queued
    /// then, unless it runs at a stop; nor one when the connection cannot be opened (the work
    /// is only an optimization).
    ///
    /// - Parameters:
    ///   - quiet: When given, the job waits until the store's writer has not committed for that
    ///     long: for work whose write transaction is long enough that a commit arriving
    ///     meanwhile would wait for it.
    ///   - patience: How long it waits at most; past it, it runs between commits that never
    ///     pause.
    ///   - runsAtStop: Whether a job still waiting or queued when ``stop()`` is called runs
    ///     then (the writer is done: the pause it waits for has come) rather than being
    ///     dropped: for short work whose loss would cost the next opening (a checkpoint built
    ///     and waiting to be stored).
    func perform(
        whenQuietFor quiet: Duration? = nil, patience: Duration = .seconds(10), runsAtStop: Bool = false,
        _ job: @escaping @Sendable (SQLiteConnection) -> Void
    ) {
        lock.lock()
        let go = !stopped
        if go { pending.enter() }
        lock.unlock()
        guard go else { return }
        let giveUp = ContinuousClock.now + patience
        jobQueue.async { self.runJob(job, quiet: quiet, giveUp: giveUp, runsAtStop: runsAtStop) }
    }

    /// Runs `job` now, or again later while the writer is busy (see
    /// ``perform(whenQuietFor:patience:runsAtStop:_:)``).
    private func runJob(
        _ job: @escaping @Sendable (SQLiteConnection) -> Void, quiet: Duration?,
        giveUp: ContinuousClock.Instant, runsAtStop: Bool
    ) {
        lock.lock()
        let (stopping, lastCommit) = (stopped, self.lastCommit)
        let now = ContinuousClock.now
        if !stopping, let quiet, let lastCommit, now - lastCommit < quiet, now < giveUp {
            // Registered under the lock that `stop()` takes to set `stopped`: either it finds
            // this job waiting, or this job saw it stopping.
            let number = nextWaiting
            nextWaiting += 1
            waiting[number] = { self.runJob(job, quiet: quiet, giveUp: giveUp, runsAtStop: runsAtStop) }
            lock.unlock()
            let wait = min(quiet - (now - lastCommit), giveUp - now)
            jobQueue.asyncAfter(deadline: Self.deadline(after: wait)) {
                // Unless a stop took it first.
                self.lock.lock()
                let retry = self.waiting.removeValue(forKey: number)
                self.lock.unlock()
                retry?()
            }
            return
        }
        lock.unlock()
        defer { pending.leave() }
        let run = !stopping || runsAtStop
        if run, jobConnection == nil {
            jobConnection = try? Self.open(path, synchronous: synchronous, busyTimeout: busyTimeout)
            // Its commits ask for checkpoints too, rather than running SQLite's own.
            if let connection = jobConnection { install(on: connection, writer: false) }
        }
        if run, let connection = jobConnection { job(connection) }
    }

    /// Runs `body` now with this checkpointer's own connection, on its checkpoint queue: for a
    /// long read that must not hold the store's lock, so that the store's writer goes on
    /// meanwhile (`VACUUM INTO` of a copy). No checkpoint runs while it does, so the log grows
    /// until it ends.
    ///
    /// - Parameter body: The read; it must not keep the connection, nor write.
    /// - Returns: What `body` returns, or `nil` without running it once ``stop()`` was called.
    /// - Throws: What `body` throws.
    func read<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T? {
        try queue.sync {
            lock.lock()
            let go = !stopped
            lock.unlock()
            return go ? try body(connection) : nil
        }
    }

    /// Runs no more checkpoints, waits for one in progress, runs the jobs that run at a stop
    /// (at once, in the order asked, those waiting for a pause too: the writer is done), and
    /// closes the connections. Waiting out the jobs' waits instead, closing a store right after
    /// an edit took up to 50 ms more (1,000 rounds of opening a store, editing, closing it:
    /// close's p90 51 ms and 10.7–12.1 s in all, against 1.1 ms and 1.0 s).
    func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        let waited = waiting.sorted { $0.key < $1.key }.map(\.value)
        waiting = [:]
        lock.unlock()
        guard first else { return }
        for retry in waited { jobQueue.async(execute: retry) }
        jobQueue.sync {}
        pending.wait()
        // A read in progress (``read(_:)``) ends first.
        queue.sync {}
        connection.close()
        jobConnection?.close()
    }

    private func run() {
        defer { pending.leave() }
        lock.lock()
        scheduled = false
        let go = !stopped
        lock.unlock()
        guard go else { return }
        // PASSIVE: copies what no reader still needs, without waiting for anyone. A busy or
        // failed checkpoint is simply tried again at the next request.
        var (log, copied): (Int32, Int32) = (-1, -1)
        _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        lock.lock()
        completed += 1
        if copied > 0 { copiedFrames += Int(copied) }
        // Commits came meanwhile: copy them too, once the interval has passed, so that a pause
        // finds the log all copied and the next commit starts it over. Not when this run made
        // no progress (a reader holds the frames left): the next commit asks again.
        let followUp = copied >= 0 && copied < log && copied != lastCopied
        (lastRun, lastCopied) = (ContinuousClock.now, copied)
        lock.unlock()
        if followUp { request() }
    }

    /// Makes `connection` ask this checkpointer for checkpoints instead of running them itself;
    /// the store's `writer` connection also tells it when it commits.
    func install(on connection: SQLiteConnection, writer: Bool = true) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        if writer {
            sqlite3_wal_hook(connection.handle, writerWALHook, context)
        } else {
            sqlite3_wal_hook(connection.handle, walHook, context)
        }
    }

    /// Gives `writer` back SQLite's own automatic checkpoints.
    static func uninstall(from writer: SQLiteConnection) {
        sqlite3_wal_autocheckpoint(writer.handle, threshold)
    }
}

/// Called by SQLite after each commit of the store's writer, with the number of pages in the log.
private func writerWALHook(
    _ context: UnsafeMutableRawPointer?, _ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ pages: Int32
) -> Int32 {
    if let context {
        Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().noteCommit(pages: pages)
    }
    return walHook(context, db, name, pages)
}

/// Called by SQLite after each commit with the number of pages in the log.
private func walHook(
    _ context: UnsafeMutableRawPointer?, _ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ pages: Int32
) -> Int32 {
    guard let context, pages >= WALCheckpointer.threshold else { return SQLITE_OK }
    let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
    if pages >= WALCheckpointer.hardLimit {
        // Copies what the thread has not copied yet, so that the log can start over.
        _ = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    } else {
        checkpointer.request()
    }
    return SQLITE_OK
}
