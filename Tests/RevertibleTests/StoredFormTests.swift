import Foundation
import Revertible
import TestSupport
import Testing

/// Stored records replayed on a value's JSON, without its type: what a store does when an app's
/// new model can no longer read a change its old model made.
@Suite struct StoredFormTests {
    /// The JSON of `value`, as records and checkpoints encode it.
    static func json<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try ChangeRecord.makeEncoder().encode(value), as: UTF8.self)
    }

    /// `json` reverted by `records` (redone when `inverted`), decoded as a `Value`.
    static func replayed<Value: Decodable>(
        _ json: String, _ records: [ChangeRecord], inverted: Bool, as _: Value.Type
    ) throws -> Value {
        var form = try StoredForm(json: json, decoder: ChangeRecord.makeDecoder())
        try form.revert(records, inverted: inverted)
        return try ChangeRecord.makeDecoder().decode(Value.self, from: Data(form.json.utf8))
    }

    /// Every random step's records, replayed on the JSON of either side, give the other side:
    /// every kind of change (whole values, text and byte ranges, arrays by id and by position,
    /// dictionaries, sets, enum payloads, optionals).
    @Test(arguments: Soak.batches(usually: 4))
    func randomEditsReplayOnTheStoredFormExactly(batch: UInt64) throws {
        let seed = 0x5703_ED00 + batch
        var kinds: Set<String> = []
        // One form that every step is redone on in turn, as opening a history replays them.
        var running = try StoredForm(json: Self.json(Document.empty))
        try RandomEdits.walk(seed: seed, steps: 400, maximumEdits: 4) { step, original, edited in
            guard let reversion = edited.reversion(to: original) else { return }
            let records = try reversion.records()
            kinds.formUnion(records.map(\.kind))
            try running.revert(records, inverted: true)
            let reached = try ChangeRecord.makeDecoder().decode(Document.self, from: Data(running.json.utf8))
            try #require(RandomEdits.same(reached, edited), "seed \(seed) step \(step): replayed in turn")
            let redone = try Self.replayed(Self.json(original), records, inverted: true, as: Document.self)
            try #require(RandomEdits.same(redone, edited), "seed \(seed) step \(step): redo")
            let reverted = try Self.replayed(Self.json(edited), records, inverted: false, as: Document.self)
            try #require(RandomEdits.same(reverted, original), "seed \(seed) step \(step): revert")
        }
        #expect(kinds == ["replace", "text", "bytes", "elements", "members", "entries"], "seed \(seed)")
    }

    /// Dictionaries whose JSON is an array of keys and values (a key that is not text or a
    /// number), dictionaries with `Int` keys, arrays of arrays changed by position, and an
    /// optional struct.
    struct Keyed: Versionable, Equatable, Codable {
        struct Point: Hashable, Codable { var x: Int }
        struct Note: Versionable, Equatable, Codable { var text: String }

        var byPoint: [Point: String] = [:]
        var byNumber: [Int: String] = [:]
        var rows: [[Int]] = []
        var note: Note?

        mutating func edit(using generator: inout SeededGenerator) {
            let word = ["a", "b", "", "long text"].randomElement(using: &generator)!
            switch Int.random(in: 0..<5, using: &generator) {
            case 0:
                byPoint[Point(x: Int.random(in: 0..<4, using: &generator))] =
                    Bool.random(using: &generator) ? nil : word
            case 1:
                byNumber[Int.random(in: -2..<3, using: &generator)] =
                    Bool.random(using: &generator) ? nil : word
            case 2:
                if rows.isEmpty || Bool.random(using: &generator) {
                    rows.append([Int.random(in: 0..<3, using: &generator)])
                } else {
                    rows[Int.random(in: 0..<rows.count, using: &generator)].append(1)
                }
            case 3: if !rows.isEmpty { rows.remove(at: Int.random(in: 0..<rows.count, using: &generator)) }
            default:
                note =
                    note == nil
                    ? Note(text: word) : Bool.random(using: &generator) ? nil : Note(text: word + "!")
            }
        }
    }

    @Test func keyedPositionedAndOptionalChangesReplayExactly() throws {
        var generator = SeededGenerator(seed: 0x5703_ED77)
        var value = Keyed()
        var paths: Set<String> = []
        for step in 0..<600 {
            let original = value
            for _ in 0..<Int.random(in: 1...3, using: &generator) { value.edit(using: &generator) }
            guard let reversion = value.reversion(to: original) else { continue }
            let records = try reversion.records()
            paths.formUnion(
                records.map { "\($0.path.components.first.map { "\($0)" } ?? "")\($0.path.components.count)" }
            )
            #expect(
                try Self.replayed(Self.json(original), records, inverted: true, as: Keyed.self) == value,
                "step \(step)")
            #expect(
                try Self.replayed(Self.json(value), records, inverted: false, as: Keyed.self) == original,
                "step \(step)")
        }
        // Changes inside an element by position, inside an entry by key, inside the optional.
        #expect(paths.isSuperset(of: [".rows2", ".byPoint1", ".byNumber2", ".note2"]), "\(paths.sorted())")
    }

    /// A tree at neither side of a record is refused, and left as it was.
    /// Filling takes a key the JSON lacks from the other tree (a property added since, as the
    /// model reads it), and nothing where the other tree lacks it too (an optional left out:
    /// `nil`), nor where the JSON holds it already, nor below a key the JSON lacks.
    @Test func fillingTakesOnlyWhatTheJSONLacksAndTheOtherHolds() throws {
        var form = try StoredForm(json: #"{"title":"a","settings":{"zoom":1}}"#)
        let read = try StoredForm(
            json: #"{"title":"b","grid":8,"settings":{"zoom":2,"snap":true},"extra":{"depth":3}}"#)
        let paths = try ["grid", "note", "title", "settings.snap", "extra.depth"].map(
            PathDescriptor.init(parsing:))
        form.fill(absentAt: paths, from: read)
        #expect(form == (try StoredForm(json: #"{"title":"a","grid":8,"settings":{"zoom":1,"snap":true}}"#)))
    }

    @Test func aTreeAtAnotherVersionIsRefusedAndUnchanged() throws {
        let old = Document.empty
        var new = old
        new.title = "Draft"
        new.items = [.init(id: 1, name: "one", done: false, tags: [])]
        let records = try #require(new.reversion(to: old)).records()
        var elsewhere = old
        elsewhere.title = "Other"
        let json = try Self.json(elsewhere)
        var form = try StoredForm(json: json, decoder: ChangeRecord.makeDecoder())
        #expect(throws: ReversionError.wrongVersion(path: "title", reason: #"expected "", found "Other""#)) {
            try form.revert(records, inverted: true)
        }
        #expect(form.json == (try StoredForm(json: json, decoder: ChangeRecord.makeDecoder()).json))
    }

    /// A reversion whose later record fails once the earlier ones are applied — here the item it
    /// renames is gone with the array the first one emptied — leaves the tree as it was: the
    /// records are applied in place, and what they changed is put back.
    @Test func aRecordFailingAfterOthersAppliedLeavesTheTreeAsItWas() throws {
        var document = Document.empty
        document.title = "Draft"
        document.items = [.init(id: 1, name: "one", done: false, tags: ["a"])]
        let json = try Self.json(document)
        let items = try Self.json(document.items)
        let records = [
            ChangeRecord(path: "title", kind: "replace", payload: Data(#"{"old":"","new":"Draft"}"#.utf8)),
            ChangeRecord(path: "items", kind: "replace", payload: Data(#"{"old":[],"new":\#(items)}"#.utf8)),
            ChangeRecord(
                path: "items[id: 1].name", kind: "replace", payload: Data(#"{"old":"uno","new":"one"}"#.utf8)),
        ]
        var form = try StoredForm(json: json, decoder: ChangeRecord.makeDecoder())
        #expect(throws: ReversionError.pathNotFound(path: "items[id: 1].name", type: "JSON")) {
            try form.revert(records, inverted: false)
        }
        #expect(form.json == (try StoredForm(json: json, decoder: ChangeRecord.makeDecoder()).json))
        // The form still works: the first two records alone revert it.
        try form.revert(Array(records.prefix(2)), inverted: false)
        #expect(try ChangeRecord.makeDecoder().decode(Document.self, from: Data(form.json.utf8)) == .empty)
    }

    /// The same when the records applied before the failing one changed an array, a set and
    /// both forms of dictionary in place: each is changed back.
    @Test(arguments: [false, true])
    func aRecordFailingAfterCollectionsChangedInPlaceLeavesTheTreeAsItWas(largeChanges: Bool) throws {
        struct Shelf: Versionable, Equatable, Codable {
            var items: [Document.Item]
            var tags: Set<String>
            var scores: [String: Int]
            var byPoint: [Keyed.Point: String]
        }
        // Many members and entries at once are found by hashing; a few, one by one.
        let count = largeChanges ? 12 : 2
        let original = Shelf(
            items: (1...5).map { .init(id: $0, name: "item \($0)", done: false, tags: []) },
            tags: Set((0..<count).map { "old \($0)" } + ["kept"]),
            scores: Dictionary(uniqueKeysWithValues: (0..<count).map { ("old \($0)", $0) } + [("kept", 1)]),
            byPoint: Dictionary(
                uniqueKeysWithValues: (0..<count).map { (Keyed.Point(x: $0), "old") } + [
                    (.init(x: -1), "kept")
                ]))
        var edited = original
        edited.items.removeFirst()
        edited.items.insert(.init(id: 9, name: "new", done: true, tags: []), at: 2)
        edited.tags = Set((0..<count).map { "new \($0)" } + ["kept"])
        edited.scores = Dictionary(
            uniqueKeysWithValues: (0..<count).map { ("new \($0)", $0) } + [("kept", 1)])
        edited.byPoint = Dictionary(
            uniqueKeysWithValues: (0..<count).map { (Keyed.Point(x: 100 + $0), "new") } + [
                (.init(x: -1), "kept")
            ])
        let records = try #require(edited.reversion(to: original)).records()
        #expect(Set(records.map(\.kind)) == ["elements", "members", "entries"])
        // Redone, records apply last to first: the first one renames item 1, which the array's
        // change took out by then.
        let renaming = ChangeRecord(
            path: "items[id: 1].name", kind: "replace", payload: Data(#"{"old":"item 1","new":"one"}"#.utf8))
        let json = try Self.json(original)
        var form = try StoredForm(json: json, decoder: ChangeRecord.makeDecoder())
        #expect(throws: ReversionError.pathNotFound(path: "items[id: 1].name", type: "JSON")) {
            try form.revert([renaming] + records, inverted: true)
        }
        let decoder = ChangeRecord.makeDecoder()
        #expect(try decoder.decode(Shelf.self, from: Data(form.json.utf8)) == original)
        // The form still works, at the version it was at.
        try form.revert(records, inverted: true)
        #expect(try decoder.decode(Shelf.self, from: Data(form.json.utf8)) == edited)
        try form.revert(records, inverted: false)
        #expect(try decoder.decode(Shelf.self, from: Data(form.json.utf8)) == original)
    }

    /// A tag whose `color` and `mark` an earlier release did not store: the model reads them
    /// from its defaults.
    struct Tag: Versionable, Equatable, Codable {
        var name = "x"
        var color = "none"
        var mark = Data([0])
    }

    /// A change of a `String` or `Data` value kept whole (up to 256 bytes) is redone, and taken
    /// back, where the JSON holds no value (the key missing, or `null`): the side it makes is all
    /// in the change. One of a range within a longer value needs the value it changes, which
    /// only the model knew: refused, the tree unchanged.
    @Test(arguments: [#"{"name":"x"}"#, #"{"name":"x","color":null,"mark":null}"#])
    func aWholeChangeIsMadeWhereTheJSONHoldsNoValue(stored: String) throws {
        let old = Tag()
        var new = old
        new.color = "red"
        new.mark = Data([1, 2])
        let records = try #require(new.reversion(to: old)).records()
        #expect(records.map(\.kind) == ["text", "bytes"])
        var form = try StoredForm(json: stored, decoder: ChangeRecord.makeDecoder())
        try form.revert(records, inverted: true)
        #expect(form.json == #"{"color":"red","mark":"AQI=","name":"x"}"#)
        var reverted = try StoredForm(json: stored, decoder: ChangeRecord.makeDecoder())
        try reverted.revert(records, inverted: false)
        #expect(reverted.json == #"{"color":"none","mark":"AA==","name":"x"}"#)

        var long = old
        long.color = String(repeating: "a", count: 300)
        var edited = long
        edited.color += "b"
        let ranged = try #require(edited.reversion(to: long)).records()
        var refused = try StoredForm(json: stored, decoder: ChangeRecord.makeDecoder())
        #expect {
            try refused.revert(ranged, inverted: true)
        } throws: { error in
            let error = try #require(error as? ReversionError)
            return error == .wrongVersion(path: "color", reason: StoredForm.unstoredReason("text"))
                && StoredForm.isUnstored(error)
        }
        #expect(refused == (try StoredForm(json: stored)))
        #expect(StoredForm.unstoredReason("text").contains("does not hold"))
        #expect(!StoredForm.isUnstored(.wrongVersion(path: "color", reason: "expected text, found 1")))

        // Its shape, though, holds a value there, whichever, as the model's form does: a
        // change within bytes is not even read.
        var shape = try StoredForm(json: stored, decoder: ChangeRecord.makeDecoder())
        shape.shapeOnly = true
        try shape.revert(ranged + [try #require(records.last)], inverted: true)
        #expect(shape.json == #"{"color":"","mark":"","name":"x"}"#)
    }

    /// A path that names no place, and a kind the stored form has no meaning for, are refused.
    /// A sketch stored by its own `encode(to:)`: its title under `"name"`, beside a format
    /// version no property holds, its draft not at all.
    struct Sketch: Versionable, Equatable, Codable {
        var title = ""
        var draft = ""

        init() {}

        enum Key: String, CodingKey { case name, schemaVersion }

        init(from decoder: any Decoder) throws {
            title = try decoder.container(keyedBy: Key.self).decode(String.self, forKey: .name)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(title, forKey: .name)
            try container.encode(1, forKey: .schemaVersion)
        }
    }

    /// With the model's type known, `title`'s key is found from its change: the model's value
    /// decoded from the JSON, changed by it, encodes otherwise under `"name"` alone. The
    /// draft's change does not apply to that value (it decodes no draft), and is made under
    /// its name, where an earlier replay left the draft. Without the type, `title` is its own
    /// key.
    @Test func aPropertysKeyIsFoundFromItsChangeWhenTheKeysDoNotShowIt() throws {
        var old = Sketch()
        old.draft = String(repeating: "a", count: 300)
        var new = old
        new.draft += "b"
        new.title = "Named"
        let records = try #require(new.reversion(to: old)).records()
        #expect(records.map(\.path.description) == ["title", "draft"])
        let a = String(repeating: "a", count: 300)
        let stored = #"{"draft":"\#(a)","name":"","schemaVersion":1}"#
        var form = try StoredForm(
            json: stored, decoder: ChangeRecord.makeDecoder(), keys: CodingKeyTree(for: Sketch.self))
        try form.revert(records, inverted: true)
        #expect(form.json == #"{"draft":"\#(a)b","name":"Named","schemaVersion":1}"#)
        try form.revert(records, inverted: false)
        #expect(form.json == stored)

        var untyped = try StoredForm(json: stored, decoder: ChangeRecord.makeDecoder())
        try untyped.revert(records, inverted: true)
        #expect(untyped.json == #"{"draft":"\#(a)b","name":"","schemaVersion":1,"title":"Named"}"#)
    }

    @Test func unknownPlacesAndKindsAreRefused() throws {
        let json = try Self.json(Document.empty)
        var form = try StoredForm(json: json, decoder: ChangeRecord.makeDecoder())
        let payload = Data(#"{"old":1,"new":2}"#.utf8)
        #expect(throws: ReversionError.pathNotFound(path: "items[id: 4].name", type: "JSON")) {
            try form.revert(
                [ChangeRecord(path: "items[id: 4].name", kind: "replace", payload: payload)], inverted: true)
        }
        #expect(throws: ReversionError.pathNotFound(path: "missing.part", type: "JSON")) {
            try form.revert(
                [ChangeRecord(path: "missing.part", kind: "replace", payload: payload)], inverted: true)
        }
        #expect {
            try form.revert([ChangeRecord(path: "count", kind: "custom", payload: payload)], inverted: true)
        } throws: { error in
            guard case .undecodable("count", "JSON", let reason) = error as? ReversionError else {
                return false
            }
            return reason
                == #"a "custom" change is a patch of the app's own type: applying it needs that type"#
        }
        #expect(form.json == (try StoredForm(json: json, decoder: ChangeRecord.makeDecoder()).json))
    }

    /// Numbers that neither `Int64` nor `Double` holds exactly keep every digit.
    struct Wide: Versionable, Equatable, Codable {
        var hash: UInt64
        var amount: Decimal
        var other: Int = 0
    }

    @Test func numbersPastInt64AndLongDecimalsKeepEveryDigit() throws {
        let old = Wide(hash: .max - 1, amount: Decimal(string: "12345678901234567890.123456789")!)
        var new = old
        new.other = 1
        let records = try #require(new.reversion(to: old)).records()
        #expect(try Self.replayed(Self.json(old), records, inverted: true, as: Wide.self) == new)
        var hashed = old
        hashed.hash = .max
        let replaced = try #require(hashed.reversion(to: old)).records()
        #expect(try Self.replayed(Self.json(old), replaced, inverted: true, as: Wide.self) == hashed)
        #expect(try Self.replayed(Self.json(hashed), replaced, inverted: false, as: Wide.self) == old)
    }
}
