import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// An app update that changed the model in every declared way at once, against random
/// histories: the old app (a child process) appends, undoes and redoes at random, then closes
/// its history or stops without closing it; the new app opens it, edits, undoes and redoes at
/// random, and every value it sees is checked against the old walk's values, converted as the
/// update declares, and its own. The invariants are checked where the new app's changes lie
/// above the old app's (and the base value the old model stored lacks what was added since).
@Suite struct AppUpdateWalkTests {
    let directory = TemporaryDirectory()

    /// An item after the update: it gained a `color` (filled from its type's defaults).
    protocol UpdatedItem: Versionable, Equatable, Codable, DecodingDefaults, SendableMetatype {
        var id: Int { get }
        var title: String { get set }
        var color: String { get set }
        init(id: Int, title: String, done: Bool, shape: Shape, color: String)
    }

    struct IdentifiableItem: Identifiable, UpdatedItem {
        let id: Int
        var title: String
        var done: Bool
        var shape: Shape
        var color: String

        static var decodingDefaults: Self { Self(id: 0, title: "", done: false, shape: .dot, color: "black") }
    }

    /// No longer `Identifiable`: the old model's changes inside an item name it by id
    /// (`items[id: 3].title`), which the new model's array, tracked by position, cannot
    /// resolve; undo and opening redo them on the stored JSON.
    struct PlainItem: UpdatedItem {
        let id: Int
        var title: String
        var done: Bool
        var shape: Shape
        var color: String

        static var decodingDefaults: Self { Self(id: 0, title: "", done: false, shape: .dot, color: "black") }
    }

    /// ``Doc`` after the update: `title` renamed `heading`, `scores` from `Int` to `Double`,
    /// `blob` removed, `grid` (filled from the app's initial value) and an optional `caption`
    /// added; its items gained a `color`.
    struct UpdatedDoc<Item: UpdatedItem>: Versionable, Equatable, Codable {
        var heading: String
        var status: Doc.Status
        var items: [Item]
        var scores: [String: Double]
        var note: String?
        var grid: Int
        var caption: String?

        static var propertyEvolution: [PropertyEvolution] {
            [
                .renamed("title", to: "heading"),
                .converted("scores", from: [String: Int].self) { $0.mapValues(Double.init) },
            ]
        }

        static var initial: Self { Self(Doc.empty) }

        /// `doc` as the new app reads it, `grid` as the initial value gives it.
        init(_ doc: Doc) {
            (heading, status, scores, note, grid, caption) = (
                doc.title, doc.status, doc.scores.mapValues(Double.init), doc.note, 8, nil
            )
            items = doc.items.map {
                Item(id: $0.id, title: $0.title, done: $0.done, shape: $0.shape, color: "black")
            }
        }

        /// One random edit, of an added property as often as of an old one.
        mutating func edit(using generator: inout SeededGenerator) {
            switch Int.random(in: 0..<7, using: &generator) {
            case 0: heading += ["a", "é", " "].randomElement(using: &generator)!
            case 1: grid += Int.random(in: 1...3, using: &generator)
            case 2: caption = Bool.random(using: &generator) ? nil : "caption \(grid)"
            case 3: scores["c"] = Double(Int.random(in: 0..<8, using: &generator)) / 4
            case 4:
                let id = 100 + Int.random(in: 0..<4, using: &generator)
                if items.contains(where: { $0.id == id }) {
                    items.removeAll { $0.id == id }
                } else {
                    let item = Item(id: id, title: "new \(id)", done: false, shape: .dot, color: "green")
                    items.insert(item, at: Int.random(in: 0...items.count, using: &generator))
                }
            case 5:
                guard !items.isEmpty else {
                    grid += 1
                    return
                }
                let index = Int.random(in: 0..<items.count, using: &generator)
                items[index].color = ["red", "blue", "black"].randomElement(using: &generator)!
                items[index].title += "?"
            default: note = Bool.random(using: &generator) ? nil : "note \(grid)"
            }
        }
    }

