import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// The old app's `title` and `note` moved into a struct of their own by an update, read from
/// the old keys by the model's own `init(from:)` where `meta` is not stored, as Codable's
/// documentation teaches. The type has no property `title` or `note` any more, so their stored
/// changes name properties it lacks; skipped, as a removed property's are, they left every
/// value wrong: a history the old app was killed in opened with an empty title (the user's
/// "Final" gone without an error), and undo never changed the title or the note.
enum Moved {
    struct Meta: Versionable, Equatable, Codable {
        var title: String
        var note: String
    }

    struct Doc: Versionable, Equatable, Codable {
        var meta: Meta
        var count: Int
        var tags: [String]
        var kind: OldApp.Kind

        enum CodingKeys: String, CodingKey { case meta, count, tags, kind }
        enum FirstRelease: String, CodingKey { case title, note }

        init(meta: Meta, count: Int, tags: [String], kind: OldApp.Kind) {
            (self.meta, self.count, self.tags, self.kind) = (meta, count, tags, kind)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let meta = try container.decodeIfPresent(Meta.self, forKey: .meta) {
                self.meta = meta
            } else {
                let old = try decoder.container(keyedBy: FirstRelease.self)
                meta = Meta(
                    title: try old.decode(String.self, forKey: .title),
                    note: try old.decode(String.self, forKey: .note))
            }
            count = try container.decode(Int.self, forKey: .count)
            tags = try container.decode([String].self, forKey: .tags)
            kind = try container.decode(OldApp.Kind.self, forKey: .kind)
        }
    }

    /// The old app's versions as the moved model reads them.
    static let expected = OldApp.versions.map {
        Doc(meta: .init(title: $0.title, note: $0.note), count: $0.count, tags: $0.tags, kind: $0.kind)
    }
}

/// An element type's property moved the same way: `items[id: 2].title`, now inside `meta`.
enum MovedInElements {
    struct OldItem: Versionable, Equatable, Codable, Identifiable {
        var id: Int
        var title: String
    }

    struct OldBoard: Versionable, Equatable, Codable {
        var items: [OldItem]
    }

    static let versions: [OldBoard] = {
        var board = OldBoard(items: [])
        var versions = [board]
        func record(_ change: (inout OldBoard) -> Void) {
            change(&board)
            versions.append(board)
        }
        record { $0.items = [.init(id: 1, title: "one"), .init(id: 2, title: "two")] }
        record { $0.items[1].title = "Two" }
        record { $0.items.insert(.init(id: 3, title: "three"), at: 0) }
        record { $0.items[2].title = "TWO" }
        record { $0.items[0].title = "Three" }
        return versions
    }()

    struct ItemMeta: Versionable, Equatable, Codable {
        var title: String
    }

    struct Item: Versionable, Equatable, Codable, Identifiable {
        var id: Int
        var meta: ItemMeta

        enum CodingKeys: String, CodingKey { case id, meta }
        enum FirstRelease: String, CodingKey { case title }

        init(id: Int, meta: ItemMeta) { (self.id, self.meta) = (id, meta) }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            meta =
                try container.decodeIfPresent(ItemMeta.self, forKey: .meta)
                ?? ItemMeta(
                    title: try decoder.container(keyedBy: FirstRelease.self).decode(
                        String.self, forKey: .title))
        }
    }

    struct Board: Versionable, Equatable, Codable {
        var items: [Item]
    }

    static let expected = versions.map {
        Board(items: $0.items.map { Item(id: $0.id, meta: .init(title: $0.title)) })
    }
}

/// A property moved out of a struct: the first release's `meta.title`, now `title`, `Meta`
/// keeping its note. `Meta`'s own decoding (synthesized) never reads `title`: the document's
/// does, through `meta`'s container.
enum MovedOut {
    struct OldMeta: Versionable, Equatable, Codable {
        var title: String
        var note: String
    }

    struct OldDoc: Versionable, Equatable, Codable {
        var meta: OldMeta
        var count: Int
    }

    static let versions: [OldDoc] = {
        var doc = OldDoc(meta: .init(title: "", note: ""), count: 0)
        var versions = [doc]
        func record(_ change: (inout OldDoc) -> Void) {
            change(&doc)
            versions.append(doc)
        }
        record { $0.meta.title = "Draft" }
        record { $0.meta.note = "n1" }
        record { $0.count = 2 }
        record { $0.meta.title = "Final" }
        return versions
    }()

    struct Meta: Versionable, Equatable, Codable {
        var note: String
    }

    struct Doc: Versionable, Equatable, Codable {
        var title: String
        var meta: Meta
        var count: Int

        enum CodingKeys: String, CodingKey { case title, meta, count }
        enum FirstReleaseMeta: String, CodingKey { case title }

