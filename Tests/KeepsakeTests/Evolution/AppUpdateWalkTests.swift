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
@MainActor @Suite struct AppUpdateWalkTests {
    let directory = TemporaryDirectory()

    /// ``Doc`` after the update: `title` renamed `heading`, `scores` from `Int` to `Double`,
    /// `blob` removed, `grid` (filled from the app's initial value) and an optional `caption`
    /// added; its items gained a `color` (filled from their type's defaults).
    struct UpdatedDoc: Versionable, Equatable, Codable {
        struct Item: Identifiable, Versionable, Equatable, Codable, DecodingDefaults {
            let id: Int
            var title: String
            var done: Bool
            var shape: Shape
            var color: String

            static var decodingDefaults: Item {
                Item(id: 0, title: "", done: false, shape: .dot, color: "black")
            }
        }

        var heading: String
        var status: Doc.Status
        var items: [Item]
        var scores: [String: Double]
        var note: String?
        var grid: Int
        var caption: String?

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("title", to: "heading"),
            .converted("scores", from: [String: Int].self) { $0.mapValues(Double.init) },
        ]

        static let initial = UpdatedDoc(Doc.empty)

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
        return walk(from: Doc.empty, steps: 80, using: &generator) { DocEdits.edit(&$0, using: &$1) }
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

    @Test(arguments: Soak.batches(usually: 4), [true, false])
    func everyValueAfterTheUpdateIsTheOldOneConvertedOrTheNewAppsOwn(batch: UInt64, closing: Bool)
        async throws
    {
        let seed = 0xA99_0DA7E + batch
        let path = directory.path("update-\(batch)-\(closing).keepsake")
        await #expect(processExitsWith: .success) {
            [path = path as String, seed = seed as UInt64, closing = closing as Bool] in
            try Self.writeOldHistory(path: path, seed: seed, closing: closing)
        }
        let old = Self.oldWalk(seed: seed)
        let history = try KeepsakeStore(path: path).history("doc", initialValue: UpdatedDoc.initial)
        #expect(history.value == UpdatedDoc(old.values[old.current]), "seed \(seed)")

        // The new app's walk goes on from the old one's values, converted.
        var generator = SeededGenerator(seed: seed)
        let new = Self.walk(
            from: old.values.map(UpdatedDoc.init), current: old.current, steps: 60, using: &generator
        ) { $0.edit(using: &$1) }
        var current = old.current
        var values = old.values.map(UpdatedDoc.init)
        for step in new.steps {
            switch step {
            case .append(let value):
                try history.append(value)
                values = values[...current] + [value]
                current += 1
            case .undo:
                _ = try history.undo()
                current -= 1
            case .redo:
                _ = try history.redo()
                current += 1
            }
            #expect(history.value == values[current], "seed \(seed)")
        }
        #expect(values == new.values && current == new.current)
        try history.checkInvariants()

        // Every version, down and up again, then back where the walk ended.
        for below in (0..<current).reversed() {
            #expect(try history.undo() == values[below], "seed \(seed), version \(below)")
        }
        #expect(!history.hasUndo)
        try history.checkInvariants()
        for above in 1..<values.count {
            #expect(try history.redo() == values[above], "seed \(seed), version \(above)")
        }
        #expect(!history.hasRedo)
        try history.checkInvariants()
        for _ in current..<(values.count - 1) { _ = try history.undo() }
        try history.close()

        let again = try KeepsakeStore(path: path).history("doc", initialValue: UpdatedDoc.initial)
        #expect(again.value == values[current], "seed \(seed)")
        #expect(again.versionCount == values.count - 1)
        try again.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
