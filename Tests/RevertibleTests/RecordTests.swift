import Foundation
import TestSupport
import Testing

@testable import Revertible

/// Reversions as records, and every way reading them back can fail.
@Suite struct RecordTests {
    @Test func recordsResolveThroughTheTypesOwnRegistrations() throws {
        var activity = Activity.mock(0)
        activity.childActivities = [.mock(1)]
        let original = activity
        activity.childActivities[0].priority = .medium(dueDate: Date(timeIntervalSince1970: 5))
        activity.title = "Renamed"
        let records = try #require(activity.reversion(to: original)).records()
        #expect(
            records.map(\.path.description) == [
                "title", #"childActivities[id: "00000000-0000-0000-0000-000000000001"].priority"#,
            ])
        let decoded = try JSONDecoder().decode([ChangeRecord].self, from: JSONEncoder().encode(records))
        try Reversion(records: decoded, resolvingAgainst: activity).revert(&activity)
        #expect(activity == original)
    }

    @Test func aChangeToAPropertyTheTypeNoLongerHasIsSkipped() throws {
        let record = ChangeRecord(path: [.property("fullName")], kind: "text", payload: Data("{}".utf8))
        let reversion = try Reversion<User>(
            records: [record], resolvingAgainst: User(name: "", imageData: Data()))
        #expect(reversion.paths == [])
    }

    /// A stored path that goes on into a leaf or a collection (damage, or a file written by
    /// another program) is not found: such a value has no properties to name, and its stored
    /// properties (`String._guts`, `Int._value`) are not looked at.
    @Test(arguments: [
        [PathComponent.property("note"), .property("text")],
        [.property("numbers"), .index(0), .property("value")],
        [.property("items"), .id("1"), .property("tags"), .property("count")],
        [.property("scores"), .key(#""a""#), .property("magnitude")],
    ])
    func aPathIntoALeafOrACollectionIsNotFound(components: [PathComponent]) {
        var document = Document.empty
        (document.note, document.numbers, document.scores) = ("a note", [7], ["a": 1])
        document.items = [.init(id: 1, name: "one", done: false, tags: ["x"])]
        let path = PathDescriptor(components)
        let record = ChangeRecord(path: path, kind: "replace", payload: Data(#"{"new":1,"old":2}"#.utf8))
        #expect(throws: ReversionError.pathNotFound(path: path, type: "Document")) {
            try Reversion<Document>(records: [record], resolvingAgainst: document)
        }
    }

    @Test func aPathToAMissingElementIsNotFound() {
        let path: PathDescriptor = [
            .property("childActivities"), .id(#""00000000-0000-0000-0000-000000000009""#), .property("title"),
        ]
        let record = ChangeRecord(path: path, kind: "text", payload: Data("{}".utf8))
        #expect(throws: ReversionError.pathNotFound(path: path, type: "Activity")) {
            try Reversion<Activity>(records: [record], resolvingAgainst: Activity.mock(0))
        }
    }

    @Test func aValueOfAnotherTypeDoesNotDecode() {
        let record = ChangeRecord(
            path: [.property("value")], kind: "replace", payload: Data(#"{"old":"a","new":"b"}"#.utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("value")], type: "Int",
                reason: "Expected to decode Int but found a string instead (at old); "
                    + ChangedTypeHintTests.hint("value"))
        ) {
            try Reversion<LeafTests.Box<Int>>(records: [record], resolvingAgainst: .init(value: 1))
        }
    }

    /// A collection patch whose counts do not fit what it removes and inserts (a damaged or
    /// hand-made record) would revert a value and then refuse its own inverse, or trap on an
    /// offset: it does not decode.
    @Test(arguments: [
        ("scores", "entries", #"{"inserted":{"b":2},"newCount":1,"oldCount":1,"removed":{}}"#),
        ("scores", "entries", #"{"inserted":{},"newCount":-1,"oldCount":0,"removed":{"a":1}}"#),
        ("items[id: 1].tags", "members", #"{"inserted":["x"],"newCount":2,"oldCount":2,"removed":[]}"#),
        ("items[id: 1].tags", "members", #"{"inserted":[],"newCount":0,"oldCount":0,"removed":["x"]}"#),
        (
            "numbers", "elements",
            #"{"insertions":[{"element":3,"offset":0}],"newCount":1,"oldCount":1,"removals":[]}"#
        ),
    ])
    func aCollectionPatchWhoseCountsDoNotFitDoesNotDecode(path: String, kind: String, patch: String) throws {
        var document = Document.empty
        document.scores = ["a": 1]
        document.items = [.init(id: 1, name: "one", done: false, tags: ["x"])]
        document.numbers = [3]
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: path), kind: kind, payload: Data(patch.utf8))
        #expect {
            try Reversion(records: [record], resolvingAgainst: document)
        } throws: { error in
            guard case .undecodable(let found, let type, let reason) = error as? ReversionError else {
                return false
            }
            return found.description == path
                && type
                    == [
                        "entries": "Dictionary<String, Int>", "members": "Set<String>",
                        "elements": "Array<Int>",
                    ][kind]
                && reason
                    == (kind == "elements"
                        ? "The offsets do not fit the stored counts"
                        : "The stored counts do not fit the members removed and inserted")
        }
    }

    /// Records two of whose changes reach the same place (however the path spells a key), or
    /// one inside another's leaf, are refused: each change is checked before any is applied,
    /// so the second would be applied unchecked to what the first left. Two text patches of one
    /// title stopped the process (a range that no longer fit).
    @Test(arguments: [
        (
            "title", "text", #"{"new":"ab","newCount":2,"offset":0,"old":"a","oldCount":1}"#,
            "title", "text", #"{"new":"ab","newCount":2,"offset":0,"old":"a","oldCount":1}"#, "String"
        ),
        (
            #"scores[key: "a"]"#, "replace", #"{"new":1,"old":0}"#,
            #"scores[key: "a"]"#, "replace", #"{"new":1,"old":5}"#, "Int"
        ),
        (
            "tint", "replace", #"{"new":{"rgb":{"r":1,"g":2,"b":3}},"old":{"none":{}}}"#,
            "tint.rgb.g", "replace", #"{"new":2,"old":7}"#, "Tint"
        ),
        (
            "tint.rgb", "replace", #"{"new":{"r":1,"g":2,"b":3},"old":{"r":1,"g":2,"b":4}}"#,
            "tint.rgb.g", "replace", #"{"new":2,"old":7}"#, "Tint"
        ),
    ])
    func changesThatOverlapAreRefused(
        firstPath: String, firstKind: String, firstPatch: String, secondPath: String, secondKind: String,
        secondPatch: String, type: String
    ) throws {
        var document = Document.empty
        document.title = "ab"
        document.scores = ["a": 1]
        document.tint = .rgb(r: 1, g: 2, b: 3)
        let records = [
            ChangeRecord(
                path: try PathDescriptor(parsing: firstPath), kind: firstKind, payload: Data(firstPatch.utf8)),
            ChangeRecord(
                path: try PathDescriptor(parsing: secondPath), kind: secondKind,
                payload: Data(secondPatch.utf8)),
        ]
        #expect(
            throws: ReversionError.undecodable(
                path: try PathDescriptor(parsing: secondPath), type: type,
                reason:
                    "it overlaps the change at `\(try PathDescriptor(parsing: firstPath))` of the same reversion"
            )
        ) {
            try Reversion(records: records, resolvingAgainst: document)
        }
        // Each alone is a reversion of its own.
        for record in records {
            _ = try Reversion(records: [record], resolvingAgainst: document)
        }
    }

    /// What a diff records of a collection whose structure and elements both changed (a
    /// structure patch, and changes inside elements), or of several parts of one `Codable`
    /// value, is not an overlap.
    @Test func aCollectionsStructureAndItsElementsChangedTogetherAreNoOverlap() throws {
        var document = Document.empty
        document.items = [.init(id: 1, name: "one", done: false, tags: [])]
        document.nested = ["n": .init(id: 9, name: "nine", done: false, tags: [])]
        document.tint = .rgb(r: 1, g: 2, b: 3)
        let original = document
        document.items.insert(.init(id: 2, name: "two", done: false, tags: []), at: 0)
        document.items[1].name = "uno"
        document.nested["m"] = .init(id: 8, name: "eight", done: true, tags: [])
        document.nested["n"]?.tags = ["x"]
        document.tint = .rgb(r: 4, g: 5, b: 3)
        let records = try expectRoundTrip(original, document)
        #expect(
            records.map(\.path.description).sorted() == [
                #"items"#, #"items[id: 1].name"#, #"nested"#, #"nested[key: "n"].tags"#,
                "tint.rgb.g", "tint.rgb.r",
            ])
    }

    @Test func aRecordOfAnotherKindIsRefused() {
        let record = ChangeRecord(path: [.property("name")], kind: "bytes", payload: Data("{}".utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("name")], type: "String",
                reason: #"stored as a "bytes" change, expected "text"; "# + ChangedTypeHintTests.hint("name"))
        ) {
            try Reversion<User>(records: [record], resolvingAgainst: User(name: "", imageData: Data()))
        }
    }

    @Test func aNonCodableValueWorksInMemoryAndNamesItselfWhenStored() throws {
        var value = HoldsOpaque(opaque: Opaque(token: 1))
        let original = value
        value.opaque.token = 2
        let reversion = try #require(value.reversion(to: original))
        #expect(throws: ReversionError.notEncodable(path: [.property("opaque")], type: "Opaque")) {
            try reversion.records()
        }
        try reversion.revert(&value)
        #expect(value.opaque == original.opaque)
    }

    @Test func commonPatchesAreWrittenAsTheEncoderWritesThem() throws {
        // Written directly for speed: the bytes must be the encoder's, value for value.
        let encoder = ChangeRecord.makeEncoder()
        func check<Value: Versionable & Equatable & Codable>(_ old: Value, _ new: Value) throws {
            var value = LeafTests.Box(value: new)
            let reversion = try #require(value.reversion(to: LeafTests.Box(value: old)))
            let record = try #require(try reversion.records().first)
            let patch = try #require(reversion.changes.first?.node.leafPatch as? any Encodable)
            #expect(
                String(decoding: record.payload, as: UTF8.self)
                    == String(decoding: try encoder.encode(patch), as: UTF8.self))
            try Reversion(records: [record], resolvingAgainst: value).revert(&value)
            #expect(value.value == old)
        }
        for (old, new) in [(0, 1), (-7, Int.max), (Int.min, 3)] { try check(old, new) }
        for (old, new) in [
            (2.0, 2.5), (0.1, 1e16), (1e21, 1e-7), (-0.0, 1.0 / 3),
            (Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude),
        ] {
            try check(old, new)
        }
        try check(true, false)
        try check(Int64(5), Int64.max)
        try check(UInt64.max, 0)
        try check(Int32.min, Int32.max)
        try check(UInt(0), UInt.max)
        for (old, new) in [
            ("", "a"), ("plain", "plain text"), ("a\"b\\c/d", "a\"b\\c/d\n\t\u{1}\u{8}\u{C}\r"),
            ("é😀", "é😀!"),
            (String(repeating: "long text ", count: 60), String(repeating: "long text ", count: 60) + "end"),
        ] {
            try check(old, new)
        }
    }

    @Test func errorsSayWhatAndWhere() {
        #expect(
            ReversionError.pathNotFound(path: [.property("fullName")], type: "User").description
                == "The stored path `fullName` does not name a tracked location of User.")
        #expect(
            ReversionError.wrongVersion(path: [], reason: "x").description
                == "The value at (root) is not the version this reversion was made from: x.")
    }
}

