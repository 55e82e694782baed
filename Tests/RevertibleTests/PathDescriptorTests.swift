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
