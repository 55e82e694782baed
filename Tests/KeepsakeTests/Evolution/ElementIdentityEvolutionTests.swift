import Foundation
import TestSupport
import Testing

@testable import Keepsake

/// The first release of a list whose items are stored by position (`items[2].name`) or by id
/// (`items[id: 3].name`), depending on whether its item type was `Identifiable`.
enum OldListApp {
    struct PlainItem: Codable, Equatable {
        var id: Int
        var name: String
        var done = false
    }

    struct IdentifiedItem: Codable, Equatable, Identifiable {
        var id: Int
        var name: String
        var done = false
    }

    struct List<Item: Codable & Equatable & Sendable>: Versionable, Equatable, Codable {
        var items: [Item] = []
        var title = ""
    }

    /// Items inserted, renamed, removed, swapped, appended and reversed; the title set.
    static func versions<Item>(making item: (Int, String) -> Item) -> [List<Item>]
    where Item: Codable & Equatable & Sendable {
        var list = List<Item>()
        var versions = [list]
        func record(_ edit: (inout List<Item>) -> Void) {
            edit(&list)
            versions.append(list)
        }
        record { $0.items = (1...6).map { item($0, "item \($0)") } }
        record { $0.items[2] = item(3, "renamed 3") }
        record { $0.items.insert(item(7, "item 7"), at: 1) }
        record { $0.items.remove(at: 4) }
        record { $0.items.swapAt(0, 5) }
        record { $0.title = "ticked" }
        record { $0.items.append(item(8, "item 8")) }
        record { $0.items.reverse() }
        record { $0.items[6] = item(1, "last") }
        return versions
    }

    static let plain = versions { PlainItem(id: $0, name: $1) }
    static let identified = versions { IdentifiedItem(id: $0, name: $1) }

    static func write(path: String, identified: Bool, closing: Bool) throws {
        let store = try KeepsakeStore(path: path)
        if identified {
            let history = try store.history("doc", initialValue: Self.identified[0])
            for version in Self.identified.dropFirst() { try history.append(version) }
            if closing { try history.close() }
        } else {
            let history = try store.history("doc", initialValue: plain[0])
            for version in plain.dropFirst() { try history.append(version) }
            if closing { try history.close() }
        }
    }
}

/// An app update that changes how the items of a list are told apart: an item type that
/// becomes `Identifiable`, one that stops being it, one whose `id` is now computed from
/// another property. The stored changes name items by position or by the old id; each history
/// opens at the old app's value, undoes to the start, redoes to the end and takes new edits,
/// which undo and redo alongside the old ones.
@MainActor @Suite struct ElementIdentityEvolutionTests {
    let directory = TemporaryDirectory()

    /// Today's item, told apart by its name.
    struct NamedItem: Codable, Equatable, Identifiable {
        var number: Int
        var name: String
        var done = false
        var id: String { name }

        enum CodingKeys: String, CodingKey {
            case number = "id"
            case name, done
        }
    }

    /// Today's item, its id a text since: the old numbers converted.
    struct TextIDItem: Versionable, Codable, Equatable, Identifiable {
        var id: String
        var name: String
        var done = false

        static let propertyEvolution: [PropertyEvolution] = [
            .converted("id", from: Int.self) { "item-\($0)" }
        ]
    }

    func oldStore(identified: Bool, closing: Bool) async throws -> String {
        let path = directory.path("list-\(identified)-\(closing).keepsake")
        await #expect(processExitsWith: .success) {
            [path = path as String, identified = identified as Bool, closing = closing as Bool] in
            try OldListApp.write(path: path, identified: identified, closing: closing)
        }
        // The old app stored the rename by position, or by id.
        #expect(
            try KeepsakeStore(path: path).changes(ofVersion: 2, in: "doc")?.map(\.path)
                == [identified ? "items[id: 3].name" : "items[2].name"])
        return path
    }

    /// The old app's versions read as today's items (the same JSON).
    static func updated<Old: Encodable, Item: Decodable>(_ versions: [Old], to: Item.Type) throws
        -> [OldListApp.List<Item>]
    {
        try JSONDecoder().decode([OldListApp.List<Item>].self, from: JSONEncoder().encode(versions))
    }

    /// The old app's versions read as today's items, then new edits: an item inserted, one
    /// removed, one ticked (a change inside an item, stored as today's model names it).
    func expectUpdate<Old: Encodable, Item: Codable & Equatable & Sendable>(
        _ old: [Old], identified: Bool, to item: Item.Type, closing: Bool,
        reading updated: ([Old]) throws -> [OldListApp.List<Item>] = { try updated($0, to: Item.self) },
        adding: (Int, String) -> Item, ticking: (inout Item) -> Void
    ) async throws {
        let path = try await oldStore(identified: identified, closing: closing)
        var expected = try updated(old)
        try ModelEvolutionTests.expectHistory(at: path, initialValue: .init(), expected: expected)

        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: OldListApp.List<Item>())
        var next = expected.last!
        next.items.insert(adding(9, "item 9"), at: 2)
        try history.append(next)
        expected.append(next)
        next.items.removeFirst()
        try history.append(next)
        expected.append(next)
        ticking(&next.items[3])
        try history.append(next)
        expected.append(next)
        try ModelEvolutionTests.expectUndoAndRedo(history, through: expected)
        // And once more, in the next process (as far as a store is one).
        try ModelEvolutionTests.expectHistory(at: path, initialValue: .init(), expected: expected)
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test(arguments: [true, false])
    func itemsStoredByPositionReadWhenTheItemBecomesIdentifiable(closing: Bool) async throws {
        try await expectUpdate(
            OldListApp.plain, identified: false, to: OldListApp.IdentifiedItem.self, closing: closing,
            adding: { OldListApp.IdentifiedItem(id: $0, name: $1) }, ticking: { $0.done = true })
    }

    @Test(arguments: [true, false])
    func itemsStoredByIdReadWhenTheItemIsNoLongerIdentifiable(closing: Bool) async throws {
        try await expectUpdate(
            OldListApp.identified, identified: true, to: OldListApp.PlainItem.self, closing: closing,
            adding: { OldListApp.PlainItem(id: $0, name: $1) }, ticking: { $0.done = true })
    }

    @Test(arguments: [true, false])
    func itemsStoredByIdReadWhenTheIdIsNowAnotherProperty(closing: Bool) async throws {
        try await expectUpdate(
            OldListApp.identified, identified: true, to: NamedItem.self, closing: closing,
            adding: { NamedItem(number: $0, name: $1) }, ticking: { $0.done = true })
    }

    /// The id's type changed (a number to a text), its conversion declared: the old changes
    /// name items by the old ids, the new ones by the new. Checking the history replayed every
    /// version on the base value's stored form, where the new ids are not: it failed at the
    /// first new change inside an item, though the history opened, undid and redid rightly.
    @Test(arguments: [true, false])
    func itemsStoredByIdReadWhenTheIdsTypeChanged(closing: Bool) async throws {
        try await expectUpdate(
            OldListApp.identified, identified: true, to: TextIDItem.self, closing: closing,
            reading: { versions in
                versions.map { list in
                    OldListApp.List(
                        items: list.items.map {
                            TextIDItem(id: "item-\($0.id)", name: $0.name, done: $0.done)
                        },
                        title: list.title)
                }
            },
            adding: { TextIDItem(id: "item-\($0)", name: $1) }, ticking: { $0.done = true })
    }
}
