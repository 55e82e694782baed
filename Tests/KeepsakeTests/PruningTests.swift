import Foundation
import Testing

@testable import Keepsake

/// A value that counts how often the main thread decodes it, to show what pruning does not do
/// while the app waits (checkpoints are built on a background thread, which decodes).
struct DecodeCounted: Versionable, Equatable, Codable {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var mainThreadDecodes = 0
    static var decodes: Int {
        get { lock.withLock { mainThreadDecodes } }
        set { lock.withLock { mainThreadDecodes = newValue } }
    }
    var title = ""
    var count = 0

    init() {}

    init(from decoder: any Decoder) throws {
        if Thread.isMainThread { Self.lock.withLock { Self.mainThreadDecodes += 1 } }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decode(String.self, forKey: .title)
        count = try container.decode(Int.self, forKey: .count)
    }

    enum CodingKeys: CodingKey { case title, count }
}

/// Pruning under the limit folds the oldest versions into the base value by raising the root
/// scope's floor: no value is decoded or encoded while the app waits, and everything reads as if
/// the versions had been folded.
@MainActor @Suite(.serialized) struct PruningTests {
    let directory = TemporaryDirectory()

    @Test func foldingDecodesNothingAndKeepsTheNewestVersions() throws {
        let path = directory.path("pruned.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: 128)
        var values = [history.value]
        DecodeCounted.decodes = 0
        for n in 1...300 {
            var value = values[n - 1]
            value.count = n
            value.title = "title \(n)"
            try history.append(value, tag: "v\(n)")
            values.append(value)
            // As at a person's pace: each checkpoint is built before the next edit.
            store.checkpointer?.waitUntilIdle()
        }
        #expect(DecodeCounted.decodes == 0)
        // Pruned whenever more than 144 versions (the limit plus its slack of 128 / 8) were kept,
        // down to 128: at append 145, then every 17 appends, the last time at append 298.
        #expect(history.versionCount == 130)
        try history.checkInvariants()
        #expect(try store.verify().problems == [])

        // What is listed starts at the floor, version 170, whose value and tag are version 0's.
        let timeline = try #require(try store.timeline(of: "doc"))
        #expect(timeline.map(\.version) == [0] + Array(171...300))
        #expect(timeline.first?.tag == "v170")
        #expect(try store.changes(ofVersion: 170, in: "doc") == nil)
        #expect(try store.valueJSON(ofHistory: "doc", atVersion: 170) == nil)
        let base = try #require(try store.valueJSON(ofHistory: "doc", atVersion: 0))
        #expect(try JSONDecoder().decode(DecodeCounted.self, from: Data(base.utf8)) == values[170])
        #expect(try history.tags().undo.strings == ["v170"] + (171...300).map { "v\($0)" })

        // The folded versions are deleted as checkpoints pass under the floor: the store keeps
        // fewer than the limit, its slack and the stretch back to the newest such checkpoint.
        let stored = try store.database.read { try $0.scalarInt("SELECT count(*) FROM version") ?? 0 }
        #expect(stored >= 130 && stored < 130 + 17 + 80, "\(stored) versions stored")

        for n in stride(from: 299, through: 170, by: -1) {
            #expect(try history.undo() == values[n], "undo to \(n)")
        }
        #expect(!history.hasUndo)
        #expect(try history.redo(to: "v300") == values[300])
        try history.checkInvariants()

        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: DecodeCounted(), maximumVersions: 128)
        #expect(reopened.value == values[300])
        #expect(reopened.versionCount == 130)
        #expect(try reopened.undo(to: "v170") == values[170])
        #expect(!reopened.hasUndo)
        try reopened.checkInvariants()
    }

    /// Appends versions counting 1 to `last` to `history`, calling `each` with the count after
    /// each one; returns every value, the current one first.
    func appendCounting(
        _ history: KeepsakeHistory<DecodeCounted>, through last: Int, each: (Int) throws -> Void = { _ in }
    ) throws -> [DecodeCounted] {
        var values = [history.value]
        for n in 1...last {
            var value = values[n - 1]
            value.count = n
            try history.append(value)
            values.append(value)
            try each(n)
        }
        return values
    }

