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

    @Test func theOldNamesOfEveryTypeHeldAreFound() {
        #expect(
            DeclaredRenames.oldKeys(reachableFrom: Root.self).map { String(decoding: $0, as: UTF8.self) } == [
                #""comment":"#, #""name":"#,
            ])
        #expect(DeclaredRenames.oldKeys(reachableFrom: Held.self) == [Array(#""comment":"#.utf8)])
        #expect(DeclaredRenames.oldKeys(reachableFrom: [String].self).isEmpty)
        #expect(DeclaredRenames.oldKeys(reachableFrom: Plain.self).isEmpty)
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
