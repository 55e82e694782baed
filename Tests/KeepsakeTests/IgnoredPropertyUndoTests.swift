import Foundation
import Keepsake
import Testing

/// A property left out with `@VersionableIgnored` (a `lastOpened` date an app sets as it edits)
/// is not part of any version, so its changes must not stop an undo. An entry added to a
/// dictionary, an element added to an array and a value set where there was `nil` are taken
/// out again by undo; their undo checked the whole value with `==`, ignored property included,
/// and refused it for good once that property had changed along with another edit: the undo
/// stack stopped there, in memory and in the store.
@MainActor @Suite struct IgnoredPropertyUndoTests {
    let directory = TemporaryDirectory()

    struct Note: Versionable, Equatable, Codable, Identifiable {
        var id: Int
        var text: String
        @VersionableIgnored var lastOpened = 0
    }

    struct Notebook: Versionable, Equatable, Codable {
        var title = ""
        var byName: [String: Note] = [:]
        var list: [Note] = []
        var current: Note?
    }

    /// Adds a note three ways, then edits the title while opening every note.
    static let versions: [Notebook] = {
        var added = Notebook()
        added.byName["a"] = Note(id: 1, text: "a")
        added.list.append(Note(id: 2, text: "b"))
        added.current = Note(id: 3, text: "c")
        var opened = added
        opened.title = "opened"
        opened.byName["a"]?.lastOpened = 5
        opened.list[0].lastOpened = 5
        opened.current?.lastOpened = 5
        return [Notebook(), added, opened]
    }()

    func open(_ kind: StorageKind, _ path: String) throws -> VersioningController<
        Notebook, Notebook, ReversionError
    > {
        try VersioningController(Notebook(), storage: try kind.storage(path: path, history: "notebook"))
    }

    @Test(arguments: StorageKind.allCases)
    func anIgnoredPropertyChangedSinceDoesNotStopTheUndo(kind: StorageKind) throws {
        let path = directory.path("ignored.keepsake")
        let controller = try open(kind, path)
        for version in Self.versions.dropFirst() { try controller.append(version) }
        #expect(controller.value == Self.versions[2])

        try controller.undo()
        // The ignored property is as the app left it: no version holds it.
        #expect(controller.value.title == "")
        #expect(controller.value.list.map(\.lastOpened) == [5])
        try controller.undo()
        #expect(controller.value == Notebook())
        // Redone, the notes are as they were added: what no version holds is not brought back.
        try controller.redo()
        #expect(controller.value == Self.versions[1])
        try controller.redo()
        var redone = Self.versions[1]
        redone.title = "opened"
        #expect(controller.value == redone)
        try controller.checkInvariants()
        guard kind == .durable else { return }

        // From the store, where the entries are decoded from records.
        let reopened = try open(kind, path)
        #expect(reopened.value == redone)
        try reopened.undo()
        var unopened = reopened.value
        unopened.byName["a"]?.lastOpened = 7
        unopened.list[0].lastOpened = 7
        unopened.current?.lastOpened = 7
        unopened.title = "reopened"
        try reopened.append(unopened)
        try reopened.undo()
        try reopened.undo()
        #expect(reopened.value == Notebook())
        #expect(!reopened.hasUndo)
        try reopened.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
