import Foundation
import Keepsake
import Testing

@testable import Keepsake

/// After an app update added a property, the first open reads the stored value through the
/// merge with the app's initial value, and stores it whole in today's model, so that the next
/// opens read it with the standard decoder alone (ten times faster for a large value). A
/// read-only store is only read.
@MainActor @Suite struct AddedPropertyTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("added.keepsake") }

    struct Note: Versionable, Equatable, Codable {
        var title: String
        var tags: [String]
    }

    /// The note once the app added `pinned`.
    struct PinnedNote: Versionable, Equatable, Codable {
        var title: String
        var tags: [String]
        var pinned: Bool
    }

    static let versions = [
        Note(title: "", tags: []), Note(title: "Draft", tags: []), Note(title: "Draft", tags: ["x"]),
        Note(title: "Final", tags: ["x"]),
    ]

    static func pinned(_ note: Note) -> PinnedNote {
        PinnedNote(title: note.title, tags: note.tags, pinned: true)
    }

    func write(closing: Bool) throws {
        let history = try KeepsakeStore(path: path).history("note", initialValue: Self.versions[0])
        for version in Self.versions.dropFirst() { try history.append(version) }
        if closing { try history.close() }
    }

    /// How many stored values (checkpoints and the base value) there are, and how many of them
    /// hold `pinned`.
    func checkpoints() throws -> (all: Int64, pinned: Int64) {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        defer { connection.close() }
        return (
            try connection.scalarInt("SELECT count(*) FROM checkpoint") ?? -1,
            try connection.scalarInt(#"SELECT count(*) FROM checkpoint WHERE value LIKE '%"pinned":%'"#) ?? -1
        )
    }

    @Test(arguments: [true, false])
    func theFirstOpenStoresTheValueInTodaysModel(closing: Bool) throws {
        try write(closing: closing)
        #expect(try checkpoints().pinned == 0)
        let store = try KeepsakeStore(path: path)
        let history = try store.history("note", initialValue: Self.pinned(Self.versions[0]))
        #expect(history.value == Self.pinned(Self.versions.last!))
        let opened = try checkpoints()
        #expect(opened.pinned == 1)
        // The stored value now holds the property: read without the app's type, it is there.
        let json = try #require(try store.valueJSON(ofHistory: "note"))
        #expect(
            try JSONDecoder().decode(PinnedNote.self, from: Data(json.utf8))
                == Self.pinned(Self.versions.last!))
        try history.close()

        // The next open merges nothing, and writes nothing.
        let again = try KeepsakeStore(path: path).history("note", initialValue: Self.pinned(Self.versions[0]))
        #expect(again.value == Self.pinned(Self.versions.last!))
        #expect(try checkpoints() == opened)
        // Every version undoes, the older ones still merged with the initial value.
        for expected in Self.versions.reversed().dropFirst() {
            #expect(try again.undo() == Self.pinned(expected))
        }
        try again.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    /// The added property changed since the update: undoing that change brings back the value
    /// the first open gave it, and the base value, which the old model stored without it,
    /// agrees with what undo reaches on every property it holds (`checkInvariants()` failed
    /// here, comparing the base filled from the current value: `pinned: false`).
    @Test(arguments: [true, false])
    func theAddedPropertyChangedSinceUndoesToTheValueTheOpenGaveIt(closing: Bool) throws {
        try write(closing: closing)
        let history = try KeepsakeStore(path: path).history(
            "note", initialValue: Self.pinned(Self.versions[0]))
        var unpinned = history.value
        unpinned.pinned = false
        try history.append(unpinned)
        unpinned.title = "Published"
        try history.append(unpinned)
        try history.checkInvariants()

        let expected =
            [PinnedNote(title: "Final", tags: ["x"], pinned: false)]
            + Self.versions.reversed().map(Self.pinned)
        #expect(try (0..<5).map { _ in try history.undo() } == expected)
        #expect(!history.hasUndo)
        try history.checkInvariants()
        for value in expected.reversed().dropFirst() + [unpinned] {
            #expect(try history.redo() == value)
        }
        try history.checkInvariants()
        try history.close()

        let again = try KeepsakeStore(path: path).history("note", initialValue: Self.pinned(Self.versions[0]))
        #expect(again.value == unpinned)
        try again.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    @Test func aReadOnlyStoreIsOnlyRead() throws {
        try write(closing: true)
        let before = try checkpoints()
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let history = try store.history("note", initialValue: Self.pinned(Self.versions[0]))
        #expect(history.value == Self.pinned(Self.versions.last!))
        #expect(try checkpoints() == before)
    }

    /// The same model opens as it did: its stored value reads as it is, and nothing is written.
    @Test func theSameModelWritesNothing() throws {
        try write(closing: true)
        let before = try checkpoints()
        let history = try KeepsakeStore(path: path).history("note", initialValue: Self.versions[0])
        #expect(history.value == Self.versions.last!)
        #expect(try checkpoints() == before)
    }
}
