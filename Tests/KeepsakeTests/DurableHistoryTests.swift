import Foundation
import TestSupport
import Testing

@testable import Keepsake

/// Every operation survives closing and reopening the store.
@MainActor @Suite struct DurableHistoryTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("doc.keepsake") }

    func reopen() throws -> KeepsakeHistory<Doc> {
        try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
    }

    func expectSame(_ a: KeepsakeHistory<Doc>, _ b: KeepsakeHistory<Doc>) throws {
        #expect(a.value == b.value)
        #expect(a.hasUndo == b.hasUndo && a.hasRedo == b.hasRedo)
        #expect(a.scopeLevel == b.scopeLevel && a.versionCount == b.versionCount)
        let (aTags, bTags) = (try a.tags(), try b.tags())
        #expect(aTags.undo == bTags.undo && aTags.redo == bTags.redo)
        try a.checkInvariants()
        try b.checkInvariants()
    }

    @Test func appendUndoRedoAndTagsSurviveAReopen() throws {
        let history = try reopen()
        var doc = history.value
        try history.tag("original")
        doc.title = "New title"
        try history.append(doc)
        doc.status = .review
        try history.append(doc, tag: "reviewed")
        doc.items.append(.init(id: 1, title: "First", done: false))
        try history.append(doc, tag: "with-item")
        try history.undo(to: "reviewed")
        var reopened = try reopen()
        try expectSame(history, reopened)
        #expect(try reopened.tags().undo == ["original", nil, "reviewed"])
        #expect(try reopened.tags().redo == ["with-item"])
        #expect(try reopened.undo().title == "New title")
        #expect(reopened.value.status == .draft)
        reopened = try reopen()
        #expect(try reopened.redo(to: "with-item").items.count == 1)
        reopened = try reopen()
        #expect(try reopened.undo(to: "original") == .empty)
        #expect(!reopened.hasUndo)
        try expectSame(reopened, try reopen())
    }

    @Test func scopesSurviveAReopen() throws {
        let history = try reopen()
        var doc = history.value
        doc.title = "Outside"
        try history.append(doc)
        try history.pushNewScope()
        doc.status = .final
        try history.append(doc, tag: "in-scope")
        doc.note = "scoped"
        try history.append(doc)
        var reopened = try reopen()
        try expectSame(history, reopened)
        #expect(reopened.scopeLevel == 1)
        try reopened.undo()
        try reopened.undo()
        try reopened.undo()  // never leaves the scope
        #expect(reopened.value.title == "Outside" && reopened.value.status == .draft)
        try reopened.redo()
        try reopened.redo()
        try reopened.tag("scope-end")
        reopened = try reopen()
        try reopened.popCurrentScope()
        reopened = try reopen()
        #expect(reopened.scopeLevel == 0)
        #expect(try reopened.tags().undo == [nil, nil, "scope-end"])
        #expect(
            try reopened.undo()
                == Doc(title: "Outside", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        try reopened.redo()
        try reopened.pushNewScope()
        var scratch = reopened.value
        scratch.title = "Scratch"
        try reopened.append(scratch)
        reopened = try reopen()
        #expect(try reopened.undoAndPopCurrentScope().title == "Outside")
        try expectSame(reopened, try reopen())
    }

    @Test func transactionsAndDebouncedChangesAreOneVersionEach() async throws {
        let history = try reopen()
        try history.setWithTransaction { doc in
            doc.title = "T"
            doc.scores["a"] = 1
        }
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try history.setWithTransaction { doc in
                doc.title = "partial"
                throw Stop()
            }
        }
        #expect(history.value.title == "T")
        let clock = ManualClock()
        history.withDebouncing(clock: clock, interval: .milliseconds(300))
        var doc = history.value
        for character in "typed" {
            doc.title.append(character)
            try history.append(doc)
            clock.advance(by: .milliseconds(50))
        }
        #expect(history.hasUndo)
        clock.advance(by: .seconds(1))
        var reopened = try reopen()
        for _ in 0..<10_000 where reopened.versionCount < 2 {
            await Task.yield()
            reopened = try reopen()
        }
        #expect(reopened.versionCount == 2)
        #expect(reopened.value.title == "Ttyped")
        #expect(try reopened.undo().title == "T")
        #expect(try reopened.undo() == .empty)
    }

    @Test func theLimitFoldsTheOldestVersionsIntoTheBase() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: 10)
        var doc = history.value
        for index in 1...40 {
            doc.title = "v\(index)"
            try history.append(doc, tag: "v\(index)")
        }
        #expect(history.versionCount <= 10 + 16)
        try history.setMaximumVersions(10)
        #expect(history.versionCount == 10)
        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: 10)
        try expectSame(history, reopened)
        #expect(try reopened.tags().undo.first == "v30")
        #expect(try reopened.undo(to: "v30").title == "v30")
        #expect(!reopened.hasUndo)
        try reopened.checkInvariants()
    }

    @Test func openingALongHistoryReplaysABoundedStretch() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("long", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        for index in 0..<2_500 {
            doc.title = "v\(index)"
            try history.append(doc)
        }
        // Checkpoints are built off the committing thread: the bound holds once they are.
        store.checkpointer?.waitUntilIdle()
        let reopened = try KeepsakeStore(path: path).history(
            "long", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.versionCount == 2_500)
        #expect(reopened.value.title == "v2499")
        #expect(
            try #require(reopened.durableStorage).stepsSinceCheckpoint
                < KeepsakeHistoryStorage<Doc>.checkpointInterval)
        #expect(try reopened.undo().title == "v2498")
    }

    @Test func undoReturnsWhatThePreviousProcessHadBeforeItsLastChange() async throws {
        let path = self.path
        await #expect(processExitsWith: .success) { [path = path as String] in
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
            var doc = history.value
            doc.title = "before"
            try history.append(doc)
            doc.title = "last"
            doc.items = [.init(id: 1, title: "x", done: true)]
            try history.append(doc)
        }
        let history = try reopen()
        #expect(history.value.title == "last")
        #expect(
            try history.undo()
                == Doc(title: "before", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        try history.checkInvariants()
    }
}
