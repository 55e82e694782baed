import Foundation
import Testing

@testable import Revertible

/// How the JSON keys a model's `CodingKeys` give its properties are read from the type alone.
@Suite struct CodingKeyTreeTests {
    typealias Step = CodingKeyTree.Step

    enum Status: String, Codable { case draft, done }  // no raw value for a placeholder
    enum Level: Int, Codable {
        case low = 1
        case high
    }  // nor here: 0 is no case

    struct Item: Identifiable, Codable {
        var id: Int
        var label: String
        var status: Status

        enum CodingKeys: String, CodingKey {
            case id = "item_id"
            case label
            case status = "state"
        }
    }

    struct Meta: Codable {
        var author: String
        enum CodingKeys: String, CodingKey { case author = "by" }
    }

    struct Doc: Codable {
        var status: Status  // decoded before the keys after it
        var level: Level
        var subtitle: String?
        var items: [Item]
        var byName: [String: Item]
        var meta: Meta?
        var created: Date
        var bytes: Data

        enum CodingKeys: String, CodingKey {
            case status
            case level = "lvl"
            case subtitle = "sub"
            case items = "entries"
            case byName = "by_name"
            case meta
            case created = "created_at"
            case bytes
        }
    }

    @Test func eachPlaceHasItsTypesKeysWhereTheyDifferFromTheNames() {
        let tree = CodingKeyTree(for: Doc.self)
        #expect(
            tree.keys == [
                "level": "lvl", "subtitle": "sub", "items": "entries", "byName": "by_name",
                "created": "created_at",
            ])
        let itemKeys = ["id": "item_id", "status": "state"]
        #expect(tree[Step.property("items")][Step.element].keys == itemKeys)
        #expect(tree[Step.property("byName")][Step.element].keys == itemKeys)
        #expect(tree[Step.property("meta")].keys == ["author": "by"])
        #expect(tree[Step.property("status")].isEmpty)
        #expect(tree[Step.property("bytes")].isEmpty)
        // A stored path's components lead to the same places.
        #expect(tree[PathComponent.property("items")][PathComponent.id("3")].key(of: "status") == "state")
        #expect(tree[PathComponent.property("byName")][PathComponent.key("\"a\"")].key(of: "id") == "item_id")
        #expect(tree.key(of: "items") == "entries")
        #expect(tree.key(of: "status") == "status")
    }

    struct Plain: Codable {
        var title: String
        var items: [Meta?]
        var counts: [String: Int]
    }

    struct Unkeyed: Codable {
        var title: String
        var tags: Set<String>
    }

    @Test func aTypeWhoseKeysAreItsNamesMapsNothing() {
        #expect(CodingKeyTree(for: Unkeyed.self).isEmpty)
        #expect(CodingKeyTree(for: [String: Int].self).isEmpty)
        // Only the place that differs is kept: an optional element's own keys.
        let plain = CodingKeyTree(for: Plain.self)
        #expect(plain.keys.isEmpty)
        #expect(plain[Step.property("items")][Step.element].keys == ["author": "by"])
    }

    struct Node: Codable {
        var name: String
        var children: [Node]
        var note: String

        enum CodingKeys: String, CodingKey {
            case name = "n"
            case children = "kids"
            case note = "txt"
        }
    }

    /// A type inside itself is not entered again: probing a tree ends, with its first level's
    /// keys (its children stand in as an empty array).
    @Test func aRecursiveTypeIsProbedOnce() {
        let tree = CodingKeyTree(for: Node.self)
        #expect(tree.keys == ["name": "n", "children": "kids", "note": "txt"])
        #expect(tree[Step.property("children")].isEmpty)
    }

    enum Shape: Codable {
        case dot
        case line(length: Int)
    }

    struct Drawing: Codable {
        var shape: Shape
        var shapes: [Shape]
        var caption: String?

        enum CodingKeys: String, CodingKey {
            case shape
            case shapes
            case caption = "text"
        }
    }

    /// An enum with payloads is decoded from its first case's key; a value's own keys are read
    /// by encoding it, every optional's included.
    @Test func enumsWithPayloadsAreProbedAndValuesGiveTheirOwnKeys() {
        #expect(CodingKeyTree(for: Drawing.self).keys == ["caption": "text"])
        #expect(CodingKeyTree(for: [Drawing].self)[Step.element].keys == ["caption": "text"])
        let drawing = Drawing(shape: .line(length: 2), shapes: [.dot], caption: nil)
        #expect(CodingKeyTree.ownKeys(of: drawing) == ["caption": "text"])
        #expect(
            CodingKeyTree.ownKeys(of: Item(id: 1, label: "", status: .done)) == [
                "id": "item_id", "status": "state",
            ])
        #expect(
            CodingKeyTree.ownKeys(of: Node(name: "", children: [], note: "")) == [
                "name": "n", "children": "kids", "note": "txt",
            ])
        #expect(CodingKeyTree.ownKeys(of: Unkeyed(title: "", tags: [])).isEmpty)
    }

    struct Checked: Codable {
        var count: Int
        var label: String

        enum CodingKeys: String, CodingKey {
            case count = "n"
            case label = "l"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            count = try container.decode(Int.self, forKey: .count)
            guard count > 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .count, in: container, debugDescription: "empty")
            }
            label = try container.decode(String.self, forKey: .label)
        }
    }

    /// A type that checks a placeholder and throws keeps the keys it asked for before.
    @Test func aTypeThatRefusesAPlaceholderKeepsTheKeysBeforeIt() {
        #expect(CodingKeyTree(for: Checked.self).keys == ["count": "n"])
    }

    enum Only: String { case only }
    enum Plenty: String, CaseIterable { case first, second }

    @Test func enumsWithRawValuesTakeTheirFirstCase() {
        #expect(CodingKeyTree.firstCase(of: Status.self) == .draft)
        #expect(CodingKeyTree.firstCase(of: Level.self) == .low)
        #expect(CodingKeyTree.firstCase(of: Only.self) == .only)
        #expect(CodingKeyTree.firstCase(of: Plenty.self) == .first)
        #expect(CodingKeyTree.firstCase(of: UInt8.self) == nil)
        #expect(CodingKeyTree.firstCase(of: Bool.self) == nil)
        #expect(CodingKeyTree.firstCase(of: Doc.CodingKeys.self) == .status)
        #expect(CodingKeyTree.firstCase(of: String.self) == nil)
    }

    struct StructKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The runtime entry point the tree reads case names through, pinned.
    @Test func aKeysPropertyIsItsCaseName() {
        #expect(CodingKeyTree.caseName(of: Doc.CodingKeys.subtitle) == "subtitle")
        #expect(CodingKeyTree.caseName(of: Doc.CodingKeys.status) == "status")
        #expect(CodingKeyTree.caseName(of: StructKey(stringValue: "subtitle")) == nil)
    }
}
