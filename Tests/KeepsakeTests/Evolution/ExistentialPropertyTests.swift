import Foundation
import Testing

@testable import Keepsake

/// A model that holds values of an existential type (`any Mark`, coded by the app with a kind
/// tag, inside a leaf of its own). Opening its store again crashed the process: looking for the
/// old names of renamed properties, the walk over the model's types asked the standard
/// library's reflection for the stored properties of `any Mark`, which crashes on an
/// existential type. It now opens, undoes and redoes every version, after an app update that
/// added a property too (which reads the stored JSON by the merge, through the same kind of
/// walk).
@MainActor @Suite struct ExistentialPropertyTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("marks.keepsake") }

    protocol Mark: Codable, Sendable {
        var label: String { get }
    }

    struct Pin: Mark, Equatable { var label: String }
    struct Flag: Mark, Equatable {
        var label: String
        var colour: Int
    }

    /// The app's own leaf: a mark of any kind, and a list of them, each stored with its kind.
    struct Selection: Codable, Equatable {
        var current: (any Mark)?
        var all: [any Mark] = []
        /// Values of any type, kept for the app itself (not coded).
        var anything: [Any] = []

        init(current: (any Mark)? = nil, all: [any Mark] = []) { (self.current, self.all) = (current, all) }

        private struct Tagged: Codable {
            var kind: String
            var label: String
            var colour: Int?

            init(_ mark: any Mark) {
                (kind, label, colour) =
                    if let flag = mark as? Flag { ("flag", flag.label, flag.colour) } else {
                        ("pin", mark.label, nil)
                    }
            }

            var mark: any Mark { colour.map { Flag(label: label, colour: $0) } ?? Pin(label: label) }
        }

        private enum CodingKeys: String, CodingKey { case current, all }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            current = try container.decodeIfPresent(Tagged.self, forKey: .current)?.mark
            all = try container.decode([Tagged].self, forKey: .all).map(\.mark)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(current.map(Tagged.init), forKey: .current)
            try container.encode(all.map(Tagged.init), forKey: .all)
        }

        static func == (a: Selection, b: Selection) -> Bool {
            func tags(_ marks: [any Mark]) -> [String] { marks.map { "\(Tagged($0))" } }
            return tags(a.current.map { [$0] } ?? []) == tags(b.current.map { [$0] } ?? [])
                && tags(a.all) == tags(b.all)
        }
    }

    struct Doc: Versionable, Equatable, Codable {
        var title = ""
        var selection = Selection()
    }

    /// Today's model: `pinned` added since.
    struct PinnedDoc: Versionable, Equatable, Codable {
        var title = ""
        var selection = Selection()
        var pinned: Bool

        init(_ doc: Doc = Doc(), pinned: Bool = true) {
            (title, selection, self.pinned) = (doc.title, doc.selection, pinned)
        }
    }

    static let versions: [Doc] = [
        Doc(),
        Doc(title: "marked", selection: Selection(current: Pin(label: "here"))),
        Doc(
            title: "marked",
            selection: Selection(current: Flag(label: "there", colour: 3), all: [Pin(label: "a")])),
        Doc(
            title: "renamed",
            selection: Selection(current: nil, all: [Pin(label: "a"), Flag(label: "b", colour: 1)])),
    ]

    func write(closing: Bool) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Self.versions[0])
        for version in Self.versions.dropFirst() { try history.append(version) }
        if closing { try history.close() }
    }

    @Test(arguments: [true, false])
    func aStoreOfAModelHoldingExistentialsOpensAgain(closing: Bool) throws {
        try write(closing: closing)
        try ModelEvolutionTests.expectHistory(at: path, initialValue: Doc(), expected: Self.versions)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    @Test(arguments: [true, false])
    func anAddedPropertyReadsTheExistentialsStoredBeforeIt(closing: Bool) throws {
        try write(closing: closing)
        try ModelEvolutionTests.expectHistory(
            at: path, initialValue: PinnedDoc(), expected: Self.versions.map { PinnedDoc($0) })
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
