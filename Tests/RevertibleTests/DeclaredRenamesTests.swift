import Foundation
import Testing

@testable import Revertible

/// The old names of renamed properties are found in every type a value holds (through
/// optionals, arrays, dictionaries, a class's stored properties, an enum's payloads and a
/// tuple's elements), and looked for as keys of the stored JSON: a text or a longer key holding
/// the name is not one.
@Suite struct DeclaredRenamesTests {
    struct Leaf: Versionable, Codable, Equatable {
        var note: String?
        static let propertyEvolution: [PropertyEvolution] = [.renamed("comment", to: "note")]
    }

    final class Box: Codable {
        var leaves: [String: [Leaf?]] = [:]
    }

    struct Root: Versionable, Codable {
        var title = ""
        var box: Box?
        static let propertyEvolution: [PropertyEvolution] = [.renamed("name", to: "title")]
    }

    enum Payload: Codable {
        case none
        case pair(Int, Leaf)
    }

    struct Held: Codable {
        var payload: Payload
    }

    indirect enum Chain {
        case end
        case link(Chain)
        case value(first: String, second: [Int])
    }

    enum Either<Left, Right> {
        case left(Left)
        case right(Right)
        case neither
    }

    struct Plain: Codable {
        var count: Int
        var kinds: [Kind]
        enum Kind: String, Codable { case a, b }
    }

    protocol Shape {}

    /// Values of existential types: they hold no stored properties of their own to walk.
    struct HoldsExistentials {
        var shape: any Shape
        var shapes: [any Shape]
        var maybe: (any Shape)?
        var anything: Any
        var object: AnyObject
        var numbers: any Sequence<Int>
        var leaf: Leaf
    }

    /// A collection of the app's own whose elements no stored property shows: its code keeps
    /// them as `Any` (as a ring buffer keeps them in memory it allocates).
    struct Bag<Element>: Codable where Element: Codable {
        private var storage: [Any] = []

        init(from decoder: any Decoder) throws { storage = try [Element](from: decoder) }
        func encode(to encoder: any Encoder) throws { try storage.map { $0 as! Element }.encode(to: encoder) }
    }

    struct Outer<First> {
        struct Inner<Second> {}
    }

    final class GenericBox<Element> {}

