import CSQLite
import Foundation
import KeepsakeTestSupport
import Observation
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

    /// How the app opens the history whose last writer held a change back.
    enum Opener: CaseIterable {
        /// `store.history(_:initialValue:)`: the throwing `KeepsakeHistory`.
        case history
        /// An observed model, its errors assigned to the model's property.
        case observedModel
        /// A `@Versioned` property.
        case versionedProperty
    }

    /// A model whose errors go to a property of its own.
    @Observable final class NoteModel {
        var note = Note()
        var versioningError: ReversionError?
    }

    /// A change held back by debouncing when the app stopped (it quit without `close()`, or was
    /// killed), opened on a full disk: the history opens, its value the held change, pending as
    /// an edit whose recording failed — `error` says why, `hasUndo` counts it, every write
    /// fails typed and keeps it, a controller let go of leaves it held — and the first
    /// operation with room records it as one version, before its own. Until 2026-12 the open
    /// failed (`.full`): the throwing history did not open, and an observed model or a
    /// `@Versioned` property started in memory at its first value, the document gone from
    /// the screen and its next edits from the next launch.
    @Test(
        .enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"),
        arguments: Opener.allCases)
    func aChangeHeldWhenTheAppStoppedIsPendingOnAFullDisk(opener: Opener) throws {
        let mount = try #require(TemporaryMount(size: "2m"))
        let path = mount.path + "/doc.keepsake"
        let (first, held, edited) = (
            Note(tags: ["first"]), Note(tags: ["first", "held"]), Note(tags: ["edited"])
        )
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Note())
            try history.append(first)
            history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            try history.append(held)
            #expect(history.versionCount == 1)
        }
        // Another process has the store open: its log's index is there.
        let other = try KeepsakeStore(path: path)
        #expect(try other.summary().histories.map(\.heldPaths) == [["tags"]])
        let filler = try mount.fill()
        func isOutOfRoom(_ error: (any Error)?) -> Bool {
            let error = (error as? KeepsakeError) ?? (error as? ReversionError)?.keepsakeError
            return error?.isOutOfRoom == true
        }

        switch opener {
        case .history:
            for _ in 0..<2 {
                // Let go of on the full disk, the change stays held for the next open.
                let history = try KeepsakeStore(path: path).history("doc", initialValue: Note())
                #expect(history.value == held && history.hasUndo && !history.hasRedo)
                #expect(history.versionCount == 1 && isOutOfRoom(history.error))
                #expect(
                    history.error?.description.contains(
                        "nothing was written: the change held back by debouncing when the history was last left "
                            + "stays held, as the value shows it, and the next operation records it") == true)
                #expect(throws: KeepsakeError.self) { try history.append(edited) }
                #expect(throws: KeepsakeError.self) { try history.undo() }
                #expect(history.value == held && history.versionCount == 1)
            }
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Note())
            try FileManager.default.removeItem(atPath: filler)
            try history.append(edited)
            #expect(history.versionCount == 3 && history.error == nil)
            try history.checkInvariants()
            let reopened = try KeepsakeStore(path: path).history("doc", initialValue: Note())
            #expect(reopened.value == edited && reopened.versionCount == 3)
            #expect(try reopened.undo() == held)
            #expect(try reopened.undo() == first)
            try reopened.checkInvariants()
        case .observedModel:
            let model = NoteModel()
            let controller = VersioningController(
                observing: model, at: \.note, storage: .keepsake(path: path, history: "doc"),
                errorMode: .assign(to: \.versioningError))
            #expect(controller.openingError == nil && model.note == held && controller.value == held)
            #expect(isOutOfRoom(model.versioningError) && isOutOfRoom(controller.error))
            controller.undo()
            #expect(isOutOfRoom(controller.error) && model.note == held && controller.versionCount == 1)
            try FileManager.default.removeItem(atPath: filler)
            // The held change is recorded, then undone.
            controller.undo()
            #expect(controller.error == nil && model.note == first && controller.versionCount == 2)
            controller.redo()
            #expect(model.note == held && !controller.hasRedo)
            try controller.checkInvariants()
        case .versionedProperty:
            struct Editor {
                @Versioned var note: Note

                init(path: String) {
                    _note = Versioned(wrappedValue: Note(), storage: .keepsake(path: path, history: "doc"))
                }
            }
            let editor = Editor(path: path)
            #expect(editor.$note.openingError == nil && editor.note == held)
            #expect(isOutOfRoom(editor.$note.error) && editor.$note.hasUndo)
            try FileManager.default.removeItem(atPath: filler)
            // Made from the value shown, the edit holds the held change's edits: one version
            // for both, as for any edit made on a pending one.
            editor.note = edited
            #expect(editor.$note.error == nil && editor.$note.versionCount == 2)
            editor.$note.undo()
            #expect(editor.note == first)
            try editor.$note.checkInvariants()
        }
        #expect(try other.summary().histories.map(\.heldPaths) == [[]])
        #expect(try other.verify().problems == [])
    }

    /// Such a pending change is the undo button's: recorded once there is room, it stays
    /// (observers of `hasUndo` are not told otherwise); refused outright then (longer than
    /// SQLite stores in one, the limit lowered here), it is taken back by undo, as any refused
    /// pending change is — and its stored rows with it, so that the next open neither records
    /// it nor fails on it.
    @Test(
        .enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"),
        arguments: [false, true])
    func aHeldChangePendingOnAFullDiskIsUndoable(refused: Bool) throws {
        let mount = try #require(TemporaryMount(size: "2m"))
        let path = mount.path + "/doc.keepsake"
        var held = Doc.empty
        held.blob = Data(repeating: 7, count: 3_000)
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
            history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            try history.append(held)
        }
        let other = try KeepsakeStore(path: path)
        let filler = try mount.fill()
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        #expect(history.value == held && history.hasUndo && history.versionCount == 0)
        #expect(history.error?.keepsakeError?.isOutOfRoom == true)
        try FileManager.default.removeItem(atPath: filler)
        let hasUndoChanges = Counter()
        withObservationTracking {
            _ = history.hasUndo
        } onChange: {
            hasUndoChanges.count += 1
        }
        if refused {
            _ = store.database.read { sqlite3_limit($0.handle, SQLITE_LIMIT_LENGTH, 2_000) }
            #expect(try history.undo() == .empty)
            #expect(hasUndoChanges.count == 1)
            #expect(history.value == .empty && !history.hasUndo && history.versionCount == 0)
            _ = store.database.read { sqlite3_limit($0.handle, SQLITE_LIMIT_LENGTH, 1_000_000_000) }
        } else {
            try history.flush()
            #expect(hasUndoChanges.count == 0)
            #expect(history.value == held && history.hasUndo && history.versionCount == 1)
        }
        try history.checkInvariants()
        #expect(try other.summary().histories.map(\.heldPaths) == [[]])
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
        #expect(reopened.value == (refused ? .empty : held) && reopened.versionCount == (refused ? 0 : 1))
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
            // The history opens, at that value (a held change pending when there is no room
            // to record it); only the store's file may need room to open for writing (its
            // log's index), and then says to open it read-only.
            do {
                let writer = try KeepsakeStore(path: path)
                let history = try writer.history("doc", initialValue: Doc.empty, maximumVersions: last.limit)
                #expect(history.value == last.value, "seed \(seed)")
                #expect(
                    history.error == nil || history.error?.keepsakeError?.isOutOfRoom == true, "seed \(seed)")
                writer.close()
            } catch {
                #expect(error.remedy == .openReadOnly, "seed \(seed): opening on the full disk gave \(error)")
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
