import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// An app update that changed the model after a run that did not close its history: random
/// histories written by the old model in a child process, opened by the new one.
@MainActor @Suite struct StoredFormReplayTests {
    let directory = TemporaryDirectory()

    /// ``Doc`` after an update that dropped `Identifiable` from its items: the old model's
    /// changes inside an item name it by id (`items[id: 3].title`), which the new model's
    /// array, tracked by position, cannot resolve.
    struct UpdatedDoc: Versionable, Equatable, Codable {
        struct Item: Versionable, Equatable, Codable {
            var id: Int
            var title: String
            var done: Bool
            var shape: Shape
        }

        var title: String
        var status: Doc.Status
        var items: [Item]
        var blob: Data
        var scores: [String: Int]
        var note: String?

        init(_ doc: Doc) {
            (title, status, blob, scores, note) = (doc.title, doc.status, doc.blob, doc.scores, doc.note)
            items = doc.items.map { Item(id: $0.id, title: $0.title, done: $0.done, shape: $0.shape) }
        }
    }

    /// ``Doc`` with a JSON key of its own for every property and for its items' ids, as a
    /// model shared with a server might have: its items are ``KeyedItem``s for the old app, and
    /// ``PlainKeyedItem``s (no longer `Identifiable`) after the same update as ``UpdatedDoc``.
    struct KeyedDoc<Item: KeyedDocItem>: Versionable, Equatable, Codable {
        var title: String
        var status: Doc.Status
        var items: [Item]
        var blob: Data
        var scores: [String: Int]
        var note: String?

        enum CodingKeys: String, CodingKey {
            case title = "doc_title"
            case status = "doc_status"
            case items = "entries"
            case blob = "bytes"
            case scores = "score_table"
            case note = "remark"
        }

        init(_ doc: Doc) {
            (title, status, blob, scores, note) = (doc.title, doc.status, doc.blob, doc.scores, doc.note)
            items = doc.items.map { Item(id: $0.id, title: $0.title, done: $0.done, shape: $0.shape) }
        }
    }

    protocol KeyedDocItem: Versionable, Equatable, Codable, SendableMetatype {
        init(id: Int, title: String, done: Bool, shape: Shape)
    }

    /// The keys both kinds of item are stored under.
    enum ItemKeys: String, CodingKey {
        case id = "item_id"
        case title = "item_title"
        case done = "is_done"
        case shape = "form"
    }

    struct KeyedItem: Identifiable, KeyedDocItem {
        let id: Int
        var title: String
        var done: Bool
        var shape: Shape

        typealias CodingKeys = ItemKeys
    }

    struct PlainKeyedItem: KeyedDocItem {
        var id: Int
        var title: String
        var done: Bool
        var shape: Shape

        typealias CodingKeys = ItemKeys
    }

    /// The steps of the walk of `seed` — random edits appended, now and then an undo (whose
    /// version a later append discards) — and the values the history holds after it: the
    /// applied ones oldest first, and how many wait to be redone.
    nonisolated static func walk(seed: UInt64) -> (
        steps: [(undo: Bool, value: Doc)], applied: [Doc], redo: Int
    ) {
        var generator = SeededGenerator(seed: seed)
        var applied = [Doc.empty]
        var redo = 0
        var steps: [(undo: Bool, value: Doc)] = []
        for _ in 0..<120 {
            if applied.count > 1, Int.random(in: 0..<10, using: &generator) == 0 {
                applied.removeLast()
                redo += 1
                steps.append((true, applied.last!))
                continue
            }
            var doc = applied.last!
            for _ in 0..<Int.random(in: 1...3, using: &generator) { DocEdits.edit(&doc, using: &generator) }
            if doc != applied.last! { (applied, redo) = (applied + [doc], 0) }
            steps.append((false, doc))
        }
        // Last, a change inside an item, which the new model cannot resolve.
        var doc = applied.last!
        if doc.items.isEmpty {
            doc.items.append(.init(id: 0, title: "item 0", done: false))
            steps.append((false, doc))
            applied.append(doc)
        }
        doc.items[0].title += "."
        steps.append((false, doc))
        (applied, redo) = (applied + [doc], 0)
        return (steps, applied, redo)
    }

