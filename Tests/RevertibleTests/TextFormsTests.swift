import Foundation
import Testing

@testable import Revertible

/// Text changed only in its Unicode normalization, deep inside values `==` finds equal: each
/// is recorded, undone to the old bytes and redone to the new ones. Before, a struct held in
/// an array or a dictionary that `==` found equal was passed over: the change went unrecorded,
/// the value kept the new bytes and the history the old.
@Suite struct TextFormsTests {
    static let (composed, decomposed) = (
        "caf\u{E9} au lait, a name long enough for the heap",
        "cafe\u{301} au lait, a name long enough for the heap"
    )

    struct Address: Codable, Equatable {
        var street: String
        var lines: [String]
        var floor: Int
    }

    /// Plain structs, neither `Versionable` nor `Identifiable`, nested in each other.
    struct Contact: Codable, Equatable {
        var name: String
        var nickname: String?
        var address: Address
        var previous: Address?
        var labels: [String: String]
    }

    struct Tag: Identifiable, Codable, Equatable, Versionable {
        let id: Int
        var contacts: [Contact]
    }

    struct Book: Codable, Equatable, Versionable {
        var contacts: [Contact]
        var byName: [String: Contact]
        var tags: [Tag]
    }

    static let contact = Contact(
        name: "name", nickname: "nick", address: Address(street: "street", lines: ["a", "b"], floor: 2),
        previous: Address(street: "old", lines: [], floor: 0), labels: ["k": "v"])

    static let book = Book(
        contacts: [contact, contact], byName: ["x": contact], tags: [Tag(id: 7, contacts: [contact])])

    /// Each place `text` can be put in a contact, with its path below the contact.
    static let places: [(path: String, set: @Sendable (inout Contact, String) -> Void)] = [
        ("name", { $0.name = $1 }), ("nickname", { $0.nickname = $1 }),
        ("address.street", { $0.address.street = $1 }), ("address.lines[1]", { $0.address.lines[1] = $1 }),
        ("previous.street", { $0.previous?.street = $1 }), (#"labels[key: "k"]"#, { $0.labels["k"] = $1 }),
    ]

    /// Each contact's place of a book, with its path.
    static let contacts: [(path: String, edit: @Sendable (inout Book, (inout Contact) -> Void) -> Void)] = [
        ("contacts[1]", { $1(&$0.contacts[1]) }), (#"byName[key: "x"]"#, { $1(&$0.byName["x"]!) }),
        ("tags[id: 7].contacts[0]", { $1(&$0.tags[0].contacts[0]) }),
    ]

    @Test(arguments: 0..<places.count, 0..<contacts.count)
    func textInTheOtherFormIsRecordedAtItsPlace(place: Int, contact: Int) throws {
        let (placePath, set) = Self.places[place]
        let (contactPath, edit) = Self.contacts[contact]
        var old = Self.book
        edit(&old) { set(&$0, Self.composed) }
        // Another copy decoded again: equal parts of it lie in other memory, as after a reload.
        old = try JSONDecoder().decode(Book.self, from: JSONEncoder().encode(old))
        var new = Self.book
        edit(&new) { set(&$0, Self.decomposed) }
        #expect(new == old)
        let reversion = try #require(new.reversion(to: old))
        #expect(reversion.paths.map(\.description) == ["\(contactPath).\(placePath)"])
        let undone = try reversion.reverted(new)
        #expect(try json(undone) == json(old))
        let redone = try reversion.inverse.reverted(undone)
        #expect(try json(redone) == json(new))
        // Through records, as a store keeps it.
        let stored = try Reversion(records: reversion.records(), resolvingAgainst: new)
        #expect(try json(stored.reverted(new)) == json(old))
        #expect(try json(undone) != json(new))
    }

    /// The JSON of `book`, whose bytes hold the text's bytes.
    func json(_ book: Book) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(book)
    }

    @Test func equalValuesDecodedAgainAreNoChange() throws {
        let again = try JSONDecoder().decode(Book.self, from: JSONEncoder().encode(Self.book))
        #expect(again.reversion(to: Self.book) == nil)
        #expect(Self.book.reversion(to: again) == nil)
    }

    /// A type that holds itself: its check is found without end, and reaches any depth.
    @Test func aTreeIsReadToAnyDepth() throws {
        struct Node: Codable, Equatable {
            var name: String
            var children: [Node]
        }
        func tree(_ leaf: String) -> Node {
            Node(name: "root", children: [Node(name: "a", children: [Node(name: leaf, children: [])])])
        }
        let check = try #require(TextForms.check(for: Node.self))
        #expect(TextForms.differOnlyInForm(tree(Self.composed), tree(Self.decomposed), check))
        #expect(!TextForms.differOnlyInForm(tree(Self.composed), tree(Self.composed), check))
        #expect(!Equality.same(tree(Self.composed), tree(Self.decomposed)))
        #expect(Equality.same(tree(Self.composed), tree(String(Self.composed.reversed().reversed()))))
    }

    /// An enum's payload, in a property, in a struct in an array, in an array, and in an
    /// indirect enum holding itself: `==` finds each equal, the bytes differ. The diff of an
    /// enum's encoded form finds the payload's text itself (its JSON tree compares text by
    /// bytes): before, it found no change there, and its check took the other form for its own.
    @Test func anEnumsPayloadIsReadForTheCaseItHolds() throws {
        indirect enum Label: Codable, Equatable {
            case none
            case named(String)
            case pair(String, count: Int)
            case quoted(Label)
        }
        struct Row: Codable, Equatable, Identifiable {
            var id: Int
            var label: Label
        }
        struct Sheet: Codable, Equatable, Versionable {
            var label: Label
            var rows: [Row]
            var labels: [Label]
        }
        let (c, d) = (Self.composed, Self.decomposed)
        let old = Sheet(
            label: .named(c), rows: [Row(id: 1, label: .pair(c, count: 1))],
            labels: [.quoted(.named(c)), .none])
        let edits: [(path: String, edit: (inout Sheet) -> Void)] = [
            ("label.named._0", { $0.label = .named(d) }),
            ("rows[id: 1].label.pair._0", { $0.rows[0].label = .pair(d, count: 1) }),
            ("labels[0]", { $0.labels[0] = .quoted(.named(d)) }),
        ]
        for (path, edit) in edits {
            var new = old
            edit(&new)
            #expect(new == old)
            let reversion = try #require(new.reversion(to: old))
            #expect(reversion.paths.map(\.description) == [path])
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            #expect(try encoder.encode(reversion.reverted(new)) == encoder.encode(old))
            #expect(
                try encoder.encode(reversion.inverse.reverted(reversion.reverted(new))) == encoder.encode(new)
            )
        }
        #expect(Equality.same(Label.quoted(.named(c)), Label.quoted(.named(String(c.reversed().reversed())))))
        #expect(Equality.same(Label.none, Label.none))
    }

