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

    /// What the model says, after each step: the edits of one turn are one version, recorded
    /// when the turn ends or when an operation comes first; an operation acts on that version;
    /// a controller let go of with an edit pending gives it to the store, which records it
    /// when the history is opened again. Nothing the app typed is lost, in any order.
    @Test(arguments: StorageKind.allCases, Soak.batches(usually: 2))
    func randomEditsAndOperationsMatchTheFullCopyModel(kind: StorageKind, batch: UInt64) async throws {
        var generator = SeededGenerator(seed: 0x0B5E_0000 + batch)
        let path = directory.path("observed-\(batch).keepsake")
        var root = OwningModel()
        func open() throws -> VersioningController<OwningModel, Doc, ReversionError> {
            try VersioningController(
                observing: root, at: \.drawing, storage: try kind.storage(path: path, history: "observed"))
        }
        var controller: VersioningController<OwningModel, Doc, ReversionError>? = try open()
        var model = FullCopyHistory(Doc.empty, same: ==)
        /// Whether the app edited the root since its last version was recorded.
        var edited = false
        func recordEdits() {
            if edited { model.append(root.drawing, tag: nil) }
            edited = false
        }
        func expectSame(_ context: String) throws {
            let controller = try #require(controller, "\(context): a controller")
            try #require(root.drawing == model.current, "\(context): the model's value")
            try #require(controller.value == model.current, "\(context): value")
            try #require(controller.versionCount == model.versionCount, "\(context): versionCount")
            try #require(controller.hasUndo == model.hasUndo, "\(context): hasUndo")
            try #require(controller.hasRedo == model.hasRedo, "\(context): hasRedo")
            try #require(controller.scopeLevel == model.level, "\(context): scope level")
        }
        for step in 0..<400 {
            let operation = Int.random(in: 0..<20, using: &generator)
            let context = "\(kind) batch \(batch) step \(step) operation \(operation)"
            switch operation {
            case 0...7:
                // An edit, in place; the turn goes on.
                DocEdits.edit(&root.drawing, using: &generator)
                edited = true
                continue
            case 8...10:
                // The turn ends: its edits become one version.
                recordEdits()
                let expected = (model.versionCount, model.current)
                let recorded = await settle { (controller?.versionCount, controller?.value) == expected }
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
                // on a model of its own, which opening sets to the stored value.
                guard kind == .durable else { continue }
                recordEdits()
                controller = nil
                if Bool.random(using: &generator) { root = OwningModel() }
                controller = try open()
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
        try expectSame("\(kind) batch \(batch) after closing")
        try controller?.checkInvariants()
        if kind == .durable {
            controller = nil
            root = OwningModel()
            controller = try open()
            try expectSame("\(kind) batch \(batch) reopened")
            try controller?.checkInvariants()
        }
    }
}
