import Foundation
import KeepsakeTestSupport
import Observation
import TestSupport
import Testing

@testable import Keepsake

/// A history that another writer changed since a controller read it — another process,
/// another store on the same file, another controller on the same store (a widget beside the
/// app, a document open in two windows): the controller reads it again and makes its write
/// from there, an edit carried over onto the other writer's version. Nothing is lost, and the
/// writers share one stack. Until 2026-12 every later write of that controller failed with
/// `.historyConflict`, for as long as it lived: an observed model's or a `@Versioned`
/// property's edits were gone at the next launch.
@MainActor @Suite struct OtherWriterTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("doc.keepsake") }

    func open(_ store: KeepsakeStore? = nil) throws -> KeepsakeHistory<Doc> {
        try (store ?? KeepsakeStore(path: path)).history("doc", initialValue: Doc.empty, maximumVersions: nil)
    }

    static let item = Doc.Item(id: 1, title: "Milk", done: false)

    /// Checks the history as a fresh open reads it: `expected` current, `undone` below it
    /// (newest first), every stack consistent, `verify` (integrity check included) clean.
    func expectStored(_ expected: Doc, undone: [Doc], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let store = try KeepsakeStore(path: path)
        let history = try open(store)
        #expect(history.value == expected, sourceLocation: sourceLocation)
        #expect(history.versionCount == undone.count && !history.hasRedo, sourceLocation: sourceLocation)
        try history.checkInvariants()
        var reached: [Doc] = []
        while history.hasUndo { reached.append(try history.undo()) }
        #expect(reached == undone, sourceLocation: sourceLocation)
        #expect(try store.verify().problems == [], sourceLocation: sourceLocation)
    }

    @Test(arguments: [false, true])
    func anEditOfOtherPropertiesIsMadeOnTopOfTheOtherWritersVersion(sameStore: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let first = try open(store)
        let second = try open(sameStore ? store : nil)
        var theirs = first.value
        theirs.title = "Groceries"
        theirs.items = [Self.item]
        try first.append(theirs)

        // The second controller read the history before that version: its edit of the status
        // and the scores is made on the first one's title and item.
        var mine = second.value
        mine.status = .review
        mine.scores = ["stars": 3]
        try second.append(mine)
        var both = theirs
        both.status = .review
        both.scores = ["stars": 3]
        #expect(second.value == both && second.versionCount == 2 && second.storage.undoCount == 2)
        #expect(try second.undo() == theirs)
        #expect(try second.undo() == .empty)
        #expect(try second.redo() == theirs)
        #expect(try second.redo() == both)

        // And the first one, which read it before all that, edits the note.
        var note = first.value
        note.note = "by Friday"
        try first.append(note)
        var all = both
        all.note = "by Friday"
        #expect(first.value == all && first.versionCount == 3)
        try first.checkInvariants()
        try expectStored(all, undone: [both, theirs, .empty])
    }

    /// Where both changed one property otherwise, the later edit is kept whole, the other
    /// writer's version one undo below it: no value is lost, and none made up.
    @Test func anEditOfThePropertyTheOtherWriterChangedIsKeptWhole() throws {
        let first = try open()
        let second = try open()
        var theirs = first.value
        theirs.title = "theirs"
        theirs.status = .final
        try first.append(theirs)
        var mine = second.value
        mine.title = "mine"
        try second.append(mine)
        #expect(second.value == mine && second.versionCount == 2)
        try expectStored(mine, undone: [theirs, .empty])
    }

    /// Items are found by their ids: an edit of one is made where the other writer moved it,
    /// beside that writer's insertion and removal.
    @Test func anEditOfAnItemIsMadeWhereTheOtherWriterMovedIt() throws {
        let first = try open()
        var base = first.value
        base.items = [1, 2, 3].map { Doc.Item(id: $0, title: "item \($0)", done: false) }
        try first.append(base)
        let second = try open()
        var theirs = base
        theirs.items.swapAt(0, 2)
        theirs.items.remove(at: 1)
        theirs.items.insert(Doc.Item(id: 4, title: "item 4", done: false), at: 0)
        try first.append(theirs)
        var mine = second.value
        mine.items[0].done = true
        mine.items[0].title = "first"
        try second.append(mine)
        var both = theirs
        both.items[2].done = true
        both.items[2].title = "first"
        #expect(both.items.map(\.id) == [4, 3, 1] && second.value == both)
        try expectStored(both, undone: [theirs, base, .empty])
    }

    /// Both writers adding to one array: the later edit's check refuses the other writer's
    /// array, so the edit is kept whole, and the other writer's item is one undo away.
    @Test func bothAddingToOneArrayKeepTheLaterEditWhole() throws {
        let first = try open()
        let second = try open()
        var theirs = first.value
        theirs.items = [Doc.Item(id: 1, title: "theirs", done: false)]
        try first.append(theirs)
        var mine = second.value
        mine.items = [Doc.Item(id: 2, title: "mine", done: false)]
        try second.append(mine)
        #expect(second.value == mine)
        try expectStored(mine, undone: [theirs, .empty])
    }

    /// The same edit made by both is made once: no version repeats it; an edit made since is
    /// made on top.
    @Test func anEditTheOtherWriterAlreadyMadeAddsOnlyWhatItLacks() throws {
        let first = try open()
        let second = try open()
        var theirs = first.value
        theirs.title = "same"
        try first.append(theirs)

        var same = second.value
        same.title = "same"
        try second.append(same)
        #expect(second.value == theirs && second.versionCount == 1)

        var more = second.value
        more.title = "same"
        more.note = "and more"
        let third = try open()
        var status = third.value
        status.status = .review
        try third.append(status)
        // `more` changes the note only, on a read that lacks the status.
        try second.append(more)
        var expected = status
        expected.note = "and more"
        #expect(second.value == expected)
        try expectStored(expected, undone: [status, theirs, .empty])
    }

    /// An undo after another writer's version undoes the newest version of the history — the
    /// other writer's — as one document's undo does in each of its windows.
    @Test func anUndoAfterAnotherWritersVersionUndoesTheNewest() throws {
        let first = try open()
        var mine = first.value
        mine.title = "mine"
        try first.append(mine)
        let second = try open()
        var theirs = second.value
        theirs.status = .final
        try second.append(theirs)

        #expect(try first.undo() == mine)
        #expect(first.storage.undoCount == 1 && first.storage.redoCount == 1)
        #expect(try first.undo() == .empty)
        #expect(try first.redo() == mine)
        try first.checkInvariants()
        let reopened = try open()
        #expect(reopened.value == mine && reopened.storage.redoCount == 1)
        #expect(try reopened.redo() == theirs)
    }

    /// An observed model's edit, recorded after another writer's version, is made on it: the
    /// model shows the other writer's changes with its own, and observers are told.
    @Test func anObservedModelShowsTheOtherWritersVersionWithItsEdit() throws {
        let model = DrawingModel()
        let store = try KeepsakeStore(path: path)
        let controller = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(store, history: "doc"), maximumVersions: nil)
        let other = try open(KeepsakeStore(path: path))
        var theirs = other.value
        theirs.items = [Self.item]
        try other.append(theirs)

        model.drawing.title = "Sketch"
        try controller.flush()
        var both = theirs
        both.title = "Sketch"
        #expect(model.drawing == both && controller.value == both && controller.versionCount == 2)
        #expect(controller.error == nil)
        try controller.undo()
        #expect(model.drawing == theirs)
        try controller.redo()
        try expectStored(both, undone: [theirs, .empty])
    }

    /// A change held back by debouncing, and so held in the store, is held on the other
    /// writer's version once another writer wrote, and keeps that writer's change. That writer
    /// recorded the change held before as a version (opening records one, and so does reading
    /// the history again: its holder may have been killed), opened before the hold or after.
    @Test(arguments: [false, true])
    func aHeldChangeIsCarriedOverOntoTheOtherWritersVersion(otherOpensFirst: Bool) throws {
        let clock = ManualClock()
        let first = otherOpensFirst ? try open() : nil
        let held = try open().withDebouncing(clock: clock, interval: .seconds(1))
        var mine = held.value
        mine.title = "typing"
        try held.append(mine)
        let other = try first ?? open()
        var status = other.value
        status.status = .review
        try other.append(status)
        let typing = Doc(title: "typing", status: .draft, items: [], blob: Data(), scores: [:], note: nil)
        var theirs = typing
        theirs.status = .review
        #expect(other.value == theirs && other.versionCount == 2)

        mine.title = "typing more"
        try held.append(mine)
        var both = theirs
        both.title = "typing more"
        #expect(held.value == both && held.versionCount == 2 && held.hasUndo)
        // Killed now, the next open records what the store holds.
        try expectStored(both, undone: [theirs, typing, .empty])
    }

    /// A controller let go of in the turn of an observed edit gives the edit to its storage to
    /// hold; when another writer wrote meanwhile, it is held on that writer's version, and the
    /// next open records both. Debouncing, the edit is made from the change held before it,
    /// which the other writer's open recorded as a version: it is carried over from there, and
    /// the other writer's change stays. Until 2026-12 it was carried over from the version
    /// before the held change, met a title that was not the one it expected, and was held
    /// whole: the other writer's status was lost from the newest version.
    @Test(arguments: [false, true])
    func anEditGivenToTheStorageAsTheControllerIsLetGoOfIsCarriedOver(debounced: Bool) async throws {
        let model = DrawingModel()
        var theirs = Doc.empty
        var undone: [Doc] = [.empty]
        do {
            let controller = try VersioningController(
                observing: model, at: \.drawing, storage: .keepsake(path: path, history: "doc"),
                maximumVersions: nil)
            if debounced {
                controller.withDebouncing(clock: ManualClock(), interval: .seconds(1))
                model.drawing.title = "typing"
                #expect(await settle { controller.hasUndo })
                #expect(controller.versionCount == 0)
                theirs.title = "typing"
                undone.insert(theirs, at: 0)
            }
            let other = try open()
            theirs.status = .review
            try other.append(theirs)
            model.drawing.title = "last words"
            _ = controller
        }
        var both = theirs
        both.title = "last words"
        try expectStored(both, undone: [theirs] + undone)
    }

    /// The other writer is another process.
    @Test func aWriterInAnotherProcessIsReadAgain() async throws {
        let history = try open()
        var mine = history.value
        mine.title = "parent"
        try history.append(mine)
        await #expect(processExitsWith: .success) { [path = path as String] in
            let history = try KeepsakeStore(path: path).history(
                "doc", initialValue: Doc.empty, maximumVersions: nil)
            var doc = history.value
            doc.scores = ["child": 1]
            try history.append(doc)
        }
        var theirs = mine
        theirs.scores = ["child": 1]
        mine.note = "after the child"
        try history.append(mine)
        var both = theirs
        both.note = "after the child"
        #expect(history.value == both)
        try expectStored(
            both,
            undone: [
                theirs, Doc(title: "parent", status: .draft, items: [], blob: Data(), scores: [:], note: nil),
                .empty,
            ])
    }

    /// A history deleted under a controller is not read again: its writes still fail with
    /// `.historyConflict`, and go nowhere (a history created under its name is another one).
    @Test func aControllerOnADeletedHistoryIsNotReadAgain() throws {
        let store = try KeepsakeStore(path: path)
        let history = try open(store)
        #expect(try store.deleteHistory("doc"))
        _ = try open(store)
        var doc = history.value
        doc.title = "nowhere"
        #expect(throws: KeepsakeError.historyConflict(history: "doc")) { try history.append(doc) }
        #expect(try open().value == .empty)
    }

    /// An edit carried over onto another writer's version whose write then fails (the disk
    /// filled meanwhile) stays pending carried over: `value`, the observed model and the
    /// version the next operation records, once there is room, hold both writers' edits —
    /// an observed model's edit, and a `@Versioned` property's. Until 2026-12 it stayed
    /// pending as the app made it and, the history read again by then, was recorded whole on
    /// the other writer's version: that writer's status was gone from the newest version.
    @Test(
        .enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"),
        arguments: [false, true])
    func anEditWhoseWriteFailedAfterItWasCarriedOverStaysPendingCarriedOver(observed: Bool) throws {
        let mount = try #require(TemporaryMount(size: "2m"))
        let path = mount.path + "/doc.keepsake"
        let storage = HistoryStorage<Doc>.keepsake(path: path, history: "doc")
        if observed {
            let model = DrawingModel()
            let controller = VersioningController(
                observing: model, at: \.drawing, storage: storage, errorMode: .assignToController,
                maximumVersions: nil)
            try fillTheDiskAndEdit(controller, on: mount, at: path) {
                model.drawing = $0
                controller.flush()
            } shows: {
                model.drawing
            }
        } else {
            let property = Versioned(wrappedValue: Doc.empty, storage: storage, maximumVersions: nil)
            try fillTheDiskAndEdit(property.projectedValue, on: mount, at: path) {
                property.wrappedValue = $0
            } shows: {
                property.wrappedValue
            }
        }
    }

    /// Another writer changes the status, the disk fills, `edit` changes the title and a blob
    /// (the write fails), room is freed, and `controller` is flushed.
    func fillTheDiskAndEdit<Root>(
        _ controller: VersioningController<Root, Doc, Never>, on mount: TemporaryMount, at path: String,
        edit: (Doc) -> Void,
        shows shown: () -> Doc
    ) throws {
        let other = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        var theirs = other.value
        theirs.status = .review
        try other.append(theirs)
        let filler = try mount.fill()

        var mine = Doc.empty
        (mine.title, mine.blob) = ("typed on a full disk", Data(repeating: 7, count: 64_000))
        edit(mine)
        guard case .sqlite(let failure) = controller.error?.keepsakeError else {
            Issue.record("not a storage error: \(String(describing: controller.error))")
            return
        }
        #expect(failure.code == .full || failure.code == .ioError, "\(failure)")
        var both = theirs
        (both.title, both.blob) = (mine.title, mine.blob)
        #expect(controller.value == both && shown() == both)
        #expect(controller.versionCount == 1 && controller.hasUndo)

        try FileManager.default.removeItem(atPath: filler)
        controller.flush()
        #expect(controller.error == nil && controller.value == both && controller.versionCount == 2)
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(history.value == both && history.versionCount == 2)
        #expect(try history.undo() == theirs)
        #expect(try history.undo() == .empty)
        try history.checkInvariants()
        #expect(try KeepsakeStore(path: path).verify().problems == [])
    }

    /// How the app passes an edit again after its write failed once carried over.
    enum Retry: CaseIterable {
        case appended, appendedAfterRefresh, heldByDebouncing, setWithoutTracking
    }

    /// In the throwing mode (a `KeepsakeHistory`), the app keeps an edit whose write failed
    /// after it was carried over onto another writer's version (the disk filled meanwhile),
    /// and passes it again once there is room: it is carried over again, onto whatever the
    /// history then holds (after a refresh, a third version). Debouncing, the change held
    /// before the edit stays held carried over: `value` shows the other writer's status, and
    /// recording it takes nothing back. Until 2026-12 the edit passed again was recorded whole
    /// on the version read by then, and the held change as made before that version: the
    /// other writers' status and item were gone from the newest version.
    @Test(
        .enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"),
        arguments: Retry.allCases)
    func anEditPassedAgainAfterItsWriteFailedOnceCarriedOverIsCarriedOver(_ retry: Retry) throws {
        let mount = try #require(TemporaryMount(size: "2m"))
        let path = mount.path + "/doc.keepsake"
        func open() throws -> KeepsakeHistory<Doc> {
            try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        }
        let other = try open()
        let history = try open()
        var mine = history.value
        var undone: [Doc] = [.empty]
        if retry == .heldByDebouncing {
            history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            mine.title = "typing"
            try history.append(mine)
            undone.insert(mine, at: 0)
        }
        // The other writer records the change held as a version before its own.
        var theirs = undone[0]
        theirs.status = .review
        try other.append(theirs)
        undone.insert(theirs, at: 0)
        let filler = try mount.fill()

        if retry == .setWithoutTracking {
            (mine.note, mine.blob) = ("from the server", Data(repeating: 7, count: 64_000))
        } else {
            (mine.title, mine.blob) = ("typed on a full disk", Data(repeating: 7, count: 64_000))
        }
        func pass() throws {
            if retry == .setWithoutTracking {
                try history.setWithoutTracking(mine)
            } else {
                try history.append(mine)
            }
        }
        let error = #expect(throws: KeepsakeError.self) { try pass() }
        guard case .sqlite(let failure)? = error else {
            Issue.record("not a storage error: \(String(describing: error))")
            return
        }
        #expect(failure.code == .full || failure.code == .ioError, "\(failure)")
        // The history was read again: its value is the other writer's version.
        #expect(history.value == theirs && history.versionCount == undone.count - 1)

        try FileManager.default.removeItem(atPath: filler)
        // What debouncing held is on the other writer's version: recording it adds nothing.
        try history.flush()
        #expect(history.value == theirs && history.versionCount == undone.count - 1)
        var expected = theirs
        if retry == .appendedAfterRefresh {
            expected.items = [Self.item]
            try other.append(expected)
            #expect(try history.refresh())
            undone.insert(expected, at: 0)
        }
        try pass()
        try history.flush()
        (expected.title, expected.note, expected.blob) = (mine.title, mine.note, mine.blob)
        if retry == .setWithoutTracking {
            // Without tracking, the versions below are the same edit on.
            undone = undone.map {
                var doc = $0
                (doc.note, doc.blob) = (mine.note, mine.blob)
                return doc
            }
            undone.removeFirst()
        }
        #expect(history.value == expected && history.versionCount == undone.count)
        try history.checkInvariants()
        let reopened = try open()
        #expect(reopened.value == expected)
        var reached: [Doc] = []
        while reopened.hasUndo { reached.append(try reopened.undo()) }
        #expect(reached == undone)
        #expect(try KeepsakeStore(path: path).verify().problems == [])
    }

    /// Debouncing an observed model, the change held is recorded with an edit made after it;
    /// the write meets another writer's version, is carried over onto it, and fails on a full
    /// disk. What debouncing holds again is the held change carried over too, so that when the
    /// other writer changes the status once more, the next recording carries the edit over
    /// onto that. Held as made (before the other writer's first version), it no longer applied
    /// there, and the edit was recorded whole: the second status was gone from the newest
    /// version.
    @Test(.enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"))
    func aHeldChangeWhoseRecordingFailedAfterItWasCarriedOverIsHeldCarriedOver() async throws {
        let mount = try #require(TemporaryMount(size: "2m"))
        let path = mount.path + "/doc.keepsake"
        let model = DrawingModel()
        let controller = VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(path: path, history: "doc"),
            errorMode: .assignToController, maximumVersions: nil)
        controller.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        model.drawing.title = "typing"
        #expect(await settle { controller.hasUndo })
        // Its open records the change held as a version.
        let other = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        let typing = other.value
        var theirs = typing
        theirs.status = .review
        try other.append(theirs)
        let filler = try mount.fill()

        (model.drawing.title, model.drawing.blob) = ("typing more", Data(repeating: 7, count: 64_000))
        controller.flush()
        guard case .sqlite(let failure) = controller.error?.keepsakeError else {
            Issue.record("not a storage error: \(String(describing: controller.error))")
            return
        }
        #expect(failure.code == .full || failure.code == .ioError, "\(failure)")
        var mine = theirs
        (mine.title, mine.blob) = ("typing more", model.drawing.blob)
        #expect(model.drawing == mine && controller.value == mine)

        try FileManager.default.removeItem(atPath: filler)
        var published = theirs
        published.status = .final
        try other.append(published)
        controller.flush()
        mine.status = .final
        #expect(controller.error == nil && model.drawing == mine && controller.value == mine)
        try controller.checkInvariants()
        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(reopened.value == mine)
        var reached: [Doc] = []
        while reopened.hasUndo { reached.append(try reopened.undo()) }
        #expect(reached == [published, theirs, typing, .empty])
    }

    // MARK: - Reading again without writing

    /// `refresh()` reads another writer's versions without writing: the value, the stacks,
    /// the observed model and the controller's observers follow; once read, there is nothing
    /// more to read, nor after a write to another history of the store.
    @Test(arguments: [false, true])
    func refreshShowsTheOtherWritersVersions(sameStore: Bool) throws {
        let model = DrawingModel()
        let store = try KeepsakeStore(path: path)
        let controller = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(store, history: "doc"), maximumVersions: nil)
        #expect(try controller.refresh() == false)
        let other = try open(sameStore ? store : KeepsakeStore(path: path))
        var theirs = other.value
        theirs.items = [Self.item]
        try other.append(theirs)
        #expect(model.drawing == .empty && controller.versionCount == 0 && !controller.hasUndo)

        // Its memory is not the stored history, and its check says why, not as damage.
        do {
            try controller.checkInvariants()
            Issue.record("a controller another writer changed the history under passed its check")
        } catch {
            #expect(
                error.keepsakeError
                    == .undecodableValue(
                        history: "doc",
                        reason: "invariant: another writer changed the history since this controller "
                            + "read it (revision 1, not 0): refresh() first"))
        }
        let undoShown = Counter()
        withObservationTracking {
            _ = controller.hasUndo
        } onChange: {
            undoShown.count += 1
        }
        #expect(try controller.refresh())
        #expect(undoShown.count == 1)
        #expect(model.drawing == theirs && controller.value == theirs && controller.versionCount == 1)
        #expect(controller.hasUndo && !controller.hasRedo)
        #expect(try controller.refresh() == false)
        _ = try (sameStore ? store : KeepsakeStore(path: path)).history("another", initialValue: Doc.empty)
            .append(theirs)
        #expect(try controller.refresh() == false)
        try controller.checkInvariants()

        try controller.undo()
        #expect(model.drawing == .empty)
        #expect(try other.refresh())
        #expect(other.value == .empty && other.hasRedo && !other.hasUndo)
        try other.checkInvariants()
        #expect(try store.verify().problems == [])
    }

    /// A viewer on a store opened read-only (a preview, an inspector beside the app) follows
    /// the writer by `refresh()`; a change the writer holds back by debouncing is the
    /// writer's until it records it (read-only, nothing records it for the writer).
    @Test func aReadOnlyViewerFollowsTheWriterByRefresh() throws {
        let writer = try open()
        var doc = writer.value
        doc.title = "one"
        try writer.append(doc)
        let viewer = try open(KeepsakeStore(path: path, options: .init(readOnly: true)))
        #expect(viewer.value == doc && viewer.versionCount == 1)
        let one = doc
        doc.title = "two"
        try writer.append(doc)
        #expect(try viewer.refresh())
        #expect(viewer.value == doc && viewer.versionCount == 2)
        #expect(try viewer.refresh() == false)

        let two = doc
        writer.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        doc.title = "held"
        try writer.append(doc)
        #expect(try viewer.refresh())
        #expect(viewer.value == two && viewer.versionCount == 2)
        try writer.flush()
        #expect(try viewer.refresh())
        #expect(viewer.value == doc && viewer.versionCount == 3)
        try viewer.checkInvariants()
        try expectStored(doc, undone: [two, one, .empty])
    }

    /// A change debouncing holds is recorded first, carried over onto the other writer's
    /// version (whose open recorded it already), then the versions are read.
    @Test func refreshRecordsAHeldChangeFirst() throws {
        let held = try open().withDebouncing(clock: ManualClock(), interval: .seconds(1))
        var mine = held.value
        mine.title = "typing"
        try held.append(mine)
        let other = try open()
        var theirs = other.value
        theirs.status = .review
        try other.append(theirs)

        #expect(try held.refresh())
        #expect(held.value == theirs && held.versionCount == 2 && !held.hasRedo)
        #expect(try held.refresh() == false)
        try expectStored(theirs, undone: [mine, .empty])
    }

    /// How the app opens a history whose last writer held a change back.
    enum Opener: CaseIterable {
        /// `store.history(_:initialValue:)`: the throwing `KeepsakeHistory`.
        case history
        /// A `@Versioned` property.
        case versionedProperty
    }

    /// The app stopped (quit without `close()`, or was killed) with a change held back by
    /// debouncing, and another writer keeps the store locked past the busy timeout as the app
    /// opens it again: the history opens, its value the held change, pending as an edit whose
    /// write failed (`error` says why), and the first operation after the lock is released
    /// records it, then does its own. Until 2026-12 the open failed with `.busy` — only for a
    /// history with a held change, since no other open writes: the throwing history did not
    /// open, and a `@Versioned` property started in memory at its first value.
    @Test(arguments: Opener.allCases)
    func aChangeHeldWhenTheAppStoppedIsPendingWhileAnotherWriterKeepsTheStoreLocked(opener: Opener) throws {
        var (first, held) = (Doc.empty, Doc.empty)
        first.title = "first"
        held.title = "first, then held"
        do {
            let history = try open()
            try history.append(first)
            history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            try history.append(held)
        }
        let blocker = try SQLiteConnection(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        let options = KeepsakeStore.Options(busyTimeout: .milliseconds(50))
        func isBusy(_ error: ReversionError?) -> Bool {
            guard case .sqlite(let failure) = error?.keepsakeError else { return false }
            return failure.code == .busy
        }
        switch opener {
        case .history:
            let history = try open(KeepsakeStore(path: path, options: options))
            #expect(history.value == held && history.versionCount == 1 && isBusy(history.error))
            #expect(
                history.error?.keepsakeError?.description
                    == "SQLite error 5: database is locked: another connection kept \(path) locked for longer than "
                    + "the busy timeout; nothing was written: the change held back by debouncing when the history "
                    + "was last left stays held, as the value shows it, and the next operation records it — "
                    + "while executing `BEGIN IMMEDIATE`")
            #expect(throws: KeepsakeError.self) { try history.undo() }
            #expect(history.value == held && history.hasUndo)
            try blocker.execute("ROLLBACK")
            #expect(try history.undo() == first)
            #expect(history.error == nil && history.versionCount == 2 && history.hasRedo)
            try history.checkInvariants()
            let reopened = try open()
            #expect(reopened.value == first && reopened.versionCount == 2)
            #expect(try reopened.redo() == held)
            try reopened.checkInvariants()
        case .versionedProperty:
            struct Editor {
                @Versioned var note: Doc

                init(path: String, options: KeepsakeStore.Options) {
                    _note = Versioned(
                        wrappedValue: Doc.empty,
                        storage: .keepsake(path: path, history: "doc", options: options),
                        maximumVersions: nil)
                }
            }
            let editor = Editor(path: path, options: options)
            #expect(editor.$note.openingError == nil && editor.note == held && isBusy(editor.$note.error))
            try blocker.execute("ROLLBACK")
            editor.$note.undo()
            #expect(editor.note == first && editor.$note.error == nil && editor.$note.versionCount == 2)
            try editor.$note.checkInvariants()
        }
    }

    /// An app updated (its model changed) and given a new limit opens, while another writer
    /// keeps the store locked, a history the old app left with a held change: what the open
    /// writes for later's sake — the value in the new model, the new limit, the held change
    /// as a version — is left (the first write waits out the busy timeout; the others are not
    /// tried, which would wait it out again each), the history opens as stored, and the first
    /// open after the lock is released writes them. Before, the open failed with `.busy`.
    @Test func anUpdatedModelOpensWhileAnotherWriterKeepsTheStoreLocked() throws {
        struct Note: Versionable, Equatable, Codable {
            var tags: [String] = []
        }
        struct PinnedNote: Versionable, Equatable, Codable {
            var tags: [String] = []
            var pinned = false
        }
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Note())
            for tag in ["a", "b", "c"] { try history.append(Note(tags: history.value.tags + [tag])) }
            history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            try history.append(Note(tags: ["a", "b", "c", "held"]))
        }
        let blocker = try SQLiteConnection(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        let store = try KeepsakeStore(path: path, options: .init(busyTimeout: .seconds(2)))
        let clock = ContinuousClock()
        let start = clock.now
        let history = try store.history("doc", initialValue: PinnedNote(), maximumVersions: 2)
        // One wait of 2 s, not three (a bound, not a benchmark: 6 s is three waits).
        #expect(clock.now - start < .seconds(5))
        #expect(history.value == PinnedNote(tags: ["a", "b", "c", "held"]) && history.versionCount == 3)
        #expect(history.maximumVersions == 1_000 && history.error != nil)
        try blocker.execute("ROLLBACK")
        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: PinnedNote(), maximumVersions: 2)
        #expect(reopened.value == PinnedNote(tags: ["a", "b", "c", "held"]))
        #expect(reopened.maximumVersions == 2 && reopened.versionCount == 2)
        #expect(try reopened.undo() == PinnedNote(tags: ["a", "b", "c"]))
        try reopened.checkInvariants()
        #expect(try store.verify().problems == [])
    }

    /// A deleted history cannot be read again: `refresh()` says so with the conflict its
    /// writes get. In memory, there is nothing to read.
    @Test func refreshOfADeletedHistoryThrowsTheConflict() throws {
        let store = try KeepsakeStore(path: path)
        let history = try open(store)
        #expect(try store.deleteHistory("doc"))
        #expect(throws: KeepsakeError.historyConflict(history: "doc")) { try history.refresh() }
        _ = try open(store)
        #expect(throws: KeepsakeError.historyConflict(history: "doc")) { try history.refresh() }
        #expect(history.value == .empty)
        #expect(try VersioningController(Doc.empty).refresh() == false)
    }

    // MARK: - Against a model

    /// Four numbers, each a leaf of its own.
    struct Counters: Versionable, Equatable, Codable, Sendable {
        var a = 0
        var b = 0
        var c = 0
        var d = 0
        static var fields: [WritableKeyPath<Counters, Int>] { [\.a, \.b, \.c, \.d] }
    }

    /// `mine`, an edit of `base`, carried over onto `target` as a controller carries it: made
    /// on `target` where it holds every changed number as `base` does; `target` itself where
    /// it holds them as edited; else whole.
    static func carried(_ mine: Counters, from base: Counters, onto target: Counters) -> Counters {
        let changed = Counters.fields.filter { mine[keyPath: $0] != base[keyPath: $0] }
        if changed.allSatisfy({ target[keyPath: $0] == base[keyPath: $0] }) {
            var made = target
            for field in changed { made[keyPath: field] = mine[keyPath: field] }
            return made
        }
        return changed.allSatisfy({ target[keyPath: $0] == mine[keyPath: $0] }) ? target : mine
    }

    /// Three controllers on one history — on one store, or each on a store of its own (as
    /// processes are) — edit one or two numbers (to 0, 1 or 2: often one another writer just
    /// changed, to the same number or another), undo, redo and reopen at random, against one
    /// full-copy history that all of them share and what each last read of it. A quarter of
    /// the writes fail, refused by triggers another connection adds (as a full disk fails a
    /// write once it has begun, after it found another writer's version): an edit whose write
    /// failed after that version was read is carried over onto it, and carried over again
    /// when the app appends it again — next, after other writers' versions, a refresh, an
    /// undo, or never.
    @Test(arguments: [false, true], Soak.batches(usually: 2))
    func randomWritersMatchOneSharedFullCopyHistory(sharedStore: Bool, batch: UInt64) throws {
        var generator = SeededGenerator(seed: 0x07E4_0000 + batch + (sharedStore ? 0x100 : 0))
        let path = directory.path("writers-\(sharedStore)-\(batch).keepsake")
        let store = try KeepsakeStore(path: path)
        func open() throws -> KeepsakeHistory<Counters> {
            try (sharedStore ? store : KeepsakeStore(path: path)).history(
                "counters", initialValue: Counters(), maximumVersions: nil)
        }
        let refuser = try SQLiteConnection(path: path)
        defer { refuser.close() }

        // The shared history, and what each controller last read or wrote of it.
        var undone: [Counters] = []
        var current = Counters()
        var redone: [Counters] = []
        var revision = 0
        struct Read {
            var value: Counters
            var undo: Int
            var redo: Int
            var revision: Int
        }
        func read() -> Read {
            Read(value: current, undo: undone.count, redo: redone.count, revision: revision)
        }
        var controllers = try (0..<3).map { _ in try open() }
        var reads = Array(repeating: read(), count: 3)
        // Each controller's edit whose write failed after it was carried over: as appended,
        // as carried over, and the version it was carried onto.
        var failed: [(made: Counters, carried: Counters, onto: Counters)?] = Array(repeating: nil, count: 3)
        // Each controller's app's edit whose write failed, which it may append again later.
        var kept: [Counters?] = Array(repeating: nil, count: 3)

        /// Runs `write`, refused by the other connection's triggers or not: when refused,
        /// expects their error.
        func write(refused: Bool, context: String, _ write: () throws -> Void) throws {
            guard refused else { return try write() }
            try refuser.execute(
                """
                CREATE TRIGGER refuse_insert BEFORE INSERT ON version BEGIN SELECT RAISE(ABORT, 'refused'); END;
                CREATE TRIGGER refuse_update BEFORE UPDATE ON version BEGIN SELECT RAISE(ABORT, 'refused'); END;
                """)
            defer { try? refuser.execute("DROP TRIGGER refuse_insert; DROP TRIGGER refuse_update") }
            let error = #expect(throws: KeepsakeError.self, "\(context)") { try write() }
            guard case .sqlite(let sqlite)? = error, sqlite.message.contains("refused") else {
                Issue.record("\(context): not the refusal: \(String(describing: error))")
                return
            }
        }

        for step in 0..<300 {
            let index = Int.random(in: 0..<3, using: &generator)
            let context = "sharedStore \(sharedStore) batch \(batch) step \(step) controller \(index)"
            let controller = controllers[index]
            let blocked = Int.random(in: 0..<4, using: &generator) == 0
            let conflict = reads[index].revision != revision
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                // An edit of what it read, or one whose write failed, appended again.
                var mine = reads[index].value
                // A store that refused a write often refuses it again.
                var blocked = blocked
                if let edit = kept[index], Int.random(in: 0..<4, using: &generator) > 0 {
                    mine = edit
                    blocked = Bool.random(using: &generator)
                } else {
                    for _ in 0..<Int.random(in: 1...2, using: &generator) {
                        mine[keyPath: Counters.fields.randomElement(using: &generator)!] = Int.random(
                            in: 0...2, using: &generator)
                    }
                }
                // The model: appended again after a failed write that carried it over, carried
                // over again from there onto what the controller read.
                var edit = mine
                let failure = failed[index]
                failed[index] = nil
                if let failure, failure.made == mine {
                    edit = Self.carried(failure.carried, from: failure.onto, onto: reads[index].value)
                }
                // Nothing changed, nothing written; no other writer since, the version as it
                // is; else carried over onto the shared version.
                let made = conflict ? Self.carried(edit, from: reads[index].value, onto: current) : edit
                let writes = edit != reads[index].value
                // Refused, unless carried over onto another writer's version it adds nothing.
                let refused = blocked && writes && !(conflict && made == current)
                kept[index] = refused ? mine : nil
                try write(refused: refused, context: context) { try controller.append(mine) }
                guard writes else { break }
                if refused {
                    if conflict {
                        failed[index] = (mine, made, current)
                        reads[index] = read()
                    } else if let failure, failure.made == mine {
                        failed[index] = (mine, edit, reads[index].value)
                    }
                    break
                }
                if made != current {
                    undone.append(current)
                    (current, redone) = (made, [])
                    revision += 1
                }
                reads[index] = read()
            case 6, 7:
                let undoing = Bool.random(using: &generator)
                // A controller with nothing to move by its last read writes nothing; one that
                // reads another writer's stack with nothing to move may not either.
                let moves = (undoing ? reads[index].undo : reads[index].redo) > 0
                let sharedMoves = undoing ? !undone.isEmpty : !redone.isEmpty
                let blocked = blocked && moves && sharedMoves
                try write(refused: blocked, context: context) {
                    if undoing { try controller.undo() } else { try controller.redo() }
                }
                guard moves else { break }
                // A write that fails, or meets another writer's, forgets an edit that failed
                // before it.
                if blocked || conflict { failed[index] = nil }
                if blocked {
                    if conflict { reads[index] = read() }
                    break
                }
                if undoing, let last = undone.popLast() {
                    redone.append(current)
                    current = last
                    revision += 1
                } else if !undoing, let next = redone.popLast() {
                    undone.append(current)
                    current = next
                    revision += 1
                }
                reads[index] = read()
            case 8:
                if Bool.random(using: &generator) {
                    controllers[index] = try open()
                    failed[index] = nil
                } else {
                    // Read only when another writer wrote since this controller's last read.
                    try #require(
                        try controller.refresh() == (reads[index].revision != revision), "\(context)")
                }
                reads[index] = read()
            default:
                // A fresh read only: one that another writer changed since is not the stored one.
                try open().checkInvariants()
            }
            for (controller, read) in zip(controllers, reads) {
                try #require(controller.value == read.value, "\(context): value")
                try #require(controller.storage.undoCount == read.undo, "\(context): undo count")
                try #require(controller.storage.redoCount == read.redo, "\(context): redo count")
            }
        }
        let reopened = try open()
        #expect(reopened.value == current && reopened.storage.undoCount == undone.count)
        #expect(reopened.storage.redoCount == redone.count)
        try reopened.checkInvariants()
        var reached: [Counters] = []
        while reopened.hasUndo { reached.append(try reopened.undo()) }
        #expect(reached == undone.reversed())
        #expect(try store.verify().problems == [])
    }
}
