import Foundation
import KeepsakeTestSupport
import Observation
import TestSupport
import Testing

@testable import Keepsake

/// A value `JSONEncoder` cannot write whole — nested deeper than the 511 levels it writes, or
/// refused by the model's own `encode(to:)` — is diffed and decoded like any other, but no
/// checkpoint, snapshot or base value can hold it. The edit that would make a history's value
/// one is refused, typed and saying why; a history whose model refuses a value for a while
/// goes on recording it.
@MainActor @Suite struct UnencodableValueTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("outline.keepsake") }

    /// An outline: each level nests an object and an array in JSON.
    struct Node: Versionable, Codable, Equatable {
        var children: [Node] = []

        /// A node `depth` levels above a leaf: `2 × depth + 2` levels of JSON.
        static func chain(_ depth: Int) -> Node {
            (0..<depth).reduce(Node()) { node, _ in Node(children: [node]) }
        }
    }

    /// The document: an object holding the outline, `2 × depth + 3` levels of JSON in all.
    struct Outline: Versionable, Codable, Equatable {
        var title = ""
        var root = Node()
    }

    /// A model whose `encode(to:)` refuses some values, as a validating model may.
    struct Gauge: Versionable, Codable, Equatable {
        var level = 0
        var label = ""

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            guard level >= 0 else {
                throw EncodingError.invalidValue(
                    level,
                    .init(
                        codingPath: container.codingPath + [CodingKeys.level], debugDescription: "below zero")
                )
            }
            try container.encode(level, forKey: .level)
            try container.encode(label, forKey: .label)
        }
    }

    static let tooDeep = "it nests arrays and objects deeper than the 511 levels JSONEncoder writes"

    /// The checkpoints stored for history `name`.
    func checkpoints(_ store: KeepsakeStore, _ name: String) throws -> Int64 {
        try store.database.read {
            try $0.scalarInt(
                "SELECT count(*) FROM checkpoint JOIN history ON history.id = history_id WHERE history.name = ?",
                [.text(name)]) ?? 0
        }
    }

    @Test func theEditThatWouldNestTheValueTooDeepIsRefusedAndTheHistoryGoesOn() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("outline", initialValue: Outline(root: .chain(200)))
        // 511 levels, the most JSONEncoder writes: a change 401 path steps down.
        try history.append(Outline(root: .chain(254)))
        #expect(try JSONEncoder().encode(history.value).count > 0)
        // 513 levels: refused, whether the change lies deep or holds the deep part.
        let refused = KeepsakeError.unencodableValue(history: "outline", reason: Self.tooDeep)
        #expect(throws: refused) { try history.append(Outline(root: .chain(255))) }
        #expect(throws: refused) { try history.append(Outline(root: Node(children: [.chain(300)]))) }
        #expect(history.value == Outline(root: .chain(254)) && history.versionCount == 1)

        // Edits after it are recorded, and the checkpoints they fall due with are stored (a
        // value stored too deep failed each of them: every later append, or none stored).
        for edit in 1...1_200 {
            var outline = history.value
            outline.title = "edit \(edit)"
            try history.append(outline)
        }
        // Pruned to the default limit of 1,000 at the 1,126th version, then 75 more.
        #expect(history.versionCount == 1_075 && history.value.title == "edit 1200")
        try history.writeCheckpoint()
        #expect(try checkpoints(store, "outline") >= 2)
        try history.checkInvariants()
        store.close()

        let reopened = try KeepsakeStore(path: path)
        let again = try reopened.history("outline", initialValue: Outline())
        #expect(again.value.title == "edit 1200" && again.value.root == .chain(254))
        #expect(try reopened.verify().problems == [] && reopened.integrityCheck() == ["ok"])
    }

    @Test func aFirstValueOrAnInsertedPartNestedTooDeepIsRefused() throws {
        let store = try KeepsakeStore(path: path)
        let refused = KeepsakeError.unencodableValue(history: "outline", reason: Self.tooDeep)
        #expect(throws: refused) {
            _ = try store.history("outline", initialValue: Outline(root: .chain(255)))
        }
        #expect(try store.historyNames() == [])
        // The change near the root holds the deep part, which does not encode by itself: the
        // value is encoded to say why.
        let history = try store.history("outline", initialValue: Outline())
        #expect(throws: refused) { try history.append(Outline(root: .chain(255))) }
        #expect(history.value == Outline() && history.versionCount == 0)
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func aDebouncedEditNestingTheValueTooDeepIsNotHeld() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("outline", initialValue: Outline(root: .chain(200)))
        history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        #expect(throws: KeepsakeError.unencodableValue(history: "outline", reason: Self.tooDeep)) {
            try history.append(Outline(root: .chain(255)))
        }
        #expect(try store.database.read { try $0.scalarInt("SELECT count(*) FROM pending_change") } == 0)
        try history.append(Outline(title: "typed", root: .chain(200)))
        try history.flush()
        #expect(history.versionCount == 1 && history.value.title == "typed")
        try history.checkInvariants()
    }

    @Observable final class OutlineModel {
        var outline = Outline(root: .chain(250))
    }

    /// An observed edit nesting the value too deep is refused where no caller receives the
    /// error: it stays pending, so every later edit meets the refusal too, until undo takes it
    /// back (before, undo recorded it first, and failed the same way: the app could neither
    /// edit nor undo).
    @Test(arguments: [false, true])
    func undoTakesBackAnObservedEditNestingTheValueTooDeep(debounced: Bool) async throws {
        let model = OutlineModel()
        let store = try KeepsakeStore(path: path)
        let controller = try VersioningController(
            observing: model, at: \.outline, storage: .keepsake(store, history: "outline"))
        if debounced { controller.withDebouncing(clock: ManualClock(), interval: .seconds(1)) }
        model.outline.title = "kept"
        try controller.flush()
        #expect(controller.versionCount == 1)
        let refused = KeepsakeError.unencodableValue(history: "outline", reason: Self.tooDeep)
        model.outline.root = .chain(256)
        #expect(await settle { controller.error == ReversionError.storage(StorageFailure(refused)) })
        model.outline.title = "typed after it"
        #expect(throws: ReversionError.storage(StorageFailure(refused))) { try controller.flush() }
        #expect(controller.hasUndo && controller.versionCount == 1)

        try controller.undo()
        #expect(model.outline == Outline(title: "kept", root: .chain(250)))
        #expect(controller.error == nil && controller.versionCount == 1 && !controller.hasRedo)
        #expect(try store.database.read { try $0.scalarInt("SELECT count(*) FROM pending_change") } == 0)
        // Editing goes on, and a second undo undoes the recorded version.
        model.outline.title = "edited"
        try controller.flush()
        #expect(controller.versionCount == 2 && controller.error == nil)
        try controller.undo()
        try controller.undo()
        #expect(model.outline == Outline(root: .chain(250)))
        try controller.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func aValueTheModelRefusesToEncodeIsRecordedWithoutCheckpoints() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("gauge", initialValue: Gauge())
        // Below zero from the first edit: each checkpoint that falls due is left out, as one
        // built off the thread is, instead of failing the append it falls due with.
        for edit in 1...1_200 {
            try history.append(Gauge(level: -1, label: "edit \(edit)"))
        }
        // Pruned to the default limit at the 1,126th version, then 74 more.
        #expect(history.versionCount == 1_074)
        #expect(try checkpoints(store, "gauge") == 1)
        // Closing stores no checkpoint either, and succeeds; asking for one says why not.
        try history.close()
        #expect(
            throws: KeepsakeError.unencodableValue(
                history: "gauge", reason: "JSONEncoder refused it at level: below zero")
        ) {
            try history.writeCheckpoint()
        }
        // Back above zero: the next checkpoint due is stored.
        for edit in 1...1_100 {
            try history.append(Gauge(level: edit, label: "edit \(edit)"))
        }
        #expect(try checkpoints(store, "gauge") >= 2)
        try history.checkInvariants()
        store.close()
        let again = try KeepsakeStore(path: path).history("gauge", initialValue: Gauge())
        #expect(again.value == Gauge(level: 1_100, label: "edit 1100"))
        try again.undo()
        #expect(again.value == Gauge(level: 1_099, label: "edit 1099"))
    }

    /// A reading stored whole, whose `encode(to:)` throws an error of the model's own.
    struct Reading: VersionableLeaf, Codable {
        struct BelowZero: Error, CustomStringConvertible {
            var description: String { "a reading below zero" }
        }

        var value = 0

        init(value: Int = 0) { self.value = value }

        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(Int.self)
        }

        func encode(to encoder: any Encoder) throws {
            guard value >= 0 else { throw BelowZero() }
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    struct Meter: Versionable, Codable, Equatable {
        var name = ""
        var reading = Reading()
    }

    /// A change whose value the model's `encode(to:)` refuses with an error of its own: before,
    /// *SQLite error 1: a reading below zero*, as if the store had failed.
    @Test func anErrorOfTheModelsOwnWhileEncodingAChangeSaysTheValueIsRefused() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("meter", initialValue: Meter())
        #expect(throws: KeepsakeError.unencodableValue(history: "meter", reason: "a reading below zero")) {
            try history.append(Meter(name: "sensor", reading: Reading(value: -2)))
        }
        #expect(history.value == Meter() && history.versionCount == 0)
        try history.append(Meter(name: "sensor", reading: Reading(value: 2)))
        #expect(history.versionCount == 1)
        try history.checkInvariants()
    }

    /// The gauge as an earlier release had it: any level encodes.
    struct EarlierGauge: Versionable, Codable, Equatable {
        var level = 0
        var label = ""
    }

    /// The gauge once an update added `unit` and made `encode(to:)` refuse a level below zero.
    struct UnitGauge: Versionable, Codable, Equatable {
        var level = 0
        var label = ""
        var unit = "m"

        func encode(to encoder: any Encoder) throws {
            try Gauge(level: level, label: label).encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(unit, forKey: .unit)
        }
    }

    /// The first open after such an update reads the stored value through the merge with the
    /// initial value (it lacks `unit`) and stores it whole in today's model, to spare later
    /// opens the merge: today's model refusing to encode it failed the open, typed (before,
    /// as *SQLite error 1*), though it decodes and undoes. The checkpoint is left out instead.
    @Test(arguments: [true, false])
    func anUpdateWhoseModelRefusesTheStoredValueStillOpensTheHistory(closing: Bool) throws {
        do {
            let earlier = try KeepsakeStore(path: path).history("gauge", initialValue: EarlierGauge())
            try earlier.append(EarlierGauge(level: 3, label: "three"))
            try earlier.append(EarlierGauge(level: -1, label: "below"))
            if closing { try earlier.close() }
        }
        let store = try KeepsakeStore(path: path)
        let history = try store.history("gauge", initialValue: UnitGauge())
        #expect(history.value == UnitGauge(level: -1, label: "below"))
        let withUnit = try store.database.read {
            try $0.scalarInt(#"SELECT count(*) FROM checkpoint WHERE value LIKE '%"unit"%'"#)
        }
        #expect(withUnit == 0)
        try history.undo()
        #expect(history.value == UnitGauge(level: 3, label: "three"))
        try history.append(UnitGauge(level: 4, label: "four", unit: "ft"))
        try history.checkInvariants()
        store.close()
        let again = try KeepsakeStore(path: path).history("gauge", initialValue: UnitGauge())
        #expect(again.value == UnitGauge(level: 4, label: "four", unit: "ft") && again.versionCount == 2)
        try again.undo()
        #expect(again.value == UnitGauge(level: 3, label: "three"))
    }

    final class Settings: RestorableObject {
        @Restorable var gauge = Gauge()
    }

    @Test func aSnapshotOfAValueJSONCannotHoldSaysWhyWithoutTheValue() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        #expect(throws: KeepsakeError.unencodableSnapshot(name: "deep", reason: Self.tooDeep)) {
            try caretaker.save(Outline(root: .chain(255)), as: "deep")
        }
        #expect(
            throws: KeepsakeError.unencodableSnapshot(
                name: "gauge", reason: "JSONEncoder refused it at level: below zero")
        ) {
            try caretaker.save(Gauge(level: -1), as: "gauge")
        }
        let settings = Settings()
        settings.gauge.level = -2
        #expect(
            throws: KeepsakeError.unencodableSnapshot(
                name: "settings", reason: "JSONEncoder refused it at gauge.level: below zero")
        ) {
            try settings.takeSnapshot(withKey: "settings", in: caretaker)
        }
        #expect(try caretaker.snapshots().isEmpty)
    }

    /// Random edits near the limit — the outline deepened or shortened at its far end, a
    /// branch added near the top, the title changed — with undo, redo and reopening, under a
    /// small limit that prunes and checkpoints often: the store holds exactly what an in-memory
    /// history holds that was given only the values `JSONEncoder` writes, and refuses the others.
    @Test(arguments: Soak.batches(usually: 2))
    func randomEditsNearTheLimitKeepWhatJSONCanHold(batch: UInt64) throws {
        var generator = SeededGenerator(seed: 0xDEE9_0000 &+ batch)
        let limit = 24
        let reference = VersioningController(Outline(root: .chain(240)), maximumVersions: limit)
        var store = try KeepsakeStore(path: path)
        var history = try store.history("outline", initialValue: reference.value, maximumVersions: limit)
        for step in 0..<300 {
            var next = reference.value
            switch Int.random(in: 0..<10, using: &generator) {
            case 0...3:
                // Deepen or shorten the longest branch at its far end: depth 246 to 262.
                let target = Int.random(in: 246...262, using: &generator)
                next.root.children = [.chain(target - 1)] + next.root.children.dropFirst()
            case 4:
                next.root.children.append(.chain(Int.random(in: 0...300, using: &generator)))
            case 5:
                next.title = "step \(step)"
            case 6:
                try reference.undo()
                try history.undo()
                continue
            case 7:
                try reference.redo()
                try history.redo()
                continue
            case 8:
                store.close()
                store = try KeepsakeStore(path: path)
                history = try store.history("outline", initialValue: Outline(), maximumVersions: limit)
            default:
                if reference.hasUndo { next.root.children.removeLast(min(1, next.root.children.count - 1)) }
            }
            let fits = (try? ChangeRecord.makeEncoder().encode(next)) != nil
            if fits {
                try reference.append(next)
                try history.append(next)
            } else {
                #expect(throws: KeepsakeError.unencodableValue(history: "outline", reason: Self.tooDeep)) {
                    try history.append(next)
                }
            }
            #expect(history.value == reference.value, "batch \(batch), step \(step)")
            #expect(Self.stacks(history) == Self.stacks(reference), "batch \(batch), step \(step)")
        }
        try history.checkInvariants()
        store.close()
        let reopened = try KeepsakeStore(path: path)
        #expect(try reopened.history("outline", initialValue: Outline()).value == reference.value)
        #expect(try reopened.verify().problems == [] && reopened.integrityCheck() == ["ok"])
    }

    /// Whether a controller can undo, can redo, and how many versions it holds.
    static func stacks<Failure>(_ controller: VersioningController<Outline, Outline, Failure>) -> [Int] {
        [controller.hasUndo ? 1 : 0, controller.hasRedo ? 1 : 0, controller.versionCount]
    }

    @Test func theNestingOfAPatchLeavesOutBracketsInStrings() {
        let cases: [(String, Int)] = [
            (#"3"#, 0), (#""[[{""#, 0), (#"[1,[2,[3]],{"a":[]}]"#, 3),
            (#"{"a":"[[[\"]]]","b":[[1]]}"#, 3), (#"["\\",["\\\"[",[]]]"#, 3), (#"[""#, 1),
        ]
        for (json, nesting) in cases {
            #expect(Array(json.utf8).withUnsafeBytes { StoredChanges.nesting(of: $0) } == nesting, "\(json)")
        }
    }
}
