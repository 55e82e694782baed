import Foundation
import Testing

@testable import Keepsake

#if canImport(Glibc)
    import Glibc
#endif

/// The writer's document: a blob rewritten whole, so that every commit spans several pages
/// and the log is checkpointed all the time.
struct RaceDocument: Versionable, Equatable, Codable {
    var counter = 0
    var blob = Data()

    /// The blob's size: stored in the blob table (at least `BlobCoding.threshold`), yet small
    /// enough for the history's checkpoints to be written in the commit that makes them due
    /// (within `smallCheckpoint`), so that an open replays a few dozen versions at most. A larger value's
    /// checkpoints wait for the writer to pause, which this writer never does: each open
    /// replayed the ~1,700 versions above the newest one (250 ms in a debug build), and most
    /// of the thousand opens came after the writer had given up.
    static let blobSize = 1_536
}

/// Opens racing another process that writes and checkpoints are never refused.
@Suite struct OpenRaceTests {
    let folder = CommandLineTests.Folder()

    /// The writer: appends until `stop` exists, checkpointing every few pages. After ten
    /// minutes it gives up and leaves `gaveUp` behind, so that the test knows its last opens
    /// raced nothing.
    ///
    /// It keeps at most `lead` appends ahead of the opens (`progress` grows a byte per open):
    /// beside the other tests the opening process may wait minutes for the processor, and a
    /// writer appending all the while spent a core on versions no open saw (once, beside the
    /// command-line suites, 73% of a core for over seven minutes, until the test failed).
    static func write(path: String, stop: String, gaveUp: String, progress: String) throws {
        let store = try KeepsakeStore(path: path)
        try store.database.read { try $0.execute("PRAGMA wal_autocheckpoint = 8") }
        let history = try store.history("race", initialValue: RaceDocument(), maximumVersions: 50)
        let deadline = Date().addingTimeInterval(600)
        var document = history.value
        var appended = 0
        while !FileManager.default.fileExists(atPath: stop) {
            guard Date() < deadline else {
                _ = FileManager.default.createFile(atPath: gaveUp, contents: nil)
                return
            }
            var info = stat()
            let opens = stat(progress, &info) == 0 ? Int(info.st_size) : 0
            guard appended < Self.lead(afterOpens: opens) else {
                usleep(1_000)
                continue
            }
            appended += 1
            document.counter += 1
            document.blob = Data(
                repeating: UInt8(truncatingIfNeeded: document.counter), count: RaceDocument.blobSize)
            try history.append(document)
        }
    }

    /// How many appends the writer may have made once the test has opened the store `opens`
    /// times: a few per open, so that every open races commits and checkpoints, and a start
    /// ahead of the first.
    static func lead(afterOpens opens: Int) -> Int { 40 + 4 * opens }

    /// The versions above the newest stored value, which an open replays.
    static let replayedOnOpening = """
        SELECT max(position) - (
            SELECT coalesce(max(position), (SELECT base_position FROM scope WHERE level = 0)) FROM checkpoint)
        FROM version
        """

    @Test func aThousandOpensRacingACheckpointingWriterAreNeverRefused() async throws {
        let path = folder.url.appendingPathComponent("race.keepsake").path
        let stop = folder.url.appendingPathComponent("stop").path
        let gaveUp = folder.url.appendingPathComponent("gave-up").path
        let progress = folder.url.appendingPathComponent("progress").path
        _ = FileManager.default.createFile(atPath: progress, contents: nil)
        let opened = try #require(FileHandle(forWritingAtPath: progress))
        _ = try KeepsakeStore(path: path).history("race", initialValue: RaceDocument(), maximumVersions: 50)
        let writer = Task {
            await #expect(processExitsWith: .success) {
                [
                    path = path as String, stop = stop as String, gaveUp = gaveUp as String,
                    progress = progress as String
                ] in
                try OpenRaceTests.write(path: path, stop: stop, gaveUp: gaveUp, progress: progress)
            }
        }
        // Another process's start-up is waited for, not timed: poll until its first version (for
        // up to two minutes: beside the other tests, the task that starts it may wait for a thread).
        var started = false
        for _ in 0..<12_000 {
            let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
            started = try store.history("race", initialValue: RaceDocument()).value.counter > 0
            if started { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(started, "the writer stored no version in two minutes")
        let cli = CommandLineTests()
        var refusals: [String] = []
        var counters: [Int] = []
        var lags: [Int64?] = []
        // 950 opens through the API (half read-only), 50 through the command line, whose
        // start-up makes each far slower.
        for attempt in 0..<1_000 {
            defer { opened.write(Data([1])) }
            if attempt % 20 == 0 {
                let run = try cli.run("inspect", path)
                if run.status != 0 { refusals.append("CLI inspect, exit \(run.status): \(run.error)") }
                continue
            }
            do {
                let store = try KeepsakeStore(path: path, options: .init(readOnly: attempt % 2 == 0))
                let history = try store.history("race", initialValue: RaceDocument(), maximumVersions: 50)
                counters.append(history.value.counter)
                #expect(
                    history.value.blob.allSatisfy { $0 == UInt8(truncatingIfNeeded: history.value.counter) })
                lags.append(try store.database.read { try $0.scalarInt(Self.replayedOnOpening) })
                store.close()
            } catch {
                refusals.append("open \(attempt): \(error)")
            }
        }
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        _ = await writer.value
        #expect(refusals == [])
        // The writer was really writing meanwhile, until the last open, and no further ahead
        // than its lead.
        #expect(!FileManager.default.fileExists(atPath: gaveUp))
        let last = try KeepsakeStore(path: path, options: .init(readOnly: true))
            .history("race", initialValue: RaceDocument()).value.counter
        #expect(Set(counters).count > 100, "the writer's last version: \(last)")
        #expect(last <= Self.lead(afterOpens: 1_000))
        // Its checkpoints were written in its commits (a blob, yet a small value): every open
        // replayed a few dozen versions at most (its blob, stored once by content, counts little
        // towards the next checkpoint), not the thousands above one waiting for a pause.
        #expect(lags.count == 950 && lags.allSatisfy { $0.map { (0...64).contains($0) } == true })
        let blobs = try KeepsakeStore(path: path).database.read {
            try $0.scalarInt("SELECT count(*) FROM blob")
        }
        #expect(blobs.map { $0 > 0 } == true)
        print(
            "opens racing a writer: 1000, refused \(refusals.count), \(Set(counters).count) distinct versions seen"
        )
    }
}
