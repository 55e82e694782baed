import Foundation
import Observation
import Testing

@testable import Keepsake

// Compiled as Xcode 26 compiles a new app target: the main actor is every declaration's default
// isolation, and the conformances of a main-actor type are isolated to it (Package.swift gives
// this target those settings). A store decodes a history's value off the main actor, where it
// builds checkpoints, so the types a history keeps are declared `nonisolated`; the README's
// example is this file's.

// README: nonisolated struct Stroke
nonisolated struct Stroke: Versionable, Equatable, Codable {
    var points: [Double]
}

nonisolated struct Drawing: Versionable, Equatable, Codable {
    var strokes: [Stroke] = []
}

@Observable final class DrawingModel {
    var drawing = Drawing()
}

/// A model whose undoable property is a durable `@Versioned`, in the same target.
@Observable final class SketchModel {
    @ObservationIgnored @Versioned var drawing: Drawing

    init(path: String) {
        _drawing = Versioned(wrappedValue: Drawing(), storage: .keepsake(path: path, history: "sketch"))
    }
}

/// An app target with main-actor isolation by default keeps its model's history in a store:
/// observed, wrapped, opened directly, checkpointed off the main actor, reopened, snapshotted.
@Suite struct MainActorAppTests {
    /// A fresh folder, removed afterwards.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keepsake-main-actor-\(UUID().uuidString)")
        init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    }

    let folder = Folder()

    @Test func aModelOfNonisolatedTypesIsKeptDurably() async throws {
        let path = folder.path("drawings.keepsake")
        let model = DrawingModel()
        let store = try KeepsakeStore(path: path)
        let undo = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(store, history: "drawing-1"))
        // Enough strokes of some length that checkpoints fall due and are built off the main actor.
        for stroke in 0..<1_100 {
            model.drawing.strokes.append(Stroke(points: Array(repeating: Double(stroke), count: 40)))
            try undo.flush()
        }
        try undo.undo()
        #expect(model.drawing.strokes.count == 1_099)
        try undo.close()
        let checkpoints = try store.database.read {
            try $0.scalarInt("SELECT count(*) FROM checkpoint")
        }
        // The base value, the one close() stores, and those built off the main actor as they fell due.
        #expect((checkpoints ?? 0) > 2)

        let reopenedModel = DrawingModel()
        let reopened = try VersioningController(
            observing: reopenedModel, at: \.drawing,
            storage: .keepsake(KeepsakeStore(path: path), history: "drawing-1"))
        #expect(reopenedModel.drawing.strokes.count == 1_099)
        #expect(reopened.hasUndo && reopened.hasRedo)
        try reopened.redo()
        #expect(reopenedModel.drawing.strokes.last == Stroke(points: Array(repeating: 1_099, count: 40)))
        try reopened.checkInvariants()

        let sketch = SketchModel(path: folder.path("sketch.keepsake"))
        sketch.drawing.strokes = [Stroke(points: [1, 2])]
        #expect(sketch.$drawing.error == nil && sketch.$drawing.versionCount == 1)
        sketch.$drawing.close()
        #expect(
            SketchModel(path: folder.path("sketch.keepsake")).drawing.strokes == [Stroke(points: [1, 2])])

        let history = try store.history("drawing-2", initialValue: Drawing())
        try history.append(Drawing(strokes: [Stroke(points: [3])]))
        #expect(try store.value(ofHistory: "drawing-2", atVersion: 1, as: Drawing.self)?.strokes.count == 1)
        let caretaker = Caretaker(store: store)
        try caretaker.save(reopenedModel.drawing, as: "beforeTrip")
        let restored: Drawing? = try caretaker.restore("beforeTrip")
        #expect(restored == reopenedModel.drawing)
    }
}