        init(title: String, meta: Meta, count: Int) {
            (self.title, self.meta, self.count) = (title, meta, count)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            meta = try container.decode(Meta.self, forKey: .meta)
            count = try container.decode(Int.self, forKey: .count)
            title =
                try container.decodeIfPresent(String.self, forKey: .title)
                ?? container.nestedContainer(keyedBy: FirstReleaseMeta.self, forKey: .meta)
                .decode(String.self, forKey: .title)
        }
    }

    static let expected = versions.map {
        Doc(title: $0.meta.title, meta: .init(note: $0.meta.note), count: $0.count)
    }
}

@MainActor @Suite struct MovedPropertyTests {
    let directory = TemporaryDirectory()

    /// Every version reads by number, the history opens at the old app's last value, undoes
    /// to the start and redoes to the end; a new edit undoes, then the old versions below it,
    /// and the value undone to is the one the next open reads, from which they redo. The
    /// snapshot the old app saved restores.
    @Test(arguments: [true, false])
    func aPropertyMovedIntoAStructThatTheModelReadsFromTheOldKeysKeepsItsChanges(closing: Bool)
        async throws
    {
        let path = directory.path("old-\(closing).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, closing = closing as Bool] in
            try OldApp.write(path: path, closing: closing)
        }
        let expected = Moved.expected
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected)

        let history = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        var edited = history.value
        edited.meta.title = "New"
        try history.append(edited)
        #expect(try history.undo() == expected[8])
        #expect(try history.undo() == expected[7])
        #expect(try history.undo() == expected[6])
        try history.checkInvariants()
        try history.close()
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        #expect(reopened.value == expected[6])
        // Version 8 changes the note. Closing stored today's form at version 6, whose JSON holds
        // `meta`: the change is redone on the old app's form below it, not made beside `meta`.
        #expect(try reopened.redo() == expected[7])
        #expect(try reopened.redo() == expected[8])
        #expect(try reopened.redo() == edited)
        for value in expected.dropFirst(4).reversed() { #expect(try reopened.undo() == value) }
        try reopened.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])

        try ModelEvolutionTests().moveSnapshots(at: path, to: Moved.Doc.self)
        #expect(
            try Caretaker(store: KeepsakeStore(path: path)).restore("v4", as: Moved.Doc.self) == expected[4])
    }

    /// The same for a property of an array's elements: a history the old app was killed in
    /// opens at its last titles, and undoes and redoes through every one.
    @Test func aPropertyOfAnElementMovedIntoAStructKeepsItsChanges() async throws {
        let path = directory.path("elements.keepsake")
        await #expect(processExitsWith: .success) { [path = path as String] in
            let history = try KeepsakeStore(path: path).history(
                "doc", initialValue: MovedInElements.versions[0])
            for version in MovedInElements.versions.dropFirst() { try history.append(version) }
        }
        let expected = MovedInElements.expected
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    /// An earlier release's change of a moved property, made on JSON today's release stored
    /// (a synced document opened by the old app): no stored form reads it, so it does not
    /// show, as an earlier release's change of a renamed property does not; the history opens.
    @Test func anEarlierReleasesChangeOfAMovedPropertyOnTodaysFormStillOpens() async throws {
        let path = directory.path("earlier.keepsake")
        let today = Moved.Doc(meta: .init(title: "T", note: "N"), count: 1, tags: [], kind: .a)
        try KeepsakeStore(path: path).history("doc", initialValue: today).close()
        await #expect(processExitsWith: .success) { [path = path as String] in
            let old = try KeepsakeStore(path: path).history("doc", initialValue: OldApp.versions[0])
            var doc = old.value
            doc.note = "from the old app"
            try old.append(doc)
        }
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Moved.expected[0])
        #expect(history.value == today)
        #expect(history.versionCount == 1)
        #expect(try history.undo() == today)
        #expect(try history.redo() == today)
        try history.checkInvariants()
    }

    /// A property moved out of a struct its parent still has: the parent's decoding reads the
    /// old key inside it, which the struct's own does not.
    @Test func aPropertyMovedOutOfAStructKeepsItsChanges() async throws {
        let path = directory.path("out.keepsake")
        await #expect(processExitsWith: .success) { [path = path as String] in
            let history = try KeepsakeStore(path: path).history("doc", initialValue: MovedOut.versions[0])
            for version in MovedOut.versions.dropFirst() { try history.append(version) }
        }
        let expected = MovedOut.expected
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected)
        // Closed after undoing two versions: today's form, `title` beside `meta`, is stored
        // below them, and the title's change is redone on the form the old app wrote.
        let history = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        #expect(try history.undo() == expected[3])
        #expect(try history.undo() == expected[2])
        try history.close()
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        #expect(reopened.value == expected[2])
        #expect(try reopened.redo() == expected[3])
        #expect(try reopened.redo() == expected[4])
        try reopened.checkInvariants()
    }
}