    /// The old app's steps for `seed` (an append of its value, an undo or a redo), and the
    /// values the history holds after them: every one made, oldest first, and the current one.
    nonisolated static func oldWalk(seed: UInt64) -> (steps: [Step<Doc>], values: [Doc], current: Int) {
        var generator = SeededGenerator(seed: seed)
        return walk(from: Doc.empty, steps: 80, using: &generator, edit: oldEdit)
    }

    /// One random version of the old app: one edit, or two in one version a time in three (a
    /// form saved whole): a change the new model cannot read then lies beside one it can, and
    /// undoing or redoing that version makes both on the stored JSON — which may be the one
    /// today's model wrote, a renamed property under its new key (until 2026-11 a change at
    /// `title` was made under `"title"` beside `"heading"`, and lost).
    nonisolated static func oldEdit(_ doc: inout Doc, using generator: inout SeededGenerator) {
        DocEdits.edit(&doc, using: &generator)
        if Int.random(in: 0..<3, using: &generator) == 0 { DocEdits.edit(&doc, using: &generator) }
    }

    enum Step<Value> {
        case append(Value)
        case undo
        case redo
    }

    /// Random appends, undos and redos from `values[current]`: the steps taken and the values
    /// the history holds after them.
    nonisolated static func walk<Value: Equatable>(
        from values: [Value], current: Int = 0, steps: Int, using generator: inout SeededGenerator,
        edit: (inout Value, inout SeededGenerator) -> Void
    ) -> (steps: [Step<Value>], values: [Value], current: Int) {
        var (values, current) = (values, current)
        var taken: [Step<Value>] = []
        for _ in 0..<steps {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<2 where current > 0:
                current -= 1
                taken.append(.undo)
            case 2 where current < values.count - 1:
                current += 1
                taken.append(.redo)
            default:
                var value = values[current]
                edit(&value, &generator)
                guard value != values[current] else { continue }
                values = values[...current] + [value]
                current += 1
                taken.append(.append(value))
            }
        }
        return (taken, values, current)
    }

    nonisolated static func walk<Value: Equatable>(
        from value: Value, steps: Int, using generator: inout SeededGenerator,
        edit: (inout Value, inout SeededGenerator) -> Void
    ) -> (steps: [Step<Value>], values: [Value], current: Int) {
        walk(from: [value], steps: steps, using: &generator, edit: edit)
    }

    /// The old app: the walk of `seed`, then its history closed or left as a killed app leaves it.
    nonisolated static func writeOldHistory(path: String, seed: UInt64, closing: Bool) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        for step in oldWalk(seed: seed).steps {
            switch step {
            case .append(let value): try history.append(value)
            case .undo: _ = try history.undo()
            case .redo: _ = try history.redo()
            }
        }
        if closing { try history.close() }
    }

    /// The old app: an item added, its title changed (stored by the item's id), the document's
    /// title changed; stopped without closing, so that its only stored value is the base one.
    nonisolated static func writeThreeVersions(path: String) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        var doc = Doc.empty
        doc.items.append(.init(id: 1, title: "item", done: false))
        try history.append(doc)
        doc.items[0].title = "renamed item"
        try history.append(doc)
        doc.title = "old title"
        try history.append(doc)
    }

    /// The old app's three versions (``writeThreeVersions(path:)``), written in a child process
    /// at `name` in the test's folder, opened by the new app, whose items are told by position.
    func openThreeVersions(_ name: String) async throws -> (
        path: String, history: KeepsakeHistory<UpdatedDoc<PlainItem>>
    ) {
        let path = directory.path(name)
        await #expect(processExitsWith: .success) { [path = path as String] in
            try Self.writeThreeVersions(path: path)
        }
        return (
            path, try KeepsakeStore(path: path).history("doc", initialValue: UpdatedDoc<PlainItem>.initial)
        )
    }

    /// The new app undid the old app's last version and made a change the old JSON does not
    /// fit (`heading`, a name it does not hold), which discards the value the open stored at
    /// the top; then it stopped without closing. The next open starts from the base value,
    /// below the old app's change the new model cannot read (the item's, by id) and its own
    /// change: the old versions are redone on the stored JSON, its own on the value decoded
    /// there. Before, every version was redone on the JSON, `heading` did not fit, and the
    /// history did not open.
    @Test func aNewChangeAboveOldOnesTheModelCannotReadReopensFromTheOldBaseValue() async throws {
        typealias New = UpdatedDoc<PlainItem>
        let (path, history) = try await openThreeVersions("three.keepsake")
        var expected = New.initial
        expected.items = [PlainItem(id: 1, title: "renamed item", done: false, shape: .dot, color: "black")]
        #expect(try history.undo() == expected)
        expected.heading = "new heading"
        try history.append(expected)
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: New.initial)
        #expect(reopened.value == expected && reopened.versionCount == 3)
        try reopened.checkInvariants()
    }

    /// A change made without tracking after the update, below which lies a version the new
    /// model cannot read: the base value is the stored one with the change made on its JSON
    /// (before, making it undid every version on the model, and failed on that one), a
    /// property added since given first the value the model reads there (before, the change
    /// of one was refused: the old JSON lacks it). Every version undoes to a value with the
    /// change, after reopening too.
    @Test func aChangeWithoutTrackingAboveVersionsTheModelCannotReadIsKept() async throws {
        typealias New = UpdatedDoc<PlainItem>
        let (path, history) = try await openThreeVersions("untracked.keepsake")
        var doc = history.value
        doc.note = "from the server"
        doc.grid = 12  // added since: the old app's JSON has no grid
        try history.setWithoutTracking(doc)
        var expected = [doc]
        expected.append(doc)
        expected[1].heading = ""
        expected.append(expected[1])
        expected[2].items[0].title = "item"
        expected.append(expected[2])
        expected[3].items = []
        for closing in [false, true] {
            let reopened = try KeepsakeStore(path: path).history("doc", initialValue: New.initial)
            #expect(reopened.value == expected[0])
            #expect(try (1...3).map { _ in try reopened.undo() } == Array(expected.dropFirst()))
            try reopened.checkInvariants()
            for _ in 1...3 { _ = try reopened.redo() }
            if closing { try reopened.close() }
        }
    }

    /// How the new app meets the old app's history.
    struct Update: Sendable, CustomTestStringConvertible {
        /// Whether the old app closed its history.
        var closing: Bool
        /// Whether the new model still tells items by id.
        var identifiable: Bool
        /// The new app's limit: with a small one it folds the old app's versions under the
        /// floor, and the checkpoints above them go with the versions it discards.
        var limit: Int?

        var testDescription: String {
            "\(closing ? "closed" : "killed"), \(identifiable ? "items by id" : "items by position"), "
                + "limit \(limit.map(String.init) ?? "none")"
        }

        static let all = [true, false].flatMap { closing in
            [true, false].flatMap { identifiable in
                [nil, 3].map { Update(closing: closing, identifiable: identifiable, limit: $0) }
            }
        }
    }

    @Test(arguments: Soak.batches(usually: 4), Update.all)
    func everyValueAfterTheUpdateIsTheOldOneConvertedOrTheNewAppsOwn(batch: UInt64, update: Update)
        async throws
    {
        let seed = 0xA99_0DA7E + batch
        let path = directory.path("update-\(batch).keepsake")
        await #expect(processExitsWith: .success) {
            [path = path as String, seed = seed as UInt64, closing = update.closing as Bool] in
            try Self.writeOldHistory(path: path, seed: seed, closing: closing)
        }
        if update.identifiable {
            try expectExactValues(
                at: path, seed: seed, limit: update.limit, as: UpdatedDoc<IdentifiableItem>.self)
        } else {
            try expectExactValues(at: path, seed: seed, limit: update.limit, as: UpdatedDoc<PlainItem>.self)
        }
    }

    /// Opens the old app's history at `path` as `New`, walks it at random, and checks every
    /// value against the old walk of `seed` converted, and the new app's own.
    func expectExactValues<Item: UpdatedItem>(
        at path: String, seed: UInt64, limit: Int?, as new: UpdatedDoc<Item>.Type
    ) throws {
        typealias New = UpdatedDoc<Item>
        let old = Self.oldWalk(seed: seed)
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: New.initial, maximumVersions: limit)
        #expect(history.value == New(old.values[old.current]), "seed \(seed)")

        // The new app's walk goes on from the old one's values, converted: a time in two it
        // first redoes the versions the old app had undone, which lie above the value the open
        // stored in today's encoding; then it undoes a few, so that its first edit discards
        // that stored value; under a limit, an undo or a redo the history no longer holds is
        // left out.
        var generator = SeededGenerator(seed: seed)
        let redone = Bool.random(using: &generator) ? old.values.count - 1 - old.current : 0
        let depth = Int.random(in: 0...min(6, old.current + redone), using: &generator)
        let new = Self.walk(
            from: old.values.map(New.init), current: old.current + redone - depth, steps: 60,
            using: &generator
        ) { $0.edit(using: &$1) }
        var current = old.current
        var values = old.values.map(New.init)
        let first = Array(repeating: Step<New>.redo, count: redone) + Array(repeating: .undo, count: depth)
        for step in first + new.steps {
            switch step {
            case .append(let value):
                try history.append(value)
                values = values[...current] + [value]
                current += 1
            case .undo:
                guard history.hasUndo else { continue }
                _ = try history.undo()
                current -= 1
            case .redo:
                guard history.hasRedo else { continue }
                _ = try history.redo()
                current += 1
            }
            #expect(history.value == values[current], "seed \(seed)")
        }
        if limit == nil { #expect(values == new.values && current == new.current) }
        try history.checkInvariants()

        // Every version held, down and up again, then back where the walk ended.
        var reached = current
        while history.hasUndo {
            reached -= 1
            #expect(try history.undo() == values[reached], "seed \(seed), version \(reached)")
        }
        #expect(limit != nil || reached == 0)
        try history.checkInvariants()
        while history.hasRedo {
            reached += 1
            #expect(try history.redo() == values[reached], "seed \(seed), version \(reached)")
        }
        #expect(reached == values.count - 1)
        try history.checkInvariants()
        for _ in current..<reached { _ = try history.undo() }
        // Closed, its value is stored whole where the walk ended; else the next open starts from
        // an older stored value, maybe the old model's, below both apps' versions.
        if Bool.random(using: &generator) { try history.close() }

        let again = try KeepsakeStore(path: path).history(
            "doc", initialValue: New.initial, maximumVersions: limit)
        #expect(again.value == values[current], "seed \(seed)")
        #expect(limit != nil || again.versionCount == values.count - 1)
        try again.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}

