import Foundation
import Testing

@testable import Keepsake

/// A store that another process changes while it is open: an app update upgrades it (a
/// server's rolling update runs old and new code side by side; a viewer keeps a document open
/// while the app is updated), or a writer appears beside a reader that opened the file while
/// nothing wrote to it.
@MainActor @Suite struct ChangedUnderAnOpenStoreTests {
    let directory = TemporaryDirectory()

    /// Another connection sets the store's schema version to one newer than this code knows.
    func upgradeByNewerCode(_ path: String) throws {
        let other = try SQLiteConnection(path: path)
        try other.execute("PRAGMA user_version = \(KeepsakeStore.schemaVersion + 1)")
        other.close()
    }

    func isNewerSchema(_ error: any Error, _ path: String) -> Bool {
        let newer = KeepsakeError.newerSchema(
            path: path, version: KeepsakeStore.schemaVersion + 1, supported: KeepsakeStore.schemaVersion)
        if let error = error as? KeepsakeError { return error == newer }
        if case .storage(let failure) = error as? ReversionError {
            return failure.error as? KeepsakeError == newer
        }
        return false
    }

    /// Once newer code has upgraded the store, this code's writes and reads are refused, as
    /// opening it would be: it would write rows without what the newer code checks, and read
    /// what the newer schema may keep elsewhere. Nothing is written, and nothing moves.
    @Test func aStoreUpgradedByNewerCodeIsRefusedFromThenOn() throws {
        let path = directory.path("upgraded.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: "a", maximumVersions: nil)
        try history.append("b")
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try reader.history("doc", initialValue: "", maximumVersions: nil).value == "b")

        try upgradeByNewerCode(path)
        #expect { try history.append("c") } throws: { isNewerSchema($0, path) }
        #expect { try history.undo() } throws: { isNewerSchema($0, path) }
        #expect { try Caretaker(store: store).save("c", as: "saved") } throws: { isNewerSchema($0, path) }
        #expect { try store.history("other", initialValue: "x") } throws: { isNewerSchema($0, path) }
        #expect { try reader.history("doc", initialValue: "", maximumVersions: nil) } throws: {
            isNewerSchema($0, path)
        }
        #expect(history.value == "b" && history.versionCount == 1)
        store.close()
        reader.close()

