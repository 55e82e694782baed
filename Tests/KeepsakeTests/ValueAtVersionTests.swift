import Foundation
import KeepsakeTestSupport
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
    /// title "t23", a value the history never had. A history's versions have consecutive
    /// positions, so any read of it says so, as opening it does; `salvage` saves what is sound.
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
        let missing = KeepsakeError.damaged(
            history: "doc", reason: "version 25 is missing from its versions, where version 26 is read")
        for version in [nil, 0, 24, 26, 30] {
            #expect(throws: missing) { try reader.value(ofHistory: "doc", atVersion: version, as: Doc.self) }
            #expect(throws: missing) { try reader.valueJSON(ofHistory: "doc", atVersion: version) }
        }
    }

    /// A version's scope level raised by damage (a flipped bit) would put the root's later
    /// versions on its way: its value read as a later version's, with no error. Found by the
    /// rich store's damage soak (`KEEPSAKE_SOAK_FIRST_SEED=700`, batch 704).
    @Test func aVersionMovedIntoAnInnerScopeIsDamageNotAnotherVersionsValue() throws {
        let path = directory.path("level.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        for index in 1...4 {
            doc.title = "t\(index)"
            try history.append(doc)
        }
        try history.pushNewScope()
        doc.title = "scoped"
        try history.append(doc)
        store.close()
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try reader.value(ofHistory: "doc", atVersion: 2, as: Doc.self)?.title == "t2")
        reader.close()
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA ignore_check_constraints = ON")
        try connection.execute("UPDATE version SET scope_level = 1 WHERE position = 2")
        connection.close()

        let damaged = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let error = KeepsakeError.damaged(
            history: "doc", reason: "version 3 of scope 0 comes after version 2 of inner scope 1")
        for version in [nil, 0, 1, 2, 4, 5] {
            #expect(throws: error) { try damaged.value(ofHistory: "doc", atVersion: version, as: Doc.self) }
            #expect(throws: error) { try damaged.valueJSON(ofHistory: "doc", atVersion: version) }
        }
        #expect(try damaged.verify().isOK == false)
    }

    /// Version 0 is the value at the root scope's floor, replayed from the base value through
    /// the versions folded under it: a floor raised or lowered, or the version at it lost, would
    /// make it another version's value; a root scope's row lost, a history with none.
    @Test(arguments: [
        (
            "UPDATE scope SET floor = floor + 1 WHERE level = 0",
            "its stored version count is 3, though it holds 2 versions above its floor (6)"
        ),
        (
            "UPDATE scope SET floor = floor - 1 WHERE level = 0",
            "its stored version count is 3, though it holds 4 versions above its floor (4)"
        ),
        (
            "DELETE FROM version WHERE position = 5",
            "version 5 is missing from its versions, where version 6 is read"
        ),
        ("DELETE FROM scope WHERE level = 0", "the row of its root scope is missing"),
    ])
    func aFloorDamagedIsAnErrorNotAnotherVersionsValue(damage: String, reason: String) throws {
        let path = directory.path("floor.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: 3)
        var doc = history.value
        for index in 1...8 {
            doc.title = "t\(index)"
            try history.append(doc)
        }
        store.close()
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        // Versions 1 to 5 folded under the floor, none compacted away (no checkpoint below it).
        #expect(try reader.value(ofHistory: "doc", atVersion: 0, as: Doc.self)?.title == "t5")
        #expect(try reader.timeline(of: "doc")?.map(\.version) == [0, 6, 7, 8])
        reader.close()
        let connection = try SQLiteConnection(path: path)
        #expect(try connection.scalarInt("SELECT count(*) FROM version WHERE position <= 5") == 5)
        try connection.execute(damage)
        connection.close()

        let damaged = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let error = KeepsakeError.damaged(history: "doc", reason: reason)
        #expect(throws: error) { try damaged.value(ofHistory: "doc", atVersion: 0, as: Doc.self) }
        #expect(throws: error) { try damaged.valueJSON(ofHistory: "doc", atVersion: 0) }
        if damage.hasPrefix("DELETE FROM scope") {
            // Listed, it would be a history of no versions at all.
            #expect(throws: error) { try damaged.timeline(of: "doc") }
            #expect(throws: error) { try damaged.changes(ofVersion: 7, in: "doc") }
        }
        #expect(try damaged.verify().isOK == false)
    }
}