/// The same update against every operation of the controller — scopes pushed, ended and
/// discarded, tags, undo and redo to a tag — beside an in-memory controller that was given the
/// old app's values converted and then the new app's own: after each operation both agree on
/// the value, the stacks and the scope level. Before, ending a scope that held a version the
/// new model cannot read failed for good, and undoing or redoing several versions at once past
/// one gave a property added since the current value's instead of its own.
@Suite struct AppUpdateOperationsTests {
    let directory = TemporaryDirectory()

    typealias Updated<Item: AppUpdateWalkTests.UpdatedItem> = AppUpdateWalkTests.UpdatedDoc<Item>

    /// One random operation on `durable` and `memory`, the same for both, which must both
    /// succeed or both fail, and agree after it.
    func step<Value: Versionable & Equatable, Item: AppUpdateWalkTests.UpdatedItem>(
        _ durable: KeepsakeHistory<Value>,
        _ memory: VersioningController<Updated<Item>, Updated<Item>, ReversionError>,
        converting convert: (Value) -> Updated<Item>, edit: (inout Value, inout SeededGenerator) -> Void,
        using generator: inout SeededGenerator, seed: UInt64, operation: Int? = nil
    ) {
        func both(_ name: String, _ onDurable: () throws -> Void, _ inMemory: () throws -> Void) {
            let durableFailed = (try? onDurable()) == nil
            let memoryFailed = (try? inMemory()) == nil
            #expect(durableFailed == memoryFailed, "seed \(seed): \(name)")
        }
        let tag = "t\(Int.random(in: 0..<4, using: &generator))"
        switch operation ?? Int.random(in: 0..<20, using: &generator) {
        case 0..<4: both("undo", { _ = try durable.undo() }, { _ = try memory.undo() })
        case 4..<6: both("redo", { _ = try durable.redo() }, { _ = try memory.redo() })
        case 6: both("push", { try durable.pushNewScope() }, { try memory.pushNewScope() })
        case 7: both("pop", { try durable.popCurrentScope() }, { try memory.popCurrentScope() })
        case 8:
            both(
                "undo and pop", { _ = try durable.undoAndPopCurrentScope() },
                { _ = try memory.undoAndPopCurrentScope() })
        case 9: both("tag", { try durable.tag(tag) }, { try memory.tag(tag) })
        case 10: both("undo to tag", { _ = try durable.undo(to: tag) }, { _ = try memory.undo(to: tag) })
        case 11: both("redo to tag", { _ = try durable.redo(to: tag) }, { _ = try memory.redo(to: tag) })
        default:
            var value = durable.value
            edit(&value, &generator)
            // A change the new model does not see (of a property it removed) is left out.
            guard convert(value) != convert(durable.value) else { return }
            both("append", { try durable.append(value) }, { try memory.append(convert(value)) })
        }
        #expect(convert(durable.value) == memory.value, "seed \(seed)")
        #expect(
            [durable.hasUndo, durable.hasRedo] == [memory.hasUndo, memory.hasRedo]
                && durable.scopeLevel == memory.scopeLevel, "seed \(seed)")
    }

    @Test(arguments: Soak.batches(usually: 6), [true, false])
    func everyOperationAfterTheUpdateMatchesTheSameOperationsInMemory(batch: UInt64, identifiable: Bool)
        throws
    {
        if identifiable {
            try expectSameOperations(seed: 0x5C09E + batch, as: AppUpdateWalkTests.IdentifiableItem.self)
        } else {
            try expectSameOperations(seed: 0x5C09E + batch, as: AppUpdateWalkTests.PlainItem.self)
        }
    }

    func expectSameOperations<Item: AppUpdateWalkTests.UpdatedItem>(seed: UInt64, as _: Item.Type) throws {
        typealias New = Updated<Item>
        let path = directory.path("operations-\(seed).keepsake")
        var generator = SeededGenerator(seed: seed)
        let memory = VersioningController<New, New, ReversionError>(New(Doc.empty), maximumVersions: nil)
        do {
            let old = try KeepsakeStore(path: path).history(
                "doc", initialValue: Doc.empty, maximumVersions: nil)
            for _ in 0..<60 {
                step(
                    old, memory, converting: New.init, edit: AppUpdateWalkTests.oldEdit,
                    using: &generator,
                    seed: seed)
            }
            // It ends in a scope of its own edits, its version before tagged: the new app's
            // undo to a tag and its ending of scopes meet the old app's versions.
            try old.tag("t0")
            try memory.tag("t0")
            try old.pushNewScope()
            try memory.pushNewScope()
            for _ in 0..<5 {
                step(
                    old, memory, converting: New.init, edit: AppUpdateWalkTests.oldEdit,
                    using: &generator,
                    seed: seed, operation: 12)
            }
            if Bool.random(using: &generator) { try old.close() }
        }
        let new = try KeepsakeStore(path: path).history(
            "doc", initialValue: New.initial, maximumVersions: nil)
        #expect(new.value == memory.value && new.scopeLevel == memory.scopeLevel, "seed \(seed)")
        for _ in 0..<60 {
            step(
                new, memory, converting: { $0 }, edit: { $0.edit(using: &$1) }, using: &generator, seed: seed)
        }
        try new.checkInvariants()
        if Bool.random(using: &generator) { try new.close() }

        let again = try KeepsakeStore(path: path).history(
            "doc", initialValue: New.initial, maximumVersions: nil)
        #expect(again.value == memory.value && again.scopeLevel == memory.scopeLevel, "seed \(seed)")
        while memory.hasUndo {
            #expect(try again.undo() == memory.undo(), "seed \(seed)")
        }
        #expect(!again.hasUndo)
        try again.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