/// The same change is stored as the same bytes, whatever order its sets and dictionaries
/// iterate in: that order differs between two equal values built differently (and between
/// two runs of a set operation), so records list members and entries in the order of their
/// JSON.
@Suite struct CanonicalRecordTests {
    struct Tagged: Versionable, Equatable, Codable {
        var tags: Set<String>
        var scores: [String: Int]
    }

    /// `words` in a set whose storage is sized by `capacity` and filled in `words`' order.
    static func set(_ words: [String], capacity: Int) -> Set<String> {
        var set = Set<String>(minimumCapacity: capacity)
        for word in words { set.insert(word) }
        return set
    }

    static func scores(_ words: [String], capacity: Int, plus bonus: Int) -> [String: Int] {
        var scores = [String: Int](minimumCapacity: capacity)
        for (index, word) in words.enumerated() { scores[word] = index + bonus }
        return scores
    }

    @Test func aSetsMembersAreStoredInTheOrderOfTheirJSON() throws {
        let words = ["x", "same", "other", "more", "words", "kept"]
        let old = Tagged(tags: ["kept", "gone", "dropped"], scores: [:])
        var payloads: Set<String> = []
        for round in 0..<40 {
            let new = Tagged(
                tags: Self.set(round.isMultiple(of: 2) ? words : words.reversed(), capacity: round * 3),
                scores: [:])
            let records = try #require(new.reversion(to: old)).records()
            try #require(records.map(\.kind) == ["members"])
            payloads.insert(String(decoding: records[0].payload, as: UTF8.self))
        }
        #expect(
            payloads == [
                #"{"inserted":["more","other","same","words","x"],"newCount":6,"oldCount":3,"removed":["dropped","gone"]}"#
            ])
    }

    @Test func aDictionarysChangedEntriesAreRecordedInTheOrderOfTheirKeys() throws {
        let words = ["x", "same", "other", "more", "words", "kept"]
        var orders: Set<[String]> = []
        for round in 0..<40 {
            let ordered = round.isMultiple(of: 2) ? words : words.reversed()
            let old = Tagged(tags: [], scores: Self.scores(ordered, capacity: round * 3, plus: 0))
            var new = old
            for word in words { new.scores[word]! += 100 }
            orders.insert(try #require(new.reversion(to: old)).records().map(\.path.description))
        }
        #expect(
            orders == [
                [
                    #"scores[key: "kept"]"#, #"scores[key: "more"]"#, #"scores[key: "other"]"#,
                    #"scores[key: "same"]"#, #"scores[key: "words"]"#, #"scores[key: "x"]"#,
                ]
            ])
    }
}
