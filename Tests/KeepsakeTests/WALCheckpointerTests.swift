import Foundation
import TestSupport
import Testing

@testable import Keepsake

/// The write-ahead log is copied back by a thread of the store's own, not inside commits.
@MainActor @Suite struct WALCheckpointerTests {
    let directory = TemporaryDirectory()

    @Test func checkpointsRunOffTheCommittingThreadAndKeepTheLogSmall() throws {
        let path = directory.path("wal.keepsake")
        let store = try KeepsakeStore(path: path)
        let checkpointer = try #require(store.checkpointer)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        // A 6,000-character note rewritten each time: about 4 pages per commit, 24 thresholds'
        // worth of log.
        for step in 0..<6_000 {
            doc.title = "title \(step)"
            doc.note = String(repeating: String(UnicodeScalar(UInt8(65 + step % 26))), count: 6_000)
            try history.append(doc)
        }
        checkpointer.waitUntilIdle()
        #expect(checkpointer.checkpointsCompleted >= 5)
        // Without checkpoints the log would hold ~24,000 pages (96 MiB); with them it is
        // reused from the start and never passes the hard limit by more than the last commits
        // of the two connections writing (the history's, and the background one that builds
        // the history's checkpoints).
        let log = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(log <= (Int(WALCheckpointer.hardLimit) + 64) * (4_096 + 24))
        #expect(try store.integrityCheck() == ["ok"])
        try history.checkInvariants()
        store.close()
        #expect(try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty).value == doc)
    }

    @Test func readOnlyAndInMemoryStoresHaveNone() throws {
        let path = directory.path("ro.keepsake")
        _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(try KeepsakeStore(path: path, options: .init(readOnly: true)).checkpointer == nil)
        #expect(try KeepsakeStore.inMemory().checkpointer == nil)
    }
}
