import Foundation
import KeepsakeTestSupport
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
        #expect(history.versionCount <= 10 + 10 / 8)
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

/// Checkpoints built off the committing thread.
@MainActor @Suite struct CheckpointBuildTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("big.keepsake") }
    typealias Storage = KeepsakeHistoryStorage<Doc>

    /// An empty document but for a title of `count` characters: its checkpoint takes about that
    /// many bytes.
    static func doc(titled count: Int) -> Doc {
        var doc = Doc.empty
        doc.title = String(repeating: "x", count: count)
        return doc
    }

    /// The positions of history `id`'s stored checkpoints (its base value's left out).
    nonisolated static func storedPositions(_ connection: SQLiteConnection, history id: Int64) throws
        -> [Int64]
    {
        try connection.query(
            "SELECT position FROM checkpoint WHERE history_id = ? AND position IS NOT NULL ORDER BY position",
            [.integer(id)]
        ) { try $0.requiredInt64(0) }
    }

    /// A history's checkpoints built on a connection of the test's own, as the store's
    /// background connection builds them; the stores they defer wait for the test to run them.
    final class Builder {
        let connection: SQLiteConnection
        let id: Int64
        let name: String
        let builds = Storage.CheckpointBuilds()
        /// The history's own count of rewrites of its stored values, as its builds have it.
        let rewrites: ValueRewrites
        /// The history's own note of what its stored values hold that the model does not read.
        let unread: UnreadStoredData
        /// The stores deferred so far, in order.
        var deferred: [@Sendable (SQLiteConnection) -> Void] = []

        init(_ history: KeepsakeHistory<Doc>, in path: String) throws {
            let storage = try #require(history.durableStorage)
            (id, name, rewrites, unread) = (
                storage.id, storage.name, storage.valueRewrites, storage.unreadStoredData
            )
            connection = try SQLiteConnection(path: path, create: false)
        }

        deinit { connection.close() }

        /// Builds the checkpoint of the version at `position`.
        func build(_ position: Int, waitForPause: Bool = false) {
            Storage.buildCheckpoint(
                connection, historyID: id, name: name, position: position, builds: builds, sizes: Handoff(),
                rewrites: rewrites, unread: unread, waitForPause: waitForPause
            ) { deferred.append($0) }
        }

        /// Runs the deferred store `index`.
        func store(_ index: Int) { deferred[index](connection) }

        /// The positions of the history's stored checkpoints (its base value's left out).
        func storedPositions() throws -> [Int64] {
            try CheckpointBuildTests.storedPositions(connection, history: id)
        }
    }

    /// While a large checkpoint waits for a pause in the writing to be stored, the next build
    /// starts from the value the previous one made (not from the newest stored checkpoint), as
    /// long as that version is still applied as it was; one store waits, and it stores the
    /// newest checkpoint built.
    @Test func aLargeCheckpointWaitingToBeStoredIsBuiltOnByTheNext() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("big", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        // Over the 64 KiB that makes a checkpoint large: its first version's checkpoint is
        // built and stored in the background.
        doc.title = String(repeating: "x", count: 70_000)
        try history.append(doc)
        store.checkpointer?.waitUntilIdle()
        for index in 2...21 {
            doc.note = "n\(index)"
            try history.append(doc)
        }
        let builder = try Builder(history, in: path)
        #expect(try builder.storedPositions() == [1])

        builder.build(6)
        #expect(builder.builds.replayed == 5)  // versions 2…6, from the checkpoint of version 1
        builder.build(21)
        #expect(builder.builds.replayed == 15)  // versions 7…21, from the value built for version 6
        #expect(builder.deferred.count == 1)  // one store waits, for the newest
        #expect(builder.builds.waiting?.position == 21 && builder.builds.built?.position == 21)
        #expect(try builder.storedPositions() == [1])
        builder.store(0)
        #expect(try builder.storedPositions() == [1, 21])
        // Once stored, the value goes: the next build starts from the stored checkpoint.
        #expect(builder.builds.built == nil && builder.builds.waiting == nil && !builder.builds.storeQueued)
        // The stored checkpoint is the value: reopening replays nothing and finds it.
        let reopened = try KeepsakeStore(path: path).history(
            "big", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.value == doc)
        #expect(try #require(reopened.durableStorage).stepsSinceCheckpoint == 0)

        // A value built for a version that was undone and replaced is not built on.
        builder.build(6)
        #expect(builder.builds.replayed == 5)  // from the checkpoint of version 1 (21's is above)
        for _ in 1...16 { _ = try history.undo() }
        doc = history.value
        doc.note = "replaced"
        try history.append(doc)  // takes position 6, with other changes
        doc.note = "after"
        try history.append(doc)
        let positions = try builder.connection.query(
            "SELECT position FROM version WHERE history_id = ? ORDER BY position", [.integer(builder.id)]
        ) { try $0.requiredInt64(0) }
        #expect(positions == Array(1...7))
        builder.build(7)
        #expect(builder.builds.replayed == 6)  // from the checkpoint of version 1 again
        #expect(builder.deferred.count == 2)
        builder.store(1)
        #expect(try builder.storedPositions() == [1, 7])  // 21's went with its version
        let again = try KeepsakeStore(path: path).history(
            "big", initialValue: Doc.empty, maximumVersions: nil)
        #expect(again.value == doc)
        #expect(try #require(again.durableStorage).stepsSinceCheckpoint == 0)
        try again.checkInvariants()
        #expect(try builder.connection.scalarText("PRAGMA integrity_check") == "ok")
    }

    /// A change made without tracking rewrites every stored version's value in place (same
    /// positions, same changes): a checkpoint built from the rows before it is not stored, nor
    /// built on, and none is built while one is under way. Before, a build waiting for a pause
    /// was stored after it, or the next build started from its value: a killed app reopened
    /// without the change, and `value(ofHistory:atVersion:)` gave versions without it.
    @Test func aCheckpointBuiltBeforeAChangeWithoutTrackingIsNeitherStoredNorBuiltOn() throws {
        let store = try KeepsakeStore(path: path)
        store.checkpointer?.stop()
        let history = try store.history("big", initialValue: Doc.empty, maximumVersions: nil)
        var doc = Self.doc(titled: 70_000)  // a large checkpoint: it waits for a pause
        for index in 1...5 {
            doc.note = "n\(index)"
            try history.append(doc)
        }
        let builder = try Builder(history, in: path)
        builder.build(3)
        #expect(builder.deferred.count == 1 && builder.builds.built?.position == 3)
        doc.status = .final  // no version changes the status
        try history.setWithoutTracking(doc)
        #expect(try builder.storedPositions() == [5])  // the rewrite's own, of the current value
        for index in 6...7 {
            doc.note = "n\(index)"
            try history.append(doc)
        }
        builder.build(7)
        #expect(builder.builds.replayed == 2)  // versions 6 and 7, from the checkpoint of version 5
        #expect(builder.deferred.count == 1)  // one store waits, for the newest
        builder.store(0)
        #expect(try builder.storedPositions() == [5, 7])

        for index in 8...9 {
            doc.note = "n\(index)"
            try history.append(doc)
        }
        builder.build(8)
        doc.scores["server"] = 1  // nor the scores
        try history.setWithoutTracking(doc)
        #expect(try builder.storedPositions() == [9])
        builder.store(1)
        #expect(try builder.storedPositions() == [9])

        // While a rewrite is under way, nothing is built.
        builder.rewrites.begin()
        doc.note = "n10"
        try history.append(doc)
        builder.build(10)
        #expect(builder.deferred.count == 2 && builder.builds.built == nil)
        builder.rewrites.end()
        try history.checkInvariants()
        let reopened = try KeepsakeStore(path: path).history(
            "big", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.value == doc)
        try reopened.checkInvariants()
        for version in 0...10 {
            let value = try #require(try store.value(ofHistory: "big", atVersion: version, as: Doc.self))
            #expect(value.status == .final && value.scores == ["server": 1], "version \(version)")
        }
    }

    /// While the write-ahead log is long, even a checkpoint under the large size waits to be
    /// stored (a commit of the background connection between two of the writer's would keep
    /// the log from starting over); otherwise it is stored at once.
    @Test func aCheckpointWaitsToBeStoredWhileTheLogIsLong() throws {
        let store = try KeepsakeStore(path: path)
        store.checkpointer?.stop()
        // 3,000 characters: over the size the committing thread encodes, under the large one.
        let history = try store.history(
            "mid",
            initialValue: Self.doc(titled: 3_000), maximumVersions: nil)
        var doc = history.value
        for index in 1...3 {
            doc.note = "n\(index)"
            try history.append(doc)
        }
        let builder = try Builder(history, in: path)
        builder.build(2, waitForPause: true)
        #expect(try builder.storedPositions() == [])
        #expect(builder.deferred.count == 1 && builder.builds.waiting?.position == 2)
        builder.store(0)
        #expect(try builder.storedPositions() == [2])
        builder.build(3)
        #expect(try builder.storedPositions() == [2, 3])
        #expect(builder.deferred.count == 1)
        try history.checkInvariants()
    }

    /// A checkpoint built off the committing thread refers to blobs committed before it is
    /// stored: `compact()` may delete them in between (nothing stored refers to them yet), and
    /// the next blob stored takes a deleted one's id. Such a checkpoint is not stored (before,
    /// it was: the history then read the other blob's bytes, and failed to open).
    @Test func aCheckpointWhoseBlobWasCompactedAwayIsNotStored() throws {
        let store = try KeepsakeStore(path: path)
        store.checkpointer?.stop()
        var doc = Self.doc(titled: 3_000)
        doc.blob = Data(repeating: 0, count: 4_096)
        let history = try store.history("doc", initialValue: doc, maximumVersions: nil)
        for index in 1...3 {
            doc.blob[index] = UInt8(index)
            try history.append(doc)
        }
        let builder = try Builder(history, in: path)
        builder.build(3, waitForPause: true)
        let waiting = try #require(builder.builds.waiting)
        #expect(waiting.blobs.map(\.size) == [4_096])
        let blob = try #require(waiting.blobs.first)
        func bytes(ofBlob id: Int64) throws -> Data? {
            try builder.connection.query("SELECT bytes FROM blob WHERE id = ?", [.integer(id)]) { $0.blob(0) }
                .first ?? nil
        }
        #expect(try bytes(ofBlob: blob.id) == doc.blob)

        try store.compact()
        #expect(try bytes(ofBlob: blob.id) == nil)
        var other = Doc.empty
        other.blob = Data(repeating: 9, count: 4_096)
        _ = try store.history("other", initialValue: other, maximumVersions: nil)
        #expect(try bytes(ofBlob: blob.id) == other.blob)  // the deleted blob's id, other bytes
        builder.store(0)
        #expect(try builder.storedPositions() == [])

        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.value == doc)
        try reopened.checkInvariants()
        #expect(try KeepsakeStore(path: path).history("other", initialValue: Doc.empty).value == other)
        #expect(try store.verify().problems == [])
    }

    /// A checkpoint is not built over a version row lost from the way to it: its change would
    /// be left out of a checkpoint stored with a sound digest, which every later open trusts.
    /// Version 4 changes the title and 5 and 6 the status, so no check of theirs sees the gap.
    @Test func noCheckpointIsBuiltOverALostVersion() throws {
        let store = try KeepsakeStore(path: path)
        store.checkpointer?.stop()
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        for index in 1...6 {
            var doc = history.value
            if index == 2 || index == 4 {
                doc.title = "t\(index)"
            } else {
                doc.status = doc.status == .draft ? .review : .draft
            }
            try history.append(doc)
        }
        let id = try #require(history.durableStorage).id
        store.close()
        let connection = try SQLiteConnection(path: path, create: false)
        defer { connection.close() }
        try connection.execute("DELETE FROM checkpoint WHERE history_id = \(id) AND position IS NOT NULL")
        try connection.execute("DELETE FROM version WHERE history_id = \(id) AND position = 4")
        Storage.buildCheckpoint(
            connection, historyID: id, name: "doc", position: 6, builds: Storage.CheckpointBuilds(),
            sizes: Handoff(), rewrites: ValueRewrites(), unread: UnreadStoredData()
        ) { _ in }
        #expect(try Self.storedPositions(connection, history: id) == [])
        // Opening replays versions 1 to 6 and finds the gap.
        #expect(
            throws: KeepsakeError.damaged(
                history: "doc", reason: "version 4 is missing from its versions read in order")
        ) {
            try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        }
    }

    /// A checkpoint built for a version is not stored for another that took its place with the
    /// same changes: undoing two edits and making the first one differently, then the second
    /// one again, stores the second's text again at its position, on another value. Found by
    /// `Scripts/soak` (the limited model test, durable, batch 547467): reopening then showed
    /// the first edit's old value.
    @Test func aCheckpointIsNotStoredForAVersionThatReplacedItsOwnWithTheSameChanges() throws {
        let store = try KeepsakeStore(path: path)
        store.checkpointer?.stop()
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        /// Makes the two edits: the title (`title`), then the note, always the same.
        func edit(title: String) throws {
            doc.title = title
            try history.append(doc)
            doc.note = "kept"
            try history.append(doc)
        }
        /// Undoes both edits and makes them again, the first with another title.
        func replace(title: String) throws {
            _ = try history.undo()
            _ = try history.undo()
            doc = history.value
            try edit(title: title)
        }
        try edit(title: "first")
        let builder = try Builder(history, in: path)
        func changes(at position: Int) throws -> String? {
            try builder.connection.scalarText(
                "SELECT changes FROM version WHERE history_id = ? AND position = ?",
                [.integer(builder.id), .integer(Int64(position))])
        }
        func build(_ position: Int) { builder.build(position, waitForPause: true) }
        func reopened() throws -> KeepsakeHistory<Doc> {
            try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        }
        build(2)
        #expect(builder.deferred.count == 1 && builder.builds.waiting?.position == 2)
        let builtFor = try changes(at: 2)
        try replace(title: "second")
        // The same text at the same position: only the version below it differs.
        #expect(try changes(at: 2) == builtFor)

        builder.store(0)
        #expect(try builder.storedPositions() == [])
        let first = try reopened()
        #expect(first.value == doc)
        #expect(first.value.title == "second")
        try first.checkInvariants()

        // Nor is the value built for it built on: the next build starts from the base value.
        build(2)
        #expect(builder.deferred.count == 2 && builder.builds.built?.position == 2)
        try replace(title: "third")
        #expect(try changes(at: 2) == builtFor)
        doc.note = "more"
        try history.append(doc)
        build(3)
        #expect(builder.builds.replayed == 3)  // versions 1…3, from the base value
        #expect(builder.deferred.count == 2 && builder.builds.waiting?.position == 3)
        builder.store(1)
        #expect(try builder.storedPositions() == [3])
        let again = try reopened()
        #expect(again.value == doc)
        #expect(try #require(again.durableStorage).stepsSinceCheckpoint == 0)
        try again.checkInvariants()
        #expect(try builder.connection.scalarText("PRAGMA integrity_check") == "ok")
    }

    /// The times rows are written with never repeat within a process, so a version and one that
    /// replaced it with the same changes never share their `created_at`: not when the wall clock
    /// gives the same time twice, nor when it is set back.
    @Test func rowTimesAreStrictlyIncreasingWhateverTheWallClockDoes() {
        /// A wall clock's readings, taken one by one (only by this test's thread: `next()`
        /// reads the clock where it is called).
        final class Readings: @unchecked Sendable {
            var times = [100.0, 100.0, 99.5, 100.0, 101.0]
        }
        let readings = Readings()
        let clock = RowClock { readings.times.removeFirst() }
        let times = (0..<5).map { _ in clock.next() }
        let after100 = 100.0.nextUp
        #expect(times == [100.0, after100, after100.nextUp, after100.nextUp.nextUp, 101.0])
    }

    /// A history that grows from an empty value judges when its next checkpoint is due by the
    /// size of the checkpoint built last in the background, not of the last one written by the
    /// committing thread: else every few KiB of changes would rebuild a value grown far larger.
    @Test func checkpointsFallDueByTheSizeOfTheNewestBuilt() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("growing", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        // Over 150 KB in ten appends; the reversions of insertions are small, so the byte rule
        // does not see the growth.
        for batch in 0..<10 {
            doc.items += (0..<150).map {
                Doc.Item(id: batch * 150 + $0, title: String(repeating: "t", count: 100), done: false)
            }
            try history.append(doc)
        }
        // A checkpoint interval of small edits: at least one checkpoint falls due, and the
        // value is too large for the committing thread, so it is built off it.
        for index in 0..<Storage.checkpointInterval {
            doc.note = "n\(index)"
            try history.append(doc)
        }
        store.checkpointer?.waitUntilIdle()
        doc.note = "after the build"
        try history.append(doc)
        let storage = try #require(history.durableStorage)
        #expect(storage.checkpointBytes > 150_000)
        // 200 edits of a title (about 20 KB of changes, far under that size): none falls due.
        let before = storage.stepsSinceCheckpoint
        for index in 0..<200 {
            doc.items[index].title = "edited \(index)"
            try history.append(doc)
        }
        #expect(storage.stepsSinceCheckpoint == before + 200)
        try history.checkInvariants()
    }

    /// A small value's checkpoint is written by the committing thread with the version it
    /// falls due with; a larger one is left to the background connection.
    @Test func aSmallValuesCheckpointIsWrittenWithItsVersion() throws {
        let store = try KeepsakeStore(path: path)
        // No background work from here on: only what the committing thread writes is stored.
        store.checkpointer?.stop()
        let small = try store.history("small", initialValue: Doc.empty, maximumVersions: nil)
        let large = try store.history(
            "large",
            initialValue: Self.doc(titled: 3_000), maximumVersions: nil)
        var (smallDoc, largeDoc) = (small.value, large.value)
        for index in 1...300 {
            smallDoc.note = "v\(index)"
            try small.append(smallDoc)
            largeDoc.note = "v\(index)"
            try large.append(largeDoc)
        }
        func checkpoints(_ history: String) throws -> [(position: Int64, note: String?)] {
            try store.read { connection, _ in
                try connection.query(
                    """
                    SELECT c.position, json_extract(c.value, '$.note') FROM checkpoint c
                    JOIN history h ON h.id = c.history_id
                    WHERE h.name = ? AND c.position IS NOT NULL ORDER BY c.position
                    """, [.text(history)]
                ) { (try $0.requiredInt64(0), $0.text(1)) }
            }
        }
        let written = try checkpoints("small")
        #expect(written.count >= 2)
        for checkpoint in written { #expect(checkpoint.note == "v\(checkpoint.position)") }
        #expect(try checkpoints("large").isEmpty)  // its builds were left to the stopped connection
        let reopened = try KeepsakeStore(path: path).history(
            "small", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.value == smallDoc)
        let last = try #require(written.last).position
        #expect(try #require(reopened.durableStorage).stepsSinceCheckpoint == 300 - Int(last))
        try reopened.checkInvariants()
        try large.checkInvariants()
    }
}
