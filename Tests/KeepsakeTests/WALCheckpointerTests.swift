import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// The write-ahead log is copied back by a thread of the store's own, not inside commits.
@Suite struct WALCheckpointerTests {
    let directory = TemporaryDirectory()

    @Test func checkpointsRunOffTheCommittingThreadAndKeepTheLogSmall() throws {
        let path = directory.path("wal.keepsake")
        let store = try KeepsakeStore(path: path)
        let checkpointer = try #require(store.checkpointer)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        // A 6,000-character note rewritten each time: about 12 pages per commit, 37 thresholds'
        // worth of log, nine times the hard limit.
        for step in 0..<3_000 {
            doc.title = "title \(step)"
            doc.note = String(repeating: String(UnicodeScalar(UInt8(65 + step % 26))), count: 6_000)
            try history.append(doc)
        }
        checkpointer.waitUntilIdle()
        #expect(checkpointer.checkpointsCompleted >= 5)
        // Without checkpoints the log would hold ~37,000 pages (146 MiB, measured with the
        // background's threshold out of reach); with them it is reused from the start and
        // passes the hard limit by no more than the commits made while a background run holds
        // the checkpoint lock (the commit past the limit cannot copy then), here a few hundred
        // pages.
        let log = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(log <= Int(WALCheckpointer.hardLimit) * 5 / 4 * (4_096 + 24))
        #expect(try store.integrityCheck() == ["ok"])
        try history.checkInvariants()
        store.close()
        #expect(try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty).value == doc)
    }

    /// Commits with pauses between bursts, as an app makes them: each pause lets the background
    /// checkpoint copy the whole log, and the log starts over, far below the hard limit where a
    /// commit would copy it itself. (A checkpoint connection that never read the database does
    /// nothing: its log stayed in use until the hard limit.)
    @Test func pausesLetTheBackgroundCheckpointsStartTheLogOver() throws {
        let path = directory.path("pauses.keepsake")
        let store = try KeepsakeStore(path: path)
        let checkpointer = try #require(store.checkpointer)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        var largest = 0
        for step in 0..<2_000 {
            doc.note = String(repeating: String(UnicodeScalar(UInt8(65 + step % 26))), count: 6_000)
            try history.append(doc)
            if step % 50 == 49 {
                checkpointer.waitUntilIdle()
                let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
                largest = max(largest, size)
            }
        }
        #expect(checkpointer.framesCopied > 0)
        // 8,000 pages were written, ~200 per burst. The file keeps its largest size: the log
        // started over before it reached the hard limit (4,000 pages), where it would grow to
        // if the background copied nothing.
        let pages = largest / (4_096 + 24)
        #expect(pages < Int(WALCheckpointer.hardLimit) * 5 / 8, "the log reached \(pages) pages")
        #expect(try store.integrityCheck() == ["ok"])
        try history.checkInvariants()
    }

