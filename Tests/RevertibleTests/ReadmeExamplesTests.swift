import Foundation
import Revertible
import TestSupport
import Testing

// The README's Swift examples, compiled. `readmeExamplesAreTheseExamples` fails when the
// README shows code that is not here, line for line.

/// The README's types, in their own namespace.
enum Readme {
    // README: struct Note
    struct Note: Versionable, Equatable, Codable {
        var title: String
        var body: String
        var tags: Set<String>
        @VersionableIgnored var lastOpened = Date(timeIntervalSince1970: 0)
    }

    // README: enum Shape
    enum Shape: Codable, Equatable, Versionable {
        case circle(radius: Double)
        case rect(w: Double, h: Double)
    }

    struct Sketch: Versionable, Equatable, Codable {
        var shape: Shape
    }

    // README: struct User
    struct User: Versionable {
        var name: String
        var imageData: Data

        func addReversions(into reverter: inout some Reverter<User>) {
            reverter.appendReversion(at: \.name)
            reverter.appendReversion(at: \.imageData)
        }
    }
}

// README: struct Editor
struct Editor {
    @Versioned var note = Note(title: "Title", body: "", tags: [])
    typealias Note = Readme.Note
}

@MainActor @Suite struct ReadmeExamplesTests {
    @Test func controllerExample() throws {
        typealias Note = Readme.Note
        let editor = Editor()
        editor.note.title = "New title"
        editor.note.tags.insert("draft")
        editor.$note.undo()  // tags == []
        #expect(editor.note.tags == [])
        editor.$note.undo()  // title == "Title"
        #expect(editor.note.title == "Title")
        editor.$note.redo()  // title == "New title"
        #expect(editor.note.title == "New title")

        var note = Note(title: "Draft", body: "", tags: [])
        let controller = VersioningController(note)
        try controller.tag("original")
        note.title = "Final"
        try controller.append(note)
        try controller.setWithTransaction { note in
            note.body = "Done."
            note.tags = ["final"]
        }
        note = try controller.undo(to: "original")
        #expect(note.title == "Draft")
        #expect(controller.versionCount == 2)
    }

    @Test func reversionsExample() throws {
        typealias Note = Readme.Note
        var note = Note(title: "Draft", body: "", tags: [])
        let original = note
        note.title = "Final"
        note.tags.insert("done")

        let reversion = note.reversion(to: original)!
        print(reversion.paths)  // [title, tags]
        try reversion.revert(&note)
        assert(note == original)
        #expect(reversion.paths.map(\.description) == ["title", "tags"])

        var edited = original
        edited.title = "Final"
        let titleChange = edited.reversion(to: original)!
        edited.title = "Final, really"
        do {
            try titleChange.revert(&edited)
        } catch .wrongVersion(let path, let reason) {
            print(path, reason)  // title expected "Final", found "Final, really"
            #expect("\(path) \(reason)" == #"title expected "Final", found "Final, really""#)
        } catch {
            print(error)
        }

        let path = try PathDescriptor(parsing: #"items[id: 7].title"#)
        print(path.components)  // [.property("items"), .id("7"), .property("title")]
        #expect(path.components == [.property("items"), .id("7"), .property("title")])

        let records = try reversion.records()
        var current = original
        current.title = "Final"
        current.tags.insert("done")
        let restored = try Reversion(records: records, resolvingAgainst: current)
        try restored.revert(&current)
        #expect(current == original)
    }

    @Test func explicitRegistrationExample() throws {
        typealias User = Readme.User
        var user = User(name: "a", imageData: Data())
        let before = user
        user.name = "b"
        try #require(user.reversion(to: before)).revert(&user)
        #expect(user.name == "a")
    }

    @Test func enumExample() throws {
        typealias Shape = Readme.Shape
        var sketch = Readme.Sketch(shape: .circle(radius: 10))
        let before = sketch
        sketch.shape = .circle(radius: 12)
        let reversion = try #require(sketch.reversion(to: before))
        // [shape.circle.radius] {"new":12,"old":10}
        #expect(reversion.paths == ["shape.circle.radius"])
        #expect(
            try reversion.records().map { String(decoding: $0.payload, as: UTF8.self) } == [
                #"{"new":12,"old":10}"#
            ])
        sketch.shape = .rect(w: 3, h: 4)
        #expect(sketch.reversion(to: before)?.paths == ["shape"])
    }

    @Test func readmeExamplesAreTheseExamples() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        // The README's store examples are compiled by KeepsakeTests/ReadmeStoreExamplesTests.swift.
        // Those of an app target isolated to the main actor by default, by MainActorAppTests.
        let storeExamples = root.appendingPathComponent("Tests/KeepsakeTests/ReadmeStoreExamplesTests.swift")
        let mainActorExamples = root.appendingPathComponent("Tests/MainActorAppTests/MainActorAppTests.swift")
        let source =
            try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
            + String(contentsOf: storeExamples, encoding: .utf8)
            + String(contentsOf: mainActorExamples, encoding: .utf8)
        let sourceLines = Set(source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        // The DocC articles' examples are held to the same rule.
        var articles = ""
        for module in ["Revertible", "Keepsake"] {
            let catalog = root.appendingPathComponent("Sources/\(module)/\(module).docc")
            for name in try FileManager.default.contentsOfDirectory(atPath: catalog.path)
            where name.hasSuffix(".md") {
                articles += try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8)
            }
        }
        let blocks = (readme + articles).components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        #expect(blocks.count >= 10)
        for block in blocks {
            for line in block.split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                // A block indented in a list item ends in its fence's indentation.
                if !trimmed.isEmpty, !sourceLines.contains(trimmed) {
                    Issue.record("README or DocC line not compiled by the README tests: \(trimmed)")
                }
            }
        }
    }
}
