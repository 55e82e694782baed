import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// A property wrapper keeps its value in a stored property of its own, `_title` for
/// `@Trimmed var title`: the diff finds that one, and stored changes name it so; synthesized
/// `Codable` stores it under its property's key, `title`.
@MainActor @Suite struct PropertyWrapperEvolutionTests {
    let directory = TemporaryDirectory()

    /// Text without surrounding spaces, coded as the text itself.
    @propertyWrapper struct Trimmed: Codable, Equatable {
        private var value: String
        var wrappedValue: String {
            get { value }
            set { value = newValue.trimmingCharacters(in: .whitespaces) }
        }
        init(wrappedValue: String) { value = wrappedValue.trimmingCharacters(in: .whitespaces) }
        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(String.self)
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    struct Doc: Versionable, Equatable, Codable {
        @Trimmed var title = ""
        /// Two stored properties whose names differ by an underscore: neither is a wrapper's.
        var _memo: String?
        var memo = ""
        var tags: [String] = []
    }

    /// The same document after an app update: its tags are a set, so the array's insertions
    /// stored before do not read, and the versions are redone on the stored JSON.
    struct UpdatedDoc: Versionable, Equatable, Codable {
        @Trimmed var title = ""
        var _memo: String?
        var memo = ""
        var tags: Set<String> = []

        init(_ doc: Doc) { (title, _memo, memo, tags) = (doc.title, doc._memo, doc.memo, Set(doc.tags)) }
    }

    static let versions: [Doc] = {
        var doc = Doc()
        var versions = [doc]
        func edit(_ change: (inout Doc) -> Void) {
            change(&doc)
            versions.append(doc)
        }
        edit { $0.title = " Hello " }
        edit { $0.memo = "kept" }
        edit { $0._memo = "own" }
        edit { $0.title = "Hello world" }
        edit { $0.tags.append("draft") }
        return versions
    }()

    /// Until 2026-11 the stored JSON was searched for `_title`, which it does not hold: the
    /// history did not open after the update (not closed), and could not be undone past the
    /// version the model cannot read (closed), nor did `keepsake value` read it. `_memo` is
    /// found under its own key.
    @Test(arguments: [false, true])
    func aWrappedPropertysChangeIsRedoneOnTheStoredJSON(closing: Bool) throws {
        let path = directory.path("doc-\(closing).keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Self.versions[0])
            for version in Self.versions.dropFirst() { try history.append(version) }
            let store = try KeepsakeStore(path: path)
            #expect(try store.changes(ofVersion: 1, in: "doc")?.map(\.path.description) == ["_title"])
            #expect(try store.changes(ofVersion: 3, in: "doc")?.map(\.path.description) == ["_memo"])
            if closing { try history.close() }
        }
        let expected = Self.versions.map(UpdatedDoc.init)
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected)
        let store = try KeepsakeStore(path: path)
        // Without the app's types, the wrapper's changes are found under its property's key,
        // where they fit and not under `_title`; `_memo`'s under its own, where it fits.
        let json = try #require(try store.valueJSON(ofHistory: "doc", atVersion: 4))
        #expect(
            json.filter { !$0.isWhitespace }
                == #"{"_memo":"own","memo":"kept","tags":[],"title":"Helloworld"}"#)
        #expect(try store.integrityCheck() == ["ok"])
    }
}
