import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

#if canImport(Glibc)
    import Glibc
#endif

/// A small file system of our own, mounted for one test: a full disk, read-only media.
final class TemporaryMount {
    let path: String

    /// Mounts a tmpfs of `size` (such as `"2m"`); `nil` where this machine does not allow it.
    init?(size: String) {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "keepsake-mount-\(UUID().uuidString)"
            )
            .path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.mount(["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) else {
            try? FileManager.default.removeItem(atPath: path)
            return nil
        }
    }

    func remountReadOnly() -> Bool { Self.mount(["-o", "remount,ro", path]) }

    /// Gives the file system a new size (such as `"8m"`): room freed, or taken away.
    func resize(_ size: String) -> Bool { Self.mount(["-o", "remount,size=\(size)", path]) }

    /// Takes every byte left with a file, `filler` in the mount: returns its path (removing the
    /// file frees the room).
    func fill() throws -> String {
        let filler = path + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try handle.close()
        return filler
    }

    deinit {
        _ = Self.run("/bin/umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }

    static func mount(_ arguments: [String]) -> Bool { run("/bin/mount", arguments) }

    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Whether tmpfs can be mounted here (root in a namespace that allows it).
    static let isAvailable: Bool = TemporaryMount(size: "1m") != nil
}

/// Sets or clears a file's or folder's immutable flag (`chattr +i`), which even root cannot
/// write past: a locked file, as the Finder's "Locked" makes one.
enum FileLock {
    static func set(_ path: String, locked: Bool) -> Bool {
        TemporaryMount.run("/usr/bin/chattr", [locked ? "+i" : "-i", path])
    }

    /// Whether this machine lets the tests lock a file (root, on a file system with the flag).
    static let isAvailable: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keepsake-lock-\(UUID().uuidString)"
        ).path
        guard FileManager.default.createFile(atPath: probe, contents: Data()) else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard set(probe, locked: true) else { return false }
        let refused = open(probe, O_WRONLY) < 0
        _ = set(probe, locked: false)
        return refused
    }()
}

/// The store file in its surroundings: read-only opens, read-only media, a full disk,
/// leftovers of a crash, large values in changes, missing blobs.
@MainActor @Suite struct StoreFileTests {
    let directory = TemporaryDirectory()

    func names(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    func writeStore(at path: String) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "written"
        try history.append(doc)
        try Caretaker(store: history.durableStorage!.store).save(doc, as: "saved")
    }

