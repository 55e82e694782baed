import Foundation
import KeepsakeTestSupport
import Observation
import TestSupport
import Testing

@testable import Keepsake

@Observable final class DrawingModel {
    var drawing = Doc.empty
}

/// A model whose undoable property is a durable `@Versioned`: the controller is observable, so
/// the property needs no observation of its own.
@Observable final class EditorModel {
    @ObservationIgnored @Versioned var note: Doc

    init(path: String) {
        _note = Versioned(wrappedValue: Doc.empty, storage: .keepsake(path: path, history: "note"))
    }
}

/// Counts observation callbacks (which are `@Sendable`); touched only on the test's actor.
final class Counter: @unchecked Sendable {
    var count = 0
}

/// Everything the in-memory controller does, done durably through the same controller.
@MainActor @Suite struct DurableControllerTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("app.keepsake") }

    @Test func anObservedModelIsRecordedDurablyWithoutAppendCalls() async throws {
        let model = DrawingModel()
        let store = try KeepsakeStore(path: path)
        let undo = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(store, history: "drawing-1"))
        model.drawing.title = "Sketch"
        #expect(await settle { undo.versionCount == 1 })
        model.drawing.items.append(.init(id: 1, title: "Stroke", done: false))
        #expect(await settle { undo.versionCount == 2 })

        // A new model and controller in a "later process" find the drawing where it was left.
        let reopenedModel = DrawingModel()
        let reopened = try VersioningController(
            observing: reopenedModel, at: \.drawing,
            storage: .keepsake(try KeepsakeStore(path: path), history: "drawing-1"))
        #expect(reopenedModel.drawing.items.map(\.title) == ["Stroke"])
        try reopened.undo()
        #expect(reopenedModel.drawing.items.isEmpty && reopenedModel.drawing.title == "Sketch")
        try reopened.undo()
        #expect(reopenedModel.drawing == .empty)
        // The controller's own writes to the model are not recorded again.
        for _ in 0..<100 { await Task.yield() }
        #expect(reopened.versionCount == 2 && reopened.hasRedo && !reopened.hasUndo)
        try reopened.checkInvariants()
    }

    /// What the app of the exit test does: track a model durably, edit it twice, quit.
    static func editDrawingAndQuit(path: String) async throws {
        let model = DrawingModel()
        let undo = try VersioningController(
            observing: model, at: \.drawing,
            storage: .keepsake(try KeepsakeStore(path: path), history: "drawing"))
        model.drawing.title = "First"
        guard await settle(until: { undo.versionCount == 1 }) else { exit(2) }
        model.drawing.title = "Second"
        guard await settle(until: { undo.versionCount == 2 }) else { exit(3) }
    }

    @Test func anotherProcessUndoesWhatAnObservedModelRecorded() async throws {
        await #expect(processExitsWith: .success) { [path = path as String] in
            try await DurableControllerTests.editDrawingAndQuit(path: path)
        }
        let model = DrawingModel()
        let undo = try VersioningController(
            observing: model, at: \.drawing,
            storage: .keepsake(try KeepsakeStore(path: path), history: "drawing"))
        #expect(model.drawing.title == "Second")
        try undo.undo()
        #expect(model.drawing.title == "First")
        #expect(undo.value.title == "First" && undo.hasRedo)
        try undo.checkInvariants()
    }

    @Test func aDurableVersionedPropertyInsideAnObservableClass() async throws {
        let editor = EditorModel(path: path)
        #expect(editor.$note.error == nil && editor.$note.openingError == nil)
        let notified = Counter()
        withObservationTracking {
            _ = editor.note
        } onChange: {
            notified.count += 1
        }
        editor.note.title = "Draft"
        #expect(notified.count == 1)
        editor.note.status = .review
        #expect(editor.$note.versionCount == 2)

        let later = EditorModel(path: path)
        #expect(later.note.title == "Draft" && later.note.status == .review)
        later.$note.undo()
        #expect(later.note.status == .draft)
        #expect(later.$note.error == nil)
    }

    @Test func aStoreThatCannotOpenReachesTheErrorModeAndTheValueStaysInMemory() throws {
        let missing = directory.path("no-such-folder/app.keepsake")
        let editor = EditorModel(path: missing)
        guard case .cannotOpen(let path, _) = editor.$note.error?.keepsakeError else {
            Issue.record("expected cannotOpen, got \(String(describing: editor.$note.error))")
            return
        }
        #expect(path == missing)
        editor.note.title = "Still undoable"
        editor.$note.undo()
        #expect(editor.note.title == "")
        #expect(editor.$note.error == nil)
        // The edits stay in memory: that is still said, after the operations cleared `error`.
        guard case .cannotOpen(missing, _) = editor.$note.openingError?.keepsakeError else {
            Issue.record("expected cannotOpen, got \(String(describing: editor.$note.openingError))")
            return
        }

        #expect {
            _ = try VersioningController(Doc.empty, storage: .keepsake(path: missing, history: "x"))
        } throws: { error in
            if case .cannotOpen = (error as? ReversionError)?.keepsakeError { return true }
            return false
        }
    }

    struct CountEditor {
        @Versioned var count: String

        init(path: String) {
            _count = Versioned(wrappedValue: "", storage: .keepsake(path: path, history: "count"))
        }
    }

    /// After an update whose model no longer reads the store (its counts were numbers), the
    /// property starts in memory from its initial value: `openingError` says so for as long as
    /// that lasts, where `error` went at the first edit (an app showing `error` stopped saying
    /// the edits would be gone at the next launch), and the store is left as it was.
    @Test func aVersionedPropertyWhoseStoreItCannotReadSaysSoForAsLongAsItsEditsStayInMemory() throws {
        let written = try KeepsakeStore(path: path).history("count", initialValue: 1)
        try written.append(2)
        try written.close()

        let editor = CountEditor(path: path)
        let expected = #"The stored value of history "count" does not decode: "#
        #expect(editor.$count.error?.localizedDescription.hasPrefix(expected) == true)
        editor.count = "three"
        #expect(editor.$count.error == nil && editor.$count.versionCount == 1)
        #expect(editor.$count.openingError?.localizedDescription.hasPrefix(expected) == true)
        guard case .undecodableValue("count", _) = editor.$count.openingError?.keepsakeError else {
            Issue.record("expected undecodableValue, got \(String(describing: editor.$count.openingError))")
            return
        }
        editor.$count.close()
        let reopened = try KeepsakeStore(path: path).history("count", initialValue: 0)
        #expect(reopened.value == 2 && reopened.versionCount == 1)
        try reopened.checkInvariants()
    }

    @Test func storageErrorsFollowTheErrorMode() throws {
        let store = try KeepsakeStore(path: path)
        final class ViewModel {
            var document = Doc.empty
            var versioningError: ReversionError?
        }
        let viewModel = ViewModel()
        let assigning = VersioningController(
            on: viewModel, at: \.document, storage: .keepsake(store, history: "doc"),
            errorMode: .assign(to: \.versioningError))
        // The history is deleted under the controller: its next write is a conflict, reported
        // to the root's property; nothing is stored, and the value stays pending (no caller
        // received it back), as a held change does.
        #expect(try store.deleteHistory("doc"))
        viewModel.document.title = "mine"
        assigning.appendCurrentVersion()
        #expect(viewModel.versioningError?.keepsakeError == .historyConflict(history: "doc"))
        #expect(assigning.error?.keepsakeError == .historyConflict(history: "doc"))
        #expect(assigning.versionCount == 0 && assigning.value.title == "mine" && assigning.hasUndo)
        #expect(try store.historyNames() == [])

        // A full disk, in the throwing mode: typed, and nothing moves.
        let throwing = try VersioningController(Doc.empty, storage: .keepsake(store, history: "big"))
        let pages = try store.database.read { try $0.scalarInt("PRAGMA page_count") }!
        try store.database.read { try $0.execute("PRAGMA max_page_count = \(pages)") }
        var big = throwing.value
        big.blob = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        #expect {
            try throwing.append(big)
        } throws: { error in
            guard case .sqlite(let sqlite) = (error as? ReversionError)?.keepsakeError else { return false }
            return sqlite.code == .full
        }
        #expect(throwing.value == .empty && !throwing.hasUndo)
        try store.database.read { try $0.execute("PRAGMA max_page_count = 1073741823") }
        try throwing.append(big)
        #expect(throwing.versionCount == 1)
        try throwing.checkInvariants()
    }

    @Test func tagsOfAnyCodableTypeAreStoredAsJSONAndFoundAfterReopening() throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        try history.tag(Milestone.shipped)
        var doc = history.value
        doc.title = "Round one"
        try history.append(doc, tag: Milestone.review(round: 1))
        doc.title = "Round two"
        try history.append(doc, tag: 2)
        let stored = try store.database.read {
            try $0.query("SELECT tag FROM version ORDER BY position") { $0.text(0) ?? "" }
        }
        #expect(stored == [#"{"review":{"round":1}}"#, "2"])

        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(
            try reopened.tags().undo == [
                try VersionTag(Milestone.shipped), try VersionTag(Milestone.review(round: 1)), 2,
            ])
        #expect(try reopened.undo(to: Milestone.review(round: 1)).title == "Round one")
        #expect(try reopened.undo(to: Milestone.shipped) == .empty)
        #expect(try reopened.tags().redo.first??.value(as: Milestone.self) == .review(round: 1))
    }

    @Test func aThrowingTransactionWritesNothing() throws {
        struct Boom: Error {}
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        try history.append(
            Doc(title: "kept", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        // The newest version carries the history's counters.
        let revision = {
            try store.database.read {
                try $0.scalarInt("SELECT revision FROM version ORDER BY position DESC LIMIT 1")
            }
        }
        let before = try revision()
        #expect(before == 1)
        #expect(throws: Boom.self) {
            try history.setWithTransaction { doc in
                doc.title = "half-done"
                throw Boom()
            }
        }
        #expect(try revision() == before)
        #expect(history.value.title == "kept")
        #expect(try store.history("doc", initialValue: Doc.empty).value.title == "kept")
    }

    @Test func stackStateIsObservableOnADurableHistory() throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        let changes = Counter()
        func track() {
            withObservationTracking {
                _ = (history.hasUndo, history.hasRedo, history.scopeLevel)
            } onChange: {
                changes.count += 1
            }
        }
        track()
        try history.append(Doc(title: "a", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        #expect(changes.count == 1)
        track()
        try history.undo()
        #expect(changes.count == 2)
        track()
        try history.pushNewScope()
        #expect(changes.count == 3)
    }

    /// A change made without tracking inside a scope stays what it is when the scope ends,
    /// squashed or discarded, in memory as durably: it is not squashed into the scope's step
    /// (in memory, it was, and the next untracked change made that step refuse to undo), nor
    /// taken back with the scope's changes (in memory, it was).
    @Test(arguments: [false, true])
    func aChangeWithoutTrackingInsideAScopeOutlivesTheScope(discarding: Bool) throws {
        /// The value once the scope ended, and once a second untracked change was made and
        /// the scope's step (if it left one) undone.
        func script<Failure>(_ controller: VersioningController<Doc, Doc, Failure>) throws -> [Doc] {
            var doc = controller.value
            try controller.pushNewScope()
            doc.title = "in the scope"
            try controller.append(doc)
            doc.note = "from the server"
            try controller.setWithoutTracking(doc)
            if discarding {
                _ = try controller.undoAndPopCurrentScope()
            } else {
                try controller.popCurrentScope()
            }
            let ended = controller.value
            doc = ended
            doc.note = "again"
            try controller.setWithoutTracking(doc)
            if controller.hasUndo { _ = try controller.undo() }
            return [ended, controller.value]
        }
        func doc(title: String, note: String) -> Doc {
            Doc(title: title, status: .draft, items: [], blob: Data(), scores: [:], note: note)
        }
        let expected = [
            doc(title: discarding ? "" : "in the scope", note: "from the server"),
            doc(title: "", note: "again"),
        ]
        #expect(try script(VersioningController(Doc.empty, maximumVersions: nil)) == expected)
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(try script(history) == expected)
        try history.checkInvariants()
    }

    /// A change made without tracking that changes what a step changes is refused, in memory
    /// as durably, and nothing changes: that step would never apply again. Before, memory took
    /// it and refused the undo for good afterwards, and a durable history took it when the
    /// step's path was back at the base value's (edited and edited back) and stored versions
    /// that did not apply. A step dropped by the limit is no reason to refuse, durably either,
    /// where its version is folded but still stored.
    @Test(arguments: [
        ("an undo step's path", ["A"], 0, false, #"expected "A", found "Z""#, 1),
        ("a path edited and edited back", ["A", ""], 0, false, #"expected "", found "Z""#, 2),
        ("a redo step's path", ["A"], 1, false, #"expected "", found "Z""#, 1),
        ("an outer scope's redo step's path", ["A"], 1, true, #"expected "", found "Z""#, 1),
        ("a step dropped by the limit", ["A", "", "", ""], 0, false, "", 0),
    ])
    func aChangeWithoutTrackingOfWhatAStepChangesIsRefused(
        _ what: String, titles: [String], undos: Int, scoped: Bool, refusal: String, version: Int
    ) throws {
        /// Makes the titles versions (an empty one edits the note instead), undoes, pushes a
        /// scope with a version of its own, and sets the title to "Z" without tracking; then
        /// the error, the value, and every value undo and redo reach from it.
        func script<Failure>(_ controller: VersioningController<Doc, Doc, Failure>) throws -> (
            (any Error)?, [Doc]
        ) {
            var doc = controller.value
            for (index, title) in titles.enumerated() {
                if title.isEmpty && index > 1 { doc.note = "note \(index)" } else { doc.title = title }
                try controller.append(doc)
            }
            for _ in 0..<undos { _ = try controller.undo() }
            if scoped {
                try controller.pushNewScope()
                doc = controller.value
                doc.note = "in the scope"
                try controller.append(doc)
            }
            doc = controller.value
            doc.title = "Z"
            var refused: (any Error)?
            do { try controller.setWithoutTracking(doc) } catch { refused = error }
            try controller.checkInvariants()
            var reached = [controller.value]
            while controller.hasUndo { reached.append(try controller.undo()) }
            while controller.hasRedo { reached.append(try controller.redo()) }
            return (refused, reached)
        }
        let limit = titles.count > 2 ? 2 : nil
        let (inMemory, reachedInMemory) = try script(VersioningController(Doc.empty, maximumVersions: limit))
        let store = try KeepsakeStore(path: path)
        let (durably, reachedDurably) = try script(
            try store.history("doc", initialValue: Doc.empty, maximumVersions: limit))
        #expect(reachedDurably == reachedInMemory, "\(what)")
        if refusal.isEmpty {
            #expect(inMemory == nil && durably == nil, "\(what)")
            #expect(reachedInMemory.allSatisfy { $0.title == "Z" }, "\(what)")
        } else {
            let expected = ReversionError.wrongVersion(path: [.property("title")], reason: refusal)
            #expect(inMemory as? ReversionError == expected, "\(what)")
            guard case .reversion("doc", version, expected)? = durably as? KeepsakeError else {
                Issue.record("\(what): \(String(describing: durably))")
                return
            }
            #expect(!reachedInMemory.contains { $0.title == "Z" }, "\(what)")
        }
        let reopened = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: limit)
        try reopened.checkInvariants()
    }

    @Test func setWithoutTrackingSurvivesAReopenAndUndoStillWorks() throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "tracked"
        try history.append(doc)
        doc.note = "from the server"
        try history.setWithoutTracking(doc)
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(reopened.value == doc)
        #expect(
            try reopened.undo()
                == Doc(
                    title: "", status: .draft, items: [], blob: Data(), scores: [:], note: "from the server"))
        try reopened.checkInvariants()
    }
}

/// A server's document: an actor of its own owns the model and the controller observing it,
/// as the README says a server does. Observation delivers on this actor, not the main one.
actor DocumentServer {
    let model = DrawingModel()
    var undo: VersioningController<DrawingModel, Doc, ReversionError>?

    func open(path: String, debounced: Bool) throws {
        let undo = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(try KeepsakeStore(path: path), history: "doc")
        )
        if debounced { undo.withDebouncing(clock: ManualClock(), interval: .seconds(1)) }
        self.undo = undo
    }

    func edit(_ title: String) { model.drawing.title = title }

    /// An edit and an undo in one turn of the actor: the undo undoes that edit.
    func editAndUndo(_ title: String) throws -> String {
        model.drawing.title = title
        try undo?.undo()
        return model.drawing.title
    }

    var state: (count: Int, title: String, hasRedo: Bool) {
        (undo?.versionCount ?? -1, undo?.value.title ?? "", undo?.hasRedo ?? false)
    }

    func close() throws {
        try undo?.close()
        undo = nil
    }
}

@Suite struct ServerActorTests {
    let directory = TemporaryDirectory()

    /// Waits, with the actor's turns in between, until `condition` holds of its state.
    func settle(
        _ server: DocumentServer, until condition: ((count: Int, title: String, hasRedo: Bool)) -> Bool
    ) async -> Bool {
        for _ in 0..<100_000 {
            if condition(await server.state) { return true }
            await Task.yield()
        }
        return false
    }

    @Test(arguments: [false, true])
    func aControllerOnAnActorOfItsOwnRecordsObservedEditsDurably(debounced: Bool) async throws {
        let path = directory.path("server.keepsake")
        let server = DocumentServer()
        try await server.open(path: path, debounced: debounced)
        await server.edit("First")
        // Delivered on the server's actor: a version, or (debounced) a held change.
        #expect(await settle(server) { $0.title == "First" })
        // Debounced, "First" was held, so the undo undoes the one version both edits made.
        let undone = debounced ? "" : "First"
        #expect(try await server.editAndUndo("Second") == undone)
        #expect(await settle(server) { $0 == (debounced ? 1 : 2, undone, true) })
        await server.edit("Third")
        try await server.close()
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(reopened.value.title == "Third" && !reopened.hasRedo)
        #expect(reopened.versionCount == (debounced ? 1 : 2))
        if !debounced { #expect(try reopened.undo().title == "First") }
        #expect(try reopened.undo() == .empty)
        try reopened.checkInvariants()
    }
}
