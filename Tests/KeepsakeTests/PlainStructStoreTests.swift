import Foundation
import Keepsake
import KeepsakeTestSupport
import Testing

/// A store's history of a model whose nested struct is not `Versionable`: each edit inside it
/// stores the changed leaves, not the struct; a history an earlier release stored with the
/// struct replaced whole opens, undoes and redoes with today's model and goes on field by
/// field; the checkpoints built from the stored rows and the shell's view of each version (read
/// with no type) agree with the model.
@MainActor @Suite struct PlainStructStoreTests {
    let directory = TemporaryDirectory()

    struct Stroke: Codable, Equatable, Identifiable {
        var id: Int
        var color: String
    }

    struct Canvas: Codable, Equatable {
        var name = "canvas"
        var strokes = (0..<1_000).map { Stroke(id: $0, color: "black") }
    }

    /// The model as the earlier release tracked it with no code: the canvas replaced whole.
    struct EarlierDoc: Versionable, Equatable, Codable {
        var title = ""
        var canvas = Canvas()

        func addReversions(into reverter: inout some Reverter<EarlierDoc>) {
            reverter.appendReversion(at: \.title, named: "title")
            reverter.appendOverwriteReversion(at: \.canvas, named: "canvas")
        }
    }

    struct Doc: Versionable, Equatable, Codable {
        var title = ""
        var canvas = Canvas()
    }

    /// Each version's canvas, from `start`: one edit each.
    static func versions(from start: Canvas, count: Int, seed: Int) -> [Canvas] {
        (0..<count).reduce(into: [start]) { versions, step in
            var canvas = versions.last!
            switch step % 4 {
            case 0: canvas.strokes[(seed * 31 + step * 7) % canvas.strokes.count].color += " \(seed)"
            case 1: canvas.strokes.insert(Stroke(id: 10_000 * seed + step, color: "new"), at: step)
            case 2: canvas.strokes.remove(at: (seed + step) % canvas.strokes.count)
            default: canvas.name += "!"
            }
            versions.append(canvas)
        }
    }

    /// A stroke as the earlier release recorded an element of `[Stroke]`: whole, at
    /// `canvas.strokes[id: 7]`. Its JSON is a `Stroke`'s.
    struct EarlierStroke: VersionableLeaf, Codable, Identifiable {
        var id: Int
        var color: String
    }

    struct EarlierCanvas: Versionable, Equatable, Codable {
        var name: String
        var strokes: [EarlierStroke]
    }

    /// The model as the earlier release tracked it with the canvas `Versionable` and its
    /// strokes plain: each changed stroke recorded whole.
    struct EarlierElementDoc: Versionable, Equatable, Codable {
        var title = ""
        var canvas: EarlierCanvas

        init(_ canvas: Canvas) {
            self.canvas = EarlierCanvas(
                name: canvas.name, strokes: canvas.strokes.map { EarlierStroke(id: $0.id, color: $0.color) })
        }
    }

    @Test func anEarlierWholeElementHistoryOpensUndoesAndGoesOnFieldByField() throws {
        let path = directory.path("strokes.keepsake")
        let earlier = Self.versions(from: Canvas(), count: 8, seed: 3)
        do {
            let history = try KeepsakeStore(path: path).history(
                "doc", initialValue: EarlierElementDoc(earlier[0]))
            for canvas in earlier.dropFirst() { try history.append(EarlierElementDoc(canvas)) }
        }
        let store = try KeepsakeStore(path: path)
        let first = earlier[1].strokes.first { $0.color.hasSuffix(" 3") }!
        #expect(
            try store.changes(ofVersion: 1, in: "doc")?.map(\.path) == ["canvas.strokes[id: \(first.id)]"])
        let history = try store.history("doc", initialValue: Doc())
        try Self.expectUndoAndRedo(history, through: earlier)
        var next = earlier.last!
        next.strokes[5].color = "blue"
        try history.append(Doc(canvas: next))
        #expect(
            try store.changes(ofVersion: earlier.count, in: "doc")?.map(\.path) == [
                "canvas.strokes[id: \(next.strokes[5].id)].color"
            ])
        #expect(try history.undo().canvas == earlier.last)
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    /// Expects `history` at the last of `canvases`, then each undo and each redo through them.
    static func expectUndoAndRedo(_ history: KeepsakeHistory<Doc>, through canvases: [Canvas]) throws {
        #expect(history.value.canvas == canvases.last)
        for index in canvases.indices.reversed().dropFirst() {
            #expect(try history.undo().canvas == canvases[index], "undo to \(index)")
        }
        for index in canvases.indices.dropFirst() {
            #expect(try history.redo().canvas == canvases[index], "redo to \(index)")
        }
    }

    @Test func anEarlierWholeStructHistoryOpensUndoesAndGoesOnFieldByField() throws {
        let path = directory.path("canvas.keepsake")
        let earlier = Self.versions(from: Canvas(), count: 6, seed: 1)
        do {
            // Not closed: the next open replays the stored changes.
            let history = try KeepsakeStore(path: path).history("doc", initialValue: EarlierDoc())
            for canvas in earlier.dropFirst() { try history.append(EarlierDoc(canvas: canvas)) }
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.changes(ofVersion: 1, in: "doc")?.map(\.path) == ["canvas"])
        let history = try store.history("doc", initialValue: Doc())
        try Self.expectUndoAndRedo(history, through: earlier)

        let today = Self.versions(from: earlier.last!, count: 8, seed: 2)
        for canvas in today.dropFirst() { try history.append(Doc(canvas: canvas)) }
        let edit = try #require(try store.changes(ofVersion: earlier.count, in: "doc"))
        let edited = earlier.last!.strokes[62]
        #expect(edit.map(\.path) == ["canvas.strokes[id: \(edited.id)].color"])
        #expect(edit.map(\.kind) == ["text"])
        let (color, count) = (edited.color, edited.color.utf16.count)
        #expect(
            edit.map(\.patch) == [
                #"{"new":"\#(color) 2","newCount":\#(count + 2),"offset":0,"old":"\#(color)","oldCount":\#(count)}"#
            ])
        try history.checkInvariants()

        // Closed: a checkpoint of the whole value, built from the stored rows (the value is
        // over 2 KiB), which the next open starts from.
        try history.close()
        let all = earlier + today.dropFirst()
        let reopened = try store.history("doc", initialValue: Doc())
        #expect(reopened.value.canvas == all.last)
        for index in all.indices.reversed().dropFirst() {
            #expect(try reopened.undo().canvas == all[index], "undo to \(index) after reopening")
        }
        try reopened.checkInvariants()

        // The shell's view of every version, from the stored records alone.
        for (version, canvas) in all.enumerated() {
            let json = try #require(try store.valueJSON(ofHistory: "doc", atVersion: version))
            #expect(
                try JSONDecoder().decode(Doc.self, from: Data(json.utf8)).canvas == canvas,
                "version \(version)")
        }
        #expect(try store.integrityCheck() == ["ok"])
    }
}
