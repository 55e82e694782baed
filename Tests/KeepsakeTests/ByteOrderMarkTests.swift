import Foundation
import Keepsake
import Testing

/// Text that starts with U+FEFF (a byte order mark, as text pasted from a file can), or has one
/// right after an escaped character, comes back whole wherever stored JSON is read: in a
/// dictionary key a stored change names, after the model changed, and in the JSON view of a
/// version. `JSONSerialization`, which read such JSON before, drops that U+FEFF
/// (swift-corelibs-foundation): a change to the entry keyed `"\u{FEFF}Title"` named `"Title"`,
/// and its undo failed as damage.
@MainActor @Suite struct ByteOrderMarkTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("marks.keepsake") }

    static let marked = ["\u{FEFF}Title", "tab\t\u{FEFF}", "\u{FEFF}", "plain"]

    struct Note: Versionable, Equatable, Codable {
        var title: String
        var lines: [String]
        var counts: [String: Int]
    }

    /// The same note after an app update added a property.
    struct UpdatedNote: Versionable, Equatable, Codable {
        var title: String
        var lines: [String]
        var counts: [String: Int]
        var pinned: Bool
    }

    /// The versions written, oldest first: every change names a marked string or key.
    static let versions: [Note] = {
        var note = Note(title: "", lines: [], counts: ["Title": 0, "\u{FEFF}Title": 0])
        var versions = [note]
        for edit: (inout Note) -> Void in [
            { $0.title = marked[0] },
            { $0.lines = marked },
            { $0.counts["\u{FEFF}Title"] = 5 },
            { $0.counts["tab\t\u{FEFF}"] = 1 },
            { $0.lines[1] = marked[2] },
            { $0.counts["\u{FEFF}Title"] = 6 },
        ] {
            edit(&note)
            versions.append(note)
        }
        return versions
    }()

    static func updated(_ note: Note) -> UpdatedNote {
        UpdatedNote(title: note.title, lines: note.lines, counts: note.counts, pinned: false)
    }

    func write() throws {
        let history = try KeepsakeStore(path: path).history("note", initialValue: Self.versions[0])
        for version in Self.versions.dropFirst() { try history.append(version) }
        try history.close()
    }

    @Test func theSameModelUndoesAndRedoesEveryVersionAcrossReopens() throws {
        try write()
        for expected in Self.versions.reversed().dropFirst() {
            let history = try KeepsakeStore(path: path).history("note", initialValue: Self.versions[0])
            #expect(try history.undo() == expected)
            try history.close()
        }
        for expected in Self.versions.dropFirst() {
            let history = try KeepsakeStore(path: path).history("note", initialValue: Self.versions[0])
            #expect(try history.redo() == expected)
            try history.close()
        }
    }

    @Test func anUpdatedModelOpensAndUndoesEveryVersion() throws {
        try write()
        let history = try KeepsakeStore(path: path).history(
            "note", initialValue: Self.updated(Self.versions[0]))
        #expect(history.value == Self.updated(Self.versions.last!))
        for expected in Self.versions.reversed().dropFirst() {
            #expect(try history.undo() == Self.updated(expected))
        }
        try history.checkInvariants()
    }

    @Test func theJSONViewOfEveryVersionHoldsTheMarks() throws {
        try write()
        let store = try KeepsakeStore(path: path)
        for (number, version) in Self.versions.enumerated() {
            let json = try #require(try store.valueJSON(ofHistory: "note", atVersion: number))
            #expect(
                try JSONDecoder().decode(Note.self, from: Data(json.utf8)) == version, "version \(number)")
            #expect(
                try store.value(
                    ofHistory: "note", atVersion: number, as: UpdatedNote.self,
                    fillingMissingFrom: Self.updated(Self.versions[0])) == Self.updated(version),
                "version \(number)")
        }
        #expect(try store.integrityCheck() == ["ok"])
    }
}
