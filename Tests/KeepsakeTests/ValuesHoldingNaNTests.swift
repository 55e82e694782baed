import Foundation
import Keepsake
import Testing

/// A NaN is unequal to itself, and so is every value that holds one: a struct replaced whole, an
/// array, an enum's payload. Versioning takes two NaNs for the same value wherever they are, so
/// a change to or from a value holding one undoes and redoes, one step or many at a time, in
/// memory and from the store, and an unchanged value holding one is no new version.
@MainActor @Suite struct ValuesHoldingNaNTests {
    let directory = TemporaryDirectory()

    struct Gauge: Versionable, Equatable, Codable {
        /// Replaced whole (a leaf; a plain struct would be tracked field by field). The long
        /// label is a string of its own on the heap, so two copies decoded apart differ in
        /// their bytes.
        struct Point: Codable, VersionableLeaf {
            var x: Double
            var label = String(repeating: "point ", count: 8)
        }

        /// Diffed through its `Codable` form: a payload change records only the payload.
        enum Reading: Codable, Equatable {
            case level(Double)
            case off
        }

        var title = "gauge"
        var point = Point(x: 0)
        var samples: [Double] = [0, 1]
        var reading = Reading.level(0)
        var peak: Point?
    }

    /// The versions the edits make, in order, the initial value first.
    static let versions: [Gauge] = {
        let edits: [(inout Gauge) -> Void] = [
            { $0.point.x = .nan },
            { $0.point.x = 5 },
            { $0.samples[1] = .nan },
            { $0.samples.append(.nan) },
            { $0.reading = .level(.nan) },
            { $0.reading = .level(2) },
            { $0.peak = Gauge.Point(x: .nan, label: "peak") },
            { $0.title = "after" },
            { $0.point.x = .nan },
            { $0.peak?.x = 3 },
            { $0.samples = [1] },
        ]
        return edits.reduce(into: [Gauge()]) { versions, edit in
            var next = versions.last!
            edit(&next)
            versions.append(next)
        }
    }()

    /// The value as records write it, NaN as `"NaN"`: equal exactly when the values are the
    /// same but for their NaNs.
    static func json(_ gauge: Gauge) throws -> String {
        String(decoding: try ChangeRecord.makeEncoder().encode(gauge), as: UTF8.self)
    }

    func open(_ kind: StorageKind, _ path: String) throws -> VersioningController<
        Gauge, Gauge, ReversionError
    > {
        try VersioningController(Gauge(), storage: try kind.storage(path: path, history: "gauge"))
    }

    func expectVersion(_ index: Int, of controller: VersioningController<Gauge, Gauge, ReversionError>) throws
    {
        #expect(try Self.json(controller.value) == Self.json(Self.versions[index]), "version \(index)")
        #expect(controller.storage.undoCount == index, "version \(index): undo count")
        #expect(
            controller.storage.redoCount == Self.versions.count - 1 - index, "version \(index): redo count")
    }

    @Test(arguments: StorageKind.allCases)
    func everyVersionUndoesAndRedoesOneStepOrManyAtATime(kind: StorageKind) throws {
        let path = directory.path("nan.keepsake")
        let last = Self.versions.count - 1
        let controller = try open(kind, path)
        try controller.tag("start")
        for version in Self.versions.dropFirst() { try controller.append(version) }
        try controller.tag("end")
        // The same value again, NaNs and all, is no new version.
        try controller.append(Self.versions[last])
        #expect(controller.versionCount == last)
        try expectVersion(last, of: controller)

        for index in (0..<last).reversed() {
            _ = try controller.undo()
            try expectVersion(index, of: controller)
        }
        for index in 1...last {
            _ = try controller.redo()
            try expectVersion(index, of: controller)
        }
        _ = try controller.undo(to: "start")
        try expectVersion(0, of: controller)
        _ = try controller.redo(to: "end")
        try expectVersion(last, of: controller)
        try controller.checkInvariants()
        guard kind == .durable else { return }

        let reopened = try open(kind, path)
        try expectVersion(last, of: reopened)
        for index in (0..<last).reversed() {
            _ = try reopened.undo()
            try expectVersion(index, of: reopened)
        }
        _ = try reopened.redo(to: "end")
        try expectVersion(last, of: reopened)
        try reopened.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
