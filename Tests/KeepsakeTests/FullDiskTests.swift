import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// The disk fills at a random moment of random operations on the store that uses everything
/// (appends, undo and redo, scopes, tags, reopening, another limit and the pruning it brings,
/// checkpoints, snapshots, debounced holds and flushes): whichever write meets the full disk
/// fails typed, and nothing committed is lost. On the still-full disk the store opens, read-only
/// and for writing, at the last operation that returned; once room is freed it passes every
/// check and holds that operation's value and stacks.
@Suite(.removesTemporaryDirectories) actor FullDiskTests {
    @Test(
        .enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"),
        arguments: Soak.batches(usually: 2))
    func aDiskThatFillsAtARandomMomentLosesNothing(batch: UInt64) throws {
        for debounced in [false, true] {
            try fillTheDisk(seed: 0xF011_0000 &+ batch &* 2 &+ (debounced ? 1 : 0), debounced: debounced)
        }
    }

    func fillTheDisk(seed: UInt64, debounced: Bool) throws {
        let mount = try #require(TemporaryMount(size: "3m"))
        let (path, filler) = (mount.path + "/full.keepsake", mount.path + "/filler")
        var generator = SeededGenerator(seed: seed)
        // Room for the store's first few hundred operations, not for thousands.
        let room = Int.random(in: 330_000..<700_000, using: &generator)
        try Data(count: 3 * 1024 * 1024 - room).write(to: URL(fileURLWithPath: filler))
        let operations = (0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let (steps, error) = RichStore.run(operations, on: path, debounced: debounced, finalReopen: false)
        guard let last = steps.last else {
            // The disk was full before the store could be created: nothing is there.
            #expect(
                !FileManager.default.fileExists(atPath: path), "seed \(seed): \(String(describing: error))")
            return
        }
        if let error {
            guard case .sqlite(let failure) = error, failure.code == .full || failure.code == .ioError else {
                Issue.record("seed \(seed): the full disk gave \(error)")
                return
            }
            // Still full: the store opens read-only at the last operation that returned (the
            // change a debounced history held is not applied read-only), and for writing.
            let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
            if !debounced {
                let history = try reader.history("doc", initialValue: Doc.empty, maximumVersions: last.limit)
                #expect(history.value == last.value, "seed \(seed)")
            }
            #expect(try reader.verify().problems == [], "seed \(seed)")
            reader.close()
            do {
                let writer = try KeepsakeStore(path: path)
                let history = try writer.history("doc", initialValue: Doc.empty, maximumVersions: last.limit)
                #expect(history.value == last.value, "seed \(seed)")
                writer.close()
            } catch {
                // Recording the held change, or storing the value, needed room: said so.
                guard case .sqlite(let failure) = error, failure.code == .full || failure.code == .ioError
                else {
                    Issue.record("seed \(seed): opening on the full disk gave \(error)")
                    return
                }
            }
        }
        try FileManager.default.removeItem(atPath: filler)
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: last.limit)
        #expect(
            history.value == last.value,
            "seed \(seed): \(steps.count) steps, then \(String(describing: error))")
        // A debounced history's held change is recorded by this open: one version more.
        let state = [
            history.hasUndo ? 1 : 0, history.hasRedo ? 1 : 0, history.scopeLevel, history.versionCount,
        ]
        #expect(debounced || state == last.state, "seed \(seed)")
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }
}
