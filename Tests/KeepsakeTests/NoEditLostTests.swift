import Foundation
import KeepsakeTestSupport
import Observation
import TestSupport
import Testing

@testable import Keepsake

#if canImport(Glibc)
    import Glibc
#endif

/// A clock whose `sleep` never throws: cancelled, it returns as if the time had come.
struct StubbornClock: Clock {
    let inner: ManualClock
    var now: ManualClock.Instant { inner.now }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try? await inner.sleep(until: deadline, tolerance: tolerance)
    }
}

/// No edit the app made is silently dropped: not by an operation in the same turn, not by
/// debouncing, not by quitting, not by `kill -9`.
@MainActor @Suite struct NoEditLostTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("edits.keepsake") }

    func titled(_ title: String) -> Doc {
        Doc(title: title, status: .draft, items: [], blob: Data(), scores: [:], note: nil)
    }

    @Test(arguments: StorageKind.allCases)
    func anEditUndoneInTheSameTurnIsRecordedThenUndoneExactly(kind: StorageKind) async throws {
        let model = DrawingModel()
        let controller = try VersioningController(
            observing: model, at: \.drawing, storage: try kind.storage(path: path, history: "drawing"))
        model.drawing.title = "One"
        #expect(await settle { controller.versionCount == 1 })
        // The same turn: the observation of "Two" has not been delivered when undo() runs.
        model.drawing.title = "Two"
        #expect(controller.hasUndo)
        try controller.undo()
        #expect(model.drawing.title == "One")
        #expect(controller.hasUndo && controller.hasRedo && controller.versionCount == 2)
        try controller.redo()
        #expect(model.drawing.title == "Two")
        // The late delivery of the observation records nothing more.
        for _ in 0..<100 { await Task.yield() }
        #expect(controller.versionCount == 2)
        try controller.undo()
        try controller.undo()
        #expect(model.drawing == .empty && !controller.hasUndo)
        // The operation that recorded "Two" before its delivery went on observing: the
        // delivery found nothing left to record, and before, it stopped there, so every later
        // edit was lost, `close()` included.
        model.drawing.title = "Three"
        #expect(await settle { controller.versionCount == 1 })
        #expect(controller.value.title == "Three" && !controller.hasRedo)
        try controller.checkInvariants()
    }

    /// An observed edit whose recording failed (a busy store) is reported in `error` and stays
    /// pending: the next operation records it — here `close()`, once the store is free. Before,
    /// it was dropped: the model showed it and no later operation recorded it.
    @Test(arguments: [false, true])
    func anObservedEditWhoseRecordingFailedIsRecordedByTheNextOperation(debounced: Bool) async throws {
        let store = try KeepsakeStore(path: path, options: .init(busyTimeout: .milliseconds(50)))
        let model = DrawingModel()
        let controller = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(store, history: "drawing"))
        if debounced { controller.withDebouncing(clock: ManualClock(), interval: .seconds(1)) }
        let blocker = try SQLiteConnection(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        model.drawing.title = "Typed while busy"
        #expect(await settle { controller.error != nil })
        guard case .sqlite(let sqlite) = controller.error?.keepsakeError else {
            Issue.record("not a storage error: \(String(describing: controller.error))")
            return
        }
        #expect(sqlite.code == .busy)
        #expect(controller.versionCount == 0 && model.drawing.title == "Typed while busy")
        try blocker.execute("ROLLBACK")
        try controller.close()
        #expect(controller.error == nil && controller.versionCount == 1)
        let reopened = try KeepsakeStore(path: path).history("drawing", initialValue: Doc.empty)
        #expect(reopened.value.title == "Typed while busy")
        #expect(try reopened.undo() == .empty)
        try reopened.checkInvariants()
    }

    /// A `@Versioned` property whose append fails (a busy store; the error goes to `error`,
    /// since a setter cannot throw) still reads the value the app set, counts it in `hasUndo`,
    /// and the next operation records it. Before, the property read back the old value: what
    /// the user typed vanished.
    @Test func aVersionedPropertyKeepsAnEditItsStoreRefused() throws {
        struct Editor {
            @Versioned var note: Doc

            init(store: KeepsakeStore) {
                _note = Versioned(wrappedValue: .empty, storage: .keepsake(store, history: "note"))
            }
        }
        let store = try KeepsakeStore(path: path, options: .init(busyTimeout: .milliseconds(10)))
        let editor = Editor(store: store)
        editor.note.title = "Kept"
        let blocker = try SQLiteConnection(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        editor.note.status = .review
        #expect(editor.$note.error?.keepsakeError != nil)
        #expect(editor.note.title == "Kept" && editor.note.status == .review)
        #expect(editor.$note.versionCount == 1 && editor.$note.hasUndo && !editor.$note.hasRedo)
        editor.note.title = "Kept, and typed on"
        #expect(editor.note.status == .review && editor.$note.versionCount == 1)
        try blocker.execute("ROLLBACK")
        editor.$note.undo()
        #expect(editor.$note.error == nil && editor.note.title == "Kept" && editor.note.status == .draft)
        editor.$note.redo()
        #expect(editor.note.title == "Kept, and typed on" && editor.note.status == .review)
        #expect(editor.$note.versionCount == 2)
        try editor.$note.checkInvariants()
    }

    /// What the command-line tool of the exit test does: edit an observed model in a function
    /// that returns, and so lets go of its controller, before the turn of the edit ends.
    static func editObservedAndReturn(path: String) throws {
        let model = DrawingModel()
        let controller = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(try KeepsakeStore(path: path), history: "doc")
        )
        withExtendedLifetime(controller) {
            model.drawing.title = "Typed, never delivered"
        }
    }

    @Test func anEditWhoseControllerIsLetGoOfInItsTurnIsRecordedAtTheNextOpen() async throws {
        await #expect(processExitsWith: .success) { [path = path as String] in
            try await NoEditLostTests.editObservedAndReturn(path: path)
            exit(0)
        }
        let store = try KeepsakeStore(path: path)
        let model = DrawingModel()
        let controller = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(store, history: "doc"))
        #expect(model.drawing.title == "Typed, never delivered")
        #expect(controller.versionCount == 1)
        try controller.undo()
        #expect(model.drawing == .empty)
        try controller.checkInvariants()
        let held = try store.database.read { try $0.scalarInt("SELECT count(*) FROM pending_change") }
        #expect(held == 0)
    }

    /// When the app lets go of an observing controller after closing its store.
    enum LetGo: String, CaseIterable, Sendable {
        /// In the turn of the edit and of `store.close()`.
        case inTheTurn
        /// Once the edit's delivery failed on the closed store (`error` says so).
        case afterTheFailedDelivery
        /// The same, the controller debouncing: the hold failed.
        case afterTheFailedHold
    }

    /// An edit made in the turn the app closes the store (a window's close handler writing a
    /// field back, then closing), before its controller records it: the recording fails on the
    /// closed store, and letting go of the controller gave the edit to a store that refused
    /// it too — gone, with no one to tell. The history, let go of, opens the file again to
    /// hold it, and the next open records it as one version.
    @Test(arguments: LetGo.allCases)
    func anEditMadeInTheTurnTheStoreClosesIsHeldAsTheHistoryIsLetGoOf(letGo: LetGo) async throws {
        let model = DrawingModel()
        do {
            let store = try KeepsakeStore(path: path)
            var controller: VersioningController<DrawingModel, Doc, ReversionError>? =
                try VersioningController(
                    observing: model, at: \.drawing, storage: .keepsake(store, history: "doc"))
            if letGo == .afterTheFailedHold {
                controller = controller?.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            }
            model.drawing.title = "Typed as the window closed"
            store.close()
            if letGo != .inTheTurn {
                #expect(await settle { controller?.error != nil })
                #expect(controller?.value.title == "Typed as the window closed")
            }
            controller = nil
            _ = controller
        }
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        #expect(history.value.title == "Typed as the window closed" && history.versionCount == 1)
        #expect(try history.undo() == .empty)
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    /// That hold writes nothing to a file deleted since the store was closed (no store is
    /// created), nor to another store put at the path, even one whose history of that name is
    /// as new as the one left.
    @Test func aHoldAfterTheStoreClosedWritesToNoOtherFile() async throws {
        for replaced in [false, true] {
            let model = DrawingModel()
            let other = directory.path("other.keepsake")
            do {
                let store = try KeepsakeStore(path: path)
                var controller: VersioningController<DrawingModel, Doc, ReversionError>? =
                    try VersioningController(
                        observing: model, at: \.drawing, storage: .keepsake(store, history: "doc"))
                model.drawing.title = "Typed"
                store.close()
                #expect(unlink(path) == 0)
                if replaced {
                    // Its history of the same name is as new as the one left: only the file
                    // tells them apart.
                    let another = try KeepsakeStore(path: other)
                    try another.history("doc", initialValue: titled("Another's")).close()
                    another.close()
                    #expect(rename(other, path) == 0)
                }
                controller = nil
                _ = controller
            }
            guard replaced else {
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == [])
                continue
            }
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty)
            #expect(history.value.title == "Another's" && history.versionCount == 0)
            let held = try store.database.read { try $0.scalarInt("SELECT count(*) FROM pending_change") }
            #expect(held == 0)
            store.close()
            #expect(unlink(path) == 0)
        }
    }

    @Test func editsMadeInOneTurnAreOneVersion() async throws {
        let model = DrawingModel()
        let controller = VersioningController(observing: model, at: \.drawing)
        model.drawing.title = "A"
        model.drawing.status = .review
        #expect(await settle { controller.hasUndo })
        for _ in 0..<100 { await Task.yield() }
        #expect(controller.versionCount == 1)
        try controller.undo()
        #expect(model.drawing == .empty)
    }

    @Test(arguments: StorageKind.allCases)
    func aDebouncedChangeIsInTheValueASnapshotAndCloseRecordsIt(kind: StorageKind) throws {
        let clock = ManualClock()
        let store = try KeepsakeStore(path: path)
        let history = try VersioningController(
            titled("Untitled"), storage: try kind.storage(path: path, history: "doc"))
        history.withDebouncing(clock: clock, interval: .milliseconds(500))
        var doc = history.value
        doc.title = ""
        for character in "Sketch" {
            doc.title.append(character)
            try history.append(doc)
        }
        #expect(history.value.title == "Sketch")
        #expect(history.versionCount == 0 && history.hasUndo && !history.hasRedo)

        try Caretaker(store: store).save(history, as: "typed")
        #expect(try Caretaker(store: store).restore("typed", as: Doc.self)?.title == "Sketch")
        #expect(history.versionCount == 1)

        doc.title = "Sketch 2"
        try history.append(doc)
        try history.close()
        #expect(history.versionCount == 2)
        if kind == .durable {
            let reopened = try KeepsakeStore(path: path).history("doc", initialValue: titled("Untitled"))
            #expect(reopened.value.title == "Sketch 2" && reopened.versionCount == 2)
        }
        // Closed: appends are recorded at once, no longer held back.
        doc.title = "After close"
        try history.append(doc)
        #expect(history.versionCount == 3)
        try history.checkInvariants()
    }

    @Test func typingBackToTheRecordedValueLeavesNothingHeld() throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: titled("A"))
        history.withDebouncing(clock: ManualClock(), interval: .milliseconds(500))
        try history.append(titled("AB"))
        let held = {
            try history.durableStorage!.store.database.read {
                try $0.scalarInt("SELECT count(*) FROM pending_change")
            }
        }
        #expect(try held() == 1)
        try history.append(titled("A"))
        #expect(try held() == 0)
        try history.flush()
        #expect(history.versionCount == 0 && !history.hasUndo)
    }

    /// A hold rewrites only the held rows that changed: after every keystroke, the rows are
    /// exactly what writing the held change afresh gives, whether the change grew, shrank or
    /// moved to other fields; and a store closed while holding reopens with the last value.
    @Test func heldRowsFollowEveryKeystrokeExactly() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: titled("A"))
        history.withDebouncing(clock: ManualClock(), interval: .seconds(3_600))
        let recorded = history.value
        var generator = SeededGenerator(seed: 16)
        var typed = recorded
        var heldCounts: Set<Int> = []
        for _ in 0..<200 {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: typed.title = recorded.title
            case 1: typed.title += "x"
            case 2: typed.status = [.draft, .review, .final].randomElement(using: &generator)!
            case 3:
                typed.note =
                    Bool.random(using: &generator) ? nil : "n\(Int.random(in: 0..<3, using: &generator))"
            case 4:
                typed.scores["s\(Int.random(in: 0..<3, using: &generator))"] = Int.random(
                    in: 0..<3, using: &generator)
            default: typed = recorded
            }
            try history.append(typed)
            let expected = try typed.reversion(to: recorded)?.records() ?? []
            // Read against the digest the counters hold, which each keystroke rewrites.
            let stored = try store.read {
                let rows = HistoryRows(connection: $0, blobs: $1, historyID: history.durableStorage!.id)
                return try rows.pendingRecords(
                    digest: try rows.storedCounters().counters.held, history: "doc")
            }
            #expect(stored == expected)
            heldCounts.insert(stored.count)
        }
        // The walk grew and shrank the held change through several sizes, down to nothing.
        #expect(heldCounts.count >= 4 && heldCounts.contains(0))
        try history.close()
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: titled("Untitled"))
        #expect(reopened.value == typed)
        #expect(reopened.versionCount == (typed == recorded ? 0 : 1))
        try reopened.checkInvariants()
    }

    /// A debounce timer records nothing before the deadline as the last append left it: not
    /// when it wakes at an earlier one, and not when it was cancelled and its sleep returns
    /// anyway (this clock's sleep ignores cancellation).
    @Test func aDebounceTimerNeverRecordsEarly() async throws {
        let manual = ManualClock()
        let controller = VersioningController(titled(""))
        controller.withDebouncing(clock: StubbornClock(inner: manual), interval: .milliseconds(500))
        try controller.append(titled("a"))
        manual.advance(by: .milliseconds(300))
        try controller.append(titled("ab"))  // due at 800 ms; the timer sleeps until 500 ms
        for _ in 0..<1_000 { await Task.yield() }
        #expect(controller.versionCount == 0)
        manual.advance(by: .milliseconds(300))  // 600 ms: the timer wakes and sleeps on
        for _ in 0..<1_000 { await Task.yield() }
        #expect(controller.versionCount == 0 && controller.value.title == "ab")
        manual.advance(by: .milliseconds(200))  // 800 ms
        #expect(await settle { controller.versionCount == 1 })

        try controller.append(titled("abc"))
        try controller.flush()  // cancels the timer, whose sleep returns at once
        try controller.append(titled("abcd"))  // due at 1,300 ms
        for _ in 0..<1_000 { await Task.yield() }
        manual.advance(by: .milliseconds(400))
        for _ in 0..<1_000 { await Task.yield() }
        #expect(controller.versionCount == 2)
        manual.advance(by: .milliseconds(100))
        #expect(await settle { controller.versionCount == 3 })
        #expect(try controller.undo().title == "abc")
        #expect(try controller.undo().title == "ab")
        #expect(try controller.undo().title == "")
        try controller.checkInvariants()
    }

    /// What the app of the exit test does: type `text` into a debounced durable history
    /// whose clock never moves, then die with SIGKILL, before any flush.
    static func typeAndDie(path: String, text: String) throws -> Never {
        let history = try KeepsakeStore(path: path).history(
            "doc",
            initialValue: Doc(
                title: "Untitled", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        var doc = history.value
        doc.title = "Draft"
        try history.append(doc)
        history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        doc.title = ""
        for character in text {
            doc.title.append(character)
            try history.append(doc)
        }
        kill(getpid(), SIGKILL)
        exit(1)
    }

    @Test func aHeldChangeSurvivesKill9AndOneUndoRemovesTheBurst() async throws {
        let text = "Typed before the crash, never flushed"
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, text = text as String] in
            try await NoEditLostTests.typeAndDie(path: path, text: text)
        }
        let history = try KeepsakeStore(path: path).history("doc", initialValue: titled("Untitled"))
        #expect(history.value.title == text)
        #expect(history.versionCount == 2)
        #expect(try history.undo().title == "Draft")
        #expect(try history.undo().title == "Untitled")
        try history.checkInvariants()
        let held = try history.durableStorage!.store.database.read {
            try $0.scalarInt("SELECT count(*) FROM pending_change")
        }
        #expect(held == 0)
    }
}

/// What a history holds back is visible without opening it: its paths, checked against the
/// digest its counters hold.
@MainActor @Suite struct HeldChangeInspectionTests {
    let directory = TemporaryDirectory()

    @Test func aHeldChangesPathsAreListedAndDamageToThemIsAnError() throws {
        let path = directory.path("held.keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
            history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            var doc = history.value
            doc.title = "held"
            doc.status = .review
            try history.append(doc)
        }
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        // In the order undo applies them, as a version's changes are listed.
        #expect(try store.heldPaths(of: "doc") == ["title", "status"])
        #expect(try store.summary().histories.map(\.heldPaths) == [["title", "status"]])
        #expect(try store.heldPaths(of: "none") == nil)
        let writer = try SQLiteConnection(path: path)
        try writer.execute("UPDATE pending_change SET patch = replace(patch, 'held', 'hexd')")
        #expect {
            try KeepsakeStore(path: path, options: .init(readOnly: true)).heldPaths(of: "doc")
        } throws: { error in
            error as? KeepsakeError
                == .damaged(
                    history: "doc", reason: "its change held back by debouncing does not match its digest")
        }
    }
}
