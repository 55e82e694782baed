import Foundation
import Testing

@testable import Keepsake

/// The writer's document: a blob rewritten whole, so that every commit spans dozens of pages
/// and the log is checkpointed all the time.
struct RaceDocument: Versionable, Equatable, Codable {
    var counter = 0
    var blob = Data()
}

/// Opens racing another process that writes and checkpoints are never refused.
@Suite struct OpenRaceTests {
    let folder = CommandLineTests.Folder()

    /// The writer: appends until `stop` exists (a minute at most), checkpointing every few pages.
    static func write(path: String, stop: String) throws {
        let store = try KeepsakeStore(path: path)
        try store.database.read { try $0.execute("PRAGMA wal_autocheckpoint = 8") }
        let history = try store.history("race", initialValue: RaceDocument(), maximumVersions: 50)
        let deadline = Date().addingTimeInterval(60)
        var document = history.value
        while !FileManager.default.fileExists(atPath: stop), Date() < deadline {
            document.counter += 1
            document.blob = Data(repeating: UInt8(truncatingIfNeeded: document.counter), count: 2 * 1024)
            try history.append(document)
        }
    }

    @Test func aThousandOpensRacingACheckpointingWriterAreNeverRefused() async throws {
        let path = folder.url.appendingPathComponent("race.keepsake").path
        let stop = folder.url.appendingPathComponent("stop").path
        _ = try KeepsakeStore(path: path).history("race", initialValue: RaceDocument(), maximumVersions: 50)
        let writer = Task {
            await #expect(processExitsWith: .success) { [path = path as String, stop = stop as String] in
                try OpenRaceTests.write(path: path, stop: stop)
            }
        }
        // Another process's start-up is waited for, not timed: poll until its first version.
        for _ in 0..<3_000 {
            let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
            if try store.history("race", initialValue: RaceDocument()).value.counter > 0 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let cli = CommandLineTests()
        var refusals: [String] = []
        var counters: [Int] = []
        // 950 opens through the API (half read-only), 50 through the command line, whose
        // start-up makes each far slower.
        for attempt in 0..<1_000 {
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
                store.close()
            } catch {
                refusals.append("open \(attempt): \(error)")
            }
        }
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        _ = await writer.value
        #expect(refusals == [])
        // The writer was really writing meanwhile.
        #expect(Set(counters).count > 10)
        print(
            "opens racing a writer: 1000, refused \(refusals.count), \(Set(counters).count) distinct versions seen"
        )
    }
}