    /// What `body` reads or writes through the rows of `history`, in a write transaction of its
    /// store.
    func rows<T>(of history: KeepsakeHistory<DecodeCounted>, _ body: (HistoryRows) throws -> T) throws -> T {
        let storage = try #require(history.durableStorage)
        return try storage.store.write { connection, blobs in
            try body(HistoryRows(connection: connection, blobs: blobs, historyID: storage.id))
        }
    }

    /// A store named `name`, open, whose history "doc" counted 12 versions with a checkpoint at
    /// version 10, then took a limit of 2: versions 1 to 10 folded and compacted away, the base
    /// value version 10. Returns every value, the initial one first.
    func compacted(_ name: String) throws -> (
        path: String, store: KeepsakeStore, history: KeepsakeHistory<DecodeCounted>, values: [DecodeCounted]
    ) {
        let path = directory.path(name)
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: nil)
        let values = try appendCounting(history, through: 12) { n in
            if n == 10 { try history.writeCheckpoint() }
        }
        try history.setMaximumVersions(2)
        return (path, store, history, values)
    }

    /// A writer that never pauses leaves versions folded faster than compaction, which waits for
    /// a pause, deletes them: the background connection then deletes them in steps of at most
    /// ``KeepsakeHistoryStorage/compactionStep`` versions, each a short transaction of its own,
    /// until no checkpoint lies under the floor above the base value; its foreign keys, off
    /// during each step, are on again after it. (In one transaction, 50,000 versions a writer of
    /// 11,000 appends a second left held its next append for 160–250 ms.)
    @Test func versionsFoldedUnderAWriterThatNeverPausesAreDeletedInShortSteps() throws {
        typealias Storage = KeepsakeHistoryStorage<DecodeCounted>
        let store = try KeepsakeStore(path: directory.path("steps.keepsake"))
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: 16)
        let storage = try #require(history.durableStorage)
        let values = try appendCounting(history, through: 5_000)
        let checkpointer = try #require(store.checkpointer)
        checkpointer.waitUntilIdle()

        let taken = storage.compactions.taken
        #expect(taken.count >= 5, "\(taken.count) steps")
        #expect(taken.mostDeleted > 0 && taken.mostDeleted <= Storage.compactionStep, "\(taken.mostDeleted)")
        let (left, base, stored) = try rows(of: history) { rows in
            (
                try rows.nextBasePlace(), try rows.basePosition(),
                try rows.connection.scalarInt("SELECT count(*) FROM version") ?? 0
            )
        }
        // Nothing is left to delete (no checkpoint lies above the base value and at or under the
        // floor), and only the versions above the base value are stored: the 16 kept, at most
        // the slack of 2, and those from the base value up to the floor.
        #expect(left == nil)
        #expect(stored == 5_000 - (base ?? 0))
        #expect(stored < 16 + 2 + Storage.checkpointInterval, "\(stored) versions stored")
        let foreignKeys = Handoff()
        checkpointer.perform { connection in
            foreignKeys.give(Int((try? connection.scalarInt("PRAGMA foreign_keys")) ?? -1))
        }
        checkpointer.waitUntilIdle()
        #expect(foreignKeys.take() == 1)

        for n in stride(from: 4_999, through: 5_000 - storage.undoCount, by: -1) {
            #expect(try history.undo() == values[n], "undo to \(n)")
        }
        #expect(!history.hasUndo)
        try history.checkInvariants()
        #expect(try store.verify().problems == [])
    }

    /// Which checkpoint a compaction takes: the newest at or under the floor, or for a bounded
    /// step the newest that few versions above the base value, else the oldest under the floor;
    /// and which it may still take once it holds the write lock: any one still stored with the
    /// digest read, above the base value, at or under the floor and below the newest version —
    /// not only the newest (the floor of a writer that never pauses rises over a newer one
    /// between the read and the write, and the compaction gave up every time).
    @Test func aCompactionTakesAnyCheckpointStillUnderTheFloorAndAboveTheBaseValue() throws {
        typealias Place = (position: Int, digest: Int64?)
        let store = try KeepsakeStore(path: directory.path("places.keepsake"))
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: nil)
        _ = try appendCounting(history, through: 30) { n in
            if [10, 20, 25].contains(n) { try history.writeCheckpoint() }
        }
        func rows<T>(_ body: (HistoryRows) throws -> T) throws -> T { try self.rows(of: history, body) }
        let digests = try store.database.read { connection in
            try connection.query(
                "SELECT position, digest FROM checkpoint WHERE position > 0 ORDER BY position"
            ) {
                (Int(try $0.requiredInt64(0)), try $0.requiredInt64(1))
            }
        }
        #expect(digests.map(\.0) == [10, 20, 25])
        let (ten, twenty, twentyFive): (Place, Place, Place) = (digests[0], digests[1], digests[2])
        try rows { try $0.raiseFloor(to: 22, tag: nil) }

        #expect(try rows { try $0.nextBasePlace()?.position } == 20)
        #expect(try rows { try $0.nextBasePlace(step: 12)?.position } == 10)  // the newest up to 12
        #expect(try rows { try $0.nextBasePlace(step: 5)?.position } == 10)  // none that low: the oldest
        #expect(try rows { try $0.canBecomeBase(ten) })
        #expect(try rows { try $0.canBecomeBase(twenty) })
        #expect(try !rows { try $0.canBecomeBase(twentyFive) })  // above the floor
        #expect(try !rows { try $0.canBecomeBase((10, ten.digest.map { $0 + 1 })) })  // another text
        #expect(try !rows { try $0.canBecomeBase((30, nil)) })  // no checkpoint there

        let next = try #require(try rows { try $0.nextBase(step: 12) })
        let deleted = try rows {
            try $0.compact(to: next, baseDigest: HistoryRows.checkpointDigest(next.json, position: nil))
        }
        #expect(deleted == 10)
        #expect(try rows { try $0.basePosition() } == 10)
        #expect(try !rows { try $0.canBecomeBase(ten) })  // the base value now
        #expect(try rows { try $0.canBecomeBase(twenty) })
        #expect(try rows { try $0.nextBasePlace(step: 12)?.position } == 20)
    }

    /// A checkpoint row at or under the base value — left by versions deleted with foreign keys
    /// off, as the `sqlite3` shell has them — is not compacted to: the base value would then be
    /// an older value than the versions left start from (and a step that took it would find it
    /// again, without end).
    @Test(.timeLimit(.minutes(1))) func aCheckpointRowUnderTheBaseValueIsNotCompactedTo() throws {
        let path = directory.path("under-base.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: 16)
        let storage = try #require(history.durableStorage)
        var values = try appendCounting(history, through: 500)
        let checkpointer = try #require(store.checkpointer)
        checkpointer.waitUntilIdle()
        func base() throws -> Int? { try rows(of: history) { try $0.basePosition() } }
        let compacted = try #require(try base())
        #expect(compacted > 1)

        let shell = try SQLiteConnection(path: path)
        try shell.execute("PRAGMA foreign_keys = OFF")
        let old = String(decoding: try JSONEncoder().encode(values[compacted - 1]), as: UTF8.self)
        try shell.execute(
            "INSERT INTO checkpoint (history_id, position, value, created_at, digest) VALUES (?, ?, ?, 0, ?)",
            [
                .integer(storage.id), .integer(Int64(compacted - 1)), .text(old),
                .integer(HistoryRows.checkpointDigest(old, position: compacted - 1)),
            ])
        shell.close()

        // Versions fold at every second append from here, before a checkpoint passes under the
        // floor; each compaction runs before the next append.
        for n in 501...540 {
            var value = values[n - 1]
            value.count = n
            try history.append(value)
            values.append(value)
            checkpointer.waitUntilIdle()
        }
        #expect(try base() ?? 0 >= compacted)
        let undone = storage.undoCount
        for n in stride(from: 539, through: 540 - undone, by: -1) {
            #expect(try history.undo() == values[n], "undo to \(n)")
        }
        #expect(!history.hasUndo)
        try history.close()
        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: DecodeCounted(), maximumVersions: 16)
        #expect(reopened.value == values[540 - undone])
        for n in (541 - undone)...540 {
            #expect(try reopened.redo() == values[n], "redo to \(n)")
        }
    }

    /// Lowering the limit folds at once, down to the limit, and the history keeps working.
    @Test func aLowerLimitFoldsAtOnce() throws {
        let store = try KeepsakeStore(path: directory.path("limit.keepsake"))
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: nil)
        let values = try appendCounting(history, through: 50)
        try history.setMaximumVersions(5)
        #expect(history.versionCount == 5)
        #expect(try store.timeline(of: "doc")?.map(\.version) == [0, 46, 47, 48, 49, 50])
        for n in stride(from: 49, through: 45, by: -1) { #expect(try history.undo() == values[n]) }
        #expect(!history.hasUndo)
        var value = values[45]
        value.title = "branch"
        try history.append(value)
        #expect(history.versionCount == 1)
        #expect(try history.undo() == values[45])
        try history.checkInvariants()
        #expect(try store.verify().problems == [])
    }

    /// A limit of 0 — an app's "no undo" setting — keeps no version besides the current one,
    /// in memory and durably, at creation and when set; one below 0 is kept as 0. It stopped
    /// the process (a precondition) before, and schema 10 refused 0.
    @Test(arguments: [0, -1, Int.min])
    func aLimitOfZeroOrLessKeepsNoUndo(limit: Int) throws {
        var value = DecodeCounted()
        value.title = "first"
        let store = try KeepsakeStore(path: directory.path("no-undo\(limit).keepsake"))
        let durable = try VersioningController(
            value, storage: .keepsake(store, history: "doc"), maximumVersions: limit)
        let inMemory = VersioningController(value, maximumVersions: limit)
        var history = VersionHistory(value, maximumVersions: limit)
        #expect(
            [durable.maximumVersions, inMemory.maximumVersions, history.maximumVersions]
                == [Int?](repeating: 0, count: 3))
        /// Appends `values` to all three, undoing now and then (which keeps the value: nothing
        /// to undo), and checks that none keeps a version.
        func append(_ values: ClosedRange<Int>) throws {
            for n in values {
                value.count = n
                try durable.append(value)
                try inMemory.append(value)
                _ = history.append(value)
                if n % 3 == 0 {
                    #expect(try durable.undo() == value && inMemory.undo() == value)
                }
            }
            #expect(
                [durable.versionCount, inMemory.versionCount, history.versionCount]
                    == [Int](repeating: 0, count: 3))
            #expect(!durable.hasUndo && !inMemory.hasUndo && !history.hasUndo)
            #expect(durable.value == value && inMemory.value == value && history.current == value)
        }
        try append(1...20)
        // A scope keeps its versions until it ends; then they go too, squashed into one.
        for controller in [durable, inMemory] {
            try controller.pushNewScope()
            for n in 1...3 {
                value.title = "scoped \(n)"
                try controller.append(value)
            }
            #expect(controller.versionCount == 3 && controller.hasUndo)
            try controller.popCurrentScope()
            #expect(controller.versionCount == 0 && !controller.hasUndo && controller.value == value)
        }
        history.pushScope()
        _ = history.append(value)
        history.popScope()
        #expect(try store.database.read { try $0.scalarInt("SELECT maximum_versions FROM history") } == 0)

        // Set to none, then to the limit again: down to the current version at once.
        try durable.setMaximumVersions(nil)
        try inMemory.setMaximumVersions(nil)
        history.maximumVersions = nil
        for n in 21...23 {
            value.count = n
            try durable.append(value)
            try inMemory.append(value)
            _ = history.append(value)
        }
        #expect(
            [durable.versionCount, inMemory.versionCount, history.versionCount]
                == [Int](repeating: 3, count: 3))
        try durable.setMaximumVersions(limit)
        try inMemory.setMaximumVersions(limit)
        history.maximumVersions = limit
        #expect(
            [durable.maximumVersions, inMemory.maximumVersions, history.maximumVersions]
                == [Int?](repeating: 0, count: 3))
        try append(24...40)
        try durable.checkInvariants()
        try inMemory.checkInvariants()
        try history.checkInvariants()

        // A reopen with the same limit finds the value and nothing to undo.
        let reopened = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: limit)
        #expect(reopened.value == value && !reopened.hasUndo && reopened.maximumVersions == 0)
        try reopened.checkInvariants()
        #expect(try store.verify().problems == [])
    }

    /// A change made without tracking under a limit of 0 deletes the versions the floor
    /// covers — every one, the newest included, whose row holds the history's counters. They
    /// were written to that deleted row: the stored revision went back to the history row's,
    /// and every later write of the history met a conflict (found by the randomized model test
    /// under `Scripts/soak`, 7 seeds in 60).
    @Test func aChangeWithoutTrackingUnderALimitOfZeroKeepsTheCounters() throws {
        let store = try KeepsakeStore(path: directory.path("untracked-no-undo.keepsake"))
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: 0)
        var value = history.value
        for n in 1...3 {
            value.count = n
            try history.append(value)
        }
        value.title = "untracked"
        try history.setWithoutTracking(value)
        let revision = try #require(history.durableStorage?.revision)
        let stored = try store.database.read {
            try $0.scalarInt("SELECT revision FROM history") ?? -1
        }
        #expect(stored == revision && revision > 0)
        try history.checkInvariants()
        value.count = 4
        try history.append(value)
        #expect(history.durableStorage?.revision == revision + 1)
        let reopened = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: 0)
        #expect(reopened.value == value && !reopened.hasUndo)
        try reopened.checkInvariants()
        #expect(try store.verify().problems == [])
    }

    /// A checkpoint at the version that becomes the floor (closing a document writes one at
    /// its current version) lets compaction delete every version folded: the base value is
    /// then the value at the floor. Every version kept undone, the history reopens there, and
    /// an edit takes the position above the floor: it was written at position 1, under it,
    /// folded away the moment it was made, and the store no longer opened.
    @Test(arguments: [false, true])
    func everyVersionKeptUndoneAboveACompactedFloorReopensAndTakesEdits(reopening: Bool) throws {
        var (path, store, history, values) = try compacted("compacted-\(reopening).keepsake")
        #expect(try store.timeline(of: "doc")?.map(\.version) == [0, 11, 12])
        let connection = try SQLiteConnection(path: path, readOnly: true)
        // Versions 1 to 10 compacted away with the checkpoint at the floor, 10.
        #expect(try connection.scalarInt("SELECT min(position) FROM version") == 11)
        connection.close()
        #expect(try history.undo() == values[11])
        #expect(try history.undo() == values[10])
        #expect(!history.hasUndo)
        if reopening {
            try history.close()
            store.close()
            store = try KeepsakeStore(path: path)
            history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: 2)
            #expect(history.value == values[10])
            #expect(try history.redo() == values[11])
            #expect(try history.undo() == values[10])
        }
        var edit = values[10]
        edit.title = "after every undo"
        try history.append(edit)
        #expect(try store.timeline(of: "doc")?.map(\.version) == [0, 11])
        #expect(try history.undo() == values[10])
        #expect(try history.redo() == edit)
        try history.close()
        store.close()
        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: DecodeCounted(), maximumVersions: 2)
        #expect(reopened.value == edit)
        #expect(try reopened.undo() == values[10])
        try reopened.checkInvariants()
        #expect(try KeepsakeStore(path: path).verify().problems == [])
    }

    /// Schema 10 keeps the version the base value is (the root scope's `base_position`):
    /// upgrading fills it in from the versions left, here 10 after compaction deleted versions
    /// 1 to 10, and version 0 then reads as the value at the floor.
    @Test func upgradingToSchema10FindsTheVersionTheBaseValueIs() throws {
        var (path, store, history, values) = try compacted("schema-9-compacted.keepsake")
        try history.close()
        store.close()
        // As schema 9 left it: no position for the root scope's base value.
        let connection = try SQLiteConnection(path: path)
        #expect(try connection.scalarInt("SELECT base_position FROM scope WHERE level = 0") == 10)
        try connection.execute("UPDATE scope SET base_position = NULL WHERE level = 0")
        try connection.execute("PRAGMA user_version = 9")
        connection.close()

        store = try KeepsakeStore(path: path)
        #expect(try store.value(ofHistory: "doc", atVersion: 0, as: DecodeCounted.self) == values[10])
        store.close()
        let upgraded = try SQLiteConnection(path: path, readOnly: true)
        #expect(try upgraded.scalarInt("PRAGMA user_version") == Int64(KeepsakeStore.schemaVersion))
        #expect(try upgraded.scalarInt("SELECT base_position FROM scope WHERE level = 0") == 10)
        upgraded.close()
        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: DecodeCounted(), maximumVersions: 2)
        #expect(try reopened.undo() == values[11])
        #expect(try reopened.undo() == values[10])
        #expect(try KeepsakeStore(path: path).verify().problems == [])
    }

    /// Pruning reads only the newest version it folds; when the root scope holds fewer
    /// versions than the limit asks to fold (the rest are in an open scope), it folds them all.
    @Test func aLimitReachedInsideAScopeFoldsWhatTheRootHolds() throws {
        let store = try KeepsakeStore(path: directory.path("scoped.keepsake"))
        let history = try store.history("doc", initialValue: DecodeCounted(), maximumVersions: 10)
        var value = history.value
        for n in 1...5 {
            value.count = n
            try history.append(value, tag: "root \(n)")
        }
        let rootValue = value
        try history.pushNewScope()
        // Past the limit and its slack (10 + 1), the root's 5 versions are folded two at a
        // time, then the last one alone: the root holds fewer than the 2 to be folded.
        for n in 1...22 {
            value.title = "scoped \(n)"
            try history.append(value)
        }
        #expect(history.versionCount == 22)
        try history.tag("scope end")
        try history.popCurrentScope()
        #expect(try history.tags().undo == ["root 5", "scope end"])
        #expect(try history.undo() == rootValue)
        #expect(!history.hasUndo)
        try history.checkInvariants()
        #expect(try store.verify().problems == [])
    }
}

/// Undo and redo find their versions by key, whatever the history's length: no query on the
/// stacks walks the history's versions from one end.
@Suite struct VersionQueryPlanTests {
    let directory = TemporaryDirectory()

    @Test(arguments: [false, true], [false, true])
    func stackQueriesSeekByKey(undone: Bool, newestFirst: Bool) throws {
        let store = try KeepsakeStore(path: directory.path("plan.keepsake"))
        let plan = try store.database.read { connection in
            let rows = HistoryRows(connection: connection, blobs: BlobCoding(connection), historyID: 1)
            let sql = rows.versionsSQL(undone: undone, newestFirst: newestFirst, limit: 1, changes: true)
            return try connection.query("EXPLAIN QUERY PLAN " + sql, [.integer(1), .integer(0)]) {
                $0.text(3) ?? ""
            }
        }
        let versionLines = plan.filter { $0.contains("version") }
        #expect(!versionLines.isEmpty)
        // Every search of `version` is bounded: by the partial index (SQLite 3.46 reads it as a
        // covering index: "USING COVERING INDEX version_undone"), or by a position range.
        for line in versionLines {
            #expect(
                line.contains("INDEX version_undone") || line.contains("position>? AND position<?"),
                "\(line)")
        }
    }
}
