import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// A new store file — created, salvaged or copied — is written whole beside its path and put
/// in place: the path names no file or a whole one. A write-ahead log left at the path by a
/// killed process whose file was deleted or renamed since is set aside first: SQLite would
/// read its pages into the new file, and the new store would open as the old one.
@MainActor @Suite struct NewStoreFileTests {
    let directory = TemporaryDirectory()

    /// Writes `count` titles ("v1", "v2", …) to history "doc" of the store at `path`, then
    /// kills the process: the file and its write-ahead log stay as a crash leaves them.
    static func writeTitlesAndDie(path: String, count: Int) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        for index in 1...count {
            var doc = history.value
            doc.title = "v\(index)"
            try history.append(doc)
        }
        kill(getpid(), SIGKILL)
    }

    func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    }

    /// The name of the log set aside in the test's folder.
    func orphanedLog(of name: String) throws -> String? {
        try names().first { $0.hasPrefix(name + "-wal.orphaned-") }
    }

    @Test func aStoreCreatedWhereAKilledProcessLeftItsLogOpensNew() async throws {
        let path = directory.path("doc.keepsake")
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            try await MainActor.run { try NewStoreFileTests.writeTitlesAndDie(path: path, count: 20) }
        }
        #expect(try names() == ["doc.keepsake", "doc.keepsake-shm", "doc.keepsake-wal"])
        // The user deletes the document; its log stays.
        #expect(unlink(path) == 0)

        let store = try KeepsakeStore(path: path)
        // Without the log set aside, the new store opens as the deleted one, history and all.
        #expect(try store.historyNames() == [])
        let history = try store.history("fresh", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "new"
        try history.append(doc)
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
        store.close()
        let reopened = try KeepsakeStore(path: path)
        #expect(try reopened.historyNames() == ["fresh"])
        #expect(try reopened.history("fresh", initialValue: Doc.empty).value.title == "new")
        #expect(try orphanedLog(of: "doc.keepsake") != nil)
    }

    @Test func theLogSetAsideGivesBackTheCommitsOfAFileRenamedAfterACrash() async throws {
        let path = directory.path("doc.keepsake")
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            try await MainActor.run { try NewStoreFileTests.writeTitlesAndDie(path: path, count: 20) }
        }
        // The user renames the document, not its log, before the app runs again: the renamed
        // file lacks every commit the log holds (SQLite finds a log by the file's name).
        let renamed = directory.path("renamed.keepsake")
        #expect(rename(path, renamed) == 0)
        let peek = try KeepsakeStore(path: renamed, options: .init(readOnly: true))
        #expect(try peek.historyNames() == [])
        peek.close()

        // A new document under the old name sets the log aside rather than reading it.
        let store = try KeepsakeStore(path: path)
        #expect(try store.historyNames() == [])
        store.close()
        let aside = try #require(try orphanedLog(of: "doc.keepsake"))
        // Put beside the renamed file as its log, it gives the commits back.
        #expect(rename(directory.path(aside), renamed + "-wal") == 0)
        let recovered = try KeepsakeStore(path: renamed)
        let history = try recovered.history("doc", initialValue: Doc.empty)
        #expect(history.value.title == "v20" && history.versionCount == 20)
        #expect(try history.undo().title == "v19")
        try history.checkInvariants()
        #expect(try recovered.integrityCheck() == ["ok"])
    }

    /// A log set aside where one already is — in the same second (a script replacing
    /// documents), or on a clock set back — takes another name: the rename replaced the one
    /// before, and the commits it held were gone.
    @Test func aLogSetAsideWhereAnotherIsKeepsBoth() async throws {
        let path = directory.path("doc.keepsake")
        let now = Int(Date().timeIntervalSince1970)
        // Every name a log set aside in the coming minute takes first, each taken already.
        let taken = (now...(now + 60)).map { "doc.keepsake-wal.orphaned-\($0)" }
        for name in taken {
            #expect(FileManager.default.createFile(atPath: directory.path(name), contents: Data(name.utf8)))
        }
        var logs: [Data] = []
        for count in [20, 7] {
            await #expect(processExitsWith: .signal(SIGKILL)) {
                [path = path as String, count = count as Int] in
                try await MainActor.run { try NewStoreFileTests.writeTitlesAndDie(path: path, count: count) }
            }
            logs.append(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
            #expect(unlink(path) == 0)
            try KeepsakeStore(path: path).close()
        }
        #expect(logs[0] != logs[1])
        for name in taken {
            #expect(FileManager.default.contents(atPath: directory.path(name)) == Data(name.utf8))
        }
        let aside = try names().filter { $0.hasPrefix("doc.keepsake-wal.orphaned-") && !taken.contains($0) }
        #expect(aside.count == 2)
        #expect(Set(aside.map { FileManager.default.contents(atPath: directory.path($0)) }) == Set(logs))
    }

    /// Threads creating a store at once where a killed process left its log: one sets the
    /// log aside and every one opens the store. The others' renames found no log, and their
    /// opens failed "it cannot be moved aside (No such file or directory)" (6 of 240).
    @Test func threadsCreatingOneStoreOverAnOrphanedLogAllOpenIt() async throws {
        let killed = directory.path("killed.keepsake")
        await #expect(processExitsWith: .signal(SIGKILL)) { [killed = killed as String] in
            try await MainActor.run { try NewStoreFileTests.writeTitlesAndDie(path: killed, count: 20) }
        }
        let log = try Data(contentsOf: URL(fileURLWithPath: killed + "-wal"))
        for round in 0..<60 {
            let path = directory.path("race-\(round).keepsake")
            try log.write(to: URL(fileURLWithPath: path + "-wal"))
            try await StoreFileTests.fourThreadsOpen(path)
            let aside = try names().filter { $0.hasPrefix("race-\(round).keepsake-wal.orphaned-") }
            #expect(aside.count == 1)
            #expect(aside.first.flatMap { FileManager.default.contents(atPath: directory.path($0)) } == log)
        }
    }

    /// Creators of stores in one folder take turns from the check that no file is at the path
    /// until theirs is in place. Without turns, one could find no file, then set aside as
    /// orphaned the log of the store another had just put there and opened — that store's
    /// commits gone with the log's name (the race test above met it under load: a creator's
    /// read failed with SQLite error 522, its log renamed away). Here another creator holds
    /// the turn (a `flock` on the folder, as creators take it) and puts its store in place,
    /// open with a log: the waiting creator, its file built, puts nothing in place meanwhile,
    /// then finds that store and leaves it and its log alone.
    @Test func aCreatorWaitsForItsTurnAndLeavesTheStoreAnotherPutThereAlone() throws {
        let path = directory.path("turns.keepsake")
        let folder = open(directory.url.path, O_RDONLY | O_DIRECTORY)
        #expect(flock(folder, LOCK_EX) == 0)
        let built = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var installed: Result<Bool, KeepsakeError>?
        Thread.detachNewThread {
            installed = Result { () throws(KeepsakeError) -> Bool in
                try NewStoreFile.install(at: path) { temporary in
                    _ = FileManager.default.createFile(atPath: temporary, contents: Data("waiting".utf8))
                    built.signal()
                }
            }
            finished.signal()
        }
        built.wait()
        let waited = finished.wait(timeout: .now() + .milliseconds(200)) == .timedOut
        #expect(waited)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.createFile(atPath: path, contents: Data("other".utf8)))
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data("its log".utf8)))
        close(folder)
        if waited { finished.wait() }
        #expect(try installed?.get() == false)
        #expect(FileManager.default.contents(atPath: path) == Data("other".utf8))
        #expect(FileManager.default.contents(atPath: path + "-wal") == Data("its log".utf8))
        #expect(try names() == ["turns.keepsake", "turns.keepsake-wal"])
    }

    @Test func aFileSystemWithoutHardLinksGetsTheFileRenamedIntoPlace() throws {
        let path = directory.path("doc.keepsake")
        let noHardLinks: NewStoreFile.Link = { _, _ in
            errno = EPERM
            return -1
        }
        let installed = try NewStoreFile.install(at: path, linking: noHardLinks) { temporary in
            #expect(FileManager.default.createFile(atPath: temporary, contents: Data("whole".utf8)))
        }
        #expect(installed)
        #expect(FileManager.default.contents(atPath: path) == Data("whole".utf8))
        #expect(try names() == ["doc.keepsake"])
    }

    @Test(arguments: [false, true])
    func aFilePutThereWhileTheNewOneWasBuiltIsKept(hardLinks: Bool) throws {
        let path = directory.path("doc.keepsake")
        let linking: NewStoreFile.Link =
            hardLinks
            ? { link($0, $1) }
            : { _, _ in
                errno = ENOTSUP
                return -1
            }
        let installed = try NewStoreFile.install(at: path, linking: linking) { temporary in
            #expect(FileManager.default.createFile(atPath: temporary, contents: Data("mine".utf8)))
            // Another process puts its file there meanwhile.
            #expect(FileManager.default.createFile(atPath: path, contents: Data("theirs".utf8)))
        }
        #expect(!installed)
        #expect(FileManager.default.contents(atPath: path) == Data("theirs".utf8))
        #expect(try names() == ["doc.keepsake"])
    }

    @Test func nothingIsBuiltWhenAFileIsAlreadyThere() throws {
        let path = directory.path("doc.keepsake")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("theirs".utf8)))
        var built = false
        #expect(try !NewStoreFile.install(at: path) { _ in built = true })
        #expect(!built)
        #expect(FileManager.default.contents(atPath: path) == Data("theirs".utf8))
    }
}

