import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// A model with its own `init(from:)` and `encode(to:)`, as files kept readable by older
/// releases and servers' formats are written: its keys are cases of an enum of its own, some
/// named after no property (`name` holds `title`; `schemaVersion` is the format's), so the
/// keys do not show which property each holds. Stored changes name properties, and a replay
/// on the stored JSON (after an app update) must find each one's key.
@MainActor @Suite struct HandWrittenKeysEvolutionTests {
    let directory = TemporaryDirectory()

    /// Writes history "doc" at `path` from `initial`, `steps` appending with `edit` (a change
    /// made to the last version) and reaching the history; closes it when `closing`. Returns
    /// every version, oldest first.
    static func write<Value: Versionable & Codable & Equatable & SendableMetatype>(
        at path: String, from initial: Value, closing: Bool,
        _ steps: (
            _ edit: ((inout Value) -> Void) throws -> Void,
            _ history: VersioningController<Value, Value, KeepsakeError>
        ) throws -> Void
    ) throws -> [Value] {
        var versions = [initial]
        let history = try KeepsakeStore(path: path).history("doc", initialValue: initial)
        try steps(
            { change in
                var value = versions[versions.count - 1]
                change(&value)
                try history.append(value)
                versions.append(value)
            }, history)
        if closing { try history.close() }
        return versions
    }

    /// Who wrote a document, stored under keys of its own.
    struct Meta: Versionable, Equatable, Codable {
        var author = ""
        var words = 0

        init() {}