    /// One commit longer than the log ever is in steady writing (a snapshot of 26 MiB) grows
    /// the log file past that; once the log has been copied and starts over, the next commit
    /// cuts the file back to ``SQLiteConnection/logSizeLimit``. SQLite otherwise keeps the file
    /// at its largest until the store is closed.
    @Test func theLogFileIsCutBackWhenItStartsOver() throws {
        let path = directory.path("cut.keepsake")
        let store = try KeepsakeStore(path: path)
        let checkpointer = try #require(store.checkpointer)
        let history = try store.history("doc", initialValue: Doc.empty)
        func logSize() throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        }
        let big = (0..<26).map { String(repeating: String(UnicodeScalar(UInt8(65 + $0))), count: 1 << 20) }
        try Caretaker(store: store).save(big, as: "big")
        #expect(try logSize() > SQLiteConnection.logSizeLimit * 3 / 2)
        checkpointer.waitUntilIdle()
        var doc = history.value
        doc.title = "after"
        try history.append(doc)
        #expect(try logSize() == SQLiteConnection.logSizeLimit)
        #expect(try store.integrityCheck() == ["ok"])
        try history.checkInvariants()
        store.close()
        let reopened = try KeepsakeStore(path: path)
        #expect(try reopened.history("doc", initialValue: Doc.empty).value == doc)
        #expect(try Caretaker(store: reopened).restore("big", as: [String].self) == big)
    }

    /// A job that waits for a quiet moment runs at once when the writer is idle, waits while
    /// it commits, and runs anyway once its patience is out.
    @Test func aQuietJobWaitsForAPauseButNotForever() throws {
        let store = try KeepsakeStore(path: directory.path("quiet.keepsake"))
        let checkpointer = try #require(store.checkpointer)
        let ran = Ran()
        checkpointer.perform(whenQuietFor: .seconds(3_600), patience: .milliseconds(200)) { _ in
            ran.add("before any commit")
        }
        checkpointer.waitUntilIdle()
        #expect(ran.names == ["before any commit"])

        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "committed"
        try history.append(doc)
        let asked = ContinuousClock.now
        checkpointer.perform(whenQuietFor: .seconds(3_600), patience: .milliseconds(200)) { _ in
            ran.add("after a commit")
        }
        // A job asked for after it (not waiting for quiet) runs first.
        checkpointer.perform { _ in ran.add("plain") }
        checkpointer.waitUntilIdle()
        #expect(ran.names == ["before any commit", "plain", "after a commit"])
        #expect(ContinuousClock.now - asked >= .milliseconds(200))
    }

    /// The background connections commit as durably as the store's own, no more: with
    /// SQLite's default (`FULL`), each of their commits synced the log, and held up the
    /// writer's writes to it meanwhile.
    @Test(arguments: [(SQLiteConnection.Synchronous.normal, 1), (.full, 2)])
    func backgroundCommitsHaveTheStoresDurability(synchronous: SQLiteConnection.Synchronous, pragma: Int)
        throws
    {
        let store = try KeepsakeStore(
            path: directory.path("durability.keepsake"), options: .init(synchronous: synchronous))
        let checkpointer = try #require(store.checkpointer)
        let ran = Ran()
        checkpointer.perform { connection in
            ran.add((try? connection.scalarInt("PRAGMA synchronous")).map { "\($0)" } ?? "failed")
        }
        checkpointer.waitUntilIdle()
        #expect(ran.names == ["\(pragma)"])
    }

    /// Stopping drops the jobs still waiting for a pause, except those that run at a stop: the
    /// writer is done, so the pause they wait for has come, and they run at once rather than
    /// when their wait would have ended (an hour here).
    @Test func aJobThatRunsAtAStopIsNotDroppedByIt() throws {
        let store = try KeepsakeStore(path: directory.path("stop.keepsake"))
        let checkpointer = try #require(store.checkpointer)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "committed"
        try history.append(doc)
        let ran = Ran()
        for runsAtStop in [false, true] {
            checkpointer.perform(
                whenQuietFor: .seconds(3_600), patience: .seconds(3_600), runsAtStop: runsAtStop
            ) {
                connection in
                ran.add("\(runsAtStop): \((try? connection.scalarInt("SELECT count(*) FROM version")) ?? -1)")
            }
        }
        // A job asked for after them runs once they are waiting (the queue is serial): the stop
        // then finds them waiting, not queued.
        let waiting = DispatchSemaphore(value: 0)
        checkpointer.perform { _ in waiting.signal() }
        waiting.wait()
        // Stopped on a thread of its own, so that a stop waiting out the hour fails the test
        // rather than hanging the suite. The bound is no measure of speed: a stop that does not
        // wait returns in milliseconds. (Not `.timeLimit(.minutes(1))`: beside the whole suite
        // on two cores, this test is reported taking 240-330 s, most of it waiting its turn,
        // and that limit failed it once.)
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            checkpointer.stop()
            stopped.signal()
        }
        try #require(stopped.wait(timeout: .now() + .seconds(120)) == .success, "the stop waited for a pause")
        #expect(ran.names == ["true: 1"])
    }

    @Test func readOnlyAndInMemoryStoresHaveNone() throws {
        let path = directory.path("ro.keepsake")
        _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(try KeepsakeStore(path: path, options: .init(readOnly: true)).checkpointer == nil)
        #expect(try KeepsakeStore.inMemory().checkpointer == nil)
    }
}

/// Names of jobs in the order they ran, from any thread.
private final class Ran: @unchecked Sendable {
    // Sound because `list` is touched only while `lock` is held.
    private let lock = NSLock()
    private var list: [String] = []

    func add(_ name: String) { lock.withLock { list.append(name) } }
    var names: [String] { lock.withLock { list } }
}
