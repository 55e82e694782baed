import Foundation
import Revertible
import Testing

@Suite struct PathDescriptorTests {
    @Test(arguments: [
        (
            #"childActivities[3].title"#,
            [PathComponent.property("childActivities"), .index(3), .property("title")]
        ),
        (#"priority.high_reason"#, [.property("priority"), .property("high_reason")]),
        (#"scores[key: "alice"]"#, [.property("scores"), .key(#""alice""#)]),
        (#"items[id: 7].name"#, [.property("items"), .id("7"), .property("name")]),
        (
            #"items[id: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"]"#,
            [.property("items"), .id(#""E621E1F8-C36C-495A-93FC-0C247A3E6E5F""#)]
        ),
        (#"[2][0]"#, [.index(2), .index(0)]),
        (
            #""weird name"."a.b"[key: {"x":[1,"]"]}]"#,
            [.property("weird name"), .property("a.b"), .key(#"{"x":[1,"]"]}"#)]
        ),
        ("", []),
    ])
    func textFormRoundTrips(text: String, components: [PathComponent]) throws {
        let path = try PathDescriptor(parsing: text)
        #expect(path.components == components)
        #expect(path.description == text)
        #expect(try PathDescriptor(parsing: PathDescriptor(components).description) == path)
    }

    @Test(arguments: [
        ("title.", 6, "a property name"),
        ("title[", 6, "an index, \"key: \" or \"id: \""),
        ("items[3", 7, "\"]\""),
        ("items[key: nope]", 11, "a JSON value"),
        ("items[id: \"open]", 16, "a closing quote"),
        (".title", 0, "a property name"),
        ("a b", 1, "\".\" or \"[\""),
        ("x[99999999999999999999]", 2, "an index, \"key: \" or \"id: \""),
    ])
    func invalidTextIsRefusedWithItsOffset(text: String, offset: Int, expected: String) {
        #expect(throws: PathDescriptor.ParseError(text: text, offset: offset, expected: expected)) {
            try PathDescriptor(parsing: text)
        }
    }

    @Test func codableUsesTheTextForm() throws {
        let path: PathDescriptor = [.property("items"), .id("7"), .property("name")]
        let data = try JSONEncoder().encode([path])
        #expect(String(decoding: data, as: UTF8.self) == #"["items[id: 7].name"]"#)
        #expect(try JSONDecoder().decode([PathDescriptor].self, from: data) == [path])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([PathDescriptor].self, from: Data(#"["a..b"]"#.utf8))
        }
    }

    @Test func controlCharactersInNamesAreEscaped() throws {
        let path: PathDescriptor = [.property("line\nbreak\u{1}\"q\"")]
        #expect(path.description == #""line\nbreak\u0001\"q\"""#)
        #expect(try PathDescriptor(parsing: path.description) == path)
    }
}

/// An element's id in a path is the JSON the records' encoder writes for it, whether written
/// directly (numbers, text) or by the encoder (anything else), and reads back as the same id.
@Suite struct ElementIDComponentTests {
    struct Tagged<ID: Hashable & Codable>: Identifiable, Versionable, Equatable, Codable {
        let id: ID
        var note: String
    }

    /// The encoder's text of `id`, with the records' settings.
    static func encoded<T: Encodable>(_ id: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(id), as: UTF8.self)
    }

    func check<ID: Hashable & Codable & Sendable>(_ id: ID) throws {
        let component = [Tagged<ID>].pathComponent(for: .id(AnyHashable(id)))
        #expect(component == .id(try Self.encoded(id)), "\(id)")
        #expect([Tagged<ID>].elementKey(for: component) == .id(AnyHashable(id)), "\(id)")
    }

    @Test func idsAreTheEncodersJSON() throws {
        for id in [0, 7, -42, Int.max, Int.min] { try check(id) }
        for id: Int64 in [3, -9_007_199_254_740_993] { try check(id) }
        for id: UInt64 in [0, UInt64.max] { try check(id) }
        for id in ["", "plain", "a/b", #"quote " and \ back"#, "tab\tnew\nline", "é 日本 🎉", "\u{1}\u{1F}"] {
            try check(id)
        }
        for id in [0.5, -1.25, 1e21, 3.0] { try check(id) }
        try check(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
        try check(true)
    }
}