        let file = try SQLiteConnection(path: path, readOnly: true)
        #expect(try file.scalarInt("SELECT count(*) FROM version") == 1)
        #expect(try file.scalarInt("SELECT count(*) FROM snapshot") == 0)
        #expect(try file.scalarInt("SELECT count(*) FROM history") == 1)
        #expect(try file.query("PRAGMA integrity_check") { $0.text(0) } == ["ok"])
    }

    /// A store of an older schema, opened read-only (and so read as it is, through views), that
    /// an updated app upgrades meanwhile is read at its new schema from then on: before, the
    /// reader's views named a table the upgrade had removed.
    @Test(arguments: [false, true])
    func aReaderOfAnOlderSchemaFollowsTheUpgrade(readerIsImmutable: Bool) throws {
        let path = directory.path("old.keepsake")
        try FileManager.default.copyItem(atPath: GoldenStores.url(schema: 3).path, toPath: path)
        // A connection in WAL mode that has committed keeps a log holding pages beside the
        // file, so the reader reads through it.
        let keeper = readerIsImmutable ? nil : try SQLiteConnection(path: path)
        if let keeper {
            _ = try keeper.scalarText("PRAGMA journal_mode = WAL")
            try keeper.execute("PRAGMA user_version = 3")
            #expect((FileState.logSize(of: path) ?? 0) > 0)
        }
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(reader.database.read { $0.isImmutable } == readerIsImmutable)
        let top = GoldenSchema1.golden[GoldenSchema1.goldenAppends - GoldenSchema1.goldenUndone]
        #expect(try reader.history("golden", initialValue: GoldenDocument.initial).value == top)
        #expect(try reader.summary().schemaVersion == 3)

        let writer = try KeepsakeStore(path: path)
        #expect(try writer.summary().schemaVersion == KeepsakeStore.schemaVersion)
        var edited = top
        edited.title = "Edited after the update"
        try writer.history("golden", initialValue: GoldenDocument.initial).append(edited)

        let history = try reader.history("golden", initialValue: GoldenDocument.initial)
        #expect(history.value == edited)
        #expect(history.versionCount == GoldenSchema1.goldenAppends - GoldenSchema1.goldenUndone + 1)
        #expect(try history.tags().undo.count == history.versionCount + 1)
        #expect(try reader.summary().schemaVersion == KeepsakeStore.schemaVersion)
        #expect(try reader.verify().problems == [])
        writer.close()
        reader.close()
        keeper?.close()
    }

    /// A document opened by several processes at the same moment, whose history holds a change
    /// a debounce held when the last writer stopped and is opened with a new limit: the first to
    /// write records both, and the others, refused that write as a conflict, read the history
    /// again instead of refusing to open (before, every process but one failed with
    /// `.historyConflict`). The held change is recorded once.
    @Test(arguments: 0..<4)
    func aHistoryOpenedByFourProcessesAtOnceOpensInEach(round: Int) async throws {
        let path = directory.path("opened-at-once.keepsake")
        try FileManager.default.copyItem(atPath: GoldenSchema2.url.path, toPath: path)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    await #expect(processExitsWith: .success) { [path = path as String] in
                        let history = try KeepsakeStore(path: path).history(
                            "typing", initialValue: GoldenDocument.initial, maximumVersions: 500)
                        guard history.value.title == GoldenSchema2.heldTitle, history.versionCount == 2 else {
                            exit(1)
                        }
                    }
                }
            }
        }
        let store = try KeepsakeStore(path: path)
        let history = try store.history("typing", initialValue: GoldenDocument.initial, maximumVersions: 500)
        #expect(history.value.title == GoldenSchema2.heldTitle && history.versionCount == 2)
        #expect(try history.undo().title == "Recorded")
        #expect(try history.undo() == GoldenDocument.initial)
        try history.checkInvariants()
        #expect(
            try store.read { connection, _ in
                try connection.scalarInt("SELECT maximum_versions FROM history WHERE name = 'typing'")
            } == 500)
        #expect(try store.verify().problems == [])
    }

    /// A reader that opened the file while nothing wrote to it reads it as immutable (no lock,
    /// nothing created beside it), and SQLite then never looks for changes: a writer's commits,
    /// checkpointed into the file, would meet the reader's cached pages. The reader opens the
    /// file again once it has been touched, and reads what the writer committed.
    @Test func anImmutableReaderReadsWhatAWriterCommitsSince() throws {
        let path = directory.path("shared.keepsake")
        let first = try KeepsakeStore(path: path)
        let seed = try first.history("doc", initialValue: "", maximumVersions: nil)
        for n in 0..<50 { try seed.append("v\(n)") }
        first.close()
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(reader.database.read { $0.isImmutable })
        #expect(try reader.history("doc", initialValue: "", maximumVersions: nil).value == "v49")

        let writer = try KeepsakeStore(path: path)
        let history = try writer.history("doc", initialValue: "", maximumVersions: nil)
        for n in 0..<2_000 { try history.append(String(repeating: "w\(n) ", count: 40)) }
        try writer.database.read { _ = try $0.query("PRAGMA wal_checkpoint(TRUNCATE)") { _ in 0 } }
        let newest = String(repeating: "w1999 ", count: 40)
        let read = try reader.history("doc", initialValue: "", maximumVersions: nil)
        // Opened again: through the log, or as immutable again when the checkpoint emptied it.
        #expect(read.value == newest && read.versionCount == 2_050)
        writer.close()
        #expect(try reader.history("doc", initialValue: "", maximumVersions: nil).value == newest)
        #expect(try reader.verify().problems == [])
    }

    /// A write-ahead log that holds no page leaves every commit in the file: a reader opened
    /// then reads the file as immutable, even beside an open writer, and reads the writer's
    /// next commit — which only the log holds — through the log, opened again once the log has
    /// grown. (The writer here is a bare connection that never checkpoints, so that the commit
    /// stays in the log.)
    @Test func aReaderBesideAnEmptyLogReadsTheFileAndThenTheWritersCommits() throws {
        let path = directory.path("empty-log.keepsake")
        let first = try KeepsakeStore(path: path)
        try first.history("doc", initialValue: "a", maximumVersions: 10).append("b")
        first.close()
        let writer = try SQLiteConnection(path: path)
        defer { writer.close() }
        _ = try writer.scalarText("PRAGMA journal_mode = WAL")
        _ = try writer.scalarInt("PRAGMA wal_autocheckpoint = 0")
        _ = try writer.scalarInt("SELECT count(*) FROM history")
        #expect(FileState.logSize(of: path) == 0)
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(reader.database.read { $0.isImmutable })
        let limit = {
            try reader.read { connection, _ in
                try connection.scalarInt("SELECT maximum_versions FROM history")
            }
        }
        #expect(try limit() == 10)
        try writer.execute("UPDATE history SET maximum_versions = 77")
        #expect((FileState.logSize(of: path) ?? 0) > 0)
        #expect(try limit() == 77)
        #expect(!reader.database.read { $0.isImmutable })
        #expect(try reader.verify().problems == [])
    }

    /// A reader of the immutable file opened by a relative path, in a process that has changed
    /// its working directory since: opened again, it is the same file (before, the relative
    /// path named a file that was not there, and reads failed with `.cannotOpen`).
    @Test func anImmutableReaderOpenedByARelativePathReopensTheSameFile() async throws {
        let path = directory.path("relative.keepsake")
        let first = try KeepsakeStore(path: path)
        try first.history("doc", initialValue: "a", maximumVersions: nil).append("b")
        first.close()
        await #expect(processExitsWith: .success) { [path = path as String] in
            let folder = (path as NSString).deletingLastPathComponent
            guard FileManager.default.changeCurrentDirectoryPath(folder) else { exit(2) }
            let reader = try KeepsakeStore(path: "relative.keepsake", options: .init(readOnly: true))
            guard FileManager.default.changeCurrentDirectoryPath("/") else { exit(3) }
            let writer = try KeepsakeStore(path: path)
            try writer.history("doc", initialValue: "a", maximumVersions: nil).append("c")
            writer.close()
            let history = try reader.history("doc", initialValue: "a", maximumVersions: nil)
            exit(history.value == "c" && history.versionCount == 2 ? 0 : 1)
        }
    }

    /// A writer that touches the file while an immutable reader reads it: the read runs again,
    /// on a connection opened anew, and gives the state after the write.
    @Test func anImmutableReadTouchedWhileItRunsRunsAgain() throws {
        let path = directory.path("touched.keepsake")
        let first = try KeepsakeStore(path: path)
        try first.history("doc", initialValue: "a", maximumVersions: nil).append("b")
        first.close()
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        var runs = 0
        let count = try reader.read { connection, _ in
            runs += 1
            if runs == 1 {
                let writer = try KeepsakeStore(path: path)
                try writer.history("doc", initialValue: "a", maximumVersions: nil).append("c")
                writer.close()
            }
            return try connection.scalarInt("SELECT count(*) FROM version")
        }
        #expect(runs == 2)
        #expect(count == 2)
    }

    /// Opens the store at `path` for writing, appends `value` to history "doc" and closes it,
    /// as a writer that opens the store for each write does.
    static func openWriteAndClose(_ value: String, at path: String) throws {
        let writer = try KeepsakeStore(path: path)
        try writer.history("doc", initialValue: "a", maximumVersions: nil).append(value)
        writer.close()
    }

    /// A writer that opens the store, writes and closes it again and again (a server that opens
    /// it for each request, a tool run in a loop) removes its log at each close, so the log is
    /// gone whenever a reader of the immutable file opens it again. The reader used to open it
    /// as immutable again, each of the writer's commits made the read run again, and after
    /// five the read failed with `.busy`: `keepsake verify` beside such a writer failed 14
    /// times in 600 runs, saying another connection had kept the file locked. Once a writer has
    /// touched the file, the reader now opens it through its log, and reads on beside the
    /// writer's commits; closed, the store opens whole.
    @Test func aReaderBesideAWriterThatKeepsClosingTheStoreReadsOn() throws {
        let path = directory.path("reopened.keepsake")
        func write(_ value: String) throws { try Self.openWriteAndClose(value, at: path) }
        try write("b")
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(reader.database.read { $0.isImmutable })
        var runs = 0
        let count = try reader.read { connection, _ in
            runs += 1
            try write("c\(runs)")  // at every run, a writer opens, writes and closes meanwhile
            return try connection.scalarInt("SELECT count(*) FROM version")
        }
        #expect(runs == 2)
        #expect(count == 3)
        #expect(!reader.database.read { $0.isImmutable })
        try write("d")
        #expect(try reader.history("doc", initialValue: "a", maximumVersions: nil).value == "d")
        #expect(try reader.verify().problems == [])
        reader.close()
        let history = try KeepsakeStore(path: path).history("doc", initialValue: "a", maximumVersions: nil)
        #expect(history.value == "d" && history.versionCount == 4)
        try history.checkInvariants()
    }

    /// A reader that cannot read the file through its log when a writer touches it during a
    /// read (a folder where it may not create the log's index) reads it as immutable again, as
    /// before: the writer's commits are in the file once the writer has closed. A writer that
    /// touches it under each of five reads makes the read give up with `.busy`, saying so (it
    /// used to say another connection had kept the file locked, and that nothing was written).
    @Test(.enabled(if: FileLock.isAvailable, "needs root and chattr"))
    func aReaderThatCannotReadTheLogReadsTheFileAgain() throws {
        let folder = directory.path("locked")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = folder + "/store.keepsake"
        func write(_ value: String) throws { try Self.openWriteAndClose(value, at: path) }
        try write("b")
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        defer { _ = FileLock.set(folder, locked: false) }
        var runs = 0
        let count = try reader.read { connection, _ in
            runs += 1
            if runs == 1 {
                try write("c")
                #expect(FileLock.set(folder, locked: true))
            }
            return try connection.scalarInt("SELECT count(*) FROM version")
        }
        #expect(runs == 2)
        #expect(count == 2)
        #expect(reader.database.read { $0.isImmutable })
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["store.keepsake"])

        // A writer at work under every one of five reads: the read gives up, saying so.
        var tries = 0
        let changing = SQLiteError(
            code: .busy,
            message:
                "a writer changed the file under each of five reads: \(path) could not be read; try again")
        #expect(throws: KeepsakeError.sqlite(changing)) {
            try reader.read { connection, _ in
                tries += 1
                #expect(FileLock.set(folder, locked: false))
                try write("d\(tries)")
                #expect(FileLock.set(folder, locked: true))
                return try connection.scalarInt("SELECT count(*) FROM version")
            }
        }
        #expect(tries == 5)
    }
}
