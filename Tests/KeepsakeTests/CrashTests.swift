import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

#if canImport(Glibc)
    import Glibc
#endif

/// A writer killed with SIGKILL at a random moment loses nothing it reported as committed, and
/// leaves no partial version. `Scripts/soak N` runs N trials instead of 50.
@Suite struct CrashTests {
    static let trials = Int(ProcessInfo.processInfo.environment["KEEPSAKE_SOAK_TRIALS"] ?? "") ?? 50

    enum Operation: Equatable {
        case edit(UInt64)
        case undo
        case redo
        case tag(String)
    }

    /// The writer's deterministic script: operation `step` of run `seed`.
    static func operation(_ step: Int, seed: UInt64) -> Operation {
        var generator = SeededGenerator(seed: seed &* 31 &+ UInt64(step))
        switch Int.random(in: 0..<20, using: &generator) {
        case 0..<13: return .edit(generator.next())
        case 13..<16: return .undo
        case 16..<18: return .redo
        default: return .tag(["a", "b", "c"].randomElement(using: &generator)!)
        }
    }

    static func edited(_ doc: Doc, _ editSeed: UInt64) -> Doc {
        var generator = SeededGenerator(seed: editSeed)
        var doc = doc
        DocEdits.edit(&doc, using: &generator)
        return doc
    }

    /// The full-copy model after the first `count` operations.
    static func model(after count: Int, seed: UInt64) -> FullCopyHistory<Doc> {
        var model = FullCopyHistory(Doc.empty, same: ==)
        for step in 0..<count {
            switch operation(step, seed: seed) {
            case .edit(let editSeed): model.append(edited(model.current, editSeed), tag: nil)
            case .undo: model.undo()
            case .redo: model.redo()
            case .tag(let tag): model.tag(tag)
            }
        }
        return model
    }