/// SQLite opens no database whose full path is longer than 504 bytes, and says only that it
/// cannot open the file, with another call's "No such file or directory": Keepsake says why,
/// and makes a store at any path SQLite can open, but beside a name shorter than its own
/// temporary one.
@MainActor @Suite struct LongPathTests {
    let directory = TemporaryDirectory()

    /// A folder in the test's own whose full path is `length` bytes long.
    func folder(length: Int) throws -> String {
        var folder = try #require(realpath(directory.url.path, nil).map { String(cString: $0) })
        while folder.utf8.count < length {
            folder += "/" + String(repeating: "d", count: min(100, length - folder.utf8.count - 1))
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(folder.utf8.count == length)
        return folder
    }

    @Test func theLongestPathSQLiteOpensIsMadeAndOpened() throws {
        #expect(SQLiteConnection.longestPath == 504)
        let name = String(repeating: "n", count: 40) + ".keepsake"
        let path = try folder(length: 504 - name.utf8.count - 1) + "/" + name
        #expect(path.utf8.count == 504)
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "deep"
        try history.append(doc)
        try history.close()
        #expect(try KeepsakeStore(path: path, options: .init(readOnly: true)).value(ofHistory: "doc") == doc)
    }

    @Test func aLongerPathIsRefusedSayingSoAndNothingIsLeft() throws {
        let folder = try folder(length: 490)
        let path = folder + "/" + String(repeating: "n", count: 5) + ".keepsake"
        #expect(path.utf8.count == 505)
        let reason =
            "its full path is 505 bytes long: longer than the 504 bytes SQLite opens; give it a shorter path"
        #expect(throws: KeepsakeError.cannotOpen(path: path, reason: reason)) {
            try KeepsakeStore(path: path)
        }
        #expect(throws: KeepsakeError.cannotOpen(path: path, reason: reason)) {
            try KeepsakeStore(path: path, options: .init(readOnly: true))
        }
        // A copy to such a path too: SQLite would make it, and never open it again.
        let short = directory.path("short.keepsake")
        try KeepsakeStore(path: short).close()
        #expect(throws: KeepsakeError.cannotOpen(path: path, reason: reason)) {
            try KeepsakeStore(path: short).copy(to: path)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
    }

    /// A document moved into a deep folder: the store is there, whole, and not opened.
    @Test func aStoreMovedWhereItsPathIsTooLongIsRefusedUntouched() throws {
        let short = directory.path("doc.keepsake")
        let history = try KeepsakeStore(path: short).history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "moved"
        try history.append(doc)
        try history.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: short))
        let path = try folder(length: 500) + "/doc.keepsake"
        try FileManager.default.moveItem(atPath: short, toPath: path)
        for readOnly in [false, true] {
            #expect(
                throws: KeepsakeError.cannotOpen(
                    path: path,
                    reason:
                        "its full path is 513 bytes long: longer than the 504 bytes SQLite opens; give it a shorter path"
                )
            ) { try KeepsakeStore(path: path, options: .init(readOnly: readOnly)) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        try FileManager.default.moveItem(atPath: path, toPath: short)
        #expect(try KeepsakeStore(path: short).value(ofHistory: "doc") == doc)
    }

    /// A short name in a folder that leaves no room for the temporary name it is made under.
    @Test func aNameShorterThanTheTemporaryOneSaysWhyItCannotBeMade() throws {
        let folder = try folder(length: 480)
        let path = folder + "/x.keepsake"
        #expect(path.utf8.count == 491)
        let error = #expect(throws: KeepsakeError.self) { try KeepsakeStore(path: path) }
        guard case .cannotOpen(path, let reason) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        let pid = "\(ProcessInfo.processInfo.processIdentifier)"
        #expect(
            reason == """
                a new store is built beside it under a temporary name, whose full path is \
                \(480 + 1 + 19 + pid.count + 1 + 8) bytes long: longer than the 504 bytes SQLite opens; \
                give the store a shorter path
                """)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
    }
}
