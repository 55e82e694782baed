import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// An app whose model gives some properties JSON keys of their own with `CodingKeys`, as
/// models shared with a server or kept compatible with older files do. Its stores are written
/// in a child process, then reopened by each changed model below.
enum KeyedApp {
    struct Item: Identifiable, Versionable, Equatable, Codable {
        var id: Int
        var label: String
        var done: Bool?

        enum CodingKeys: String, CodingKey {
            case id = "item_id"
            case label
            case done = "is_done"
        }
    }

    struct Doc: Versionable, Equatable, Codable {
        var title: String
        var subtitle: String?
        var tags: [String]
        var items: [Item]
        var count: Int

        enum CodingKeys: String, CodingKey {
            case title
            case subtitle = "sub"
            case tags
            case items = "entries"
            case count = "n"
        }
    }

    /// The versions the old app recorded, oldest first: each kind of change at a property with
    /// a key of its own — an optional set and cleared (left out of the JSON while `nil`), an
    /// element inserted, changed inside by id, and removed.
    static let versions: [Doc] = {
        var doc = Doc(title: "", subtitle: nil, tags: [], items: [], count: 0)
        var versions = [doc]
        func record(_ change: (inout Doc) -> Void) {
            change(&doc)
            versions.append(doc)
        }
        record { $0.title = "Draft" }
        record { $0.subtitle = "first" }
        record { $0.tags = ["x"] }
        record { $0.items = [Item(id: 1, label: "one", done: nil), Item(id: 2, label: "two", done: false)] }
        record {
            $0.items[0].done = true
            $0.count = 2
        }
        record { $0.subtitle = nil }
        record { $0.items[1].label = "deux" }
        record {
            $0.tags = ["x", "y"]
            $0.items[0].done = nil
        }
        record { $0.items.remove(at: 0) }
        record {
            $0.title = "Final"
            $0.subtitle = "second"
        }
        return versions
    }()

    /// Writes history "doc" (every version); `closing` closes it, storing the value whole.
    static func write(path: String, closing: Bool) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: versions[0])
        for version in versions.dropFirst() { try history.append(version) }
        if closing { try history.close() }
    }
}

/// What an app update does to the stored history of a model with `CodingKeys`: every value,
/// after opening, undoing to the start and redoing to the end, is the old app's.
@MainActor @Suite struct CodingKeysEvolutionTests {
    let directory = TemporaryDirectory()

    func oldStore(closing: Bool) async throws -> String {
        let path = directory.path("old-\(closing).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, closing = closing as Bool] in
            try KeyedApp.write(path: path, closing: closing)
        }
        return path
    }

    /// ``ModelEvolutionTests/expectHistory(at:initialValue:expected:)``, from the first value.
    func expectHistory<Value: Versionable & Codable & Equatable & SendableMetatype>(
        at path: String, expected: [Value]
    ) throws {
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected)
    }

    @Test(arguments: [true, false])
    func theSameModelReadsItsOwnHistory(closing: Bool) async throws {
        try expectHistory(at: try await oldStore(closing: closing), expected: KeyedApp.versions)
    }

    // MARK: A property renamed, its key kept

    enum KeptKey {
        struct Item: Identifiable, Versionable, Equatable, Codable {
            var id: Int
            var caption: String
            var done: Bool?

            enum CodingKeys: String, CodingKey {
                case id = "item_id"
                case caption = "label"
                case done = "is_done"
            }
        }

        struct Doc: Versionable, Equatable, Codable {
            var name: String
            var subtitle: String?
            var tags: [String]
            var items: [Item]
            var count: Int

            enum CodingKeys: String, CodingKey {
                case name = "title"
                case subtitle = "sub"
                case tags
                case items = "entries"
                case count = "n"
            }

            init(_ old: KeyedApp.Doc) {
                (name, subtitle, tags, count) = (old.title, old.subtitle, old.tags, old.count)
                items = old.items.map { Item(id: $0.id, caption: $0.label, done: $0.done) }
            }
        }
    }

    /// Swift's own way to rename a property without changing its files: the old name stays the
    /// JSON key. The stored changes name the old property, and are read as the one with its key
    /// (before, they were skipped as a removed property's: an unclosed history opened with the
    /// base value's title, and undo left the title alone).
    @Test(arguments: [true, false])
    func aPropertyRenamedWithItsKeyKeptReadsItsStoredChanges(closing: Bool) async throws {
        try expectHistory(
            at: try await oldStore(closing: closing), expected: KeyedApp.versions.map(KeptKey.Doc.init))
    }

    // MARK: A change undone on the stored JSON

    enum TagsAsSet {
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var subtitle: String?
            var tags: Set<String>
            var items: [KeyedApp.Item]
            var count: Int

            enum CodingKeys: String, CodingKey {
                case title
                case subtitle = "sub"
                case tags
                case items = "entries"
                case count = "n"
            }

            init(_ old: KeyedApp.Doc) {
                (title, subtitle, tags, items, count) = (
                    old.title, old.subtitle, Set(old.tags), old.items, old.count
                )
            }
        }
    }

    /// The array's changes cannot be read as a set's, so versions are redone on the stored JSON,
    /// where each change is found under its property's key: `sub`, `entries`, an item by its
    /// `item_id`, `is_done`. (Before, a change found no key and failed the open, or — an
    /// optional set from `nil`, whose key is absent either way — was written under the
    /// property's name, which decoding ignores: the history opened with no subtitle.)
    @Test(arguments: [true, false])
    func changesRedoneOnTheStoredJSONAreFoundUnderTheirKeys(closing: Bool) async throws {
        try expectHistory(
            at: try await oldStore(closing: closing), expected: KeyedApp.versions.map(TagsAsSet.Doc.init))
    }
}

extension CodingKeysEvolutionTests {
    // MARK: Declared evolution, with keys of their own

    enum Declared {
        struct Doc: Versionable, Equatable, Codable {
            var name: String
            var subtitle: String?
            var tags: [String]
            var items: [KeyedApp.Item]
            var count: String

            enum CodingKeys: String, CodingKey {
                case name = "heading"
                case subtitle = "sub"
                case tags
                case items = "entries"
                case count = "n"
            }

            static let propertyEvolution: [PropertyEvolution] = [
                .renamed("title", to: "name"),
                .converted("count", from: Int.self) { "\($0) items" },
            ]

            init(_ old: KeyedApp.Doc) {
                (name, subtitle, tags, items, count) = (
                    old.title, old.subtitle, old.tags, old.items, "\(old.count) items"
                )
            }
        }
    }

    /// `propertyEvolution` names properties, in stored JSON too, whatever keys they are stored
    /// under: `name`, now stored as `heading`, reads the old `title`; `count`, stored as `n`,
    /// is converted. (Before, stored JSON was looked up by key: the renamed title was taken
    /// from the app's initial value, and the conversion was not found.)
    @Test(arguments: [true, false])
    func declaredEvolutionNamesPropertiesWhateverTheirKeys(closing: Bool) async throws {
        try expectHistory(
            at: try await oldStore(closing: closing), expected: KeyedApp.versions.map(Declared.Doc.init))
    }
}
