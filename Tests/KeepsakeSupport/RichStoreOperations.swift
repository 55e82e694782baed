public import Foundation
public import Keepsake
import TestSupport

extension RichStore {
    /// What one operation left: its name, the value it returned (or the current one), the
    /// history's value, the stacks (undo, redo, scope level, versions), the tags it read, and
    /// the limit the history was opened with.
    public struct OperationStep: Equatable, CustomStringConvertible {
        public var label: String
        public var doc: Doc
        public var value: Doc
        public var state: [Int]
        public var tags: [String?] = []
        /// Set by ``RichStore/run(_:on:debounced:maximumSteps:finalReopen:afterOpening:afterEach:)``.
        public var limit = 0

        /// The step `label` left on `history`: `doc` returned by it, or else the current value.
        public init(_ label: String, _ history: KeepsakeHistory<Doc>, _ doc: Doc? = nil, tags: [String?] = [])
        {
            self.label = label
            value = history.value
            self.doc = doc ?? value
            state = [
                history.hasUndo ? 1 : 0, history.hasRedo ? 1 : 0, history.scopeLevel, history.versionCount,
            ]
            self.tags = tags
        }

        public var description: String {
            "\(label): stacks \(state), tags \(tags), \(doc.summary)"
        }
    }

    /// Runs operations on the rich store at `path`, one per byte of `operations`: edits (some
    /// tagged), undo, redo, scopes pushed, ended and discarded, undo to the newest tag, closing
    /// and reopening, another limit, checkpoints, compacting, snapshots saved and restored, and
    /// (debounced) flushes; then reopens it. Returns what each step left, and the error that
    /// stopped them, if any.
    ///
    /// - Parameters:
    ///   - debounced: Whether the history holds back each edit (on a clock that never moves):
    ///     the next operation, closing or opening again records it.
    ///   - maximumSteps: Stop once this many steps are taken.
    ///   - finalReopen: Whether to close and reopen the store after the last operation.
    ///   - isolation: The actor the history belongs to, where a debounced one's timer would
    ///     record its held change; the caller's by default.
    ///   - afterOpening: Called with the store each time it is opened.
    ///   - report: Called with each step as it is taken.
    public static func run(
        _ operations: [UInt8], on path: String, debounced: Bool = false, maximumSteps: Int = .max,
        finalReopen: Bool = true, isolation: isolated (any Actor) = #isolation,
        afterOpening: (KeepsakeStore) -> Void = { _ in },
        afterEach report: (OperationStep) -> Void = { _ in }
    ) -> (steps: [OperationStep], error: KeepsakeError?) {
        var steps: [OperationStep] = []
        var limit = Self.limit
        func record(_ step: OperationStep) {
            var step = step
            step.limit = limit
            steps.append(step)
            report(step)
        }
        var store: KeepsakeStore?
        defer { store?.close() }
        let clock = ManualClock()
        func open() throws(KeepsakeError) -> KeepsakeHistory<Doc> {
            store?.close()
            let opened = try KeepsakeStore(path: path)
            store = opened
            afterOpening(opened)
            let history = try opened.history("doc", initialValue: Doc.empty, maximumVersions: limit)
            if debounced { history.withDebouncing(clock: clock, interval: .seconds(1)) }
            return history
        }
        do throws(KeepsakeError) {
            var history = try open()
            record(.init("opened", history))
            var generator = SeededGenerator(seed: 7)
            for (index, operation) in operations.enumerated() where steps.count < maximumSteps {
                let variant = Int(operation / 15)
                switch operation % 15 {
                case 0, 1:
                    var doc = history.value
                    DocEdits.edit(&doc, using: &generator)
                    try history.append(doc, tag: operation % 15 == 1 ? "n\(index + 1)" : nil)
                    record(.init("append", history))
                case 2, 3:
                    guard history.hasUndo else { continue }
                    record(.init("undo", history, try history.undo()))
                case 4:
                    guard history.hasRedo else { continue }
                    record(.init("redo", history, try history.redo()))
                case 5:
                    try history.pushNewScope()
                    record(.init("push", history))
                case 6:
                    guard history.scopeLevel > 0 else { continue }
                    try history.popCurrentScope()
                    record(.init("pop", history))
                case 7:
                    guard history.scopeLevel > 0 else { continue }
                    record(.init("discard", history, try history.undoAndPopCurrentScope()))
                case 8:
                    let tags = try history.tags()
                    let listed = tags.undo.map { $0?.json } + ["|"] + tags.redo.map { $0?.json }
                    record(.init("tags", history, tags: listed))
                    if let newest = tags.undo.compactMap({ $0 }).last {
                        record(.init("undo to \(newest.json)", history, try history.undo(to: newest)))
                    }
                case 9:
                    try history.close()
                    history = try open()
                    record(.init("reopened", history))
                case 10:
                    limit = [3, 6, 16, 40][variant % 4]
                    history = try open()
                    record(.init("limit \(limit)", history))
                case 11:
                    try Caretaker(store: store!).save(
                        history.value, as: "s\(variant % 3)", replacingExisting: true)
                    record(.init("saved", history))
                case 12:
                    let name = ["latest", "s0", "s1", "s2"][variant % 4]
                    record(
                        .init(
                            "restored \(name)", history,
                            try Caretaker(store: store!).restore(name, as: Doc.self) ?? Doc.empty))
                case 13 where variant % 3 == 2:
                    // Blobs nothing refers to deleted, the file rebuilt (`VACUUM`), the log
                    // truncated: under the open history, whose connection goes on.
                    try store!.compact()
                    record(.init("compacted", history))
                case 13:
                    try history.writeCheckpoint()
                    record(.init("checkpoint", history))
                default:
                    guard debounced else { continue }
                    try history.flush()
                    record(.init("flush", history))
                }
            }
            guard finalReopen, steps.count < maximumSteps else { return (steps, nil) }
            try history.close()
            history = try open()
            record(.init("final reopen", history))
            return (steps, nil)
        } catch {
            return (steps, error)
        }
    }

