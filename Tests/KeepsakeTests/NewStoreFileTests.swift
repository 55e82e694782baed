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
