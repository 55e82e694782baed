import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// A store file deleted or replaced while a writer has it open (a sync tool replacing the
/// document, a user deleting it) is no longer what the path names: SQLite would go on writing
/// to the file it opened, and those writes would vanish or land beside the file the app opens
/// next. Every write is refused then, with a typed error, and nothing recorded is lost.
@MainActor @Suite struct MovedStoreFileTests {
    let directory = TemporaryDirectory()

    /// A store with history "doc" at title "one".
    func open(_ path: String) throws -> (KeepsakeStore, KeepsakeHistory<Doc>) {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "one"
        try history.append(doc)
        return (store, history)
    }

    /// Whether `error` is the refusal of a write to a file no longer at `path`, for `reason`.
    func isMovedAway(_ error: any Error, _ path: String, _ reason: String) -> Bool {
        guard case .sqlite(let sqlite) = error as? KeepsakeError else { return false }
        return sqlite.code.extended == SQLiteError.Code.databaseMoved.extended
            && sqlite.message == "the file was \(reason) while it was open: \(path); nothing more is "
                + "written through this connection, open it again"
    }

    @Test func aFileReplacedWhileOpenRefusesEveryWrite() throws {
        let path = directory.path("doc.keepsake")
        let (store, history) = try open(path)
        // A sync tool's replace: another version of the document renamed over the path.
        let other = directory.path("downloaded.keepsake")
        let downloaded = try KeepsakeStore(path: other)
        try Caretaker(store: downloaded).save(Doc.empty, as: "theirs")
        downloaded.close()
        #expect(rename(other, path) == 0)

        var doc = history.value
        doc.title = "two"
        #expect { try history.append(doc) } throws: { isMovedAway($0, path, "replaced by another") }
        #expect { try Caretaker(store: store).save(doc, as: "mine") } throws: {
            isMovedAway($0, path, "replaced by another")
        }
        // Nothing moved: the controller still holds what was recorded, and reads work.
        #expect(history.value.title == "one" && history.versionCount == 1)
        #expect(try store.historyNames() == ["doc"])
        try history.checkInvariants()
        store.close()
        // The file at the path is the one that replaced it, untouched by the refused writes.
        let reopened = try KeepsakeStore(path: path)
        #expect(try reopened.historyNames() == [])
        #expect(try Caretaker(store: reopened).snapshots().map(\.name) == ["theirs"])
        #expect(try reopened.integrityCheck() == ["ok"])
    }

    @Test func aFileDeletedWhileOpenRefusesEveryWrite() throws {
        let path = directory.path("doc.keepsake")
        let (store, history) = try open(path)
        #expect(unlink(path) == 0)
        var doc = history.value
        doc.title = "two"
        #expect { try history.append(doc) } throws: {
            isMovedAway($0, path, "deleted, or moved away from its write-ahead log")
        }
        #expect { try history.undo() } throws: {
            isMovedAway($0, path, "deleted, or moved away from its write-ahead log")
        }
        #expect(history.value.title == "one" && history.hasUndo)
        try history.checkInvariants()
        store.close()
        // The log the deleted file left at the path was emptied into it: a store opened there
        // now is a new one, not the deleted one's pages read into an empty file.
        let reopened = try KeepsakeStore(path: path)
        #expect(try reopened.historyNames() == [])
        #expect(try reopened.integrityCheck() == ["ok"])
        // The emptied log held nothing to keep: it is not set aside.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == [
                "doc.keepsake", "doc.keepsake-shm", "doc.keepsake-wal",
            ])
    }

    /// Renamed alone, the file leaves its log at the old path: a commit written there would be
    /// missing from the file after a crash. Writes are refused; closing folds the log into the
    /// renamed file, so everything committed before is there under its new name.
    @Test func aFileRenamedAloneKeepsWhatWasCommittedUnderItsNewName() throws {
        let path = directory.path("doc.keepsake")
        let (store, history) = try open(path)
        var doc = history.value
        for title in ["two", "three"] {
            doc.title = title
            try history.append(doc)
        }
        let renamed = directory.path("doc 2.keepsake")
        #expect(rename(path, renamed) == 0)
        doc.title = "four"
        #expect { try history.append(doc) } throws: {
            isMovedAway($0, path, "deleted, or moved away from its write-ahead log")
        }
        store.close()
        let reopened = try KeepsakeStore(path: renamed).history("doc", initialValue: Doc.empty)
        #expect(reopened.value.title == "three" && reopened.versionCount == 3)
        #expect(try reopened.undo().title == "two")
        try reopened.checkInvariants()
    }

    /// An observed model has no caller to throw to: the refusal reaches the controller's
    /// `error`, the model keeps the edit, and nothing is reported recorded: the edit stays
    /// pending, as a held change does.
    @Test func anObservedModelWhoseFileIsDeletedReportsTheRefusal() async throws {
        let path = directory.path("drawing.keepsake")
        let model = DrawingModel()
        let undo = try VersioningController(
            observing: model, at: \.drawing,
            storage: .keepsake(try KeepsakeStore(path: path), history: "drawing"))
        model.drawing.title = "First"
        #expect(await settle(until: { undo.versionCount == 1 }))
        #expect(unlink(path) == 0)
        model.drawing.title = "Second"
        #expect(await settle(until: { undo.error != nil }))
        guard case .sqlite(let error) = undo.error?.keepsakeError else {
            Issue.record("expected the refusal, got \(String(describing: undo.error))")
            return
        }
        #expect(error.code.extended == SQLiteError.Code.databaseMoved.extended)
        #expect(model.drawing.title == "Second")
        #expect(undo.versionCount == 1 && undo.value.title == "Second" && undo.hasUndo)
        try undo.checkInvariants()
    }

    @Test func aFileMovedWithItsFolderIsStillWritten() throws {
        let folder = directory.path("Documents")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let (store, history) = try open(folder + "/doc.keepsake")
        // The folder renamed: the file, its log and its -shm move together.
        let moved = directory.path("Moved")
        #expect(rename(folder, moved) == 0)
        var doc = history.value
        doc.title = "two"
        try history.append(doc)
        #expect(try history.undo().title == "one")
        #expect(try history.redo().title == "two")
        store.close()
        let reopened = try KeepsakeStore(path: moved + "/doc.keepsake").history(
            "doc", initialValue: Doc.empty)
        #expect(reopened.value.title == "two" && reopened.versionCount == 2)
        try reopened.checkInvariants()
    }
}
