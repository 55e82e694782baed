import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

#if canImport(Glibc)
    import Glibc
#endif

/// Writers killed with SIGKILL while WAL checkpoints run: every store opens (no store is
/// refused as truncated while its log holds the pages), with every reported operation in it.
/// `Scripts/soak N` runs N trials of each kind instead of 200 and 40.
@Suite struct CheckpointCrashTests {
    static let soak = Int(ProcessInfo.processInfo.environment["KEEPSAKE_SOAK_TRIALS"] ?? "")
    static let historyTrials = soak ?? 200
    static let snapshotTrials = soak.map { $0 / 5 } ?? 40

    /// Version `n` of the writer's document: a 96 KiB blob rewritten whole (dozens of pages
    /// per commit, so that checkpoints run all the time) and a title.
    static func document(_ n: Int) -> Doc {
        var doc = Doc.empty
        doc.title = "version \(n)"
        doc.blob = Data(repeating: UInt8(truncatingIfNeeded: n &* 37 &+ 1), count: 96 * 1024)
        doc.blob[n % doc.blob.count] = UInt8(truncatingIfNeeded: n)
        return doc
    }

    /// The snapshot value of save `n`: over 2 MiB.
    static func bigValue(_ n: Int) -> Doc {
        var doc = Doc.empty
        doc.title = "snapshot \(n)"
        doc.blob = Data((0..<(2 * 1024 * 1024 + 4096)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) })
        return doc
    }

    /// Kills this process at a random moment `within` that many microseconds (1–60 ms by
    /// default), drawn from `seed`.
    static func killSoon(seed: UInt64, within: Range<UInt32> = 1_000..<60_000) {
        var generator = SeededGenerator(seed: seed)
        let delay = UInt32.random(in: within, using: &generator)
        Thread.detachNewThread {
            usleep(delay)
            kill(getpid(), SIGKILL)
        }
    }

    /// Opens a store whose log is checkpointed every few pages, as a busy app's would be.
    static func openCheckpointingOften(_ path: String) throws -> KeepsakeStore {
        let store = try KeepsakeStore(path: path)
        try store.database.read { try $0.execute("PRAGMA wal_autocheckpoint = 8") }
        return store
    }

    /// How many operations a killed writer reported as committed: the lines of its log.
    static func reportedCount(_ log: String) -> Int {
        (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").count ?? 0
    }

    @Test(arguments: 0..<historyTrials)
    func aWriterKilledDuringCheckpointsLosesNothingItReported(trial: Int) async throws {
        let directory = TemporaryDirectory()
        let (path, log) = (directory.path("checkpoint.keepsake"), directory.path("committed.log"))
        let seed = UInt64(0xC8EC_0000 + trial)
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = path as String, log = log as String, seed = seed as UInt64] in
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let output = FileHandle(forWritingAtPath: log)!
            let store = try CheckpointCrashTests.openCheckpointingOften(path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            CheckpointCrashTests.killSoon(seed: seed)
            for n in 1... {
                try history.append(CheckpointCrashTests.document(n))
                output.write(Data("\(n)\n".utf8))  // after the commit returned
            }
        }
        let reported = Self.reportedCount(log)
        guard FileManager.default.fileExists(atPath: path) else {
            #expect(reported == 0)
            return
        }
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        let count = history.versionCount
        #expect(
            count == reported || count == reported + 1,
            "trial \(trial): \(reported) reported, \(count) stored")
        #expect(history.value == (count == 0 ? Doc.empty : Self.document(count)), "trial \(trial)")
        if count > 0 { #expect(try history.undo() == (count == 1 ? Doc.empty : Self.document(count - 1))) }
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.verify().problems == [], "trial \(trial)")
    }

    @Test(arguments: 0..<snapshotTrials)
    func aSnapshotSaveKilledDuringCheckpointsLosesNothingItReported(trial: Int) async throws {
        let directory = TemporaryDirectory()
        let (path, log) = (directory.path("snapshots.keepsake"), directory.path("saved.log"))
        let seed = UInt64(0x5A4E_0000 + trial)
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = path as String, log = log as String, seed = seed as UInt64] in
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let output = FileHandle(forWritingAtPath: log)!
            let caretaker = Caretaker(store: try CheckpointCrashTests.openCheckpointingOften(path))
            CheckpointCrashTests.killSoon(seed: seed)
            for n in 1... {
                try caretaker.save(CheckpointCrashTests.bigValue(n), as: "v\(n)")
                output.write(Data("\(n)\n".utf8))
            }
        }
        let reported = Self.reportedCount(log)
        guard FileManager.default.fileExists(atPath: path) else {
            #expect(reported == 0)
            return
        }
        let store = try KeepsakeStore(path: path)
        let caretaker = Caretaker(store: store)
        for n in stride(from: 1, through: reported, by: 1) {
            #expect(
                try caretaker.restore("v\(n)", as: Doc.self) == Self.bigValue(n), "trial \(trial), save \(n)")
        }
        #expect(try store.verify().problems == [], "trial \(trial)")
    }
}

/// The state a checkpoint leaves when it stops after writing page 1 (a crash, a full disk):
/// the file's header counts pages the file does not have yet, and the log holds them.
@Suite struct InterruptedCheckpointTests {
    let directory = TemporaryDirectory()

    /// The last committed image of page 1 in a write-ahead log.
    /// Related SQLite documentation: https://www.sqlite.org/fileformat2.html#walformat
    static func lastPageOne(inLog log: Data, pageSize: Int) -> Data? {
        var found: Data?
        var offset = 32
        while offset + 24 + pageSize <= log.count {
            let page = log[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            if page == 1 { found = log[(offset + 24)..<(offset + 24 + pageSize)] }
            offset += 24 + pageSize
        }
        return found
    }

    @Test func aStoreWhoseCheckpointStoppedAfterPageOneOpensWithEverything() throws {
        let path = directory.path("interrupted.keepsake")
        let copy = directory.path("copy.keepsake")
        let writer = try KeepsakeStore(path: path)
        try writer.database.read { try $0.execute("PRAGMA wal_autocheckpoint = 0") }
        let history = try writer.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        for n in 1...5 { try history.append(CheckpointCrashTests.document(n)) }
        // Copy the file and its log while the writer still holds them open, as a crash would
        // leave them; then write page 1 from the log into the file, as a checkpoint does first.
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        let file = try Data(contentsOf: URL(fileURLWithPath: copy))
        let pageSize = file[16..<18].reduce(0) { $0 << 8 | Int($1) }
        let log = try Data(contentsOf: URL(fileURLWithPath: copy + "-wal"))
        var patched = file
        patched.replaceSubrange(
            0..<pageSize, with: try #require(Self.lastPageOne(inLog: log, pageSize: pageSize)))
        try patched.write(to: URL(fileURLWithPath: copy))
        let headerPages = patched[28..<32].reduce(0) { $0 << 8 | Int($1) }
        try #require(headerPages * pageSize > patched.count, "the file is shorter than its header says")

        let reopened = try KeepsakeStore(path: copy).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.value == CheckpointCrashTests.document(5))
        #expect(reopened.versionCount == 5)
        #expect(try reopened.undo() == CheckpointCrashTests.document(4))
        #expect(try KeepsakeStore(path: copy).verify().problems == [])
        writer.close()
    }
}
