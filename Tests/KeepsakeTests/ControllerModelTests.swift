import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// The controller against the simplest possible history, on both storages, from one test body.
///
/// An actor, so that each test has one of its own for the debounced histories it writes: on the
/// main actor, each would wait for every other test running there.
@Suite(.removesTemporaryDirectories) actor ControllerModelTests {
    let directory = TemporaryDirectory()

    struct Boom: Error {}

    @Test(arguments: StorageKind.allCases, Soak.batches(usually: 2))
    func randomOperationsMatchTheFullCopyModel(kind: StorageKind, batch: UInt64) throws {
        try matchTheModel(kind: kind, seed: 0xD15C_0000 + batch, maximumVersions: nil)
    }

    /// Under a limit of 24 versions, both storages drop what the model drops: the oldest
    /// versions of the root scope, then the furthest redo versions of the current scope, down
    /// to 24, once an append leaves more than the limit and its slack (3).
    @Test(arguments: StorageKind.allCases, Soak.batches(usually: 2))
    func randomOperationsUnderALimitMatchTheFullCopyModel(kind: StorageKind, batch: UInt64) throws {
        try matchTheModel(kind: kind, seed: 0x11A1_0000 + batch, maximumVersions: 24)
    }

    func matchTheModel(kind: StorageKind, seed: UInt64, maximumVersions: Int?) throws {
        var generator = SeededGenerator(seed: seed)
        let path = directory.path("model-\(seed).keepsake")
        var maximumVersions = maximumVersions
        func open() throws -> VersioningController<Doc, Doc, ReversionError> {
            try VersioningController(
                Doc.empty, storage: try kind.storage(path: path, history: "model"),
                maximumVersions: maximumVersions)
        }
        var controller = try open()
        // Tags are identified by their JSON, so the model keeps the JSON text.
        let slack = (maximumVersions ?? 0) / 8
        var model = FullCopyHistory(Doc.empty, maximumVersions: maximumVersions, slack: slack, same: ==)
        let tags: [AnyHashable] = ["a", "b", Milestone.review(round: 1), Milestone.shipped]
        func randomTag() -> AnyHashable { tags.randomElement(using: &generator)! }
        func json(_ tag: AnyHashable) throws -> String {
            switch tag.base {
            case let tag as String: try VersionTag(tag).json
            case let tag as Milestone: try VersionTag(tag).json
            default: ""
            }
        }
        func expectSame(_ context: String) throws {
            try #require(controller.value == model.current, "\(context): value")
            try #require(controller.hasUndo == model.hasUndo, "\(context): hasUndo")
            try #require(controller.hasRedo == model.hasRedo, "\(context): hasRedo")
            try #require(controller.scopeLevel == model.level, "\(context): scopeLevel")
            try #require(controller.versionCount == model.versionCount, "\(context): versionCount")
            // The storage's own counts, which an in-memory history keeps as its stacks change.
            try #require(controller.storage.undoCount == model.tags.undo.count - 1, "\(context): undoCount")
            try #require(controller.storage.redoCount == model.tags.redo.count, "\(context): redoCount")
            let stored = try controller.tags()
            try #require(stored.undo.map { $0?.json } == model.tags.undo, "\(context): undo tags")
            try #require(stored.redo.map { $0?.json } == model.tags.redo, "\(context): redo tags")
        }
        for step in 0..<1_500 {
            let operation = Int.random(in: 0..<16, using: &generator)
            let context = "\(kind) seed \(seed) step \(step) operation \(operation)"
            switch operation {
            case 0...3:
                var doc = controller.value
                DocEdits.edit(&doc, using: &generator)
                let tag = Int.random(in: 0..<6, using: &generator) == 0 ? randomTag() : nil
                try controller.append(doc, tag: tag)
                model.append(doc, tag: try tag.map(json))
            case 4:
                #expect(try controller.undo() == controller.value)
                model.undo()
            case 5:
                try controller.redo()
                model.redo()
            case 6:
                let tag = randomTag()
                try controller.tag(tag)
                model.tag(try json(tag))
            case 7:
                let tag = randomTag()
                try controller.undo(to: tag)
                model.undo(to: try json(tag))
            case 8:
                let tag = randomTag()
                try controller.redo(to: tag)
                model.redo(to: try json(tag))
            case 9:
                if Bool.random(using: &generator) {
                    try controller.pushNewScope()
                    model.push()
                } else {
                    try controller.popCurrentScope()
                    model.pop()
                }
            case 10:
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    try controller.undoAndPopCurrentScope()
                    model.undoAndPop()
                }
            case 11:
                var edits = generator
                let value = try controller.setWithTransaction { doc in
                    for _ in 0..<3 { DocEdits.edit(&doc, using: &edits) }
                }
                generator = edits
                model.append(value, tag: nil)
            case 12:
                // A transaction that throws halfway records nothing, in memory and on disk.
                #expect(throws: Boom.self) {
                    try controller.setWithTransaction { doc in
                        doc.title = "half-done \(step)"
                        throw Boom()
                    }
                }
            case 13:
                // A checkpoint, now and then (on disk; in memory, nothing): once the floor passes
                // it, the versions under it are compacted away.
                if Bool.random(using: &generator) { try controller.writeCheckpoint() }
                // A new limit, now and then (0: no undo): the versions over it go at once.
                guard maximumVersions != nil, Int.random(in: 0..<8, using: &generator) == 0 else { continue }
                maximumVersions = [0, 3, 10, 40].randomElement(using: &generator)!
                try controller.setMaximumVersions(maximumVersions)
                model.setMaximumVersions(maximumVersions, slack: maximumVersions! / 8)
            case 14:
                // A change made without tracking, to one property: accepted only when no step
                // changes that property (then every version undo and redo reach has the new
                // value); else refused, since the steps changing it would never apply again,
                // and nothing changes.
                try DocEdits.changeWithoutTracking(
                    of: controller.value, through: controller, model: &model, named: "untracked \(step)",
                    using: &generator)
            default:
                guard kind == .durable else { continue }
                controller = try open()
                try expectSame("\(context) after reopening")
            }
            try expectSame(context)
            if step % 250 == 0 { try controller.checkInvariants() }
        }
        try controller.checkInvariants()
        try open().checkInvariants()
    }

    /// Typing with pauses, into a debounced controller on a manual clock, on both storages,
    /// against the model of debouncing: a burst's last value becomes one version once the clock
    /// passes the last append plus the interval, or the first plus the maximum wait, whichever
    /// comes first, or as soon as an undo, a redo, a flush, a tagged edit, a checkpoint, a
    /// scope pushed, ended or discarded, or a new limit comes; never earlier. A durable
    /// controller dropped while holding a change (as a killed process drops it) records the
    /// change as a version when its history is opened again.
    @Test(arguments: StorageKind.allCases, Soak.batches(usually: 2))
    func randomTypingWithPausesMatchesTheDebounceModel(kind: StorageKind, batch: UInt64) async throws {
        var generator = SeededGenerator(seed: 0xDEB0_0000 + batch)
        let path = directory.path("typing-\(batch).keepsake")
        let (interval, maximumWait) = (Duration.milliseconds(100), Duration.milliseconds(200))
        let clock = ManualClock()
        var maximumVersions: Int?
        func open() throws -> VersioningController<Doc, Doc, ReversionError> {
            try VersioningController(
                Doc.empty, storage: try kind.storage(path: path, history: "typing"),
                maximumVersions: maximumVersions
            ).withDebouncing(clock: clock, interval: interval, maximumWait: maximumWait)
        }
        var controller = try open()
        var model = FullCopyHistory(Doc.empty, same: ==)
        /// The burst the model holds: its newest value, when it began and when it was last added to.
        var held: (value: Doc, first: Duration, last: Duration)?
        var now = Duration.zero
        func recordHeld() {
            if let value = held?.value { model.append(value, tag: nil) }
            held = nil
        }
        func expectSame(_ context: String) throws {
            try #require(controller.value == held?.value ?? model.current, "\(context): value")
            try #require(controller.versionCount == model.versionCount, "\(context): versionCount")
            try #require(controller.hasUndo == (model.hasUndo || held != nil), "\(context): hasUndo")
            try #require(controller.hasRedo == (model.hasRedo && held == nil), "\(context): hasRedo")
            try #require(controller.scopeLevel == model.level, "\(context): scope level")
        }
        for step in 0..<300 {
            // Mostly typing and pauses, so that bursts run long enough for the maximum wait.
            let operation = Int.random(in: 0..<46, using: &generator)
            let context = "\(kind) batch \(batch) step \(step) operation \(operation) at \(now)"
            switch operation {
            case 0...19:
                var doc = controller.value
                DocEdits.edit(&doc, using: &generator)
                try controller.append(doc)
                held = (doc, held?.first ?? now, now)
            case 20...35:
                // Mostly shorter than the interval; one in ten ends the burst.
                let long = Int.random(in: 0..<10, using: &generator) == 0
                let tens = Int.random(in: long ? 10...30 : 0...9, using: &generator)
                let pause = Duration.milliseconds(10 * tens)
                clock.advance(by: pause)
                now += pause
                if let burst = held, now >= min(burst.last + interval, burst.first + maximumWait) {
                    recordHeld()
                    let expected = (model.versionCount, model.current)
                    let recorded = await settle { (controller.versionCount, controller.value) == expected }
                    #expect(recorded, "\(context)")
                }
                // Whatever else a timer would do, it does now.
                for _ in 0..<200 { await Task.yield() }
            case 36:
                try controller.flush()
                recordHeld()
            case 37:
                #expect(try controller.undo() == controller.value)
                recordHeld()
                model.undo()
            case 38:
                try controller.redo()
                recordHeld()
                model.redo()
            case 39:
                guard kind == .durable else { continue }
                controller = try open()
                recordHeld()
            case 40:
                try controller.pushNewScope()
                recordHeld()
                model.push()
            case 41:
                guard model.level > 0 else { continue }
                try controller.popCurrentScope()
                recordHeld()
                model.pop()
            case 42:
                guard model.level > 0 else { continue }
                try controller.undoAndPopCurrentScope()
                recordHeld()
                model.undoAndPop()
            case 43:
                // A tagged edit is never held: it records the held change, then itself.
                var doc = controller.value
                DocEdits.edit(&doc, using: &generator)
                try controller.append(doc, tag: "t\(step)")
                recordHeld()
                model.append(doc, tag: "t\(step)")
            case 44:
                try controller.writeCheckpoint()
                recordHeld()
            default:
                // A new limit: the versions over it go at once, the held change recorded first.
                maximumVersions = [0, 3, 10, 40].randomElement(using: &generator)!
                try controller.setMaximumVersions(maximumVersions)
                recordHeld()
                model.setMaximumVersions(maximumVersions, slack: maximumVersions! / 8)
            }
            try expectSame(context)
        }
        try controller.close()
        recordHeld()
        try expectSame("\(kind) batch \(batch) after closing")
        try controller.checkInvariants()
        if kind == .durable { try open().checkInvariants() }
    }
}
