import Foundation
import Testing

@testable import Keepsake

/// `KeepsakeStore.value(ofHistory:atVersion:as:)` reads any version without moving the history,
/// through the model, or on the stored JSON where the model no longer reads a change.
@MainActor @Suite struct ValueAtVersionTests {
    let directory = TemporaryDirectory()

    struct Tagged: Versionable, Equatable, Codable {
        var tags: [String] = []
    }

    /// The same document after an update: its tags are a set now, so the array's insertions
    /// stored before no longer apply to it.
    struct UpdatedTagged: Versionable, Equatable, Codable {
        var tags: Set<String> = []
        var pinned = false
    }

    @Test func aVersionTheModelCannotReplayIsReadOnTheStoredJSON() throws {
        let path = directory.path("tags.keepsake")
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Tagged())
        var doc = history.value
        for tag in ["a", "b", "c"] {
            doc.tags.append(tag)
            try history.append(doc)
        }
        _ = try history.undo()
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let template = UpdatedTagged(tags: [], pinned: true)
        for (version, tags) in [(0, []), (1, ["a"]), (2, ["a", "b"]), (3, ["a", "b", "c"])] {
            #expect(
                try store.value(ofHistory: "doc", atVersion: version, fillingMissingFrom: template)
                    == UpdatedTagged(tags: Set(tags), pinned: true), "version \(version)")
        }
        // The current version by default; the old model reads it too.
        #expect(try store.value(ofHistory: "doc", as: Tagged.self) == Tagged(tags: ["a", "b"]))
        #expect(try store.value(ofHistory: "doc", atVersion: 4, as: Tagged.self) == nil)
        // Nothing moved, nothing was written.
        #expect(try store.timeline(of: "doc")?.map(\.undone) == [false, false, false, true])
    }

    /// Version 25 (title "t25") lost from the middle of the history: version 26 changes only
    /// the status, so no check of its own sees the gap, and redone without 25 it would read
    /// title "t23", a value the history never had.
    @Test func aVersionLostFromTheMiddleIsDamageNotAValueWithoutIt() throws {
        let path = directory.path("gap.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        for index in 1...30 {
            var doc = history.value
            if index.isMultiple(of: 2) {
                doc.status = doc.status == .draft ? .review : .draft
            } else {
                doc.title = "t\(index)"
            }
            try history.append(doc)
        }
        try history.close()  // a checkpoint at version 30
        store.close()
        let connection = try SQLiteConnection(path: path)
        try connection.execute("DELETE FROM version WHERE position = 25")
        connection.close()

        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let missing = KeepsakeError.damaged(history: "doc", reason: "version 25 is missing")
        #expect(throws: missing) { try reader.value(ofHistory: "doc", atVersion: 26, as: Doc.self) }
        #expect(throws: missing) { try reader.valueJSON(ofHistory: "doc", atVersion: 26) }
        // Below the gap, and at the newest checkpoint above it, versions read as they were.
        #expect(try reader.value(ofHistory: "doc", atVersion: 24, as: Doc.self)?.title == "t23")
        #expect(try reader.value(ofHistory: "doc", atVersion: 30, as: Doc.self)?.title == "t29")
    }
}
