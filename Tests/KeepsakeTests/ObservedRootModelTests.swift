import Foundation
import KeepsakeTestSupport
import Observation
import TestSupport
import Testing

@testable import Keepsake

/// An `@Observable` model that may own the controller observing it, as a document's model
/// owns its undo.
@Observable final class OwningModel {
    var drawing = Doc.empty
    @ObservationIgnored var undo: AnyObject?
}

/// A controller observing a root, on both storages, against the simplest possible history:
/// the app edits the model in place, operations come in the middle of a turn or between
/// turns, and the app lets go of its controller (and of the model that owns it) with an edit
/// not yet delivered.
@MainActor @Suite struct ObservedRootModelTests {
    let directory = TemporaryDirectory()

    /// A storage, and whether the controller debounces on a clock that never moves (so a
    /// turn's edits are held until an operation records them).
    struct Setup: CustomTestStringConvertible, Sendable {
        let kind: StorageKind
        let debounced: Bool

        var testDescription: String { "\(kind)\(debounced ? ", debounced" : "")" }

        static let all = StorageKind.allCases.flatMap { kind in
            [false, true].map { Setup(kind: kind, debounced: $0) }
        }
    }

    /// What the model says, after each step: the edits of one turn are one version, recorded
    /// when the turn ends or when an operation comes first; an operation acts on that version;
    /// a controller let go of with an edit pending gives it to the store, which records it
    /// when the history is opened again. Nothing the app typed is lost, in any order.
    /// Debounced, a turn's edits are held instead, until an operation records them: the value
    /// and `hasUndo` count them, the versions do not.
    @Test(arguments: Setup.all, Soak.batches(usually: 2))
    func randomEditsAndOperationsMatchTheFullCopyModel(setup: Setup, batch: UInt64) async throws {
        let kind = setup.kind
        var generator = SeededGenerator(seed: 0x0B5E_0000 + batch)
        let path = directory.path("observed-\(batch).keepsake")
        var root = OwningModel()
        // A write that finds the store busy fails at once, so that a step can make one fail.
        let busyFast = KeepsakeStore.Options(busyTimeout: .milliseconds(10))
        func open() throws -> VersioningController<OwningModel, Doc, ReversionError> {
            let controller = try VersioningController(
                observing: root, at: \.drawing,
                storage: kind == .durable
                    ? .keepsake(try KeepsakeStore(path: path, options: busyFast), history: "observed")
                    : .inMemory)
            guard setup.debounced else { return controller }
            return controller.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        }
        var controller: VersioningController<OwningModel, Doc, ReversionError>? = try open()
        var model = FullCopyHistory(Doc.empty, same: ==)
        /// Whether the app edited the root since its last version was recorded (or held).
        var edited = false
        /// What a debounced controller holds: the root's value at the end of a turn.
        var held: Doc?
        /// Whether the recording of the app's edits failed and no edit came since: the turn's
        /// end then records nothing (nothing is delivered), the next operation records them.
        var failed = false
        func recordEdits() {
            if edited || held != nil { model.append(root.drawing, tag: nil) }
            (edited, held, failed) = (false, nil, false)
        }
        func endTurn() {
            guard setup.debounced else { return recordEdits() }
            // Delivered only when it differs from what is held (or current); typed back to the
            // current version, it is held all the same, as the debounce model holds it.
            if edited, root.drawing != held ?? model.current { held = root.drawing }
            edited = false
        }
        func expectSame(_ context: String) throws {
            let controller = try #require(controller, "\(context): a controller")
            try #require(root.drawing == held ?? model.current, "\(context): the model's value")
            try #require(controller.value == held ?? model.current, "\(context): value")
            try #require(controller.versionCount == model.versionCount, "\(context): versionCount")
            try #require(controller.hasUndo == (model.hasUndo || held != nil), "\(context): hasUndo")
            try #require(controller.hasRedo == (model.hasRedo && held == nil), "\(context): hasRedo")
            try #require(controller.scopeLevel == model.level, "\(context): scope level")
        }
        for step in 0..<400 {
            let operation = Int.random(in: 0..<22, using: &generator)
            let context = "\(setup.testDescription) batch \(batch) step \(step) operation \(operation)"
            switch operation {
            case 0...7:
                // An edit, in place; the turn goes on.
                DocEdits.edit(&root.drawing, using: &generator)
                (edited, failed) = (true, false)
                continue
            case 8...10:
                // The turn ends: its edits become one version, or are held. After a failed
                // recording, with no edit since, nothing is delivered: they stay pending.
                guard !failed else { continue }
                endTurn()
                let expected = (model.versionCount, held ?? model.current)
                // A value kept from a failed recording reads as `value` before the delivery
                // records it, and may equal what is expected: the delivery has come when it is
                // no longer kept.
                let recorded = await settle {
                    (controller?.versionCount, controller?.value) == expected
                        && controller?.hasUnrecorded == false
                }
                try #require(recorded, "\(context): the turn's edits recorded")
            case 11:
                let controller = try #require(controller)
                recordEdits()
                #expect(try controller.undo() == root.drawing)
                model.undo()
            case 12:
                recordEdits()
                try controller?.redo()
                model.redo()
            case 13:
                recordEdits()
                try controller?.tag("t\(step % 3)")
                model.tag(try VersionTag("t\(step % 3)").json)
            case 14:
                recordEdits()
                try controller?.undo(to: "t\(step % 3)")
                model.undo(to: try VersionTag("t\(step % 3)").json)
            case 15:
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    recordEdits()
                    try controller?.pushNewScope()
                    model.push()
                case 1:
                    guard model.level > 0 else { continue }
                    recordEdits()
                    try controller?.popCurrentScope()
                    model.pop()
                default:
                    guard model.level > 0 else { continue }
                    recordEdits()
                    try controller?.undoAndPopCurrentScope()
                    model.undoAndPop()
                }
            case 16:
                recordEdits()
                var edits = generator
                let value = try #require(controller).setWithTransaction { doc in
                    for _ in 0..<2 { DocEdits.edit(&doc, using: &edits) }
                }
                generator = edits
                model.append(value, tag: nil)
            case 17:
                recordEdits()
                try controller?.flush()
            case 18:
                // The app lets go of its controller in the turn of an edit, then opens the
                // history again (a document closed and reopened without close()), sometimes
                // on a model of its own, which opening sets to the stored value; sometimes it
                // closes the store first, in that turn, which refuses the edit.
                guard kind == .durable else { continue }
                recordEdits()
                if Bool.random(using: &generator) {
                    try #require(controller?.storage as? KeepsakeHistoryStorage<Doc>).store.close()
                }
                controller = nil
                if Bool.random(using: &generator) { root = OwningModel() }
                controller = try open()
            case 19:
                // The turn ends while another connection holds the store's write lock: its
                // edits are not recorded (the error says why) and stay pending, for the next
                // operation, or the delivery of the next edit, to record.
                guard kind == .durable, edited, !failed, root.drawing != held ?? model.current else {
                    continue
                }
                let blocker = try SQLiteConnection(path: path)
                try blocker.execute("BEGIN IMMEDIATE")
                // Kept as a held change is: the value, and an undo of it (an error may be left
                // from an earlier failure that an edit since has not yet replaced).
                let refused = await settle { controller?.error != nil && controller?.value == root.drawing }
                try blocker.execute("ROLLBACK")
                try #require(refused, "\(context): the turn's recording failed, its value kept")
                try #require(controller?.error?.keepsakeError != nil, "\(context): a store error")
                try #require(
                    controller?.hasUndo == true && controller?.hasRedo == false, "\(context): stacks")
                failed = true
                continue
            case 20:
                // A change made without tracking (a server's), in the turn of the app's edits:
                // they are recorded first, then it is made, written into the model without
                // being recorded itself; refused when a step changes what it changes.
                recordEdits()
                // The model's value: the controller's `value` is the recorded version until
                // the turn's edits are recorded (by this operation, first).
                try DocEdits.changeWithoutTracking(
                    of: root.drawing, through: try #require(controller), model: &model,
                    named: "untracked \(step)",
                    using: &generator)
            default:
                // The app lets go of a model that owns its controller, in the turn of an edit;
                // after the turn it opens the history on a new model.
                guard kind == .durable else { continue }
                root.undo = controller
                recordEdits()
                weak let old = root
                (controller, root) = (nil, OwningModel())
                let released = await settle { old == nil }
                try #require(released, "\(context): the old model released")
                controller = try open()
            }
            try expectSame(context)
            if step % 100 == 0 { try controller?.checkInvariants() }
        }
        recordEdits()
        try controller?.close()
        try expectSame("\(setup.testDescription) batch \(batch) after closing")
        try controller?.checkInvariants()
        if kind == .durable {
            controller = nil
            root = OwningModel()
            controller = try open()
            try expectSame("\(setup.testDescription) batch \(batch) reopened")
            try controller?.checkInvariants()
        }
    }
}
