import Foundation
import Testing

@testable import Keepsake

/// An app update renamed an optional property of its element type, and declared the rename in
/// that type's `propertyEvolution`. Stored JSON holding the old name decoded with the standard
/// decoder all the same, which ignored the old key and read `nil`: every stored comment was lost
/// on opening, undoing, redoing and restoring, silently. Such JSON is now read by the merge,
/// whichever type declared the rename (an element's, one in an enum's payload, one in a
/// collection of the app's own whose elements no stored property shows); JSON without the old
/// name still reads with the standard decoder alone.
@MainActor @Suite struct RenamedElementPropertyTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("renamed.keepsake") }

    /// A collection of the app's own that keeps its elements where no stored property shows
    /// their type (as `Any`, as a ring buffer keeps them in memory it allocates), coded as an
    /// array. Its items' comments were read as `nil` even once the walk looked for old names
    /// in every element type: it did not see into this one.
    struct Bag<Element: Codable & Equatable>: Codable, Equatable {
        private var storage: [Any]

        init(_ elements: [Element] = []) { storage = elements }

        var elements: [Element] {
            get { storage.map { $0 as! Element } }
            set { storage = newValue }
        }

        init(from decoder: any Decoder) throws { storage = try [Element](from: decoder) }
        func encode(to encoder: any Encoder) throws { try elements.encode(to: encoder) }
        static func == (a: Self, b: Self) -> Bool { a.elements == b.elements }
    }

    /// The first release: an item's text is its `comment`.
    enum Old {
        struct Item: Codable, Equatable, Identifiable {
            var id: Int
            var comment: String?
        }

        enum Block: Codable, Equatable {
            case item(Item)
            case rule
        }

        struct Doc: Versionable, Equatable, Codable {
            var items: [Item] = []
            var byName: [String: Item] = [:]
            var blocks: [Block] = []
            var bag = Bag<Item>()
        }
    }

    /// Today's item: `comment` became `note`, declared.
    struct Item: Versionable, Codable, Equatable, Identifiable {
        var id: Int
        var note: String?

        static let propertyEvolution: [PropertyEvolution] = [.renamed("comment", to: "note")]
    }

    enum Block: Codable, Equatable {
        case item(Item)
        case rule
    }

    struct Doc: Versionable, Equatable, Codable {
        var items: [Item] = []
        var byName: [String: Item] = [:]
        var blocks: [Block] = []
        var bag = Bag<Item>()
    }

    /// Items inserted (one without a comment), commented, edited, named, a name whose key is the
    /// old property name, items in an enum's payload and in a collection of the app's own.
    static let versions: [Old.Doc] = [
        { _ in }, { $0.items = [.init(id: 1, comment: "first"), .init(id: 2, comment: nil)] },
        { $0.items[1].comment = "second" }, { $0.items[0].comment = "changed" },
        { $0.byName["a"] = .init(id: 3, comment: "named") },
        {
            $0.byName["a"]?.comment = nil
            $0.items.append(.init(id: 4, comment: "fourth"))
        },
        { $0.byName["comment"] = .init(id: 5, comment: "keyed") },
        { $0.blocks = [.rule, .item(.init(id: 6, comment: "in a block"))] },
        { $0.blocks.append(.item(.init(id: 7, comment: nil))) },
        { $0.bag = Bag([.init(id: 8, comment: "in a bag")]) },
        { $0.bag.elements[0].comment = "edited in a bag" },
    ].reduce(into: []) { (versions: inout [Old.Doc], step: (inout Old.Doc) -> Void) in
        var doc = versions.last ?? Old.Doc()
        step(&doc)
        versions.append(doc)
    }

    static func updated(_ item: Old.Item) -> Item { Item(id: item.id, note: item.comment) }

    static func updated(_ doc: Old.Doc) -> Doc {
        Doc(
            items: doc.items.map(updated), byName: doc.byName.mapValues(updated),
            blocks: doc.blocks.map {
                switch $0 {
                case .item(let item): .item(updated(item))
                case .rule: .rule
                }
            }, bag: Bag(doc.bag.elements.map(updated)))
    }

    func write(closing: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Self.versions[0])
        for version in Self.versions.dropFirst() { try history.append(version) }
        try Caretaker(store: store).save(Self.versions.last!, as: "last")
        if closing { try history.close() }
    }

    @Test(arguments: [true, false])
    func everyVersionReadsTheRenamedPropertyFromItsOldName(closing: Bool) throws {
        try write(closing: closing)
        try ModelEvolutionTests.expectHistory(
            at: path, initialValue: Doc(), expected: Self.versions.map(Self.updated))

        try ModelEvolutionTests().moveSnapshots(at: path, to: Doc.self)
        let caretaker = try Caretaker(store: KeepsakeStore(path: path))
        #expect(try caretaker.restore("last", as: Doc.self) == Self.updated(Self.versions.last!))
        #expect(
            try caretaker.value(at: "items[id: 1]", in: "last", of: Doc.self) == Item(id: 1, note: "changed"))
        #expect(
            try caretaker.value(at: "items", in: "last", of: Doc.self)
                == Self.updated(Self.versions.last!).items)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    /// How many stored values there are, how many hold the old name as an item's key and how
    /// many the new one, and when each was written.
    func checkpoints() throws -> (all: Int64, old: Int64, new: Int64, written: String) {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        defer { connection.close() }
        func count(_ condition: String) throws -> Int64 {
            try connection.scalarInt("SELECT count(*) FROM checkpoint WHERE \(condition)") ?? -1
        }
        return (
            try count("1"), try count(#"value LIKE '%"comment":"changed","id":1}%'"#),
            try count(#"value LIKE '%{"id":1,"note":"changed"}%'"#),
            try connection.query("SELECT group_concat(created_at, ' ') FROM checkpoint") { $0.text(0) }
                .first?.flatMap { $0 } ?? ""
        )
    }

    /// The first open stores the value in today's model; the next reads it with the standard
    /// decoder, and writes nothing, though a dictionary key is still the old name.
    @Test func theFirstOpenStoresTheValueInTodaysModel() throws {
        try write(closing: true)
        let written = try checkpoints()
        #expect((written.old, written.new) == (1, 0))
        let expected = Self.updated(Self.versions.last!)
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc())
        #expect(history.value == expected)
        let opened = try checkpoints()
        // The head's checkpoint, stored again.
        #expect((opened.all, opened.old, opened.new) == (written.all, 0, 1))
        #expect(opened.written != written.written)

        let again = try KeepsakeStore(path: path).history("doc", initialValue: Doc())
        #expect(again.value == expected)
        #expect(try checkpoints() == opened)
        try again.checkInvariants()
    }

    /// A board object as the old app had it: its items stored, and a reference to its first.
    final class OldBoard: RestorableObject {
        @Restorable var items: [Old.Item] = []
        var first: Old.Item? {
            get { items.first }
            set { newValue.map { items = [$0] + items.dropFirst() } }
        }

        var references: [Reference<OldBoard>] { Reference(name: "first", keyPath: \.first) }
    }

    final class Board: RestorableObject {
        @Restorable var items: [Item] = []
        var first: Item? {
            get { items.first }
            set { newValue.map { items = [$0] + items.dropFirst() } }
        }

        var references: [Reference<Board>] { Reference(name: "first", keyPath: \.first) }
    }

    /// A restorable object's properties and references, and a snapshot's properties read one by
    /// one, read the renamed property of their elements.
    @Test func restorableObjectsReadTheRenamedPropertyFromItsOldName() throws {
        let old = OldBoard()
        old.items = Self.versions.last!.items
        try old.takeSnapshot(withKey: "saved", in: Caretaker(store: KeepsakeStore(path: path)))
        try ModelEvolutionTests().moveSnapshots(at: path, to: Board.self)

        let board = Board()
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try board.restore(withKey: "saved", from: caretaker)
        let expected = Self.updated(Self.versions.last!).items
        #expect(board.items == expected && board.first == expected.first)
        let properties = try board.properties(withKey: "saved", from: caretaker)
        #expect(try properties.value("items", as: [Item].self) == expected)
        #expect(try properties.value("first", as: Item?.self) == expected.first)
    }

    enum OldPrice {
        struct Line: Versionable, Equatable, Codable {
            var cents: Int
            var label = ""
        }
    }

    /// Cents became dollars: renamed, and converted from the old type, whose JSON (`150`) a
    /// `Double` reads too.
    struct Line: Versionable, Equatable, Codable {
        var dollars: Double
        var label = ""

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("cents", to: "dollars"),
            .converted("dollars", from: Int.self) { Double($0) / 100 },
        ]
    }

    /// A value stored under a property's old name is converted though it reads as the new type
    /// too: it was read as it stood, 300 cents becoming 300 dollars, in the checkpoint and in the
    /// snapshot; and redoing the first change, from 0 (the same in both), gave 275 dollars.
    /// The first open stores the value converted, and the next opens read that as it stands.
    @Test(arguments: [true, false])
    func aValueUnderItsOldNameIsConvertedThoughItReadsAsTheNewType(closing: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: OldPrice.Line(cents: 0))
        try history.append(OldPrice.Line(cents: 275))
        try history.append(OldPrice.Line(cents: 275, label: "sale"))
        try history.append(OldPrice.Line(cents: 300, label: "sale"))
        try Caretaker(store: store).save(history.value, as: "last")
        if closing { try history.close() }

        let expected = [
            Line(dollars: 0), Line(dollars: 2.75), Line(dollars: 2.75, label: "sale"),
            Line(dollars: 3, label: "sale"),
        ]
        try ModelEvolutionTests.expectHistory(at: path, initialValue: Line(dollars: 0), expected: expected)
        // Opened again, by then stored in today's model.
        try ModelEvolutionTests.expectHistory(at: path, initialValue: Line(dollars: 0), expected: expected)
        try ModelEvolutionTests().moveSnapshots(at: path, to: Line.self)
        #expect(
            try Caretaker(store: KeepsakeStore(path: path)).restore("last", as: Line.self) == expected.last)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    final class OldWallet: RestorableObject {
        @Restorable var cents = 0
    }

    final class Wallet: RestorableObject {
        @Restorable var dollars = 0.0

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("cents", to: "dollars"),
            .converted("dollars", from: Int.self) { Double($0) / 100 },
        ]
    }

    /// A restorable object's property stored under its old name is converted too, though it
    /// reads as the new type (it was restored as 275 dollars).
    @Test func aRestorablePropertyUnderItsOldNameIsConverted() throws {
        let old = OldWallet()
        old.cents = 275
        try old.takeSnapshot(withKey: "saved", in: Caretaker(store: KeepsakeStore(path: path)))
        try ModelEvolutionTests().moveSnapshots(at: path, to: Wallet.self)
        let wallet = Wallet()
        try wallet.restore(withKey: "saved", from: Caretaker(store: KeepsakeStore(path: path)))
        #expect(wallet.dollars == 2.75)
    }
}
