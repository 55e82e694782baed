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
        // About 7 pages per commit: 40 thresholds' worth of log.
        for step in 0..<6_000 {
            doc.title = "title \(step)"
            try history.append(doc)
        }
        checkpointer.waitUntilIdle()
        #expect(checkpointer.checkpointsCompleted >= 5)
        // Without checkpoints the log would hold ~40,000 pages (160 MiB); with them it is
        // reused from the start and never passes the hard limit.
        let log = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(log <= (Int(WALCheckpointer.hardLimit) + 16) * (4_096 + 24))
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
