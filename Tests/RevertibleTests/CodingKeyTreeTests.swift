import Foundation
import Testing

@testable import Revertible

/// How the JSON keys a model's `CodingKeys` give its properties are found: types by
/// reflection, keys from real values.
@Suite struct CodingKeyTreeTests {
    enum Status: String, Codable { case draft, done }

    struct Item: Identifiable, Codable, Equatable {
        var id: Int
        var label: String
        var status: Status

        enum CodingKeys: String, CodingKey {
            case id = "item_id"
            case label
            case status = "state"
        }
    }

    struct Meta: Codable, Equatable {
        var author: String
        enum CodingKeys: String, CodingKey { case author = "by" }
    }

    enum Shape: Codable, Equatable {
        case dot
        case line(length: Int)
    }

    struct Doc: Codable, Equatable {
        var shape: Shape  // an enum with payloads, before the keys after it
        var subtitle: String?
        var items: [Item]
        var byName: [String: Item]
        var meta: Meta?
        var tags: Set<String>

        enum CodingKeys: String, CodingKey {
            case shape
            case subtitle = "sub"
            case items = "entries"
            case byName = "by_name"
            case meta
            case tags
        }
    }

    static let doc = Doc(
        shape: .line(length: 2), subtitle: nil, items: [Item(id: 1, label: "one", status: .done)],
        byName: ["a": Item(id: 2, label: "two", status: .draft)], meta: Meta(author: "me"), tags: ["x"])

    /// `value`'s JSON, as a stored form holds it.
    static func node(_ value: some Encodable) throws -> CodedNode {
        try #require(CodedNode.parsing(ChangeRecord.makeEncoder().encode(value)))
    }

    static let decoder = ChangeRecord.makeDecoder()

