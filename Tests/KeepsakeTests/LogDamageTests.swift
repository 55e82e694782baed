import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// Damaged bytes in the write-ahead log a killed writer left: SQLite reads a log up to the
/// first frame that does not match its checksum and drops every commit after it, silently, as
/// it must for a frame a crash or a power loss left unwritten. A bit flipped in a whole log
/// read the same, and the store opened versions back, `verify()` passing.
@MainActor @Suite struct LogDamageTests {
    let directory = TemporaryDirectory()

    /// SQLite's frame layout for the stores of these tests (4 KiB pages).
    static let frameSize = 24 + 4096

    /// A store whose first 30 versions are in its file and the next 30 in the log of the
    /// writer killed after them, with the log's bytes and its commit frames (counted from 1).
    func killedWriterStore() async throws -> (path: String, log: Data, commitFrames: [Int]) {
        let path = directory.path("doc.keepsake")
        try StoreCopyTests.appendTitles(path: path, 1...30, thenDie: false)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            try await MainActor.run { try StoreCopyTests.appendTitles(path: path, 31...60, thenDie: true) }
        }
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let frames = (log.count - 32) / Self.frameSize
        let commitFrames = (1...frames).filter { frame in
            let start = 32 + (frame - 1) * Self.frameSize + 4
            return log[start..<start + 4].contains { $0 != 0 }
        }
        // One commit an append; its value is the title its version carries.
        #expect(commitFrames.count == 30)
        return (path, log, commitFrames)
    }

    /// A copy of the killed writer's store at a new path, its log replaced by `log`.
    func copy(of path: String, log: Data, named name: String) throws -> String {
        let copy = directory.path(name)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try log.write(to: URL(fileURLWithPath: copy + "-wal"))
        return copy
    }

    /// The title and version count the store at `path` opens with.
    func opened(_ path: String, readOnly: Bool = false) throws(KeepsakeError) -> (
        title: String, versions: Int
    ) {
        let store = try KeepsakeStore(path: path, options: .init(readOnly: readOnly))
        defer { store.close() }
        let history = try store.history("doc", initialValue: Doc.empty)
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.verify().isOK)
        if !readOnly { try history.close() }
        return (history.value.title, history.versionCount)
    }

    /// The files in the test's folder with their bytes.
    func contents() throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            contents[name] = try Data(contentsOf: directory.url.appendingPathComponent(name))
        }
        return contents
    }

    /// What opening the log flipped at `offset` must give: a flip in a frame of a commit is
    /// damage, refused (the last commit's frames too: it is an append of two frames, which
    /// cannot have rewritten any in place); after the last commit, or past the last whole
    /// frame, nothing a commit needs is read.
    func isRefused(flippedAt offset: Int, commitFrames: [Int]) -> Bool {
        offset < 32 + commitFrames[commitFrames.count - 1] * Self.frameSize
    }

    @Test(arguments: Array(Soak.batches(usually: 3)))
    func aBitFlippedInTheLogIsRefusedOrReadWhole(batch: UInt64) async throws {
        let (path, log, commitFrames) = try await killedWriterStore()
        #expect(try opened(try copy(of: path, log: log, named: "whole.keepsake")) == ("v60", 60))
        var generator = SeededGenerator(seed: 0x10D_0000 + batch)
        // The header's words, then anywhere.
        let offsets =
            [3, 7, 11, 15, 19, 23, 27, 31]
            + (0..<32).map { _ in Int.random(in: 32..<log.count, using: &generator) }
        var outcomes: [String: Int] = [:]
        for (variant, offset) in offsets.enumerated() {
            var damaged = log
            damaged[offset] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            let copy = try copy(of: path, log: damaged, named: "flip-\(variant).keepsake")
            let context = "batch \(batch), byte \(offset) of \(log.count)"
            if isRefused(flippedAt: offset, commitFrames: commitFrames) {
                let before = try contents()
                for readOnly in [true, false] {
                    do throws(KeepsakeError) {
                        let result = try opened(copy, readOnly: readOnly)
                        Issue.record("\(context): opened at \(result)")
                    } catch .notAStore(copy, let reason) {
                        #expect(
                            reason.hasPrefix("its write-ahead log (\(copy)-wal) is damaged"), "\(context)")
                        #expect(KeepsakeError.notAStore(path: copy, reason: reason).remedy == .readDamagedLog)
                        if offset < 32 {
                            #expect(
                                reason.contains(
                                    "damaged: its header no longer matches its checksum, so SQLite would read none of "
                                        + "its 30 commits."), "\(context)")
                        }
                    } catch {
                        Issue.record("\(context): \(error)")
                    }
                }
                #expect(try contents() == before, "\(context): a refused open wrote")
                outcomes["refused", default: 0] += 1
            } else {
                #expect(try opened(copy) == ("v60", 60), "\(context)")
                outcomes["v60", default: 0] += 1
            }
        }
        print("flipped log bits, batch \(batch): \(outcomes)")
    }

    /// A commit long enough to have spilled pages to the log before it ended rewrites some of
    /// them in place at its end, then the checksums after them, its last frame already
    /// written: a crash in between leaves a frame one word away from valid, the shape of
    /// damage. A flipped bit in such a commit, the log's last, is read as SQLite reads it,
    /// without that commit; one in the commit before it is refused.
    @Test func aBitFlippedInALongLastCommitOpensWithoutIt() async throws {
        let path = directory.path("doc.keepsake")
        try StoreCopyTests.appendTitles(path: path, 1...30, thenDie: false)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            try await MainActor.run {
                let store = try KeepsakeStore(path: path)
                let history = try store.history("doc", initialValue: Doc.empty)
                for index in 31...40 {
                    var doc = history.value
                    doc.title = "v\(index)"
                    try history.append(doc)
                }
                var big = Doc.empty
                big.items = (0..<4_000).map {
                    .init(id: $0, title: String(repeating: "x", count: 100), done: false)
                }
                try Caretaker(store: store).save(big, as: "big")
                kill(getpid(), SIGKILL)
            }
        }
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let commitFrames = (1...(log.count - 32) / Self.frameSize).filter { frame in
            let start = 32 + (frame - 1) * Self.frameSize + 4
            return log[start..<start + 4].contains { $0 != 0 }
        }
        let (before, last) = (commitFrames[commitFrames.count - 2], commitFrames[commitFrames.count - 1])
        try #require(last - before >= WriteAheadLog.spillFrames)

        /// The number of items of the snapshot "big" in the store at `path`, if it has one.
        func bigItems(_ path: String) throws -> Int? {
            let store = try KeepsakeStore(path: path)
            defer { store.close() }
            return try Caretaker(store: store).restore("big", as: Doc.self)?.items.count
        }
        let whole = try copy(of: path, log: log, named: "whole.keepsake")
        #expect(try opened(whole) == ("v40", 40))
        #expect(try bigItems(whole) == 4_000)

        var damaged = log
        damaged[32 + (before + (last - before) / 2) * Self.frameSize + 1_000] ^= 0x08
        let copy = try copy(of: path, log: damaged, named: "last.keepsake")
        #expect(try opened(copy) == ("v40", 40))
        #expect(try bigItems(copy) == nil)

        damaged = log
        damaged[32 + (before - 1) * Self.frameSize + 1_000] ^= 0x08
        let refused = try self.copy(of: path, log: damaged, named: "before.keepsake")
        do throws(KeepsakeError) {
            Issue.record("opened at \(try opened(refused))")
        } catch .notAStore(refused, let reason) {
            #expect(
                reason.contains("frame \(before) of \(last) (at byte \(32 + (before - 1) * Self.frameSize))"))
            #expect(reason.contains("SQLite would read the 9 commits before it and drop the 2 after it"))
        } catch {
            Issue.record("\(error)")
        }
    }

    /// What a power loss leaves: a part of the log that never reached the disk, while a later
    /// part did. SQLite reads up to the commit before it, as it must (with `synchronous=NORMAL`
    /// those commits had not been synced), and so does Keepsake: the store opens there, not
    /// refused. Three shapes of a frame left unwritten: zeros (a block of a file that grew), an
    /// older frame's bytes (a log reused since), and a frame whose header was written but not
    /// the second half of its page.
    @Test(arguments: ["zeros", "older frame", "half written"])
    func aFrameLeftUnwrittenOpensAtTheCommitBeforeIt(shape: String) async throws {
        let (path, log, commitFrames) = try await killedWriterStore()
        // The first frame of the eleventh commit.
        let start = 32 + commitFrames[9] * Self.frameSize
        var damaged = log
        switch shape {
        case "zeros":
            damaged.replaceSubrange(start..<start + Self.frameSize, with: Data(count: Self.frameSize))
        case "older frame":
            damaged.replaceSubrange(start..<start + Self.frameSize, with: log[32..<32 + Self.frameSize])
        default:
            let half = start + 24 + 2048
            damaged.replaceSubrange(half..<start + Self.frameSize, with: Data(count: 2048))
        }
        #expect(WriteAheadLog.damage(in: damaged) == nil)
        let copy = try copy(of: path, log: damaged, named: "unwritten.keepsake")
        #expect(try opened(copy, readOnly: true) == ("v40", 40))
        #expect(try opened(copy) == ("v40", 40))
    }

    /// A changed bit in a frame's last summed word (the last four bytes of its page) changes
    /// only the second word of the frame's checksum, as a changed bit in that stored word
    /// does: either one word put back makes the frame valid, and only the frames after it
    /// tell which was damaged, by the checksum they chain from. Until 2026-11 the stored
    /// checksum was always taken to be the damaged word: the walk went on from the sum of the
    /// damaged page, which no frame after it chains from, so no commit was found after it and
    /// the store opened 20 commits back with no error (a soak found it: batch 9315, byte
    /// 193,669). Every bit of both words, and of the checksum's first word, is refused alike.
    @Test func aBitFlippedWhereOnlyTheSecondChecksumWordChangesIsRefused() async throws {
        let (_, log, commitFrames) = try await killedWriterStore()
        // The eleventh commit's first frame.
        let start = 32 + commitFrames[9] * Self.frameSize
        let expected = WriteAheadLog.Damage(
            frame: commitFrames[9] + 1, offset: start, frames: (log.count - 32) / Self.frameSize,
            readCommits: 10, lostCommits: 20)
        for (place, offset) in [
            ("the page's last word", start + Self.frameSize - 4), ("the checksum's second word", start + 20),
            ("the checksum's first word", start + 16),
        ] {
            for bit in 0..<32 {
                var damaged = log
                damaged[offset + 3 - bit / 8] ^= 1 << UInt8(bit % 8)
                #expect(WriteAheadLog.damage(in: damaged) == expected, "\(place), bit \(bit)")
            }
        }
    }

    /// Salvage reads a store whose log is damaged as of the damage, says what it lost, and
    /// writes nothing to the store or its log.
    @Test func aStoreWithADamagedLogIsSalvagedAsOfTheDamage() async throws {
        let (path, log, commitFrames) = try await killedWriterStore()
        var damaged = log
        // A byte of the page of the eleventh commit's first frame.
        damaged[32 + commitFrames[9] * Self.frameSize + 100] ^= 0x04
        let copy = try copy(of: path, log: damaged, named: "damaged.keepsake")
        let (file, wal) = (try Data(contentsOf: URL(fileURLWithPath: copy)), damaged)
        let damage = try #require(WriteAheadLog.damage(ofLogBeside: copy))
        #expect(
            damage
                == .init(
                    frame: commitFrames[9] + 1, offset: 32 + commitFrames[9] * Self.frameSize,
                    frames: (log.count - 32) / Self.frameSize, readCommits: 10, lostCommits: 20))

        let output = directory.path("salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: copy, to: output)
        #expect(
            report.lost == [
                .init(
                    what: "20 commits of the write-ahead log (\(copy)-wal)",
                    reason:
                        "the log is damaged: frame \(damage.frame) of \(damage.frames) (at byte \(damage.offset)) no longer "
                        + "matches its checksum, so SQLite would read the 10 commits before it and drop the 20 after it"
                )
            ])
        #expect(report.histories.map { [$0.name, "\($0.version)"] } == [["doc", "40"]])
        #expect(try opened(output).title == "v40")
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == file)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "-wal")) == wal)
    }

    /// Asked to, a store whose log is damaged opens as SQLite reads it, as of the damage, with
    /// its history: read-only, nothing is written; for writing, the log is first copied aside,
    /// since the store's next commits overwrite the frames after the damage.
    @Test func aStoreWithADamagedLogOpensAsOfTheDamageWhenAsked() async throws {
        let (path, log, commitFrames) = try await killedWriterStore()
        let whole = try copy(of: path, log: log, named: "whole.keepsake")
        #expect(
            try KeepsakeStore(path: whole, options: .init(readsDamagedLog: true)).history(
                "doc", initialValue: Doc.empty
            ).value.title == "v60")
        var damaged = log
        damaged[32 + commitFrames[9] * Self.frameSize + 100] ^= 0x04
        let copy = try copy(of: path, log: damaged, named: "damaged.keepsake")

        let reader = try KeepsakeStore(path: copy, options: .init(readOnly: true, readsDamagedLog: true))
        let read = try reader.history("doc", initialValue: Doc.empty)
        #expect((read.value.title, read.versionCount) == ("v40", 40))
        reader.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "-wal")) == damaged)
        #expect(try contents().keys.filter { $0.contains(".damaged-") }.isEmpty)

        // Until a store writes, its log stays as damaged as it was (an app killed before its
        // first edit): another open keeps the copy the first made.
        let first = try KeepsakeStore(path: copy, options: .init(readsDamagedLog: true))
        let store = try KeepsakeStore(path: copy, options: .init(readsDamagedLog: true))
        #expect(try contents().keys.filter { $0.contains(".damaged-") }.count == 1)
        first.close()
        let history = try store.history("doc", initialValue: Doc.empty)
        #expect((history.value.title, history.versionCount) == ("v40", 40))
        var doc = history.value
        doc.title = "v41"
        try history.append(doc)
        try history.undo()
        try history.redo()
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.verify().isOK)
        try history.close()
        store.close()
        let asides = try contents().filter { $0.key.hasPrefix("damaged.keepsake-wal.damaged-") }
        #expect(asides.count == 1 && asides.first?.value == damaged)
        #expect(try opened(copy) == ("v41", 41))
    }

    /// Threads opening a store with a damaged log for writing at once, asked to read it: each
    /// opens it as of the damage, and the log is kept aside as it was. Opens whose copy met
    /// another's under the same name, or a log another open's close had removed, failed "it
    /// could not be copied aside" (16 of 120 in a scratch run).
    @Test func threadsOpeningAStoreWithADamagedLogAtOnceAllOpenIt() async throws {
        let (path, log, commitFrames) = try await killedWriterStore()
        var damaged = log
        damaged[32 + commitFrames[9] * Self.frameSize + 100] ^= 0x04
        for round in 0..<30 {
            let copy = try copy(of: path, log: damaged, named: "r\(round).keepsake")
            let titles = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let store = try KeepsakeStore(path: copy, options: .init(readsDamagedLog: true))
                        defer { store.close() }
                        return try store.history("doc", initialValue: Doc.empty).value.title
                    }
                }
                var titles: [String] = []
                for try await title in group { titles.append(title) }
                return titles
            }
            #expect(titles == ["v40", "v40", "v40", "v40"])
            let asides = try contents().filter { $0.key.hasPrefix("r\(round).keepsake-wal.damaged-") }
            #expect(!asides.isEmpty && asides.values.allSatisfy { $0 == damaged })
            // Opens that wrote nothing may leave the log as damaged as it was (a close that met
            // another open does not copy it into the file): read as asked, it is whole.
            let store = try KeepsakeStore(path: copy, options: .init(readOnly: true, readsDamagedLog: true))
            let history = try store.history("doc", initialValue: Doc.empty)
            #expect((history.value.title, history.versionCount) == ("v40", 40))
            #expect(try store.verify().isOK)
            store.close()
        }
    }

    /// A disk too full to copy the damaged log aside refuses the writable open that would
    /// overwrite its frames, typed, leaving no partial copy and nothing written; with room
    /// again, it opens.
    @Test(.enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"))
    func aDamagedLogThatCannotBeCopiedAsideIsNotWritten() async throws {
        let (path, log, commitFrames) = try await killedWriterStore()
        let mount = try #require(TemporaryMount(size: "1m"))
        let copy = mount.path + "/doc.keepsake"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        var damaged = log
        damaged[32 + commitFrames[9] * Self.frameSize + 100] ^= 0x04
        try damaged.write(to: URL(fileURLWithPath: copy + "-wal"))
        let free = try #require(
            try FileManager.default.attributesOfFileSystem(forPath: mount.path)[.systemFreeSize] as? Int)
        try Data(count: free - 64 * 1024).write(to: URL(fileURLWithPath: mount.path + "/filler"))
        let file = try Data(contentsOf: URL(fileURLWithPath: copy))

        do throws(KeepsakeError) {
            _ = try KeepsakeStore(path: copy, options: .init(readsDamagedLog: true))
            Issue.record("opened with no room to copy its log aside")
        } catch .cannotOpen(copy, let reason) {
            #expect(
                reason.hasPrefix(
                    "its write-ahead log (\(copy)-wal) is damaged, and it could not be copied aside"))
            #expect(reason.hasSuffix("; nothing was written"))
            let remedy = KeepsakeError.cannotOpen(path: copy, reason: reason).remedy
            #expect(remedy == nil)
        } catch {
            Issue.record("\(error)")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: mount.path).sorted()
                == ["doc.keepsake", "doc.keepsake-wal", "filler"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == file)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "-wal")) == damaged)

        try FileManager.default.removeItem(atPath: mount.path + "/filler")
        let store = try KeepsakeStore(path: copy, options: .init(readsDamagedLog: true))
        #expect(try store.history("doc", initialValue: Doc.empty).value.title == "v40")
        store.close()
    }

    /// An app opens a refused store by the option its error names, without reading the
    /// reason; errors no option mends name none.
    @Test func anAppOpensARefusedStoreByTheRemedyItsErrorNames() async throws {
        let (path, log, commitFrames) = try await killedWriterStore()
        var damaged = log
        damaged[32 + commitFrames[9] * Self.frameSize + 100] ^= 0x04
        let copy = try copy(of: path, log: damaged, named: "damaged.keepsake")

        // As ``KeepsakeError/remedy``'s documentation shows it.
        let store: KeepsakeStore
        do {
            store = try KeepsakeStore(path: copy)
        } catch {
            switch error.remedy {
            case .readDamagedLog?:
                store = try KeepsakeStore(path: copy, options: .init(readsDamagedLog: true))
            case .openReadOnly?:
                store = try KeepsakeStore(path: copy, options: .init(readOnly: true))
            case nil:
                throw error
            }
        }
        #expect(try store.history("doc", initialValue: Doc.empty).value.title == "v40")
        #expect(store.options.readsDamagedLog)
        store.close()

        let text = directory.path("notes.txt")
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: text))
        do throws(KeepsakeError) {
            _ = try KeepsakeStore(path: text)
            Issue.record("a text file opened")
        } catch {
            #expect(error.remedy == nil)
        }
    }

    /// A live log is never damage: another process appends 2,000 versions (its log restarted
    /// and reused by its checkpoints, frames of older cycles after the newest ones) while this
    /// one checks the log and opens the store, over and over.
    @Test func aLogReadWhileItIsWrittenIsNeverDamage() async throws {
        let path = directory.path("live.keepsake")
        try StoreCopyTests.appendTitles(path: path, 1...1, thenDie: false)
        let done = directory.path("done")
        async let writer = #expect(processExitsWith: .success) {
            [path = path as String, done = done as String] in
            try await MainActor.run { try StoreCopyTests.appendTitles(path: path, 2...2_000, thenDie: false) }
            _ = FileManager.default.createFile(atPath: done, contents: nil)
        }
        var (checks, opens, logsRead) = (0, 0, 0)
        while !FileManager.default.fileExists(atPath: done) {
            if FileState.logHoldsFrames(of: path) { logsRead += 1 }
            #expect(WriteAheadLog.damage(ofLogBeside: path) == nil)
            checks += 1
            if checks % 10 == 0 {
                let title = try opened(path, readOnly: true).title
                #expect(title.hasPrefix("v"))
                opens += 1
            }
        }
        _ = await writer
        #expect(try opened(path).title == "v2000")
        print("checked a live log \(checks) times (\(logsRead) with frames), opened \(opens) times")
        // Some of the checks read frames (else the test proved nothing). How many depends on
        // the machine's load, not on Keepsake: the writer is a new test process, which may take
        // most of the run to start, then writes for about a second while this loop competes
        // with it for the cores (the whole suite beside a release build: frames in 10 of 70,110
        // checks over 92 s; alone, 20 of 60 over 1.3 s).
        #expect(logsRead > 0)
    }
}
