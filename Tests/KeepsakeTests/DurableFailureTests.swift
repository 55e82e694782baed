import CSQLite
import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// A failed write leaves memory and disk equal; stored data the code no longer understands
/// gives a typed error naming the history, version and path.
@MainActor @Suite struct DurableFailureTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("doc.keepsake") }

    func open(_ store: KeepsakeStore? = nil) throws -> KeepsakeHistory<Doc> {
        try (store ?? KeepsakeStore(path: path)).history("doc", initialValue: Doc.empty)
    }

    /// A store at ``path`` whose history holds one version, titled "kept" (tagged `tag`), with
    /// the history and that version's value.
    func storeKeepingOneVersion(tag: String? = nil) throws -> (KeepsakeStore, KeepsakeHistory<Doc>, Doc) {
        let store = try KeepsakeStore(path: path)
        let history = try open(store)
        var doc = history.value
        doc.title = "kept"
        try history.append(doc, tag: tag)
        return (store, history, doc)
    }

    /// The SQLite error `body` throws as `KeepsakeError.sqlite`; `nil`, recorded as an issue,
    /// when it throws none or another.
    func sqliteError(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) -> SQLiteError? {
        let thrown = #expect(throws: KeepsakeError.self, sourceLocation: sourceLocation) { try body() }
        guard case .sqlite(let sqlite)? = thrown else {
            Issue.record("not a SQLite error: \(String(describing: thrown))", sourceLocation: sourceLocation)
            return nil
        }
        return sqlite
    }

    struct Snapshot: Equatable {
        let value: Doc
        let hasUndo: Bool
        let hasRedo: Bool
        let level: Int
        let count: Int
        let undoTags: [String?]
        let redoTags: [String?]

        init(_ history: KeepsakeHistory<Doc>) throws {
            (value, hasUndo, hasRedo, level, count) = (
                history.value, history.hasUndo, history.hasRedo, history.scopeLevel, history.versionCount
            )
            let tags = try history.tags()
            (undoTags, redoTags) = (tags.undo.strings, tags.redo.strings)
        }
    }

    /// A history or caretaker used after its store was closed fails with `.sqlite` of code
    /// `SQLITE_MISUSE` naming the file (it used to say only "the connection is closed", which
    /// told an app with several stores open nothing), and nothing moves, in memory or on disk.
    @Test func aClosedStoreSaysWhichFileWasClosedAndNothingMoves() throws {
        let (store, history, doc) = try storeKeepingOneVersion()
        store.close()
        func closed(_ sql: String) -> KeepsakeError {
            .sqlite(
                SQLiteError(
                    code: .init(21), message: "the connection to \(path) is closed; open the store again",
                    sql: sql))
        }
        var edited = doc
        edited.title = "lost"
        #expect(throws: closed("BEGIN IMMEDIATE")) { try history.append(edited) }
        #expect(throws: closed("BEGIN IMMEDIATE")) { try history.undo() }
        #expect(throws: closed("BEGIN IMMEDIATE")) { try Caretaker(store: store).save(doc, as: "saved") }
        #expect(throws: closed("BEGIN DEFERRED")) { try store.summary() }
        #expect(history.value == doc && history.versionCount == 1 && history.hasUndo)
        let reopened = try open()
        #expect(reopened.value == doc && reopened.versionCount == 1)
        try reopened.checkInvariants()
    }

    @Test func aFullDiskLeavesMemoryAndDiskEqualAndTheRetrySucceeds() throws {
        let (store, history, kept) = try storeKeepingOneVersion(tag: "kept")
        var doc = kept
        try history.pushNewScope()
        let before = try Snapshot(history)
        let pages = try store.database.read { try $0.scalarInt("PRAGMA page_count") }!
        try store.database.read { try $0.execute("PRAGMA max_page_count = \(pages)") }
        doc.blob = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        guard let sqlite = sqliteError({ try history.append(doc, tag: "big") }) else { return }
        #expect(sqlite.code == .full)
        // Which store, and that nothing was written.
        #expect(
            sqlite.description.hasPrefix(
                "SQLite error 13: database or disk is full: \(path) or its write-ahead log could not grow (is the disk full?); "
                    + "nothing was written — while executing `"))
        #expect(try Snapshot(history) == before)
        #expect(try Snapshot(open()) == before)
        try history.checkInvariants()
        try store.database.read { try $0.execute("PRAGMA max_page_count = 1073741823") }
        try history.append(doc, tag: "big")
        #expect(try open().value == doc)
        try history.checkInvariants()
    }

    /// A value longer than SQLite stores in one (1,000,000,000 bytes unless built otherwise;
    /// lowered here so the test need not hold a gigabyte): the append, the debounced hold and
    /// the snapshot save fail typed, saying both sizes (SQLite's message said neither) and
    /// where the value is — the history and the path of its largest change, the snapshot and
    /// the place in the value (until 2026-12 neither: an app holding many documents and attachments
    /// learned only that some value was too long) — and nothing moves.
    @Test func aValueLongerThanSQLiteStoresInOneSaysSoAndWhereAndNothingMoves() throws {
        let (store, history, doc) = try storeKeepingOneVersion()
        let before = try Snapshot(history)
        let insertingBlob = "INSERT INTO blob (digest, size, bytes) VALUES (?, ?, ?)"
        // Bound where they lie (4 KiB and more), and copied by SQLite.
        for (limit, size) in [(100_000, 100_001), (100_000, 2_000_000), (2_000, 3_000)] {
            _ = store.database.read { sqlite3_limit($0.handle, SQLITE_LIMIT_LENGTH, Int32(limit)) }
            var big = doc
            big.blob = Data(repeating: 7, count: size)
            let tooLong =
                "string or blob too big: a value of \(size) bytes, longer than the \(limit) SQLite stores in one"
            guard let sqlite = sqliteError({ try history.append(big) }) else { return }
            #expect(sqlite.code == .tooBig)
            #expect(
                sqlite.description
                    == "SQLite error 18: \(tooLong): in history \"doc\", the largest change is at `blob` — while "
                    + "executing `\(insertingBlob)`")
            #expect(try Snapshot(history) == before)
            let saving = sqliteError { try Caretaker(store: store).save(big, as: "big") }
            #expect(
                saving?.description
                    == "SQLite error 18: \(tooLong): in snapshot \"big\", the value at `blob` — while executing "
                    + "`\(insertingBlob)`")
            #expect(try Caretaker(store: store).restore("big", as: Doc.self) == nil)
        }
        // Text, in the version's row; held back by debouncing.
        _ = store.database.read { sqlite3_limit($0.handle, SQLITE_LIMIT_LENGTH, 2_000) }
        var long = doc
        long.items = [Doc.Item(id: 1, title: "short", done: false)]
        long.title = String(repeating: "x", count: 3_000)
        let appending = sqliteError { try history.append(long) }
        #expect(
            appending?.message.hasSuffix(
                "longer than the 2000 SQLite stores in one: in history \"doc\", the largest change is at `title`"
            )
                == true)
        let savingText = sqliteError { try Caretaker(store: store).save(long, as: "long") }
        #expect(
            savingText?.message.hasSuffix(
                "longer than the 2000 SQLite stores in one: in snapshot \"long\", the value at `title`")
                == true)
        history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        let holding = sqliteError { try history.append(long) }
        #expect(
            holding?.message.hasSuffix(
                "longer than the 2000 SQLite stores in one: in history \"doc\", the largest change is at `title`"
            )
                == true)
        _ = store.database.read { sqlite3_limit($0.handle, SQLITE_LIMIT_LENGTH, 1_000_000_000) }
        #expect(try Snapshot(open()) == before)
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func anUndoWhoseTransactionFailsTakesBackWhatItAppliedInMemory() throws {
        // Undo applies its changes to the value in place, then writes; here the write fails
        // after the changes were applied (a trigger refuses it), so they must be taken back.
        let history = try open()
        var doc = Doc.empty
        doc.items = (0..<50).map { .init(id: $0, title: "item \($0)", done: false) }
        try history.append(doc, tag: "start")
        doc.items[20].title = "edited"
        doc.title = "Titled"
        try history.append(doc)
        doc.items[30].done = true
        try history.append(doc, tag: "end")
        let before = try Snapshot(history)
        let blocker = try SQLiteConnection(path: path)
        try blocker.execute(
            "CREATE TRIGGER refuse_undo BEFORE UPDATE OF is_undone ON version BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
        #expect(throws: KeepsakeError.self) { try history.undo() }
        #expect(throws: KeepsakeError.self) { try history.undo(to: "start") }
        #expect(try Snapshot(history) == before)
        try history.checkInvariants()
        try blocker.execute("DROP TRIGGER refuse_undo")
        blocker.close()
        // The value in memory is what the store holds: undo and redo still apply exactly.
        #expect(try history.undo().items[30].done == false)
        #expect(try history.undo().items[20].title == "item 20")
        #expect(try history.redo(to: "end") == doc)
        #expect(try open().value == doc)
    }

    @Test func aPathToAMissingElementNamesHistoryVersionAndPathAndTheRestStillWorks() throws {
        let history = try open()
        var doc = history.value
        doc.title = "one"
        try history.append(doc)
        doc.status = .review
        try history.append(doc)
        let store = try KeepsakeStore(path: path)
        try store.database.read {
            // Digests cleared, as a store written before them: only the path is in question here
            // (an edited row that keeps its digest is damage, tested in HostileInputTests).
            try moveStoredChanges($0, at: "status", to: "items[id: 5].done")
        }
        // Opening replays the versions after the last checkpoint: the stale one fails the open,
        // with the same typed error, and nothing is deleted.
        #expect(
            throws: KeepsakeError.reversion(
                history: "doc", version: 2,
                error: .pathNotFound(path: [.property("items"), .id("5"), .property("done")], type: "Doc"))
        ) {
            try open(store)
        }
        try store.database.read {
            try moveStoredChanges($0, at: "items[id: 5].done", to: "status")
        }
        try open(store).writeCheckpoint()
        try store.database.read {
            try moveStoredChanges($0, at: "status", to: "items[id: 5].done")
        }
        let reopened = try open(store)
        // Undo does not need the stale change: the value before version 2 is version 1's,
        // computed from the checkpoint below it on the stored form. Redoing it does: refused,
        // with the same typed error, and nothing moves.
        var one = doc
        one.status = .draft
        #expect(try reopened.undo() == one)
        let before = try Snapshot(reopened)
        #expect(
            throws: KeepsakeError.reversion(
                history: "doc", version: 2,
                error: .pathNotFound(path: [.property("items"), .id("5"), .property("done")], type: "Doc"))
        ) {
            try reopened.redo()
        }
        #expect(try Snapshot(reopened) == before)
        #expect(try store.database.read { try storedChanges($0).count } == 2)
        doc = one
        doc.note = "after"
        try reopened.append(doc)
        #expect(try reopened.undo().note == nil)
        #expect(try reopened.redo().note == "after")
        #expect(
            KeepsakeError.reversion(
                history: "doc", version: 2, error: .pathNotFound(path: [.property("state")], type: "Doc")
            )
            .description
                == #"History "doc", version 2: The stored path `state` does not name a tracked location of Doc."#
        )
    }

    @Test func aValueThatNoLongerDecodesIsATypedError() throws {
        let history = try open()
        var doc = history.value
        doc.items = [.init(id: 1, title: "a", done: false)]
        try history.append(doc)
        doc.items[0].done = true
        try history.append(doc)
        try history.writeCheckpoint()
        let store = try KeepsakeStore(path: path)
        try store.database.read {
            try editStoredChanges($0) { _, entries in
                for index in entries.indices where entries[index].path == "items[id: 1].done" {
                    (entries[index].patch, entries[index].digest) = (#"{"new":"yes","old":false}"#, nil)
                }
            }
        }
        let reopened = try open(store)
        // Undoing version 2 reaches version 1's value, computed from below on the stored form;
        // redoing it needs its change, whose value does not decode: refused, naming it, and
        // the value stays.
        var one = doc
        one.items[0].done = false
        #expect(try reopened.undo() == one)
        #expect {
            try reopened.redo()
        } throws: { error in
            guard case .reversion("doc", 2, .undecodable(let path, "Bool", _)) = error as? KeepsakeError
            else { return false }
            return path.description == "items[id: 1].done"
        }
        #expect(reopened.value == one)
    }

    @Test func aBusyStoreMakesTheWriteWaitThenFailAndNothingMoves() throws {
        let store = try KeepsakeStore(path: path, options: .init(busyTimeout: .milliseconds(100)))
        let history = try open(store)
        let controller = try VersioningController(
            Doc.empty, storage: .keepsake(store, history: "through a controller"))
        let blocker = try SQLiteConnection(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        var doc = history.value
        doc.title = "waiting"
        guard let sqlite = sqliteError({ try history.append(doc) }) else { return }
        #expect(sqlite.code == .busy)
        // Which store, and that nothing was written.
        #expect(
            sqlite.description
                == "SQLite error 5: database is locked: another connection kept \(path) locked for longer than "
                + "the busy timeout; nothing was written — while executing `BEGIN IMMEDIATE`")
        #expect(history.value == .empty && !history.hasUndo)
        // The catches the README and `SQLiteError`'s DocC show match it. (The README used to
        // show `catch let error as SQLiteError`, which the compiler says always fails here.) The
        // last `catch` is plain: Swift 6.3.1 crashes compiling a `do` that rethrows the rest of a
        // typed error past a `catch … where`.
        var matched: [String] = []
        do {
            try history.append(doc)
        } catch KeepsakeError.sqlite(let error) where error.code == .busy {
            matched.append("KeepsakeError.sqlite")
        } catch {
            Issue.record("another error: \(error)")
        }
        do {
            try controller.append(doc)
        } catch {
            if case .sqlite(let sqlite)? = error.keepsakeError, sqlite.code == .busy {
                matched.append("ReversionError.storage")
            }
        }
        #expect(matched == ["KeepsakeError.sqlite", "ReversionError.storage"])
        try blocker.execute("ROLLBACK")
        try history.append(doc)
        #expect(try open().value.title == "waiting")
    }

    /// A history that wrote last skips reading its counters back while nothing else has
    /// written since: another writer in between — on the same connection or another — is still
    /// noticed, and the history read again before its next write (without reading its
    /// counters back, that write would have gone onto stacks another writer had changed).
    @Test(arguments: [false, true])
    func aWriterThatWroteLastStillNoticesAnotherWriter(sameStore: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let first = try open(store)
        var doc = first.value
        doc.title = "first"
        try first.append(doc)
        let second = try open(sameStore ? store : nil)
        doc.title = "second"
        try second.append(doc)
        doc.title = "first again"
        try first.append(doc)
        #expect(first.versionCount == 3)
        try first.checkInvariants()
        let reopened = try open()
        #expect(reopened.value.title == "first again" && reopened.versionCount == 3)
        #expect(try reopened.undo().title == "second")
        #expect(try reopened.undo().title == "first")
        try reopened.checkInvariants()
    }

    /// Who deletes a history while a controller is open on it.
    enum Deleter: String, CaseIterable, Sendable {
        case sameStore, anotherStore, anotherProcess
    }

    /// Deletes history "doc" and creates `name` with one version (whose title is "B", then
    /// whose count is 7): the new history's revision is then the one the deleted history's
    /// controller holds, and before schema 8 its id was the deleted one's.
    nonisolated static func deleteAndCreate(_ name: String, in store: KeepsakeStore) throws {
        #expect(try store.deleteHistory("doc"))
        let created = try store.history(
            name,
            initialValue: Doc(title: "B", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        var doc = created.value
        doc.scores = ["count": 7]
        try created.append(doc)
    }

    /// A controller left open on a deleted history writes nothing more, and never into a
    /// history created after it, under another name or its own, by this store, another one or
    /// another process (before schema 8 its next version went into the new history, whose
    /// next open then failed).
    @Test(arguments: Deleter.allCases, ["other", "doc"])
    func aControllerOnADeletedHistoryGetsAConflictAndWritesNowhere(deleter: Deleter, name: String)
        async throws
    {
        let store = try KeepsakeStore(path: path)
        let deleted = try open(store)
        var doc = deleted.value
        doc.title = "before"
        try deleted.append(doc)
        switch deleter {
        case .sameStore: try Self.deleteAndCreate(name, in: store)
        case .anotherStore: try Self.deleteAndCreate(name, in: KeepsakeStore(path: path))
        case .anotherProcess:
            await #expect(processExitsWith: .success) { [path = path as String, name = name as String] in
                try DurableFailureTests.deleteAndCreate(name, in: KeepsakeStore(path: path))
            }
        }
        doc.title = "after"
        #expect(throws: KeepsakeError.historyConflict(history: "doc")) { try deleted.append(doc) }
        #expect(throws: KeepsakeError.historyConflict(history: "doc")) { try deleted.undo() }
        #expect(deleted.value.title == "before")

        let reopened = try KeepsakeStore(path: path).history(name, initialValue: Doc.empty)
        let created = Doc(title: "B", status: .draft, items: [], blob: Data(), scores: [:], note: nil)
        var edited = created
        edited.scores = ["count": 7]
        #expect(reopened.value == edited)
        #expect(reopened.versionCount == 1)
        #expect(try reopened.undo() == created)
        try reopened.checkInvariants()
        #expect(try store.historyNames() == [name])
        #expect(try store.verify().problems == [])
    }

    @Test func oneSmallEditToABigDocumentWritesWellUnderOneKilobyte() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("big", initialValue: Doc.big())
        let counts = {
            try store.database.read { connection in
                (
                    try connection.scalarInt("SELECT count(*) FROM checkpoint")!,
                    try connection.scalarInt("SELECT count(*) FROM blob")!
                )
            }
        }
        let before = try counts()
        var doc = history.value
        doc.items[5_000].title = "Edited"
        try history.append(doc)
        let bytes = try store.database.read { connection in
            // The whole version row: its key, columns and changes.
            try connection.scalarInt(
                "SELECT length(changes) + 64 FROM version WHERE position = (SELECT max(position) FROM version)"
            )!
        }
        #expect(bytes < 512, "one edit stored \(bytes) bytes")
        #expect(try counts() == before)
        let blob = try store.database.read { try $0.scalarInt("SELECT size FROM blob") }
        #expect(blob == 1 << 20)
        let checkpoint = try store.database.read { try $0.scalarText("SELECT value FROM checkpoint") }!
        #expect(checkpoint.contains(#""blob":{"$blob":1}"#))
    }
}
