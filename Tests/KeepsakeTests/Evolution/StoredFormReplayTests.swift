import Foundation
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

    /// The old app: the walk of `seed`, then it stops without closing the history.
    nonisolated static func writeOldHistory(path: String, seed: UInt64) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        for step in walk(seed: seed).steps {
            if step.undo {
                #expect(try history.undo() == step.value)
            } else {
                try history.append(step.value)
            }
        }
    }

    /// Whatever the old app did, the new model opens its value exactly, stores it whole, undoes
    /// and redoes every version exactly, and goes on: its own change reopens through the new
    /// model alone.
    @Test(arguments: Soak.batches(usually: 2))
    func aRandomHistoryTheNewModelCannotReplayOpensAtItsExactValue(batch: UInt64) async throws {
        let seed = 0x5703_ED10 + batch
        let path = directory.path("old-\(batch).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, seed = seed as UInt64] in
            try Self.writeOldHistory(path: path, seed: seed)
        }
        let (_, applied, redo) = Self.walk(seed: seed)
        let initial = UpdatedDoc(.empty)
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
        #expect(history.value == UpdatedDoc(applied.last!), "seed \(seed)")
        #expect(history.versionCount == applied.count - 1 + redo, "seed \(seed)")
        // Every version undoes and redoes exactly, on the stored form where the model cannot
        // read it.
        for (offset, value) in applied.enumerated().dropLast().reversed() {
            try #require(try history.undo() == UpdatedDoc(value), "seed \(seed): undo to \(offset)")
        }
        for (offset, value) in applied.enumerated().dropFirst() {
            try #require(try history.redo() == UpdatedDoc(value), "seed \(seed): redo to \(offset)")
        }
        try history.checkInvariants()

        var next = history.value
        next.items.append(.init(id: 100, title: "new", done: true, shape: .dot))
        try history.append(next)
        try history.close()
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: initial)
        #expect(reopened.value == next, "seed \(seed)")
        #expect(try reopened.undo() == UpdatedDoc(applied.last!), "seed \(seed)")
        let report = try store.verify()
        #expect(report.integrity == ["ok"] && report.problems == [], "seed \(seed)")
    }
}