    /// The old app: the walk of `seed`, each value as a ``KeyedDoc`` when `keyed`, then it
    /// stops without closing the history.
    nonisolated static func writeOldHistory(path: String, seed: UInt64, keyed: Bool) throws {
        if keyed {
            try writeOldHistory(path: path, seed: seed, as: KeyedDoc<KeyedItem>.init)
        } else {
            try writeOldHistory(path: path, seed: seed) { $0 }
        }
    }

    nonisolated static func writeOldHistory<Old: Versionable & Codable & Equatable & SendableMetatype>(
        path: String, seed: UInt64, as old: (Doc) -> Old
    ) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: old(Doc.empty))
        for step in walk(seed: seed).steps {
            if step.undo {
                #expect(try history.undo() == old(step.value))
            } else {
                try history.append(old(step.value))
            }
        }
    }

    /// Whatever the old app did, the new model opens its value exactly, stores it whole, undoes
    /// and redoes every version exactly, and goes on: its own change reopens through the new
    /// model alone.
    /// With `keyed`, the models give every property and the items' ids JSON keys of their own
    /// (``KeyedDoc``): the changes replayed on the stored JSON are found under those keys.
    @Test(arguments: Soak.batches(usually: 2), [false, true])
    func aRandomHistoryTheNewModelCannotReplayOpensAtItsExactValue(batch: UInt64, keyed: Bool) async throws {
        let seed = 0x5703_ED10 + batch
        let path = directory.path("old-\(batch)-\(keyed).keepsake")
        await #expect(processExitsWith: .success) {
            [path = path as String, seed = seed as UInt64, keyed = keyed as Bool] in
            try Self.writeOldHistory(path: path, seed: seed, keyed: keyed)
        }
        if keyed {
            try expectExactValues(at: path, seed: seed, as: KeyedDoc<PlainKeyedItem>.init) {
                $0.items.append(.init(id: 100, title: "new", done: true, shape: .dot))
            }
        } else {
            try expectExactValues(at: path, seed: seed, as: UpdatedDoc.init) {
                $0.items.append(.init(id: 100, title: "new", done: true, shape: .dot))
            }
        }
    }

    /// Opens the old app's history at `path` with the model `new` makes values of, and checks
    /// every value against the walk of `seed`; then `edit`s it, closes and reopens it.
    func expectExactValues<New: Versionable & Codable & Equatable & SendableMetatype>(
        at path: String, seed: UInt64, as new: (Doc) -> New, edit: (inout New) -> Void
    ) throws {
        let (_, applied, redo) = Self.walk(seed: seed)
        let initial = new(.empty)
        let store = try KeepsakeStore(path: path)
        // Whether the newest applied version has a checkpoint: only the replay on the stored
        // form writes one when opening.
        let checkpointedAtTop = {
            try store.database.read {
                try $0.scalarInt(
                    """
                    SELECT count(*) FROM checkpoint WHERE position =
                      (SELECT max(position) FROM version WHERE is_undone = 0)
                    """)
            } == 1
        }
        // The old app stopped before storing a checkpoint of its last ten versions (it may
        // have stored one by then): opening replays at least them, from an older checkpoint.
        try store.database.write {
            try $0.execute(
                "DELETE FROM checkpoint WHERE position >= (SELECT max(position) - 10 FROM version)")
        }
        #expect(try !checkpointedAtTop(), "seed \(seed)")
        let history = try store.history("doc", initialValue: initial)
        #expect(try checkpointedAtTop(), "seed \(seed)")
        #expect(history.value == new(applied.last!), "seed \(seed)")
        #expect(history.versionCount == applied.count - 1 + redo, "seed \(seed)")
        // Every version undoes and redoes exactly, on the stored form where the model cannot
        // read it.
        for (offset, value) in applied.enumerated().dropLast().reversed() {
            try #require(try history.undo() == new(value), "seed \(seed): undo to \(offset)")
        }
        for (offset, value) in applied.enumerated().dropFirst() {
            try #require(try history.redo() == new(value), "seed \(seed): redo to \(offset)")
        }
        try history.checkInvariants()

        var next = history.value
        edit(&next)
        try history.append(next)
        try history.close()
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: initial)
        #expect(reopened.value == next, "seed \(seed)")
        #expect(try reopened.undo() == new(applied.last!), "seed \(seed)")
        let report = try store.verify()
        #expect(report.integrity == ["ok"] && report.problems == [], "seed \(seed)")
    }
}
