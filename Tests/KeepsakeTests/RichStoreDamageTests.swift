import Foundation
import TestSupport
import Testing

@testable import Keepsake

/// Damage to a store that uses everything — versions folded under a limit and compacted, a
/// redo stack, an open scope with its own redo stack, tags, a snapshot and a change held back
/// by debouncing — is caught: everything read from a damaged copy, in the order a reader reads
/// it, is what the undamaged store gives, up to a typed error. Never a crash, never a wrong
/// value, never an edit or a version silently missing.
@MainActor @Suite struct RichStoreDamageTests {
    let directory = TemporaryDirectory()

    static let limit = 16

    /// The rich store, written once, closed.
    func richStore() throws -> Data {
        let path = directory.path("rich.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: Self.limit)
        var generator = SeededGenerator(seed: 29)
        var doc = history.value
        for index in 0..<40 {
            DocEdits.edit(&doc, using: &generator)
            if index % 9 == 0 { doc.blob.append(Data(repeating: UInt8(index), count: 1_200)) }
            try history.append(doc, tag: index % 6 == 0 ? "t\(index)" : nil)
        }
        for _ in 0..<3 { _ = try history.undo() }
        try history.pushNewScope()
        doc = history.value
        for index in 0..<5 {
            DocEdits.edit(&doc, using: &generator)
            try history.append(doc, tag: index == 2 ? "scoped" : nil)
        }
        _ = try history.undo()
        try Caretaker(store: store).save(history.value, as: "latest")
        history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        doc = history.value
        for _ in 0..<2 {
            DocEdits.edit(&doc, using: &generator)
            try history.append(doc)
        }
        store.close()
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// One thing a reader got.
    enum Step: Equatable {
        case value(String, Doc)
        case tags([String?], [String?])
        case snapshot(Doc?)
    }

    /// What a reader gets from the store at `path`, in order: the value opened (the held change
    /// recorded), the tags, every value undoing to the start of each scope and ending it, every
    /// value redoing, undoing to the newest tag, and the snapshot; the tags of each scope; and
    /// the error that stopped it, if any.
    func trace(_ path: String) -> (steps: [Step], error: KeepsakeError?) {
        var steps: [Step] = []
        do throws(KeepsakeError) {
            let store = try KeepsakeStore(path: path)
            defer { store.close() }
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: Self.limit)
            steps.append(.value("opened at level \(history.scopeLevel)", history.value))
            let tags = try history.tags()
            steps.append(.tags(tags.undo.map { $0?.json }, tags.redo.map { $0?.json }))
            // Bounded: damaged counts must not make a loop of this.
            var budget = 200
            while budget > 0 {
                budget -= 1
                if history.hasUndo {
                    steps.append(.value("undo", try history.undo()))
                } else if history.scopeLevel > 0 {
                    try history.popCurrentScope()
                    steps.append(.value("end of scope, now \(history.scopeLevel)", history.value))
                    let tags = try history.tags()
                    steps.append(.tags(tags.undo.map { $0?.json }, tags.redo.map { $0?.json }))
                } else {
                    break
                }
            }
            while history.hasRedo, budget > 0 {
                budget -= 1
                steps.append(.value("redo", try history.redo()))
            }
            let newestTag = try history.tags().undo.compactMap { $0 }.last
            if let newestTag {
                steps.append(.value("undo to \(newestTag.json)", try history.undo(to: newestTag)))
            }
            steps.append(.snapshot(try Caretaker(store: store).restore("latest", as: Doc.self)))
            return (steps, nil)
        } catch {
            return (steps, error)
        }
    }

    /// Whether the store at `path` reports a problem when verified (read-only).
    func verifyReports(_ path: String) -> Bool {
        (try? KeepsakeStore(path: path, options: .init(readOnly: true)).verify().isOK) != true
    }

    @Test(arguments: Soak.batches(usually: 3))
    func flippedBytesGiveWhatTheUndamagedStoreGivesOrATypedError(batch: UInt64) throws {
        let original = try richStore()
        let reference = directory.path("reference.keepsake")
        try original.write(to: URL(fileURLWithPath: reference))
        let (expected, failure) = trace(reference)
        #expect(failure == nil)
        // The walk saw the scope, both redo stacks, the folded history and the held change.
        // Opened in the scope: the held change recorded (5 versions) and undone, the scope
        // ended, the root's 8 kept versions undone, 11 redone (the root's redo stack, the
        // squashed scope), undone to "t36", the snapshot; the tags of both scopes.
        #expect(expected.count == 30)
        var generator = SeededGenerator(seed: 0x41C4_0000 + batch)
        var outcomes: [String: Int] = [:]
        for variant in 0..<40 {
            let path = directory.path("rich-\(batch)-\(variant).keepsake")
            let offset = try writeWithAByteFlipped(original, to: path, using: &generator)
            let reported = verifyReports(path)
            let (steps, error) = trace(path)
            let context = "batch \(batch) variant \(variant) offset \(offset)"
            let agreeing = zip(steps, expected).prefix { $0 == $1 }.count
            if agreeing < steps.count {
                Issue.record(
                    "\(context): step \(agreeing) read \(steps[agreeing]), not \(expected[agreeing]) (verify reported: \(reported))"
                )
            } else if steps.count < expected.count, error == nil, !reported {
                Issue.record("\(context): \(steps.count) of \(expected.count) steps, and no error")
            }
            outcomes[
                error != nil ? "typed error" : steps.count == expected.count ? "right" : "short", default: 0] +=
                1
        }
        print("rich store, flipped bytes, batch \(batch): \(outcomes)")
    }
}
