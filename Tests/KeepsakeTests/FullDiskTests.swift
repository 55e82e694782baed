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

    struct Note: Versionable, Equatable, Codable {
        var tags: [String] = []
    }

    /// `Note` after an app update: a property added.
    struct PinnedNote: Versionable, Equatable, Codable {
        var tags: [String] = []
        var pinned = false
    }

    /// `Note` after an app update: its tags a set.
    struct TagSet: Versionable, Equatable, Codable {
        var tags: Set<String> = []
    }

    /// An app update changed the model, and the disk is full (to its last byte) when the
    /// updated app opens a history the old one wrote: it opens for writing, as stored, with
    /// its stored limit (every write fails typed until there is room, and moves nothing), and
    /// the value stored whole in today's model and the new limit, which opening writes for
    /// later opens' sake, are written by the first open with room. Until 2026-12 opening
    /// failed with the full disk: the updated app could not show the document.
    @Test(
        .enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"),
        arguments: [false, true])
    func anUpdatedModelOpensOnAFullDisk(tagSet: Bool) throws {
        let mount = try #require(TemporaryMount(size: "2m"))
        let path = mount.path + "/doc.keepsake"
        let versions = (0..<30).map { Note(tags: (0...$0).map { "tag \($0)" }) }
        do {
            let history = try KeepsakeStore(path: path).history(
                "doc", initialValue: Note(), maximumVersions: nil)
            for version in versions { try history.append(version) }
        }
        // Another process has the store open: its log's index is there.
        let other = try KeepsakeStore(path: path)
        #expect(try other.historyNames() == ["doc"])
        let filler = try mount.fill()

        func check<Updated: Versionable & Codable & Equatable & SendableMetatype>(
            _ updated: (Note) -> Updated, _ edit: (inout Updated) -> Void
        ) throws {
            let history = try KeepsakeStore(path: path).history(
                "doc", initialValue: updated(Note()), maximumVersions: 20)
            #expect(history.value == updated(versions[29]) && history.versionCount == 30)
            #expect(history.maximumVersions == nil)
            // Every write fails typed, and nothing moves.
            var edited = history.value
            edit(&edited)
            #expect {
                try history.undo()
            } throws: { error in
                (error as? KeepsakeError)?.isOutOfRoom == true
            }
            #expect {
                try history.append(edited)
            } throws: { error in
                (error as? KeepsakeError)?.isOutOfRoom == true
            }
            #expect(history.value == updated(versions[29]) && history.versionCount == 30 && !history.hasRedo)
            try FileManager.default.removeItem(atPath: filler)
            #expect(try history.undo() == updated(versions[28]))
            #expect(try history.redo() == updated(versions[29]))
            try history.append(edited)
            try history.checkInvariants()

            let reopened = try KeepsakeStore(path: path).history(
                "doc", initialValue: updated(Note()), maximumVersions: 20)
            #expect(reopened.value == edited && reopened.maximumVersions == 20 && reopened.versionCount == 20)
            #expect(try reopened.undo() == updated(versions[29]))
            try reopened.checkInvariants()
            #expect(try KeepsakeStore(path: path).verify().problems == [])
        }
        if tagSet {
            try check({ TagSet(tags: Set($0.tags)) }, { $0.tags.insert("new") })
        } else {
            try check({ PinnedNote(tags: $0.tags) }, { $0.pinned = true })
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