    @Test(arguments: 0..<trials)
    func aKilledWriterLosesNothingItReported(trial: Int) async throws {
        let directory = TemporaryDirectory()
        let (path, log) = (directory.path("crash.keepsake"), directory.path("committed.log"))
        let seed = UInt64(0xC4A5_0000 + trial)
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = path as String, log = log as String, seed = seed as UInt64] in
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let output = FileHandle(forWritingAtPath: log)!
            let history = try KeepsakeStore(path: path).history(
                "crash", initialValue: Doc.empty, maximumVersions: nil)
            // The kill comes at a random moment of the writing, not of the start-up.
            CheckpointCrashTests.killSoon(seed: seed, within: 1_000..<40_000)
            for step in 0... {
                switch CrashTests.operation(step, seed: seed) {
                case .edit(let editSeed): try history.append(CrashTests.edited(history.value, editSeed))
                case .undo: try history.undo()
                case .redo: try history.redo()
                case .tag(let tag): try history.tag(tag)
                }
                output.write(Data("\(step)\n".utf8))  // after the commit returned
            }
        }
        let reported = CheckpointCrashTests.reportedCount(log)
        guard FileManager.default.fileExists(atPath: path) else {
            #expect(reported == 0)
            return
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.verify().problems == [])
        let history = try store.history("crash", initialValue: Doc.empty, maximumVersions: nil)
        try history.checkInvariants()
        // The store holds every reported operation, and at most the one after it.
        let candidates = [
            Self.model(after: reported, seed: seed), Self.model(after: reported + 1, seed: seed),
        ]
        let tags = try history.tags()
        let matching = candidates.first {
            $0.current == history.value && $0.tags.undo == tags.undo.strings
                && $0.tags.redo == tags.redo.strings
        }
        var model = try #require(
            matching, "trial \(trial): \(reported) operations reported; the store matches neither")
        // Undoing all the way back reproduces every earlier value exactly.
        while model.hasUndo {
            model.undo()
            #expect(try history.undo() == model.current, "trial \(trial)")
        }
        #expect(!history.hasUndo)
    }

    /// The versions a history of plain appends holds, from the empty document, after `count`
    /// appends: an append that changes nothing records no version.
    static func appendedVersions(_ count: Int, seed: UInt64) -> [Doc] {
        var versions = [Doc.empty]
        for step in 0..<count {
            var generator = SeededGenerator(seed: seed &* 31 &+ UInt64(step))
            let next = edited(versions[versions.count - 1], generator.next())
            if next != versions.last { versions.append(next) }
        }
        return versions
    }

    /// Under a small limit, appends keep folding old versions, and the background connection
    /// compacts them in the writer's pauses (a new base value, the folded versions deleted, one
    /// transaction):
    /// a kill at any moment leaves the last reported value, or the next, with every version
    /// kept undoing to the value before it.
    @Test(arguments: 0..<max(1, trials / 2))
    func aKilledWriterUnderALimitLosesNothingItReported(trial: Int) async throws {
        let directory = TemporaryDirectory()
        let (path, log) = (directory.path("limited.keepsake"), directory.path("committed.log"))
        let seed = UInt64(0x1A17_0000 + trial)
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = path as String, log = log as String, seed = seed as UInt64] in
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let output = FileHandle(forWritingAtPath: log)!
            let history = try KeepsakeStore(path: path).history(
                "limited", initialValue: Doc.empty, maximumVersions: 8)
            CheckpointCrashTests.killSoon(seed: seed, within: 200_000..<2_500_000)
            for step in 0... {
                var generator = SeededGenerator(seed: seed &* 31 &+ UInt64(step))
                try history.append(CrashTests.edited(history.value, generator.next()))
                output.write(Data("\(step)\n".utf8))
                // A pause now and then, as a person's: the background connection compacts
                // then (it waits for the writer to be quiet), and the kill may come meanwhile.
                if step % 40 == 39 { usleep(150_000) }
            }
        }
        let reported = CheckpointCrashTests.reportedCount(log)
        guard FileManager.default.fileExists(atPath: path) else {
            #expect(reported == 0)
            return
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.verify().problems == [])
        let history = try store.history("limited", initialValue: Doc.empty, maximumVersions: 8)
        try history.checkInvariants()
        // The store holds every reported append, and at most the one after it.
        let versions = try #require(
            [reported, reported + 1].map { Self.appendedVersions($0, seed: seed) }.first {
                $0.last == history.value
            }, "trial \(trial): \(reported) appends reported; the store holds neither value")
        #expect(history.versionCount <= 8 + 8 / 8 && history.versionCount < versions.count)
        for back in 1...max(1, history.versionCount) where history.hasUndo {
            #expect(try history.undo() == versions[versions.count - 1 - back], "trial \(trial), undo \(back)")
        }
        #expect(!history.hasUndo)
        // How much compaction had deleted by the kill depends on timing (it runs in the
        // writer's pauses); PruningTests pins what it keeps.
    }

    /// Every operation a history has — edits, tags, undo, redo, undo to a tag, scopes pushed,
    /// ended and discarded, another limit (folding and compacting), checkpoints, the store
    /// compacted (`VACUUM`), snapshots, closing and reopening — on the store that uses
    /// everything, its log checkpointed every few pages, killed at a random moment (in a
    /// checkpoint too): reopened, it is where the last reported operation left it, or the next
    /// one, and sound.
    /// Debounced, each edit is held back until the next operation: reopening records the one
    /// held at the kill, so the value is the one the last reported operation left (or the
    /// next's), with one version more than the writer counted.
    @Test(arguments: [false, true], 0..<max(1, trials / 4))
    @MainActor func aWriterKilledDuringAnyOperationIsWhereTheLastReportedOneLeftIt(
        debounced: Bool, trial: Int
    ) async throws {
        let directory = TemporaryDirectory()
        let (path, log) = (directory.path("rich.keepsake"), directory.path("committed.log"))
        let original = try RichStore.write(to: path)
        let seed = UInt64(0x0BE4_0000 + trial) + (debounced ? 0x100_0000 : 0)
        var generator = SeededGenerator(seed: seed)
        let operations = (0..<5_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [
                path = path as String, log = log as String, seed = seed as UInt64,
                operations = operations as [UInt8], debounced = debounced as Bool
            ] in
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let output = FileHandle(forWritingAtPath: log)!
            CheckpointCrashTests.killSoon(seed: seed, within: 10_000..<400_000)
            await MainActor.run {
                // Its log checkpointed every few pages, as a busy app's is: kills land in those too.
                _ = RichStore.run(
                    operations, on: path, debounced: debounced, finalReopen: false,
                    afterOpening: {
                        try? $0.database.read { try $0.execute("PRAGMA wal_autocheckpoint = 8") }
                    }
                ) { _ in
                    output.write(Data("step\n".utf8))
                }
            }
            // Waits for the kill: the operations must not end first.
            while true { sleep(1) }
        }
        let reported = CheckpointCrashTests.reportedCount(log)
        let reference = directory.path("reference.keepsake")
        try original.write(to: URL(fileURLWithPath: reference))
        let (expected, failure) = RichStore.run(
            operations, on: reference, debounced: debounced, maximumSteps: reported + 1, finalReopen: false)
        // (One more when the step after the reported ones is a listing of tags: undoing to the
        // newest one is a step of the same operation.)
        #expect(failure == nil && expected.count > reported, "trial \(trial): the reference stopped")
        // Before the first step was reported, the store is the rich store or the one opened.
        let last = expected[max(0, reported - 1)]
        let store = try KeepsakeStore(path: path)
        defer { store.close() }
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.verify().problems == [])
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: last.limit)
        try history.checkInvariants()
        var reopened = RichStore.OperationStep("reopened after the kill", history)
        reopened.limit = last.limit
        let candidates = expected[max(0, reported - 1)...reported]
        #expect(
            candidates.contains { $0.value == reopened.value && (debounced || $0.state == reopened.state) },
            "trial \(trial)\(debounced ? ", debounced" : ""): \(reported) steps reported, the last \(last); reopened \(reopened)"
        )
        print(
            "trial \(trial)\(debounced ? ", debounced" : ""): killed after \(reported) steps, during \(expected.last!.label)"
        )
    }
}