    /// Opens the store ``writeStore(at:)`` wrote for writing, and appends title "edited" to
    /// history "doc": the store is written again.
    func appendEdited(at path: String) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "edited"
        try history.append(doc)
        #expect(history.versionCount == 2 && history.value.title == "edited")
        try history.checkInvariants()
    }

    @Test func aReadOnlyOpenLeavesTheFolderAsItWas() throws {
        let path = directory.path("closed.keepsake")
        try writeStore(at: path)
        let before = try names(in: directory.url.path)
        #expect(before == ["closed.keepsake"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try store.history("doc", initialValue: Doc.empty).value.title == "written")
        #expect(try store.verify().isOK)
        store.close()
        #expect(try names(in: directory.url.path) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// Every write to a store opened read-only is refused before SQLite is asked, with an error
    /// that says why (SQLite's own named only the statement: "attempt to write a readonly
    /// database — while executing `UPDATE version …`"); nothing moves, nothing is written.
    @Test func aReadOnlyStoreRefusesEveryWriteSayingWhy() throws {
        let path = directory.path("viewed.keepsake")
        try writeStore(at: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let history = try store.history("doc", initialValue: Doc.empty)
        let refusal = KeepsakeError.sqlite(
            SQLiteError(
                code: .readOnly, message: "\(path) is open read-only (Options.readOnly); nothing was written")
        )
        var edited = history.value
        edited.title = "edited"
        #expect(throws: refusal) { try history.append(edited) }
        #expect(throws: refusal) { try history.undo() }
        #expect(throws: refusal) { try history.tag("t") }
        #expect(throws: refusal) { try history.pushNewScope() }
        #expect(throws: refusal) { try history.writeCheckpoint() }
        #expect(throws: refusal) { try store.history("new", initialValue: Doc.empty) }
        #expect(throws: refusal) { try Caretaker(store: store).save(edited, as: "other") }
        #expect(throws: refusal) { try Caretaker(store: store).delete("saved", of: Doc.self) }
        #expect(throws: refusal) { try store.compact() }
        #expect(history.value.title == "written" && history.versionCount == 1 && history.hasUndo)
        #expect(try Caretaker(store: store).restore("saved", as: Doc.self)?.title == "written")
        store.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test(.enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"))
    func aStoreOnReadOnlyMediaReadsAndRefusesWritesWithATypedError() throws {
        let mount = try #require(TemporaryMount(size: "4m"))
        let path = mount.path + "/media.keepsake"
        try writeStore(at: path)
        #expect(mount.remountReadOnly())
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try store.history("doc", initialValue: Doc.empty).value.title == "written")
        #expect(try Caretaker(store: store).restore("saved", as: Doc.self)?.title == "written")
        #expect(try store.verify().isOK)
        #expect(try names(in: mount.path) == ["media.keepsake"])
        // SQLite opens it anyway, read-only without saying so, and the first read failed for
        // want of the log's index: "unable to open database file (No such file or directory)".
        #expect(throws: Self.unwritableFile(path)) { try KeepsakeStore(path: path) }
        #expect(try names(in: mount.path) == ["media.keepsake"])
    }

    /// A store opened through a symbolic link to its file, after a writer was killed: SQLite
    /// keeps the log beside the file the link points to, and the store looks for it there.
    /// Before, looking beside the link found no log, and a read-only open read the file as
    /// immutable: history "doc" at version 30 of 60, silently.
    @Test func aStoreOpenedThroughASymbolicLinkReadsItsLog() async throws {
        try FileManager.default.createDirectory(
            atPath: directory.path("real"), withIntermediateDirectories: true)
        let (file, link) = (directory.path("real/doc.keepsake"), directory.path("doc.keepsake"))
        try StoreCopyTests.appendTitles(path: file, 1...30, thenDie: false)
        await #expect(processExitsWith: .signal(SIGKILL)) { [file = file as String] in
            try await MainActor.run { try StoreCopyTests.appendTitles(path: file, 31...60, thenDie: true) }
        }
        #expect(FileState.logHoldsFrames(of: file))
        #expect(symlink("real/doc.keepsake", link) == 0)

        let viewer = try KeepsakeStore(path: link, options: .init(readOnly: true))
        let viewed = try viewer.history("doc", initialValue: Doc.empty)
        #expect(viewed.value.title == "v60" && viewed.versionCount == 60)
        let size = try #require(FileState(path: file)).size + (FileState.logSize(of: file) ?? 0)
        #expect(try viewer.summary().fileSize == Int(size))
        #expect(try viewer.verify().isOK)
        viewer.close()

        let store = try KeepsakeStore(path: link)
        let history = try store.history("doc", initialValue: Doc.empty)
        #expect(history.value.title == "v60" && history.versionCount == 60)
        var doc = history.value
        doc.title = "v61"
        try history.append(doc)
        try history.checkInvariants()
        #expect(try store.verify().isOK)
        store.close()
        #expect(try names(in: directory.url.path) == ["doc.keepsake", "real"])
        let reopened = try KeepsakeStore(path: file, options: .init(readOnly: true))
        #expect(try reopened.history("doc", initialValue: Doc.empty).value.title == "v61")
    }

    /// A symbolic link to no file yet: the store is made where it points, whole (through
    /// `NewStoreFile`, where SQLite made it directly), and sized there: its summary gave the
    /// size of the link itself.
    @Test func aStoreCreatedThroughALinkToNoFileIsMadeWhereItPoints() throws {
        try FileManager.default.createDirectory(
            atPath: directory.path("real"), withIntermediateDirectories: true)
        let (file, link) = (directory.path("real/doc.keepsake"), directory.path("doc.keepsake"))
        #expect(symlink("real/doc.keepsake", link) == 0)
        let store = try KeepsakeStore(path: link)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "one"
        try history.append(doc)
        store.checkpointer?.waitUntilIdle()
        let size = try #require(FileState(path: file)).size + (FileState.logSize(of: file) ?? 0)
        #expect(try store.summary().fileSize == Int(size))
        try history.close()
        store.close()
        #expect(try names(in: directory.path("real")) == ["doc.keepsake"])
        let reopened = try KeepsakeStore(path: file, options: .init(readOnly: true))
        #expect(try reopened.history("doc", initialValue: Doc.empty).value.title == "one")
    }

    /// A file with two names (a hard link: `ln`, `cp -al`) is not written through either:
    /// SQLite keeps a log beside each name, and a scratch run of two writers, one through each
    /// name, left a file that read "b300" through one name and "A300" through the other, each
    /// passing `verify()`. It is read, and copied to be written.
    @Test func aFileWithTwoNamesIsReadButNotWritten() throws {
        let (path, other) = (directory.path("doc.keepsake"), directory.path("other.keepsake"))
        try writeStore(at: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(link(path, other) == 0)
        for name in [path, other] {
            #expect(
                throws: KeepsakeError.cannotOpen(
                    path: name,
                    reason: """
                        the file has 2 names (hard links), and SQLite keeps the write-ahead log beside the \
                        name it opens: writers through two names would keep two logs and corrupt the file; \
                        open it with KeepsakeStore.Options(readOnly: true) to read it, or copy it from there \
                        (copy(to:)) and write the copy
                        """)
            ) { try KeepsakeStore(path: name) }
            #expect(throws: KeepsakeError.self) {
                do throws(KeepsakeError) { _ = try KeepsakeStore(path: name) } catch {
                    #expect(error.remedy == .openReadOnly)
                    throw error
                }
            }
        }
        let viewer = try KeepsakeStore(path: other, options: .init(readOnly: true))
        #expect(try viewer.history("doc", initialValue: Doc.empty).value.title == "written")
        let copy = directory.path("copy.keepsake")
        try viewer.copy(to: copy)
        viewer.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try names(in: directory.url.path) == ["copy.keepsake", "doc.keepsake", "other.keepsake"])

        try appendEdited(at: copy)
        // Once the other name is gone, the file is written again.
        #expect(unlink(other) == 0)
        try appendEdited(at: path)
    }

    /// A new store has two names for a moment, while it is linked into place: threads that
    /// open the path at once, one of them creating it, wait that moment out and all open it.
    @Test func threadsCreatingOneStoreAtOnceAllOpenIt() async throws {
        for round in 0..<25 {
            try await Self.fourThreadsOpen(directory.path("race-\(round).keepsake"))
        }
    }

    /// Four threads at once open the store at `path` (creating it when there is none), each
    /// opening a history of its own ("h0" to "h3"), and close it: every one opens it, and the
    /// store then holds the four.
    static func fourThreadsOpen(_ path: String) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    let store = try KeepsakeStore(path: path)
                    defer { store.close() }
                    _ = try store.history("h\(task)", initialValue: Doc.empty)
                }
            }
            try await group.waitForAll()
        }
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        defer { store.close() }
        #expect(try store.historyNames() == ["h0", "h1", "h2", "h3"])
        #expect(try store.verify().isOK)
    }

    /// Threads opening one store for writing or reading and closing it, over and over: a
    /// close removes the log and its index, which another open had just found there, and that
    /// open was refused "this process may not write it" (in every run of this test before the
    /// fix; 11 of 1,200 opens in a scratch run).
    @Test func threadsOpeningAndClosingOneStoreAllOpenIt() async throws {
        let path = directory.path("doc.keepsake")
        try KeepsakeStore(path: path).close()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<6 {
                group.addTask {
                    for round in 0..<300 {
                        guard task < 4 else {
                            let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
                            defer { store.close() }
                            _ = try store.summary()
                            continue
                        }
                        let store = try KeepsakeStore(path: path)
                        defer { store.close() }
                        let history = try store.history("h\(task)", initialValue: Doc.empty)
                        // Most opens only read: the more closes, the more races.
                        guard round % 10 == 9 else { continue }
                        var doc = history.value
                        doc.title = "\(task)-\(round)"
                        try history.append(doc)
                    }
                }
            }
            try await group.waitForAll()
        }
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        for task in 0..<4 {
            let history = try store.history("h\(task)", initialValue: Doc.empty)
            #expect(history.value.title == "\(task)-299" && history.versionCount == 30)
        }
        #expect(try store.verify().isOK)
        #expect(try store.integrityCheck() == ["ok"])
    }

    /// A named pipe at the path: reading it waited for a writer, and the open hung for good
    /// (`keepsake inspect` too). It is refused at once, as a device file, an empty path and a
    /// path ending with a slash are (as a copy's or a salvage's output too); the child process
    /// gives up after 10 s rather than hang the tests.
    @Test func aNamedPipeOrADeviceIsRefusedAtOnce() async throws {
        let pipe = directory.path("pipe.keepsake")
        #expect(mkfifo(pipe, 0o600) == 0)
        await #expect(processExitsWith: .success) { [pipe = pipe as String] in
            alarm(10)
            for readOnly in [false, true] {
                do {
                    _ = try KeepsakeStore(path: pipe, options: .init(readOnly: readOnly))
                    exit(1)
                } catch {
                    let expected = KeepsakeError.cannotOpen(
                        path: pipe, reason: "it is not a regular file (it is a named pipe)")
                    if (error as? KeepsakeError) != expected { exit(2) }
                }
            }
        }
        #expect(
            throws: KeepsakeError.cannotOpen(
                path: "/dev/null", reason: "it is not a regular file (it is a character device)")
        ) {
            try KeepsakeStore(path: "/dev/null", options: .init(readOnly: true))
        }
        // A store's path with a slash after it: SQLite opened the store, past every check
        // (which found no file there), and wrote it; read-only, it said "no such file".
        let store = directory.path("slashed.keepsake")
        try writeStore(at: store)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        for (path, readOnly) in [(store + "/", false), (store + "/", true), (store + "-new/", false)] {
            #expect(
                throws: KeepsakeError.cannotOpen(
                    path: path, reason: "the path ends with a slash, which names a directory")
            ) { try KeepsakeStore(path: path, options: .init(readOnly: readOnly)) }
        }
        let reader = try KeepsakeStore(path: store, options: .init(readOnly: true))
        for output in [store + "-copy/", store + "/"] {
            let refusal = KeepsakeError.cannotOpen(
                path: output, reason: "the path ends with a slash, which names a directory")
            #expect(throws: refusal) { try reader.copy(to: output) }
            #expect(throws: refusal) { try KeepsakeStore.salvage(from: store, to: output) }
        }
        reader.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == bytes)
        #expect(try names(in: directory.url.path).filter { $0.hasPrefix("slashed") } == ["slashed.keepsake"])
        // An empty path said "Cannot open : No such file or directory", after making and
        // removing a file named ".creating-…" in the working directory.
        for readOnly in [false, true] {
            #expect(throws: KeepsakeError.cannotOpen(path: "", reason: "the path is empty")) {
                try KeepsakeStore(path: "", options: .init(readOnly: readOnly))
            }
        }
    }

    /// The files SQLite keeps beside a store, by the suffix of their names, as refusals name them.
    static let beside = [
        "-wal": "the store's write-ahead log", "-shm": "the index of the store's write-ahead log",
        "-journal": "the store's rollback journal",
    ]

    /// A directory or a named pipe where SQLite keeps a file beside the store: opened for
    /// writing, the store said "disk I/O error" naming the store itself, and with a pipe at
    /// `-journal` the open hung for good. Refused at once, naming what is where, and nothing
    /// is written; read-only, with no log to read, the store reads as its file holds it; with
    /// it moved away, the store opens. The child process gives up after 10 s rather than hang.
    @Test(arguments: ["-wal", "-shm", "-journal"], [true, false])
    func somethingElseWhereSQLiteKeepsAFileBesideIsRefusedAtOnce(suffix: String, pipe: Bool) async throws {
        let path = directory.path("beside.keepsake")
        try writeStore(at: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let junk = path + suffix
        if pipe {
            #expect(mkfifo(junk, 0o600) == 0)
        } else {
            try FileManager.default.createDirectory(atPath: junk, withIntermediateDirectories: false)
        }
        let reason =
            "SQLite keeps \(Self.beside[suffix]!) at \(junk), and \(pipe ? "a named pipe" : "a directory") is there: move it away"
        await #expect(processExitsWith: .success) { [path = path as String, reason = reason as String] in
            alarm(10)
            do {
                _ = try KeepsakeStore(path: path)
                exit(1)
            } catch {
                if (error as? KeepsakeError) != .cannotOpen(path: path, reason: reason) { exit(2) }
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try reader.value(ofHistory: "doc", as: Doc.self)?.title == "written")
        reader.close()
        try FileManager.default.removeItem(atPath: junk)
        let store = try KeepsakeStore(path: path)
        #expect(try store.history("doc", initialValue: Doc.empty).value.title == "written")
        #expect(try store.verify().isOK)
    }

    /// A write-ahead log or its index this process may not write (locked here; another
    /// user's, or made read-only, elsewhere) beside a store it may: the store opened for writing
    /// and failed "attempt to write a readonly database" at the first edit. Refused at open,
    /// saying which file and how to read it; read-only, it reads as before.
    @Test(.enabled(if: FileLock.isAvailable, "needs root and chattr"), arguments: ["-wal", "-shm"])
    func aLogThisProcessMayNotWriteIsRefusedAtOpen(suffix: String) throws {
        let path = directory.path("locked-log.keepsake")
        try writeStore(at: path)
        // The log and its index as a process killed while it has the store open leaves them.
        // (Kept open in this process instead, the index would be mapped here, writable, before
        // it is locked: SQLite's next write to it is a bus error.)
        let writer = try KeepsakeStore(path: path)
        let left = try ["-wal", "-shm"].map { try Data(contentsOf: URL(fileURLWithPath: path + $0)) }
        writer.close()
        for (suffix, bytes) in zip(["-wal", "-shm"], left) {
            try bytes.write(to: URL(fileURLWithPath: path + suffix))
        }
        #expect(FileLock.set(path + suffix, locked: true))
        defer { _ = FileLock.set(path + suffix, locked: false) }
        #expect(
            throws: KeepsakeError.cannotOpen(
                path: path,
                reason: """
                    SQLite keeps \(Self.beside[suffix]!) at \(path + suffix), and this process may not write it; \
                    open it with KeepsakeStore.Options(readOnly: true) to read it
                    """)
        ) { try KeepsakeStore(path: path) }
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try reader.value(ofHistory: "doc", as: Doc.self)?.title == "written")
        reader.close()
        #expect(FileLock.set(path + suffix, locked: false))
        let store = try KeepsakeStore(path: path)
        #expect(try store.history("doc", initialValue: Doc.empty).value.title == "written")
        #expect(try store.verify().isOK)
    }

    /// The error of a store opened for writing whose file cannot be written.
    static func unwritableFile(_ path: String) -> KeepsakeError {
        .cannotOpen(
            path: path,
            reason: """
                the file cannot be written (it is locked, on read-only media, or not permitted); \
                open it with KeepsakeStore.Options(readOnly: true) to read it
                """)
    }

    /// A locked file (`chattr +i` here; the Finder's "Locked" on a Mac), then a locked
    /// folder: opening for writing is refused at once, saying what to do, rather than at the
    /// app's first edit; read-only opens read it; and nothing is left beside it.
    @Test(.enabled(if: FileLock.isAvailable, "needs root and chattr"))
    func aLockedFileOrFolderIsRefusedForWritingAndReadsReadOnly() throws {
        let folder = directory.path("locked")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/doc.keepsake"
        try writeStore(at: path)
        #expect(try names(in: folder) == ["doc.keepsake"])

        #expect(FileLock.set(path, locked: true))
        // Before, this opened, and the first append failed: "attempt to write a readonly
        // database — while executing `INSERT INTO version …`".
        #expect(throws: Self.unwritableFile(path)) { try KeepsakeStore(path: path) }
        #expect(try names(in: folder) == ["doc.keepsake"])
        let viewed = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try viewed.history("doc", initialValue: Doc.empty).value.title == "written")
        viewed.close()
        #expect(FileLock.set(path, locked: false))

        #expect(FileLock.set(folder, locked: true))
        let unwritableFolder = "the folder \(folder) cannot be written (Operation not permitted)"
        #expect(
            throws: KeepsakeError.cannotOpen(
                path: path,
                reason: """
                    \(unwritableFolder), and a store open for writing keeps its write-ahead log beside \
                    the file (doc.keepsake-wal); open it with KeepsakeStore.Options(readOnly: true) to read it
                    """)
        ) { try KeepsakeStore(path: path) }
        // SQLite's reason for these was "unable to open database file (No such file or directory)".
        let other = folder + "/new.keepsake"
        #expect(throws: KeepsakeError.cannotOpen(path: other, reason: unwritableFolder)) {
            try KeepsakeStore(path: other)
        }
        let viewed2 = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try viewed2.history("doc", initialValue: Doc.empty).value.title == "written")
        #expect(throws: KeepsakeError.cannotOpen(path: other, reason: unwritableFolder)) {
            try viewed2.copy(to: other)
        }
        viewed2.close()
        #expect(try names(in: folder) == ["doc.keepsake"])
        #expect(FileLock.set(folder, locked: false))

        try appendEdited(at: path)
    }

    @Test(.enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"))
    func aFullDiskFailsTheWriteTypedAndTheStoreReopensWithEverythingCommitted() throws {
        let mount = try #require(TemporaryMount(size: "3m"))
        let path = mount.path + "/full.keepsake"
        let filler = mount.path + "/filler"
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        // Most of the disk taken, so that the log and the checkpoints run out of room.
        try Data(count: 2 * 1024 * 1024).write(to: URL(fileURLWithPath: filler))
        var committed = [history.value]
        var failure: KeepsakeError?
        for n in 1...200 {
            var doc = history.value
            doc.title = "version \(n)"
            doc.blob = Data(repeating: UInt8(n), count: 20_000)
            do {
                try history.append(doc)
                committed.append(doc)
            } catch {
                failure = error
                break
            }
        }
        guard case .sqlite(let error) = try #require(failure) else {
            Issue.record("expected a SQLite error, got \(String(describing: failure))")
            return
        }
        #expect(error.code == .full || error.code == .ioError, "\(error)")
        // It names the store.
        #expect(error.description.contains(path), "\(error)")
        // Nothing moved: memory is still the last committed version.
        #expect(history.value == committed.last && history.versionCount == committed.count - 1)
        store.close()
        try FileManager.default.removeItem(atPath: filler)

        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.value == committed.last)
        for expected in committed.dropLast().reversed() {
            #expect(try reopened.undo() == expected)
        }
        #expect(try KeepsakeStore(path: path).verify().problems == [])
        print("full disk: \(committed.count - 1) versions committed before \(error.code)")
    }

    /// Opens stores in a folder until the process runs out of file descriptors (each store
    /// takes five: its file and log twice, on the writer's connection and on the background
    /// checkpoints', and the log's index). Exits 0 when every store behaves as it should.
    static func openStoresUntilOutOfDescriptors(in folder: String) throws {
        var limit = rlimit(rlim_cur: 100, rlim_max: 100)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var opened: [(KeepsakeStore, KeepsakeHistory<Doc>)] = []
        var refusal: KeepsakeError?
        while refusal == nil {
            let path = folder + "/\(opened.count).keepsake"
            do {
                let store = try KeepsakeStore(path: path)
                let history = try store.history("doc", initialValue: Doc.empty)
                var doc = history.value
                doc.title = "\(opened.count)"
                try history.append(doc)
                opened.append((store, history))
            } catch {
                refusal = error
            }
        }
        // The refusal says why, and every store opened before it goes on working.
        guard case .cannotOpen(_, let reason) = refusal,
            reason.contains("(\(String(cString: strerror(EMFILE))))")
        else {
            FileHandle.standardError.write(Data("refused with \(String(describing: refusal))\n".utf8))
            exit(1)
        }
        for (index, (store, history)) in opened.enumerated() {
            var doc = history.value
            doc.title += " again"
            try history.append(doc)
            guard try store.integrityCheck() == ["ok"], history.value.title == "\(index) again" else {
                exit(2)
            }
        }
        let count = opened.count
        for (store, history) in opened {
            try history.close()
            store.close()
        }
        for index in 0..<count {
            let history = try KeepsakeStore(path: folder + "/\(index).keepsake").history(
                "doc", initialValue: Doc.empty)
            guard history.value.title == "\(index) again", history.versionCount == 2 else { exit(3) }
        }
        exit(count >= 10 ? 0 : 4)
    }

    @Test func runningOutOfFileDescriptorsRefusesTheNextStoreSayingWhy() async throws {
        let folder = directory.url.path
        await #expect(processExitsWith: .success) { [folder = folder as String] in
            try await MainActor.run { try StoreFileTests.openStoresUntilOutOfDescriptors(in: folder) }
        }
    }

    @Test func leftoversOfAnInterruptedCreationAreRemovedByTheNextOpen() throws {
        let path = directory.path("new.keepsake")
        // A process that no longer exists (pids are below 2^22 on Linux), and the name earlier
        // versions gave their temporary file.
        let stale = directory.path(".keepsake-creating-4194303-\(UUID().uuidString)")
        let earlier = path + ".creating-4194303-\(UUID().uuidString)"
        let alive = directory.path(".keepsake-creating-\(getppid())-\(UUID().uuidString)")
        for file in [
            stale, stale + "-wal", stale + "-shm", stale + "-journal", earlier, earlier + "-wal", alive,
        ] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        }
        _ = try KeepsakeStore(path: path)
        let left = try names(in: directory.url.path).filter { $0.contains("creating-") }
        #expect(left == [URL(fileURLWithPath: alive).lastPathComponent])
    }

    /// A file name of 246 bytes (79 Chinese characters and ".keepsake"): the longest SQLite
    /// opens, with `-journal` after it. Its temporary file was named after it and 47 bytes
    /// longer, past the 255 bytes a name may take: such a store could not be created, copied
    /// or salvaged ("File name too long"), from 209 bytes on.
    @Test func aStoreWithTheLongestNameIsCreatedCopiedAndSalvaged() throws {
        let name = String(repeating: "文", count: 79) + ".keepsake"
        #expect(name.utf8.count == 246)
        let path = directory.path(name)
        try writeStore(at: path)
        let copies = (directory.path("copy"), directory.path("salvaged"))
        for folder in [copies.0, copies.1] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let store = try KeepsakeStore(path: path)
        try store.copy(to: copies.0 + "/" + name)
        store.close()
        #expect(try KeepsakeStore.salvage(from: path, to: copies.1 + "/" + name).isComplete)
        for file in [path, copies.0 + "/" + name, copies.1 + "/" + name] {
            let reopened = try KeepsakeStore(path: file, options: .init(readOnly: true))
            #expect(try reopened.history("doc", initialValue: Doc.empty).value.title == "written")
        }
        try appendEdited(at: path)
    }

    @Test func largeDataInAChangeGoesToTheBlobTable() throws {
        let path = directory.path("blobs.keepsake")
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.blob = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try history.append(doc)
        doc.blob = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        try history.append(doc)
        let store = history.durableStorage!.store
        let patchBytes = try store.database.read {
            try storedChanges($0).filter { $0.entry.path == "blob" }.map(\.entry.patch.utf8.count).max()
        }
        #expect((patchBytes ?? .max) < 1_024)
        #expect(try history.undo().blob == Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        #expect(try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty).value == history.value)
    }

    @Test func aSnapshotWhoseBlobIsMissingNamesTheProperty() throws {
        let path = directory.path("missing.keepsake")
        let store = try KeepsakeStore(path: path)
        var doc = Doc.empty
        doc.blob = Data(repeating: 9, count: 4_096)
        try Caretaker(store: store).save(doc, as: "v1")
        try store.database.read {
            try $0.execute("PRAGMA foreign_keys = OFF")
            try $0.execute("DELETE FROM blob")
        }
        #expect {
            try Caretaker(store: store).restore("v1", as: Doc.self)
        } throws: { error in
            guard case .undecodableSnapshot(let name, let path, _) = error as? KeepsakeError else {
                return false
            }
            return name == "v1" && path == [.property("blob")]
        }
    }
}