    @Test func eachPlacesKeysAreReadFromTheStoredValueThere() throws {
        let root = CodingKeyTree(for: Doc.self)
        let json = try Self.node(Self.doc)
        #expect(root.key(of: "subtitle", in: json, decoder: Self.decoder) == "sub")
        #expect(root.key(of: "items", in: json, decoder: Self.decoder) == "entries")
        #expect(root.key(of: "shape", in: json, decoder: Self.decoder) == "shape")
        #expect(root.key(of: "nothing", in: json, decoder: Self.decoder) == "nothing")
        let item = try Self.node(Self.doc.items[0])
        #expect(
            root[.property("items")][.id("1")].key(of: "id", in: item, decoder: Self.decoder) == "item_id")
        #expect(
            root[.property("items")][.index(0)].key(of: "status", in: item, decoder: Self.decoder) == "state")
        #expect(
            root[.property("byName")][.key("\"a\"")].key(of: "id", in: item, decoder: Self.decoder)
                == "item_id")
        let meta = try Self.node(Meta(author: "me"))
        #expect(root[.property("meta")].key(of: "author", in: meta, decoder: Self.decoder) == "by")
    }

    /// Without a type, or where the JSON does not decode as the type, a property is its own key.
    @Test func anUnknownPlaceOrUndecodableJSONMapsNothing() throws {
        let json = try Self.node(Self.doc)
        #expect(CodingKeyTree().key(of: "subtitle", in: json, decoder: Self.decoder) == "subtitle")
        #expect(CodingKeyTree()[.property("items")].key(of: "id", in: json, decoder: Self.decoder) == "id")
        struct Other: Codable { var x: Int }
        struct Signed: Codable {  // keys of its own, read from no value of it
            var author: String
            enum CodingKeys: String, CodingKey { case author = "by" }
        }
        let other = try Self.node(Other(x: 1))
        #expect(
            CodingKeyTree(for: Signed.self).key(of: "author", in: other, decoder: Self.decoder) == "author")
        // An enum's payload is not followed: its places map nothing.
        #expect(
            CodingKeyTree(for: Doc.self)[.property("shape")][.property("line")].key(
                of: "length", in: json, decoder: Self.decoder) == "length")
    }

    final class Board: Codable {
        var title = ""
        var cards: [Item]? = []
    }

    struct Wrapped: Codable {
        @Plain var items: [Item]
    }

    @propertyWrapper struct Plain<Value: Codable>: Codable {
        var wrappedValue: Value
        init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
        init(from decoder: any Decoder) throws { wrappedValue = try Value(from: decoder) }
        func encode(to encoder: any Encoder) throws { try wrappedValue.encode(to: encoder) }
    }

    @Test func typesAreFoundByReflection() {
        #expect(CodingKeyTree.propertyType("items", of: Doc.self) == [Item].self)
        #expect(CodingKeyTree.propertyType("meta", of: Doc?.self) == Meta.self)
        #expect(CodingKeyTree.propertyType("cards", of: Board.self) == [Item].self)
        #expect(CodingKeyTree.propertyType("items", of: Wrapped.self) == Plain<[Item]>.self)
        #expect(CodingKeyTree.propertyType("nothing", of: Doc.self) == nil)
        #expect(ContainedTypes.elementType(of: [Item]?.self) == Item.self)
        #expect(ContainedTypes.elementType(of: Set<String>.self) == String.self)
        #expect(ContainedTypes.elementType(of: [String: Meta?].self) == Meta.self)
        #expect(ContainedTypes.elementType(of: Meta.self) == nil)
    }

    struct Node: Codable {
        var name: String
        var children: [Node]
        var note: String?

        enum CodingKeys: String, CodingKey {
            case name = "n"
            case children = "kids"
            case note = "txt"
        }
    }

    /// A value gives every key of its type, a `nil` optional's included, whatever its
    /// properties hold.
    @Test func aValueGivesItsTypesOwnKeys() throws {
        #expect(
            CodingKeyTree.ownKeys(of: Self.doc) == [
                "subtitle": "sub", "items": "entries", "byName": "by_name",
            ])
        #expect(
            CodingKeyTree.ownKeys(of: Node(name: "", children: [], note: nil)) == [
                "name": "n", "children": "kids", "note": "txt",
            ])
        struct Unkeyed: Codable { var title: String }
        #expect(CodingKeyTree.ownKeys(of: Unkeyed(title: "")).isEmpty)
        // A tree's places below are its own type again: keys at every depth.
        let tree = Node(name: "a", children: [Node(name: "b", children: [], note: "x")], note: nil)
        let child = try Self.node(tree.children[0])
        let place = CodingKeyTree(for: Node.self)[.property("children")][.index(0)][.property("children")][
            .index(3)]
        #expect(place.key(of: "note", in: child, decoder: Self.decoder) == "txt")
    }

    /// Counts its decodes, and never decodes.
    struct Refusing: Codable {
        static let decodes = Locked(0)
        var x: Int
        init(from decoder: any Decoder) throws {
            Self.decodes.withLock { $0 += 1 }
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "never"))
        }
    }

    /// Stored JSON that does not decode as the type there is tried once for every change a
    /// replay reads through one root, not once per change; another root tries again.
    @Test func jsonThatDoesNotDecodeIsTriedOncePerRoot() throws {
        let json = try Self.node(["x": 1])
        let root = CodingKeyTree(for: Refusing.self)
        for _ in 0..<3 { #expect(root.key(of: "x", in: json, decoder: Self.decoder) == "x") }
        #expect(root[.property("x")].key(of: "y", in: json, decoder: Self.decoder) == "y")
        #expect(Refusing.decodes.withLock { $0 } == 1)
        #expect(CodingKeyTree(for: Refusing.self).key(of: "x", in: json, decoder: Self.decoder) == "x")
        #expect(Refusing.decodes.withLock { $0 } == 2)
    }

    struct StructKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The runtime entry point keys are read through, pinned.
    @Test func aKeysPropertyIsItsCaseName() {
        #expect(CodingKeyTree.caseName(of: Doc.CodingKeys.subtitle) == "subtitle")
        #expect(CodingKeyTree.caseName(of: Doc.CodingKeys.shape) == "shape")
        #expect(CodingKeyTree.caseName(of: StructKey(stringValue: "subtitle")) == nil)
    }
}