    /// Runs `operations` (``run(_:on:debounced:maximumSteps:finalReopen:afterOpening:afterEach:)``)
    /// on the damaged copy at `path`; returns the problem when a step is not what the undamaged
    /// store's `expected` allows. A stack shorter or
    /// longer than the undamaged store's is allowed when `verify` reports the copy (as
    /// ``readDamaged(_:expecting:limit:)`` allows it); a value or a list of tags read otherwise
    /// is not, nor steps missing with no error.
    public static func runDamaged(
        _ operations: [UInt8], on path: String, debounced: Bool = false, expecting expected: [OperationStep],
        isolation: isolated (any Actor) = #isolation
    ) -> String? {
        let reported = verifyReports(path)
        let (steps, error) = run(operations, on: path, debounced: debounced)
        let agreeing = zip(steps, expected).prefix { $0 == $1 }.count
        if agreeing < steps.count {
            let (got, want) = (steps[agreeing], expected[agreeing])
            if got.label == want.label && (got.doc != want.doc || got.tags != want.tags) || !reported {
                return "step \(agreeing) read \(got), not \(want) (verify reported: \(reported))"
            }
        } else if steps.count < expected.count, error == nil {
            return "\(steps.count) of \(expected.count) steps, and no error"
        } else if let error, !reported {
            return "step \(steps.count) threw \(error), and verify reports nothing"
        }
        return nil
    }

    /// Runs `operations` on a copy of the store `original` written to `undamaged`, then on a
    /// copy written to `damaged` with damage of kind `kind` that `generator` picks
    /// (``writeDamaged(_:to:_:keyDamages:using:)``), and compares them
    /// (``runDamaged(_:on:debounced:expecting:)``).
    ///
    /// - Returns: The damage done (empty: none was, and nothing was compared), what the
    ///   operations did on the undamaged store, and the problem: the undamaged store failing an
    ///   operation or not reopening after them, or the damaged copy's.
    public static func runBeside(
        _ operations: [UInt8], debounced: Bool, original: Data, undamaged: String, damaged: String,
        _ kind: DamageKind, keyDamages: [ByteDamage], using generator: inout some RandomNumberGenerator,
        isolation: isolated (any Actor) = #isolation
    ) throws -> (damage: [String], expected: [OperationStep], problem: String?) {
        for suffix in ["", "-wal", "-shm"] { unlink(undamaged + suffix) }
        try original.write(to: URL(fileURLWithPath: undamaged))
        let (expected, failure) = run(operations, on: undamaged, debounced: debounced)
        // The undamaged store takes every operation, and reopens after them.
        guard failure == nil, expected.last?.label == "final reopen" else {
            return (
                [], expected, "the undamaged store failed: \(failure.map { "\($0)" } ?? "no final reopen")"
            )
        }
        let damage = try writeDamaged(original, to: damaged, kind, keyDamages: keyDamages, using: &generator)
        guard !damage.isEmpty else { return ([], expected, nil) }
        return (
            damage, expected, runDamaged(operations, on: damaged, debounced: debounced, expecting: expected)
        )
    }
}
