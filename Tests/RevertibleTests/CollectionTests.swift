import Foundation
import Revertible
import Testing

@Suite struct CollectionTests {
    typealias Item = Document.Item

    static func item(_ id: Int, _ name: String = "") -> Item {
        Item(id: id, name: name.isEmpty ? "item \(id)" : name, done: false, tags: [])
    }

    static func records(_ reversion: Reversion<Document>) throws -> [String] {
        try reversion.records().map { "\($0.path) \($0.kind) \(String(decoding: $0.payload, as: UTF8.self))" }
    }

    /// An element with padding between its fields, and text that may live in its own storage.
    struct Padded: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var flag: Bool
        var text: String
        var amount: Double
    }

    struct Ledger: Versionable, Equatable, Codable {
        var rows: [Padded]
    }

    @Test func equalElementsInOtherStorageAreNotChanges() throws {
        // Built separately: the same values in other memory (long text on the heap, -0.0 vs 0.0).
        let text = { (n: Int) in String(repeating: "row \(n) ", count: 8) }
        let a = Ledger(rows: (0..<200).map { Padded(id: $0, flag: $0 % 2 == 0, text: text($0), amount: 0.0) })
        let b = Ledger(
            rows: (0..<200).map { Padded(id: $0, flag: $0 % 2 == 0, text: text($0), amount: -0.0) })
        #expect(b.reversion(to: a) == nil)
        var c = b
        c.rows[137].text += "!"
        c.rows[3].flag.toggle()
        let reversion = try #require(c.reversion(to: a))
        #expect(reversion.paths == ["rows[id: 3].flag", "rows[id: 137].text"])
        var value = c
        try reversion.revert(&value)
        #expect(value == a)
    }

    @Test func aChangeFindsItsElementWhereverItMovedSince() throws {
        // Recorded at positions 5 and 6; reverted after both moved: the search still finds them.
        let original = Ledger(rows: (0..<10).map { Padded(id: $0, flag: false, text: "\($0)", amount: 1) })
        var edited = original
        edited.rows[5].amount = 2
        edited.rows[6].text = "six"
        let reversion = try #require(edited.reversion(to: original))
        var moved = edited
        moved.rows.reverse()
        try reversion.revert(&moved)
        #expect(moved.rows.reversed() == original.rows)
        // And a change recorded with a structural change redoes in the new order.
        var reordered = original
        reordered.rows.swapAt(0, 9)
        reordered.rows[4].amount = 7
        let both = try #require(reordered.reversion(to: original))
        var value = reordered
        try both.revert(&value)
        #expect(value == original)
        try both.inverse.revert(&value)
        #expect(value == reordered)
    }

    @Test func identifiableElementsAreMatchedById() throws {
        var document = Document.empty
        document.items = [Self.item(1), Self.item(2), Self.item(3)]
        let original = document
        document.items.remove(at: 0)
        document.items[1].name = "renamed"
        document.items.append(Self.item(4))
        let reversion = try #require(document.reversion(to: original))
        #expect(
            try Self.records(reversion) == [
                #"items[id: 3].name text {"new":"renamed","newCount":7,"offset":0,"old":"item 3","oldCount":6}"#,
                #"items elements {"insertions":[{"element":{"done":false,"id":4,"name":"item 4","shape":{"dot":{}},"tags":[]},"offset":2}],"newCount":3,"oldCount":3,"removals":[{"element":{"done":false,"id":1,"name":"item 1","shape":{"dot":{}},"tags":[]},"offset":0}]}"#,
            ])
        let changed = document
        try reversion.revert(&document)
        #expect(document == original)
        try reversion.inverse.revert(&document)
        #expect(document == changed)
    }

    @Test func aMovedElementIsOneRemovalAndOneInsertion() throws {
        var document = Document.empty
        document.items = (1...5).map { Self.item($0) }
        let original = document
        document.items.append(document.items.removeFirst())
        let reversion = try #require(document.reversion(to: original))
        #expect(reversion.paths.map(\.description) == ["items"])
        try reversion.revert(&document)
        #expect(document == original)
    }

    @Test func swappingTheEndsRevertsAndRedoes() throws {
        var document = Document.empty
        document.items = [7, 3, 9, 2].map { Self.item($0) }
        let original = document
        document.items.swapAt(0, 3)
        document.items[1].name = "three"
        let changed = document
        let reversion = try #require(document.reversion(to: original))
        #expect(reversion.paths.map(\.description) == ["items[id: 3].name", "items"])
        try reversion.revert(&document)
        #expect(document == original)
        try reversion.inverse.revert(&document)
        #expect(document == changed)
    }

    @Test func plainArraysTrimTheCommonEnds() throws {
        var document = Document.empty
        document.numbers = Array(0..<1000)
        let original = document
        document.numbers.insert(-1, at: 500)
        let reversion = try #require(document.reversion(to: original))
        #expect(
            try Self.records(reversion) == [
                #"numbers elements {"insertions":[{"element":-1,"offset":500}],"newCount":1001,"oldCount":1000,"removals":[]}"#
            ])
        try reversion.revert(&document)
        #expect(document == original)
    }

    @Test func plainArraysOfTheSameLengthRecordEachChangedIndex() throws {
        var document = Document.empty
        document.numbers = [1, 2, 3, 4]
        let original = document
        document.numbers[1] = 20
        document.numbers[3] = 40
        let reversion = try #require(document.reversion(to: original))
        #expect(reversion.paths.map(\.description) == ["numbers[1]", "numbers[3]"])
        try reversion.revert(&document)
        #expect(document == original)
    }

    @Test func dictionaryValuesAreRecordedBelowTheirKeys() throws {
        var document = Document.empty
        document.scores = ["alice": 1, "bob": 2]
        document.nested = ["a": Self.item(1)]
        let original = document
        document.scores["alice"] = 10
        document.scores["bob"] = nil
        document.scores["carol"] = 3
        document.nested["a"]?.tags.insert("x")
        let reversion = try #require(document.reversion(to: original))
        #expect(
            try Self.records(reversion) == [
                #"scores[key: "alice"] replace {"new":10,"old":1}"#,
                #"scores entries {"inserted":{"carol":3},"newCount":2,"oldCount":2,"removed":{"bob":2}}"#,
                #"nested[key: "a"].tags members {"inserted":["x"],"newCount":1,"oldCount":0,"removed":[]}"#,
            ])
        try reversion.revert(&document)
        #expect(document == original)
    }

    /// An `Identifiable` element's `id` is a `let`, which a `Versionable` element does not
    /// track: another element that holds the same tracked values (two untitled items) is still
    /// not the one a patch recorded. Taken out, it would come back with the recorded id.
    @Test func anotherElementWithTheSameValuesIsTheWrongVersion() throws {
        var document = Document.empty
        let original = document
        document.items = [Self.item(1, "Untitled")]
        let reversion = try #require(document.reversion(to: original))
        let stored = try Reversion(records: try reversion.records(), resolvingAgainst: document)
        var other = Document.empty
        other.items = [Self.item(2, "Untitled")]
        for reversion in [reversion, stored] {
            var value = other
            #expect(
                throws: ReversionError.wrongVersion(
                    path: try PathDescriptor(parsing: "items"), reason: "the element at 0 differs")
            ) {
                try reversion.revert(&value)
            }
            #expect(value == other)
        }
        try stored.revert(&document)
        #expect(document == original)
    }

    @Test func aMissingElementIsTheWrongVersion() throws {
        var document = Document.empty
        document.items = [Self.item(1)]
        let original = document
        document.items[0].name = "changed"
        let reversion = try #require(document.reversion(to: original))
        document.items = [Self.item(2)]
        #expect(
            throws: ReversionError.wrongVersion(
                path: try PathDescriptor(parsing: "items[id: 1].name"), reason: "no element at [id: 1]")
        ) {
            try reversion.revert(&document)
        }
    }
}