    @Test func theOldNamesOfEveryTypeHeldAreFound() {
        #expect(
            DeclaredRenames.oldKeys(reachableFrom: Root.self).map { String(decoding: $0, as: UTF8.self) } == [
                #""comment":"#, #""name":"#,
            ])
        #expect(DeclaredRenames.oldKeys(reachableFrom: Held.self) == [Array(#""comment":"#.utf8)])
        #expect(DeclaredRenames.oldKeys(reachableFrom: [String].self).isEmpty)
        #expect(DeclaredRenames.oldKeys(reachableFrom: Plain.self).isEmpty)
        // Reflection crashed the process on an existential type.
        #expect(
            DeclaredRenames.oldKeys(reachableFrom: HoldsExistentials.self) == [Array(#""comment":"#.utf8)])
        #expect(DeclaredRenames.oldKeys(reachableFrom: Bag<Leaf>.self) == [Array(#""comment":"#.utf8)])
        #expect(DeclaredRenames.oldKeys(reachableFrom: Bag<Plain>.self).isEmpty)
    }

    /// An existential type has no stored properties of its own; the standard library's
    /// `_forEachField` crashes on one, so every walk over a model's types goes through
    /// `ContainedTypes.forEachField`.
    @Test func anExistentialHasNoFieldsToWalk() {
        for type: Any.Type in [
            (any Shape).self, Any.self, AnyObject.self, (any Sequence<Int>).self, (any Error).self,
        ] {
            var called = false
            #expect(
                !ContainedTypes.forEachField(of: type, options: .init(rawValue: 0b10)) { _, _, _ in
                    called = true
                    return true
                })
            #expect(!called)
        }
        var (names, types): ([String], [ObjectIdentifier]) = ([], [])
        #expect(
            ContainedTypes.forEachField(of: HoldsExistentials.self, options: .init(rawValue: 0b10)) {
                name, _, type in
                names.append(String(cString: name))
                types.append(ObjectIdentifier(type))
                return true
            })
        #expect(names == ["shape", "shapes", "maybe", "anything", "object", "numbers", "leaf"])
        let expected: [Any.Type] = [
            (any Shape).self, [any Shape].self, (any Shape)?.self, Any.self, AnyObject.self,
            (any Sequence<Int>).self, Leaf.self,
        ]
        #expect(types == expected.map(ObjectIdentifier.init))
        // Every byte of an existential's container counts when values are compared by bytes.
        let mask = MeaningfulBytes.of((any Shape).self)
        #expect(mask.words == [UInt64](repeating: .max, count: MemoryLayout<any Shape>.size / 8))
    }

    /// A generic struct's or enum's type arguments, in order, read from its metadata; an
    /// integer argument (`InlineArray`'s count) is left out, and a class's are not read.
    @Test func theTypeArgumentsOfAGenericValueTypeAreReadFromItsMetadata() {
        func names(_ type: Any.Type) -> [String] {
            ContainedTypes.genericTypeArguments(of: type).map { "\($0)" }
        }
        #expect(names(Bag<Leaf>.self) == ["Leaf"])
        #expect(names([String: Leaf?].self) == ["String", "Optional<Leaf>"])
        #expect(names(Either<Int, [Leaf]>.self) == ["Int", "Array<Leaf>"])
        #expect(names(Outer<Int>.Inner<String>.self) == ["Int", "String"])
        #expect(names(InlineArray<3, Leaf>.self) == ["Leaf"])
        #expect(names(Leaf?.self) == ["Leaf"])
        #expect(names(Leaf.self) == [])
        #expect(names(Int.self) == [])
        #expect(names(GenericBox<Leaf>.self) == [])
        #expect(names((any Shape).self) == [])
        #expect(names((Int, Leaf).self) == [])
    }

    /// An enum's payloads are read from its type, generic or indirect; a case with several
    /// values has a tuple, whose elements are read too.
    @Test func enumPayloadsAndTupleElementsAreReadFromTheirTypes() throws {
        func names(_ types: [Any.Type]?) -> [String]? { types?.map { "\($0)" } }
        #expect(names(ContainedTypes.payloadTypes(of: Payload.self)) == ["(Int, Leaf)"])
        let pair = try #require(ContainedTypes.payloadTypes(of: Payload.self)?.first)
        #expect(names(ContainedTypes.payloadTypes(of: pair)) == ["Int", "Leaf"])
        #expect(
            names(ContainedTypes.payloadTypes(of: Chain.self)) == [
                "Chain", "(first: String, second: Array<Int>)",
            ])
        #expect(
            names(ContainedTypes.payloadTypes(of: Either<[Leaf], Leaf?>.self)) == [
                "Array<Leaf>", "Optional<Leaf>",
            ])
        #expect(names(ContainedTypes.payloadTypes(of: Leaf?.self)) == ["Leaf"])
        #expect(names(ContainedTypes.payloadTypes(of: Plain.Kind.self)) == [])
        #expect(ContainedTypes.payloadTypes(of: Plain.self) == nil)
        #expect(ContainedTypes.payloadTypes(of: Box.self) == nil)
        #expect(ContainedTypes.payloadTypes(of: Int.self) == nil)
    }

    @Test(arguments: [
        (#"{"box":{"leaves":{"a":[{"comment":"x"}]}}}"#, true),
        (#"{"comment":1}"#, true),
        (#"{"title":"t","name":"#, true),
        (#"{"title":"comment","box":null}"#, false),
        (#"{"title":"\"comment\": no","box":null}"#, false),
        (#"{"comments":1,"xcomment":2,"name ":3}"#, false),
        (#"{"comment""#, false),
        ("", false),
    ])
    func theJSONHoldsAnOldNameOnlyAsAKey(json: String, holds: Bool) {
        #expect(DeclaredRenames.mayBeIn(Data(json.utf8), for: Root.self) == holds)
        #expect(!DeclaredRenames.mayBeIn(Data(json.utf8), for: Plain.self))
    }
}
