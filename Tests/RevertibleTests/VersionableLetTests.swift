import Foundation
import Revertible
import Testing

/// A `Versionable` struct tracked with no code, whose `let`s hold other values in the new
/// version (a property or an element replaced by another value, with another `id` or
/// `created`): it is recorded whole, as a plain `Codable` struct is, so that undo gives the old
/// value exactly. Before, only its `var`s were recorded: an undo kept the new `let`s, and a new
/// value that differed only in a `let` recorded nothing at all.
@Suite struct VersionableLetTests {
    struct Mark: Versionable, Equatable, Codable {
        let tag: Int
        var x: Int
    }

    struct Note: Versionable, Equatable, Codable, Identifiable {
        let id: Int
        let created: Int
        var title: String
    }

    struct Sheet: Versionable, Equatable, Codable {
        var mark = Mark(tag: 1, x: 1)
        var marks: [Mark] = []
        var notes: [Note] = []
        var byName: [String: Mark] = [:]
    }

    @Test func aValueWhoseLetsDifferIsRecordedWhole() throws {
        let sheet = Sheet(
            marks: [Mark(tag: 1, x: 1), Mark(tag: 2, x: 2)], notes: [Note(id: 7, created: 1, title: "a")],
            byName: ["a": Mark(tag: 1, x: 1)])
        var edited = sheet
        edited.mark = Mark(tag: 9, x: 1)
        #expect(try pathsRevertingExactly(sheet, edited) == ["mark"])
        edited = sheet
        edited.marks[1] = Mark(tag: 3, x: 5)
        #expect(try pathsRevertingExactly(sheet, edited) == ["marks[1]"])
        edited = sheet
        edited.notes[0] = Note(id: 7, created: 2, title: "b")
        #expect(try pathsRevertingExactly(sheet, edited) == ["notes[id: 7]"])
        edited = sheet
        edited.byName["a"] = Mark(tag: 4, x: 1)
        #expect(try pathsRevertingExactly(sheet, edited) == [#"byName[key: "a"]"#])
        // The value itself.
        #expect(try pathsRevertingExactly(Mark(tag: 1, x: 1), Mark(tag: 2, x: 1)) == [""])
        // Equal `let`s: the changed `var` alone, as before.
        edited = sheet
        edited.marks[1].x = 6
        edited.notes[0].title = "c"
        #expect(try pathsRevertingExactly(sheet, edited) == ["marks[1].x", "notes[id: 7].title"])
    }
}
