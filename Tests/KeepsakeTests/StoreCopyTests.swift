import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// `copy(to:)`: a copy of an open store, complete on its own, for Save As, Duplicate, an
/// export or a backup. A copy of the file alone lacks the commits still in its write-ahead log.
///
/// An actor, so that each test has one of its own for the debounced histories it writes: on the
/// main actor, each would wait for every other test running there.
@Suite(.removesTemporaryDirectories) actor StoreCopyTests {
    let directory = TemporaryDirectory()

    /// Everything a store holds, as its inspection reads it: each history's summary, timeline
    /// and value at every version, and the snapshots (the dates of their rows included).
    struct Contents: Equatable {
        var histories: [KeepsakeStore.HistorySummary]
        var timelines: [[KeepsakeStore.VersionSummary]]
        var values: [[String?]]
        var snapshots: [SnapshotInfo]
        var held: [String]
    }

    static func contents(of store: KeepsakeStore) throws -> Contents {
        let summary = try store.summary()
        var contents = Contents(
            histories: summary.histories, timelines: [], values: [], snapshots: summary.snapshots, held: [])
        for history in summary.histories {
            let timeline = try #require(try store.timeline(of: history.name))
            contents.timelines.append(timeline)
            contents.values.append(
                try (0...history.versions).map { try store.valueJSON(ofHistory: history.name, atVersion: $0) }
            )
        }
        contents.held = try store.database.read { connection in
            try connection.query("SELECT path || '=' || patch FROM pending_change ORDER BY 1") {
                $0.text(0) ?? ""
            }
        }
        return contents
    }

    /// A store with two histories (one with undone versions, a tag and a scope, one holding a
    /// debounced change) and two snapshots; returns the open store and its histories.
    func writeSample(
        _ path: String, clock: ManualClock
    ) throws -> (KeepsakeStore, KeepsakeHistory<Doc>, KeepsakeHistory<Doc>) {
        let store = try KeepsakeStore(path: path)
        let doc = try store.history("doc", initialValue: Doc.empty)
        for index in 1...10 {
            var value = doc.value
            value.title = "v\(index)"
            value.items.append(.init(id: index, title: "item \(index)", done: index.isMultiple(of: 2)))
            try doc.append(value)
            if index == 4 { try doc.tag("draft") }
            if index == 6 { try doc.pushNewScope() }
        }
        try doc.undo()
        try doc.undo()
        let typing = try store.history("typing", initialValue: Doc.empty)
        typing.withDebouncing(clock: clock, interval: .milliseconds(500))
        var typed = typing.value
        for character in "Held" {
            typed.title.append(character)
            try typing.append(typed)
        }
        let caretaker = Caretaker(store: store)
        try caretaker.save(doc.value, as: "before lunch")
        var large = doc.value
        large.blob = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try caretaker.save(large, as: "with a blob")
        return (store, doc, typing)
    }

    @Test func aCopyOfAnOpenStoreHoldsWhatTheFileAloneLacks() throws {
        let (path, copy, fileAlone) = (
            directory.path("doc.keepsake"), directory.path("copy.keepsake"),
            directory.path("file-alone.keepsake")
        )
        let clock = ManualClock()
        let (store, doc, typing) = try writeSample(path, clock: clock)
        let before = try Self.contents(of: store)

        try store.copy(to: copy)
        // The file alone, copied as a file manager copies it, opens without the newest commits.
        try FileManager.default.copyItem(atPath: path, toPath: fileAlone)
        #expect(try KeepsakeStore(path: fileAlone, options: .init(readOnly: true)).historyNames() == [])

        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"))
        #expect(try Self.contents(of: KeepsakeStore(path: copy, options: .init(readOnly: true))) == before)
        // The original is in use still, and the copy no longer follows it.
        var value = doc.value
        value.title = "after the copy"
        try doc.append(value)
        try doc.checkInvariants()
        try typing.checkInvariants()

        let copied = try KeepsakeStore(path: copy)
        let reopened = try copied.history("doc", initialValue: Doc.empty)
        #expect(reopened.value.title == "v8" && reopened.versionCount == 10)
        #expect(try reopened.redo().title == "v9")
        #expect(try copied.history("typing", initialValue: Doc.empty).value.title == "Held")
        #expect(try Caretaker(store: copied).restore("with a blob", as: Doc.self)?.blob.count == 100_000)
        #expect(try copied.verify().isOK)
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func aCopyOfAReadOnlyStoreIsTheSame() throws {
        let (path, copy) = (directory.path("doc.keepsake"), directory.path("copy.keepsake"))
        let (store, _, _) = try writeSample(path, clock: ManualClock())
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        try reader.copy(to: copy)
        #expect(try Self.contents(of: KeepsakeStore(path: copy)) == Self.contents(of: store))
    }

    @Test func anInMemoryStoreSavesToItsFirstFile() throws {
        let store = try KeepsakeStore.inMemory()
        let history = try store.history("untitled", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "Written before it had a file"
        try history.append(doc)
        try Caretaker(store: store).save(doc, as: "first")
        let path = directory.path("Untitled.keepsake")
        try store.copy(to: path)

        let saved = try KeepsakeStore(path: path)
        #expect(try Self.contents(of: saved) == Self.contents(of: store))
        let reopened = try saved.history("untitled", initialValue: Doc.empty)
        #expect(reopened.value == doc && reopened.versionCount == 1)
        #expect(try reopened.undo() == .empty)
        try reopened.checkInvariants()
        #expect(try saved.database.read { try $0.scalarText("PRAGMA journal_mode") } == "wal")
    }

    @Test func aCopyRefusesAFileAlreadyThereAndAMissingFolder() throws {
        let path = directory.path("doc.keepsake")
        let (store, _, _) = try writeSample(path, clock: ManualClock())
        let taken = directory.path("taken.keepsake")
        #expect(FileManager.default.createFile(atPath: taken, contents: Data("mine".utf8)))
        #expect(
            throws: KeepsakeError.cannotOpen(
                path: taken, reason: "a file is already there; copy writes a new file")
        ) {
            try store.copy(to: taken)
        }
        #expect(FileManager.default.contents(atPath: taken) == Data("mine".utf8))
        #expect(
            throws: KeepsakeError.cannotOpen(
                path: path, reason: "a file is already there; copy writes a new file")
        ) {
            try store.copy(to: path)
        }
        let missing = directory.path("missing/copy.keepsake")
        #expect(
            throws: KeepsakeError.cannotOpen(
                path: missing, reason: "the folder \(directory.path("missing")) does not exist")
        ) { try store.copy(to: missing) }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == [
                "doc.keepsake", "doc.keepsake-shm", "doc.keepsake-wal", "taken.keepsake",
            ])
    }

    @Test(.enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"))
    func aFullDiskFailsTheCopyTypedAndLeavesNothing() throws {
        let path = directory.path("doc.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.blob = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try history.append(doc)
        let before = try Self.contents(of: store)
        let mount = try #require(TemporaryMount(size: "1m"))
        let copy = mount.path + "/copy.keepsake"

        #expect { try store.copy(to: copy) } throws: { error in
            guard case .sqlite(let sqlite) = error as? KeepsakeError else { return false }
            return sqlite.code == .full && !sqlite.message.contains(NewStoreFile.temporaryPrefix)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount.path) == [])
        #expect(try Self.contents(of: store) == before)
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func everyCopyIsOneCommittedStateWhileAnotherConnectionWrites() async throws {
        let path = directory.path("doc.keepsake")
        let store = try KeepsakeStore(path: path)
        _ = try store.history("doc", initialValue: Doc.empty)
        // A second store on the file: another connection, as another process's would be.
        let writer = Task.detached {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
            for index in 1...300 {
                var doc = history.value
                doc.title = "v\(index)"
                try history.append(doc)
            }
        }
        var seen: Set<Int> = []
        for index in 0..<15 {
            let copy = directory.path("copy-\(index).keepsake")
            try store.copy(to: copy)
            let copied = try KeepsakeStore(path: copy)
            let history = try copied.history("doc", initialValue: Doc.empty)
            // The title names the version: whatever the copy caught, it is whole.
            let count = history.versionCount
            #expect(history.value.title == (count == 0 ? "" : "v\(count)"))
            #expect(try copied.verify().isOK)
            seen.insert(count)
        }
        try await writer.value
        print("copies caught \(seen.sorted()) versions")
    }

    /// A store of about 64 MiB (16 versions, each with 4 MiB of new `Data`): long enough to
    /// copy that appends fit in many times over.
    func writeLargeStore(_ path: String) throws -> (KeepsakeStore, KeepsakeHistory<Doc>) {
        let store = try KeepsakeStore(path: path)
        let doc = try store.history("doc", initialValue: Doc.empty)
        var generator = SeededGenerator(seed: 7)
        for index in 1...16 {
            var value = doc.value
            value.title = "v\(index)"
            value.blob = Data(count: 4 << 20)
            value.blob.withUnsafeMutableBytes { bytes in
                for offset in stride(from: 0, to: bytes.count, by: 8) {
                    bytes.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self)
                }
            }
            try doc.append(value)
        }
        return (store, doc)
    }

    /// The size of the temporary file a copy into the test's folder is writing, or `nil` when
    /// there is none.
    func temporarySize() -> Int64? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []
        return names.first {
            $0.hasPrefix(NewStoreFile.temporaryPrefix) && !$0.contains("-wal") && !$0.contains("-shm")
        }
        .flatMap { FileState(path: directory.path($0))?.size }
    }

    /// Starts copying `store` to `output` on a thread of its own, waits until the copy has begun
    /// writing its file (or is done), and returns the wait for its end. A thread, not a `Task`:
    /// this test's thread is held until then, and tests running beside it may hold every other
    /// thread of the pool `Task`s share, so a `Task`'s copy might never start.
    func startCopying(_ store: KeepsakeStore, to output: String) -> () throws -> Void {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<Void, any Error> = .success(())
        Thread.detachNewThread {
            result = Result { try store.copy(to: output) }
            done.signal()
        }
        while (temporarySize() ?? 0) == 0, !FileManager.default.fileExists(atPath: output) {
            usleep(100)
        }
        return {
            done.wait()
            try result.get()
        }
    }

    /// The copy reads on a connection of its own: the store's own operations go on while
    /// `VACUUM INTO` writes it. Each append made during the copy is followed by the size of
    /// the copy's temporary file: one that waited for the copy would only see it whole.
    @Test func theStoresOperationsGoOnWhileItIsCopied() throws {
        let (path, output) = (directory.path("doc.keepsake"), directory.path("copy.keepsake"))
        let (store, doc) = try writeLargeStore(path)
        let notes = try store.history("notes", initialValue: Doc.empty, maximumVersions: nil)
        let copying = startCopying(store, to: output)
        var (appends, sizes) = (0, [Int64]())
        while temporarySize() != nil {
            var value = notes.value
            value.title = "n\(appends + 1)"
            try notes.append(value)
            appends += 1
            if let size = temporarySize() { sizes.append(size) }
        }
        try copying()
        let size = try #require(FileState(path: output)?.size)
        print("appends during the copy: \(appends); copy \(size) bytes; sizes seen \(sizes.prefix(5))…")
        #expect(sizes.contains { $0 < size })
        // The copy is the store as committed when it started, with none of those appends.
        let copy = try KeepsakeStore(path: output)
        #expect(try copy.history("doc", initialValue: Doc.empty).value == doc.value)
        #expect(try copy.history("notes", initialValue: Doc.empty).versionCount == 0)
        #expect(try copy.verify().isOK)
        #expect(notes.versionCount == appends && notes.value.title == "n\(appends)")
        try notes.checkInvariants()
        #expect(try store.verify().isOK)
    }

    /// Closing the store while a copy is written waits for the copy's read, which is not cut
    /// off: the copy is whole, and the store reopens as it was.
    @Test func closingTheStoreWaitsForACopyInProgress() throws {
        let (path, output) = (directory.path("doc.keepsake"), directory.path("copy.keepsake"))
        let (store, doc) = try writeLargeStore(path)
        let expected = doc.value
        let copying = startCopying(store, to: output)
        try doc.close()
        store.close()
        try copying()
        let copy = try KeepsakeStore(path: output)
        let copied = try copy.history("doc", initialValue: Doc.empty)
        #expect(copied.value == expected && copied.versionCount == 16)
        #expect(try copy.verify().isOK)
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(reopened.value == expected && reopened.versionCount == 16)
        try reopened.checkInvariants()
    }

    /// Appends "v<from>" … "v<to>" to history "doc" (each version adds item `index`), then
    /// kills the process: the store's log holds what it wrote since its last checkpoint.
    static func appendTitles(path: String, _ range: ClosedRange<Int>, thenDie: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        for index in range {
            var doc = history.value
            doc.title = "v\(index)"
            doc.items.append(.init(id: index, title: "item \(index)", done: false))
            try history.append(doc)
        }
        if thenDie { kill(getpid(), SIGKILL) }
        try history.close()
        store.close()
    }

    @Test func aBackupRestoredAfterACrashOpensOnceTheCrashedLogIsAside() async throws {
        let (path, backup) = (directory.path("doc.keepsake"), directory.path("backup.keepsake"))
        try Self.appendTitles(path: path, 1...30, thenDie: false)
        try KeepsakeStore(path: path, options: .init(readOnly: true)).copy(to: backup)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            try await MainActor.run { try StoreCopyTests.appendTitles(path: path, 31...300, thenDie: true) }
        }
        // Restored by renaming the backup over the file: the crashed session's log, still at
        // the path, is read as the backup's own and its pages land on the backup's.
        try FileManager.default.copyItem(atPath: backup, toPath: backup + ".kept")
        #expect(rename(backup, path) == 0)
        #expect {
            try KeepsakeStore(path: path)
        } throws: { error in
            guard case .notAStore(let file, let reason) = error as? KeepsakeError else { return false }
            return file == path
                && reason == """
                    it is corrupt (database disk image is malformed); a write-ahead log is beside it \
                    (\(path)-wal), which SQLite reads as the file's own: if the file was restored or \
                    replaced since a crash, that log is the replaced file's, and moving it away (with \
                    \(path)-shm) lets the file open as it is
                    """
        }
        #expect(rename(path + "-wal", directory.path("crashed-log")) == 0)
        #expect(unlink(path + "-shm") == 0)
        let restored = try KeepsakeStore(path: path)
        let history = try restored.history("doc", initialValue: Doc.empty)
        #expect(history.value.title == "v30" && history.versionCount == 30)
        #expect(try restored.verify().isOK)
        restored.close()

        // Restored the safe way instead: the file deleted, then the backup copied to its path.
        #expect(unlink(path) == 0)
        #expect(rename(directory.path("crashed-log"), path + "-wal") == 0)
        try KeepsakeStore(path: backup + ".kept", options: .init(readOnly: true)).copy(to: path)
        let copied = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(copied.value.title == "v30" && copied.versionCount == 30)
        try copied.checkInvariants()
    }

    /// Copies (or salvages) the store at `path` to `<path>.copy-0`, `-1`, … until a kill at a
    /// random moment stops the process.
    static func copyInALoopAndDie(path: String, seed: UInt64, salvaging: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "copied"
        doc.blob = Data((0..<blobSize(salvaging)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try history.append(doc)
        // A salvage reads and checks every row first, and inlines the blob: it writes later.
        CheckpointCrashTests.killSoon(seed: seed, within: salvaging ? 5_000..<300_000 : 2_000..<80_000)
        for index in 0... {
            if salvaging {
                _ = try KeepsakeStore.salvage(from: path, to: path + ".copy-\(index)")
            } else {
                try store.copy(to: path + ".copy-\(index)")
            }
        }
    }

    /// The size of the copied store's blob: smaller for a salvage, which keeps it inline.
    nonisolated static func blobSize(_ salvaging: Bool) -> Int { salvaging ? 200_000 : 2_000_000 }

    /// 4 trials, or a tenth of `Scripts/soak`'s crash trials.
    nonisolated static let killedCopies = max(4, (CheckpointCrashTests.soak ?? 0) / 10)

    /// A salvage writes its new store the same way.
    @Test(arguments: [false, true], 0..<killedCopies)
    func aCopyKilledMidwayLeavesNoFileOrAWholeOne(salvaging: Bool, trial: Int) async throws {
        let path = directory.path("doc.keepsake")
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = path as String, trial = trial as Int, salvaging = salvaging as Bool] in
            try await MainActor.run {
                try StoreCopyTests.copyInALoopAndDie(
                    path: path, seed: UInt64(0xC0_0000 + trial), salvaging: salvaging)
            }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        let copies = names.filter { $0.hasPrefix("doc.keepsake.copy-") }
        for name in copies {
            let copy = try KeepsakeStore(path: directory.path(name))
            let history = try copy.history("doc", initialValue: Doc.empty)
            #expect(
                history.value.title == "copied" && history.value.blob.count == Self.blobSize(salvaging),
                "\(name)")
            #expect(try copy.verify().isOK)
        }
        // The copy the kill interrupted left only its temporary file, which the next open of
        // that path removes.
        let next = directory.path("doc.keepsake.copy-\(copies.count)")
        #expect(!FileManager.default.fileExists(atPath: next))
        let interrupted = names.filter { $0.hasPrefix(NewStoreFile.temporaryPrefix) }
        _ = try KeepsakeStore(path: next)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix(NewStoreFile.temporaryPrefix)
        }
        #expect(left == [])
        print("\(salvaging ? "salvage" : "copy") trial \(trial): \(copies.count) whole, left \(interrupted)")
    }
}