    @Test func substringsAndCharactersAreReadToo() throws {
        struct Marks: Equatable {
            var initial: Character
            var excerpt: Substring
            var initials: [Character?]
        }
        let one = Marks(initial: "\u{E9}", excerpt: Self.composed.prefix(4), initials: [nil, "\u{E9}"])
        for other in [
            Marks(initial: "e\u{301}", excerpt: one.excerpt, initials: one.initials),
            Marks(initial: one.initial, excerpt: Self.decomposed.prefix(4), initials: one.initials),
            Marks(initial: one.initial, excerpt: one.excerpt, initials: [nil, "e\u{301}"]),
        ] {
            #expect(one == other)
            #expect(!Equality.same(one, other))
        }
        #expect(
            Equality.same(
                one, Marks(initial: "\u{E9}", excerpt: Self.composed.prefix(4), initials: [nil, "\u{E9}"])))
    }

    /// The standard library's and Foundation's types are read through their layout too: never
    /// a crash; text found where it lies in the value (a range's bounds, a result's payload, a
    /// contiguous array, nested optionals and collections); not read where it is found with
    /// `==` (a set's members) or kept in a class (`AttributedString`, `AnyHashable`), as the
    /// README says.
    @Test func standardAndFoundationTypesAreReadSafely() throws {
        struct Failure: Error, Equatable { var message: String }
        let (c, d) = (Self.composed, Self.decomposed)
        #expect(!Equality.same(c..<(c + "z"), d..<(d + "z")))
        #expect(!Equality.same(Result<String, Failure>.success(c), .success(d)))
        #expect(
            !Equality.same(Result<Int, Failure>.failure(Failure(message: c)), .failure(Failure(message: d))))
        #expect(!Equality.same(ContiguousArray([c]), ContiguousArray([d])))
        #expect(!Equality.same(["k": [c, nil]], ["k": [d, nil]]))
        #expect(!Equality.same(Optional(Optional(c)), Optional(Optional(d))))
        #expect(Equality.same(Set([c]), Set([d])))
        #expect(Equality.same(AttributedString(c), AttributedString(d)))
        #expect(Equality.same(AnyHashable(c), AnyHashable(d)))
        // Equal values in other memory, read without a crash: nothing found.
        #expect(Equality.same(Locale(identifier: "fr_FR"), Locale(identifier: "fr_FR")))
        let (paris, parisAgain) = (TimeZone(identifier: "Europe/Paris"), TimeZone(identifier: "Europe/Paris"))
        #expect(Equality.same(paris, parisAgain))
        #expect(Equality.same(Calendar(identifier: .gregorian), Calendar(identifier: .gregorian)))
        #expect(
            Equality.same(
                URLComponents(string: "https://a.b/c?d=e"), URLComponents(string: "https://a.b/c?d=e")))
        #expect(Equality.same(DateComponents(year: 1, month: 2), DateComponents(year: 1, month: 2)))
        #expect(
            Equality.same(
                Measurement(value: 1, unit: UnitLength.meters), Measurement(value: 1, unit: .meters)))
        #expect(Equality.same(IndexSet([1, 5]), IndexSet([1, 5])))
        #expect(Equality.same(URL(string: "https://a.b/c"), URL(string: "https://a.b/c")))
        #expect(Equality.same(Data(c.utf8), Data(c.utf8)))
    }

    /// Types whose values hold no text have no check: comparing them costs nothing more.
    @Test func typesWithoutTextHaveNoCheck() {
        struct Point: Equatable {
            var x: Double
            var y: Double
        }
        #expect(TextForms.check(for: Int.self) == nil)
        #expect(TextForms.check(for: [Point].self) == nil)
        #expect(TextForms.check(for: [String: Point?].self) == nil)
        #expect(TextForms.check(for: Data.self) == nil)
        #expect(TextForms.check(for: UUID.self) == nil)
        #expect(TextForms.check(for: Point?.self) == nil)
        #expect(TextForms.check(for: [String].self) != nil)
    }

    /// A type's own `==` that leaves out a property still decides a change there (the README:
    /// one that compares only the `id` hides every other change); only text equal by `==` and
    /// other in bytes is taken as a change.
    @Test func aPropertyTheTypesEqualityLeavesOutStaysHidden() {
        struct Named: Equatable {
            var id: Int
            var name: String
            static func == (a: Named, b: Named) -> Bool { a.id == b.id }
        }
        #expect(
            Equality.same(
                Named(id: 1, name: Self.composed), Named(id: 1, name: "another name on the heap, longer")))
        #expect(!Equality.same(Named(id: 1, name: Self.composed), Named(id: 1, name: Self.decomposed)))
    }
}