        enum Key: String, CodingKey { case by, words }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            author = try container.decode(String.self, forKey: .by)
            words = try container.decode(Int.self, forKey: .words)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(author, forKey: .by)
            try container.encode(words, forKey: .words)
        }
    }

    /// The document, its tags an array in the first release and a set after the update (the
    /// array's insertions stored before then do not read, and the versions are redone on the
    /// stored JSON).
    struct Doc<Tags: Codable & Equatable & Sendable>: Versionable, Equatable, Codable {
        var title = ""
        var body = ""
        var meta = Meta()
        var tags: Tags
        /// Not stored: `encode(to:)` leaves it out, and every decoded document's is `""`.
        var draft = ""

        init(tags: Tags) { self.tags = tags }

        enum Key: String, CodingKey { case name, body, meta, tags, schemaVersion }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            title = try container.decode(String.self, forKey: .name)
            body = try container.decode(String.self, forKey: .body)
            meta = try container.decode(Meta.self, forKey: .meta)
            tags = try container.decode(Tags.self, forKey: .tags)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(title, forKey: .name)
            try container.encode(body, forKey: .body)
            try container.encode(meta, forKey: .meta)
            try container.encode(tags, forKey: .tags)
            try container.encode(2, forKey: .schemaVersion)
        }
    }

    static let versions: [Doc<[String]>] = {
        var doc = Doc<[String]>(tags: [])
        var versions = [doc]
        func edit(_ change: (inout Doc<[String]>) -> Void) {
            change(&doc)
            versions.append(doc)
        }
        edit { $0.title = "Draft" }
        edit { $0.meta.author = "Ann" }
        edit { $0.body = String(repeating: "a line of text\n", count: 40) }
        edit { $0.body.insert(contentsOf: "inserted ", at: $0.body.index($0.body.startIndex, offsetBy: 300)) }
        edit { $0.draft = String(repeating: "unsaved text ", count: 30) }
        edit { $0.draft.insert(contentsOf: "more ", at: $0.draft.index($0.draft.startIndex, offsetBy: 300)) }
        edit { $0.tags.append("draft") }
        edit {
            $0.title = "Final"
            $0.meta.words = 3
        }
        return versions
    }()

    /// `doc` as the updated model stores it: its draft, never stored, is `""`.
    static func updated(_ doc: Doc<[String]>) -> Doc<Set<String>> {
        var updated = Doc(tags: Set(doc.tags))
        (updated.title, updated.body, updated.meta) = (doc.title, doc.body, doc.meta)
        return updated
    }

    /// Until 2026-11 `title`'s changes were redone under a key `"title"`, which the model does
    /// not read: the history opened with the title of its last checkpoint (`""`, or `"Draft"`
    /// at every version once closed), and `meta.author` likewise, with no error. The draft's
    /// changes, which the model does not store, are redone where it does not read them.
    @Test(arguments: [false, true])
    func aPropertyKeyedByACaseOfAnotherNameIsRedoneUnderItsKey(closing: Bool) throws {
        let path = directory.path("doc-\(closing).keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Self.versions[0])
            for version in Self.versions.dropFirst() { try history.append(version) }
            let store = try KeepsakeStore(path: path)
            #expect(try store.changes(ofVersion: 1, in: "doc")?.map(\.path.description) == ["title"])
            #expect(try store.changes(ofVersion: 2, in: "doc")?.map(\.path.description) == ["meta.author"])
            if closing { try history.close() }
        }
        let expected = Self.versions.map(Self.updated)
        // The draft, never stored, is what the route to a version left: redone on the model's
        // value, as the app had it; on the stored JSON (from the tags' version on), `""`.
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected) {
            var stored = $0
            stored.draft = ""
            return stored
        }
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    /// A sketch whose draft is not stored, kept apart from ``Doc`` so that its keys are found
    /// in this test (a type's are kept for the process once found).
    struct Sketch<Tags: Codable & Equatable & Sendable>: Versionable, Equatable, Codable {
        var title = ""
        var draft = ""
        var tags: Tags

        init(tags: Tags) { self.tags = tags }

        enum Key: String, CodingKey { case name, tags, schemaVersion }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            title = try container.decode(String.self, forKey: .name)
            tags = try container.decode(Tags.self, forKey: .tags)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(title, forKey: .name)
            try container.encode(tags, forKey: .tags)
            try container.encode(1, forKey: .schemaVersion)
        }
    }

    /// A change within the draft, first of the replay (a checkpoint holds the draft before
    /// it): the model's value decoded there has no draft to change, so the change does not
    /// say where the draft is stored, and is made under its name, as before; `title`'s key
    /// is found from its change after it.
    @Test(arguments: [false, true])
    func aPropertyTheModelDoesNotStoreKeepsNoHistoryFromOpening(closing: Bool) throws {
        let path = directory.path("sketch-\(closing).keepsake")
        let versions = try Self.write(at: path, from: Sketch<[String]>(tags: []), closing: closing) {
            edit, history in
            try edit { $0.draft = String(repeating: "unsaved ", count: 50) }
            try history.writeCheckpoint()
            try edit {
                $0.draft.insert(contentsOf: "more ", at: $0.draft.index($0.draft.startIndex, offsetBy: 200))
            }
            try edit { $0.tags.append("x") }
            try edit { $0.title = "Named" }
        }
        let expected = versions.map {
            var sketch = Sketch(tags: Set($0.tags))
            sketch.title = $0.title
            return sketch
        }
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected) {
            var stored = $0
            stored.draft = ""
            return stored
        }
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    /// A record whose `encode(to:)` keeps two properties in a nested container:
    /// `{"meta": {"author": …, "count": …}, "title": …}`.
    struct Filed<Tags: Codable & Equatable & Sendable>: Versionable, Equatable, Codable {
        var title = ""
        var author = ""
        var count = 0
        var tags: Tags

        init(tags: Tags) { self.tags = tags }

        enum Key: String, CodingKey { case title, meta, tags }
        enum MetaKey: String, CodingKey { case author, count }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            title = try container.decode(String.self, forKey: .title)
            tags = try container.decode(Tags.self, forKey: .tags)
            let meta = try container.nestedContainer(keyedBy: MetaKey.self, forKey: .meta)
            author = try meta.decode(String.self, forKey: .author)
            count = try meta.decode(Int.self, forKey: .count)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(title, forKey: .title)
            try container.encode(tags, forKey: .tags)
            var meta = container.nestedContainer(keyedBy: MetaKey.self, forKey: .meta)
            try meta.encode(author, forKey: .author)
            try meta.encode(count, forKey: .count)
        }
    }

    /// Changes of properties kept in a nested container are redone there, the keys to them
    /// found from their changes (`"meta"`, then `"author"`). Until 2026-11 they were made under
    /// `"author"` and `"count"` beside `"meta"`, and the history opened with stale values; with
    /// the first fix of this month (one key), the open failed on `"meta"`.
    @Test(arguments: [false, true])
    func propertiesInANestedContainerAreRedoneThere(closing: Bool) throws {
        let path = directory.path("filed-\(closing).keepsake")
        let versions = try Self.write(at: path, from: Filed<[String]>(tags: []), closing: closing) {
            edit, _ in
            try edit { $0.author = "Ann" }
            try edit { $0.count = 3 }
            try edit { $0.tags.append("x") }
            try edit {
                $0.author = "Bob"
                $0.title = "Filed"
            }
        }
        let expected = versions.map {
            var filed = Filed(tags: Set($0.tags))
            (filed.title, filed.author, filed.count) = ($0.title, $0.author, $0.count)
            return filed
        }
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    /// An element storing its id under a key of its own, `ident`.
    struct Entry: Identifiable, Equatable, Codable {
        var id: Int
        var label: String

        init(id: Int, label: String) { (self.id, self.label) = (id, label) }

        enum Key: String, CodingKey { case ident, text }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            id = try container.decode(Int.self, forKey: .ident)
            label = try container.decode(String.self, forKey: .text)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(id, forKey: .ident)
            try container.encode(label, forKey: .text)
        }
    }

    struct Listing<Tags: Codable & Equatable & Sendable>: Versionable, Equatable, Codable {
        var entries: [Entry] = []
        var tags: Tags
    }

    /// Changes to entries found by id (`entries[id: 2]`) are redone on the stored JSON, where
    /// the id is under `"ident"`: the key that holds each entry's decoded id. Until 2026-11
    /// `"id"` was looked up: not closed, the history did not open after the update; closed,
    /// undo stopped at the tags' version.
    @Test(arguments: [false, true])
    func elementsWhoseIDsAreStoredUnderAKeyOfTheirOwnAreFound(closing: Bool) throws {
        let path = directory.path("listing-\(closing).keepsake")
        let versions = try Self.write(at: path, from: Listing<[String]>(tags: []), closing: closing) {
            edit, _ in
            try edit { $0.entries = (0..<5).map { Entry(id: $0 * 10, label: "entry \($0)") } }
            try edit { $0.entries[2].label = "changed" }
            try edit { $0.tags.append("x") }
            try edit { $0.entries[3].label = "later" }
            try edit { $0.entries.remove(at: 1) }
            #expect(
                try KeepsakeStore(path: path).changes(ofVersion: 2, in: "doc")?.map(\.path.description)
                    == ["entries[id: 20]"])
        }
        let expected = versions.map { Listing(entries: $0.entries, tags: Set($0.tags)) }
        try ModelEvolutionTests.expectHistory(at: path, initialValue: expected[0], expected: expected)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    /// A form coded by hand every way at once: `title` under `name`, `author` and `count` in
    /// a nested container under keys of their own, entries whose ids are under `ident`, and
    /// a format version no property holds.
    struct Form<Tags: Codable & Equatable & Sendable>: Versionable, Equatable, Codable {
        var title = ""
        var author = ""
        var count = 0
        var entries: [Entry] = []
        var tags: Tags

        init(tags: Tags) { self.tags = tags }

        enum Key: String, CodingKey { case name, meta, list, tags, schemaVersion }
        enum MetaKey: String, CodingKey { case by, n }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            title = try container.decode(String.self, forKey: .name)
            entries = try container.decode([Entry].self, forKey: .list)
            tags = try container.decode(Tags.self, forKey: .tags)
            let meta = try container.nestedContainer(keyedBy: MetaKey.self, forKey: .meta)
            author = try meta.decode(String.self, forKey: .by)
            count = try meta.decode(Int.self, forKey: .n)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(title, forKey: .name)
            try container.encode(entries, forKey: .list)
            try container.encode(tags, forKey: .tags)
            try container.encode(3, forKey: .schemaVersion)
            var meta = container.nestedContainer(keyedBy: MetaKey.self, forKey: .meta)
            try meta.encode(author, forKey: .by)
            try meta.encode(count, forKey: .n)
        }

        /// One random edit of the first release's form; its tags stay distinct, as a set's.
        static func edit(_ form: inout Form<[String]>, using generator: inout SeededGenerator) {
            let pick = Int.random(in: 0..<4, using: &generator)
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: form.title += ["a", "é", " "][pick % 3]
            case 1: form.author = ["Ann", "Bob", "", "Cy"][pick]
            case 2: form.count += pick + 1
            case 3:
                let id = 10 * pick
                if let index = form.entries.firstIndex(where: { $0.id == id }) {
                    form.entries.remove(at: index)
                } else {
                    let offset = Int.random(in: 0...form.entries.count, using: &generator)
                    form.entries.insert(Entry(id: id, label: "entry \(id)"), at: offset)
                }
            case 4 where !form.entries.isEmpty:
                form.entries[pick % form.entries.count].label += "?"
            default:
                let tag = "t\(pick)"
                if let index = form.tags.firstIndex(of: tag) {
                    form.tags.remove(at: index)
                } else {
                    form.tags.append(tag)
                }
            }
        }

        /// The first release's `form` as the update reads it.
        static func updated(_ form: Form<[String]>) -> Form<Set<String>> {
            var updated = Form<Set<String>>(tags: Set(form.tags))
            (updated.title, updated.author, updated.count, updated.entries) = (
                form.title, form.author, form.count, form.entries
            )
            return updated
        }
    }

    /// Random histories of ``Form`` (appends, undos and redos), closed or not, opened after the
    /// update: every version read by number, the value opened, every undo to the start and
    /// redo to the end is the first release's, as the update reads it.
    @Test(arguments: Soak.batches(usually: 2), [false, true])
    func randomHistoriesOfAFormCodedByHandOpenExactlyAfterTheUpdate(batch: UInt64, closing: Bool) throws {
        let seed = 0x4A4D_C0DE + batch
        var generator = SeededGenerator(seed: seed)
        let walk = AppUpdateWalkTests.walk(from: Form<[String]>(tags: []), steps: 60, using: &generator) {
            Form<[String]>.edit(&$0, using: &$1)
        }
        let path = directory.path("form-\(batch)-\(closing).keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: walk.values[0])
            for step in walk.steps {
                switch step {
                case .append(let value): try history.append(value)
                case .undo: _ = try history.undo()
                case .redo: _ = try history.redo()
                }
            }
            if closing { try history.close() }
        }
        let expected = walk.values.map(Form<[String]>.updated)
        let store = try KeepsakeStore(path: path)
        for (version, value) in expected.enumerated() {
            let read = try store.value(ofHistory: "doc", atVersion: version, fillingMissingFrom: expected[0])
            #expect(read == value, "seed \(seed), version \(version)")
        }
        let history = try store.history("doc", initialValue: expected[0])
        #expect(history.value == expected[walk.current], "seed \(seed)")
        for version in (0..<walk.current).reversed() {
            #expect(try history.undo() == expected[version], "seed \(seed), undo to \(version)")
        }
        for version in expected.indices.dropFirst() {
            #expect(try history.redo() == expected[version], "seed \(seed), redo to \(version)")
        }
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    /// A model that stores a property under two keys (its text and its first letter): no one
    /// key is the property's, and the open says what to declare instead of storing the change
    /// where the model does not read it.
    struct Indexed<Tags: Codable & Equatable & Sendable>: Versionable, Equatable, Codable {
        var title = ""
        var tags: Tags

        init(tags: Tags) { self.tags = tags }

        enum Key: String, CodingKey { case name, initial, tags }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            title = try container.decode(String.self, forKey: .name)
            tags = try container.decode(Tags.self, forKey: .tags)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(title, forKey: .name)
            try container.encode(String(title.prefix(1)), forKey: .initial)
            try container.encode(tags, forKey: .tags)
        }
    }

    /// ``Indexed`` after the update, declaring as the error asks: the case of `title`'s key is
    /// named after it.
    struct Declared: Versionable, Equatable, Codable {
        var title = ""
        var tags: Set<String> = []

        enum Key: String, CodingKey {
            case title = "name"
            case initial, tags
        }

        init() {}

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            title = try container.decode(String.self, forKey: .title)
            tags = try container.decode(Set<String>.self, forKey: .tags)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(title, forKey: .title)
            try container.encode(String(title.prefix(1)), forKey: .initial)
            try container.encode(tags, forKey: .tags)
        }
    }

    @Test func aPropertyWhoseKeyNoChangeShowsFailsTheOpenSayingWhatToDeclare() throws {
        let path = directory.path("indexed.keepsake")
        do {
            let history = try KeepsakeStore(path: path).history(
                "doc", initialValue: Indexed<[String]>(tags: []))
            var doc = history.value
            doc.title = "Draft"
            try history.append(doc)
            doc.tags.append("x")
            try history.append(doc)
        }
        let error = #expect(throws: KeepsakeError.self) {
            try KeepsakeStore(path: path).history("doc", initialValue: Indexed<Set<String>>(tags: []))
        }
        guard case .reversion("doc", 1, .undecodable(let place, let type, let reason))? = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(place.description == "title")
        #expect(type == "\(Indexed<Set<String>>.self)")
        #expect(reason.contains("name that key's case after the property (case title = \"…\""))
        // Nothing stored was lost: declared as asked, every version reads.
        let declared = try KeepsakeStore(path: path).history("doc", initialValue: Declared())
        var expected = [Declared()]
        expected.append(expected[0])
        expected[1].title = "Draft"
        expected.append(expected[1])
        expected[2].tags = ["x"]
        #expect(declared.value == expected[2])
        try ModelEvolutionTests.expectUndoAndRedo(declared, through: expected)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
