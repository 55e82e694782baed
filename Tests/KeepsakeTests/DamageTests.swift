import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// Damage to a store is caught: every value read from a damaged copy is the undamaged store's
/// value, or reading it throws a typed error. Never a crash, never a wrong value.
@Suite struct DamageTests {
    let directory = TemporaryDirectory()

    /// What the undamaged store holds: every value of history "doc", newest first, and the
    /// snapshot.
    struct Expected {
        var values: [Doc]
        var snapshot: Doc
    }

    /// A store with a 40-version history (blobs of 1 KiB and more, tags) and a snapshot, its
    /// bytes, and what reading it must give.
    func sampleStore() throws -> (bytes: Data, expected: Expected) {
        let path = directory.path("sample.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var generator = SeededGenerator(seed: 11)
        var doc = history.value
        var values = [doc]
        for index in 0..<40 {
            DocEdits.edit(&doc, using: &generator)
            if index % 7 == 0 { doc.blob.append(Data(repeating: UInt8(index), count: 1_500)) }
            try history.append(doc, tag: index % 10 == 0 ? "t\(index)" : nil)
            if doc != values.last { values.append(doc) }
        }
        try Caretaker(store: store).save(doc, as: "latest")
        store.close()
        return (
            try Data(contentsOf: URL(fileURLWithPath: path)),
            Expected(values: values.reversed(), snapshot: doc)
        )
    }

    /// What reading a damaged copy gave: every value right, or a typed error first.
    enum Outcome: String {
        case right, typedError, verifyReports
    }

    /// Opens `path`, reads every version newest to oldest, the snapshot, and every version
    /// again redoing them; records an issue for a wrong value — among those read before a
    /// typed error too — or an untyped error.
    func read(_ path: String, _ expected: Expected, _ context: String) -> Outcome {
        var values: [Doc] = []
        var redone: [Doc] = []
        var reported = false
        /// Whether every value read so far is the undamaged store's; records an issue at the
        /// first that is not.
        func readRight() -> Bool {
            let count = expected.values.count
            let read =
                values.enumerated().map {
                    (version: count - 1 - $0.offset, value: $0.element, redoing: false)
                }
                + redone.enumerated().map { (version: $0.offset + 1, value: $0.element, redoing: true) }
            for (version, value, redoing) in read
            where !(0..<count).contains(version) || value != expected.values[count - 1 - version] {
                Issue.record(
                    "\(context): version \(version) read back wrong\(redoing ? " redoing" : "") (verify reported: \(reported))"
                )
                return false
            }
            return true
        }
        do throws(KeepsakeError) {
            let store = try KeepsakeStore(path: path)
            reported = try !store.verify().isOK
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            values.append(history.value)
            // Bounded: a damaged count must not make a loop of this.
            while history.hasUndo, values.count <= expected.values.count { values.append(try history.undo()) }
            let snapshot = try Caretaker(store: store).restore("latest", as: Doc.self)
            guard readRight() else { return .right }
            if values.count != expected.values.count {
                // Fewer versions than written: only acceptable when verify says why.
                if !reported {
                    Issue.record(
                        "\(context): \(values.count) of \(expected.values.count) versions, unreported")
                }
                return .verifyReports
            }
            if snapshot != expected.snapshot {
                Issue.record("\(context): the snapshot read back wrong")
            }
            while history.hasRedo, redone.count < expected.values.count { redone.append(try history.redo()) }
            guard readRight() else { return .right }
            if redone.count != expected.values.count - 1, !reported {
                Issue.record(
                    "\(context): \(redone.count) of \(expected.values.count - 1) versions redone, unreported")
            }
            return reported ? .verifyReports : .right
        } catch {
            // Every call above throws KeepsakeError, typed: the compiler checks it. The values
            // read before it must be right all the same, and what a read says is damage,
            // `verify` reports (read-only, when the store did not open for writing).
            _ = readRight()
            if !reported, !RichStore.verifyReports(path) {
                Issue.record("\(context): \(error), and verify reports nothing")
            }
            return .typedError
        }
    }

    /// Batches of the byte-flip test that once found a wrong value (a soak's), kept in every
    /// run: each flips a byte the defence it led to must catch.
    nonisolated static let regressions: [UInt64] = [22351, 500070, 720017, 720052, 720074]

    @Test(arguments: Array(Soak.batches(usually: 5)) + regressions)
    func flippedBytesGiveTheRightValueOrATypedError(batch: UInt64) throws {
        let (original, expected) = try sampleStore()
        var generator = SeededGenerator(seed: 0xDA4A_0000 + batch)
        var outcomes: [Outcome: Int] = [:]
        for variant in 0..<60 {
            let path = directory.path("flip-\(batch)-\(variant).keepsake")
            let offset = try writeWithAByteFlipped(original, to: path, using: &generator)
            outcomes[
                read(path, expected, "batch \(batch) variant \(variant) offset \(offset)"), default: 0] += 1
        }
        print("flipped bytes, batch \(batch): \(outcomes)")
    }

    /// Every integer column of the store, as `(table, column)`.
    static let integerColumns: [(String, String)] = [
        ("history", "maximum_versions"), ("history", "revision"), ("history", "undo_count"),
        ("history", "redo_count"), ("history", "version_count"), ("scope", "level"), ("scope", "floor"),
        ("version", "position"),
        ("version", "scope_level"), ("version", "is_undone"), ("version", "revision"),
        ("version", "undo_count"),
        ("version", "redo_count"), ("version", "version_count"), ("checkpoint", "position"),
        ("blob", "size"), ("version", "format"),
    ]

    /// Numbers inside the stored patches, as JSON paths within a patch; the first change of
    /// every version is set (`version.changes` holds `[path, kind, patch, digest]` elements).
    static let patchNumbers = [
        "$.offset", "$.oldCount", "$.newCount", "$.insertions[0].offset", "$.removals[0].offset",
    ]

    @Test(arguments: [0, -1, Int64.min, Int64.max])
    func everyStoredIntegerAtAnExtremeGivesATypedErrorOrTheRightValue(number: Int64) throws {
        let (original, expected) = try sampleStore()
        var outcomes: [Outcome: Int] = [:]
        var targets: [String] = Self.integerColumns.map { "UPDATE OR IGNORE \($0.0) SET \($0.1) = \(number)" }
        targets += Self.patchNumbers.map {
            "UPDATE version SET changes = json_set(changes, '$[0][2]\($0.dropFirst())', \(number)) "
                + "WHERE json_type(changes, '$[0][2]\($0.dropFirst())') IS NOT NULL"
        }
        for (index, sql) in targets.enumerated() {
            let path = directory.path("number-\(number)-\(index).keepsake")
            try original.write(to: URL(fileURLWithPath: path))
            // The shell's way in: no foreign keys, no CHECK constraints, digests left as they were.
            let connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA foreign_keys = OFF")
            try connection.execute("PRAGMA ignore_check_constraints = ON")
            try connection.execute(sql)
            connection.close()
            outcomes[read(path, expected, "\(sql)"), default: 0] += 1
        }
        print("extreme integers \(number): \(outcomes)")
    }
}

/// Damage that makes SQLite lose rows without reporting corruption — a b-tree page that lost
/// its last cells — reads as damage, not as a shorter history or a snapshot never saved.
@Suite struct LostRowsTests {
    let directory = TemporaryDirectory()

    /// A store with four versions of "doc" and a snapshot "latest", closed.
    func store() throws -> String {
        let (path, store, _, doc) = try titled("lost.keepsake", versions: 4)
        try Caretaker(store: store).save(doc, as: "latest")
        store.close()
        return path
    }

    /// A store named `name`, open, whose history "doc" (no limit) has `versions` versions
    /// titled "title 1", "title 2"…; the last one's value.
    func titled(_ name: String, versions: Int) throws -> (
        path: String, store: KeepsakeStore, history: KeepsakeHistory<Doc>, doc: Doc
    ) {
        let path = directory.path(name)
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        for n in 1...versions {
            doc.title = "title \(n)"
            try history.append(doc)
        }
        return (path, store, history, doc)
    }

    @Test func aNewestVersionLostIsDamageNotAnOlderHistory() throws {
        let path = try store()
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("DELETE FROM version WHERE position = 4")
        connection.close()
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { error in
            guard case .damaged(_, let reason) = error as? KeepsakeError else { return false }
            return reason == "its newest stored version (3) does not hold its counters"
        }
    }

    /// Opening replays the versions after the newest checkpoint: the first of them lost (a
    /// killed app leaves versions after it) left its change out of the value, every later
    /// version following in order, and the history opened without the note.
    @Test func aVersionJustAboveTheNewestCheckpointLostIsDamageNotLeftOut() throws {
        let (path, store, history, last) = try titled("checkpoint-gap.keepsake", versions: 5)
        var doc = last
        try history.writeCheckpoint()
        doc.note = "a note"
        try history.append(doc)
        doc.title = "title 7"
        try history.append(doc)
        store.close()
        let connection = try SQLiteConnection(path: path)
        try #require(
            try connection.query("SELECT position FROM checkpoint ORDER BY position") { $0.int64(0) } == [
                nil, 5,
            ])
        try connection.execute("DELETE FROM version WHERE position = 6")
        connection.close()
        #expect(
            throws: KeepsakeError.damaged(
                history: "doc", reason: "version 6 is missing from its versions read in order")
        ) {
            try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        }
        #expect(
            throws: KeepsakeError.damaged(
                history: "doc", reason: "version 6 is missing from its versions, where version 7 is read")
        ) {
            try KeepsakeStore(path: path, options: .init(readOnly: true)).valueJSON(ofHistory: "doc")
        }
    }

    /// Undoes versions 5 and 4 of `history`, pushes a scope with one version and a checkpoint
    /// on it, closes `store`, and renumbers version 4's entry, the first, of the index of undone
    /// versions (history, scope, position) in the file's bytes to `position`.
    func renumberVersion4sUndoneEntry(
        to position: UInt8, undoingTwiceAndClosingInAScope history: KeepsakeHistory<Doc>,
        of store: KeepsakeStore,
        at path: String
    ) throws {
        _ = try history.undo()
        _ = try history.undo()
        try history.pushNewScope()
        var doc = history.value
        doc.status = .review
        try history.append(doc)
        try history.writeCheckpoint()
        store.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let connection = try SQLiteConnection(path: path, readOnly: true)
        let root = try #require(
            try connection.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'version_undone'"))
        connection.close()
        let entry = try #require(BTreeCells(bytes, root: Int(root)).cells.first)
        try #require(bytes[entry.body] == 4)
        bytes[entry.body] = position
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    /// An entry of the index of undone versions renumbered where it lies (version 4's entry
    /// reading 5): redo, which finds the version to redo through it, redid version 5 on the
    /// value of version 3, a value the history never had. Opened above a
    /// checkpoint in a scope, nothing reads the root's undone versions until the scope ends.
    @Test func anUndoneVersionsIndexEntryRenumberedIsDamageNotAnotherRedo() throws {
        let (path, store, history, last) = try titled("undone-index.keepsake", versions: 4)
        var doc = last
        // Version 5 changes what version 4 does not: redone on version 3, it would apply.
        doc.note = "note 5"
        try history.append(doc)
        try renumberVersion4sUndoneEntry(to: 5, undoingTwiceAndClosingInAScope: history, of: store, at: path)

        let damaged = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(damaged.value.status == .review)
        _ = try damaged.undoAndPopCurrentScope()
        #expect(
            damaged.value
                == Doc(title: "title 3", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        let error = KeepsakeError.damaged(
            history: "doc", reason: "its redo begins at version 5, above version 4, which it undid")
        #expect(throws: error) { try damaged.redo() }
        // The tags list the undo stack first, whose check reads the index too.
        #expect(
            throws: KeepsakeError.damaged(
                history: "doc", reason: "its undo begins at version 3, though version 4 is its newest applied"
            )
        ) { try damaged.tags() }
        #expect(damaged.value.title == "title 3" && damaged.value.note == nil)
    }

    /// The same damage the other way (version 4's entry reading 3): undo, which ends the
    /// applied versions where the index says the undone ones begin, undid version 2 from the
    /// value of version 3, removing version 2's note and keeping version 3's title.
    @Test func anUndoneVersionsIndexEntryRenumberedDownIsDamageNotAnotherUndo() throws {
        let (path, store, history, last) = try titled("undone-index-down.keepsake", versions: 1)
        var doc = last
        doc.note = "note 2"
        try history.append(doc)
        for n in 3...5 {
            doc.title = "title \(n)"
            try history.append(doc)
        }
        try renumberVersion4sUndoneEntry(to: 3, undoingTwiceAndClosingInAScope: history, of: store, at: path)

        let damaged = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        _ = try damaged.undoAndPopCurrentScope()
        #expect(damaged.value.title == "title 3" && damaged.value.note == "note 2")
        #expect(
            throws: KeepsakeError.damaged(
                history: "doc", reason: "its undo begins at version 2, below version 3, which is applied")
        ) { try damaged.undo() }
        #expect(damaged.value.title == "title 3" && damaged.value.note == "note 2")
    }

    @Test func aSnapshotLostFromItsIndexIsDamageNotMissing() throws {
        let path = try store()
        // The name index's leaf page says it holds no cells: SQLite finds no such name through
        // it, and reports nothing.
        var (bytes, header) = try onlyPage(of: "sqlite_autoindex_snapshot_1", in: path)
        (bytes[header + 3], bytes[header + 4]) = (0, 0)
        try bytes.write(to: URL(fileURLWithPath: path))
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        #expect {
            _ = try caretaker.restore("latest", as: Doc.self)
        } throws: { error in
            guard case .undecodableSnapshot("latest", [], let reason) = error as? KeepsakeError else {
                return false
            }
            return reason.hasSuffix("the file is damaged")
        }
        #expect(try caretaker.restore("never saved", as: Doc.self) == nil)
    }

    @Test func aSnapshotNameIndexPointingAtAnotherSnapshotIsDamageNotItsValue() throws {
        let path = try store()
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        var other = Doc.empty
        other.title = "other's own"
        try caretaker.save(other, as: "other")
        caretaker.store.close()
        // The index entry of "other" (namespace, name, then its row id, 2, in one byte) points
        // at row 1, "latest"'s.
        var (bytes, header) = try onlyPage(of: "sqlite_autoindex_snapshot_1", in: path)
        let page = header..<header + 4_096
        let entry = try #require(bytes[page].firstRange(of: Data("other".utf8) + [2]))
        bytes[entry.upperBound - 1] = 1
        try bytes.write(to: URL(fileURLWithPath: path))
        let damaged = Caretaker(store: try KeepsakeStore(path: path))
        #expect {
            _ = try damaged.restore("other", as: Doc.self)
        } throws: { error in
            guard case .undecodableSnapshot("other", [], let reason) = error as? KeepsakeError else {
                return false
            }
            return reason == "the index of snapshot names points it at another row: the file is damaged"
        }
        #expect(throws: KeepsakeError.self) { try damaged.delete("other", of: Doc.self) }
    }

    @Test func aSnapshotPropertyRowLostIsDamageNotAMissingProperty() throws {
        let path = directory.path("snapshot.keepsake")
        var doc = Doc.empty
        (doc.title, doc.note) = ("saved", "a note")
        do {
            let caretaker = Caretaker(store: try KeepsakeStore(path: path))
            try caretaker.save(doc, as: "saved")
            #expect(try caretaker.snapshots().map(\.propertyCount) == [6])
            caretaker.store.close()
        }
        // A model that gained `note` since would restore it as nil too, and rightly so: the
        // count saved with the snapshot tells a row lost from a property never saved.
        try damage(path, "DELETE FROM snapshot_property WHERE path = 'note'")
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        func isLost(_ error: any Error) -> Bool {
            guard case .undecodableSnapshot("saved", [], let reason) = error as? KeepsakeError else {
                return false
            }
            return reason == "it holds 5 of the 6 property rows it was saved with: the file is damaged"
        }
        #expect(throws: Never.self) {
            try caretaker.value(at: "title", in: "saved", of: Doc.self, as: String.self)
        }
        #expect { try caretaker.restore("saved", as: Doc.self) } throws: { isLost($0) }
        #expect { try caretaker.value(at: "note", in: "saved", of: Doc.self, as: String.self) } throws: {
            isLost($0)
        }
        // What `RestorableObject.properties(withKey:from:)` reads.
        #expect { try caretaker.properties(of: Doc.self, named: "saved") } throws: { isLost($0) }
        #expect(
            try caretaker.store.verify().problems == [
                "snapshot saved: it holds 5 of the 6 property rows it was saved with"
            ])
    }

    /// What makes a restore say a snapshot is damaged, `verify` reports, naming the snapshot and
    /// the property: a property that no longer matches its digest, and a blob it refers to lost
    /// (its long JSON's, or its `Data`'s). Until 2026-12 `verify` checked only how many property
    /// rows a snapshot holds, and called a store sound whose snapshot no restore could read.
    @Test(arguments: [
        (
            #"UPDATE snapshot_property SET value = '"changed"' WHERE path = 'title'"#, "title",
            "snapshot saved, property title: it does not match its digest"
        ),
        (
            "DELETE FROM blob WHERE id = (SELECT json_extract(value, '$.$json') FROM snapshot_property "
                + "WHERE path = 'note')", "note",
            "blob 2 is referred to by snapshot saved, property note but missing"
        ),
        (
            "DELETE FROM blob WHERE id = (SELECT json_extract(value, '$.$blob') FROM snapshot_property "
                + "WHERE path = 'blob')", "blob",
            "blob 1 is referred to by snapshot saved, property blob but missing"
        ),
    ])
    func aSnapshotPropertyDamagedIsReportedByVerify(sql: String, property: String, problem: String) throws {
        let path = directory.path("snapshot.keepsake")
        var doc = Doc.empty
        (doc.title, doc.note, doc.blob) = (
            "saved", String(repeating: "long ", count: 300), Data(repeating: 7, count: 2048)
        )
        do {
            let caretaker = Caretaker(store: try KeepsakeStore(path: path))
            try caretaker.save(doc, as: "saved")
            #expect(try caretaker.store.verify().problems == [])
            caretaker.store.close()
        }
        try damage(path, sql)
        let caretaker = Caretaker(store: try KeepsakeStore(path: path, options: .init(readOnly: true)))
        #expect { try caretaker.restore("saved", as: Doc.self) } throws: { error in
            guard case .undecodableSnapshot("saved", let at, _) = error as? KeepsakeError else {
                return false
            }
            return at == [.property(property)]
        }
        #expect(try caretaker.store.verify().problems == [problem])
    }

    /// A store whose four versions change four different properties, so that leaving one out
    /// of the replay breaks no later one (made in a scope of their own when `inScope`); closed.
    func independentVersions(inScope: Bool = false) throws -> (path: String, newest: Doc) {
        let path = directory.path("independent.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        if inScope { try history.pushNewScope() }
        var doc = history.value
        for edit in [
            { (doc: inout Doc) in doc.title = "a" }, { $0.status = .review }, { $0.note = "n" },
            { $0.scores["s"] = 1 },
        ] {
            edit(&doc)
            try history.append(doc)
        }
        store.close()
        return (path, doc)
    }

    /// Runs `sql` on the store at `path` the shell's way: no foreign keys, no CHECK constraints.
    func damage(_ path: String, _ sql: String) throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("PRAGMA ignore_check_constraints = ON")
        try connection.execute(sql)
        connection.close()
    }

    /// Whether `error` is `.damaged` of "doc" for `reason`.
    func isDamaged(_ error: any Error, _ reason: String) -> Bool {
        guard case .damaged("doc", let found) = error as? KeepsakeError else { return false }
        return found == reason
    }

    /// Expects every read of history "doc" without opening it — its current value and the value
    /// at each version `versions` lists, typed and as JSON, and its timeline (`keepsake log`) —
    /// to be the history's damage error for `reason`, as opening is, and the store's summary
    /// (`keepsake inspect`) to list it with that damage.
    func expectReadsRefused(_ path: String, versions: [Int], _ reason: String) throws {
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try store.summary().histories.map(\.damage) == [reason])
        for version in [nil] + versions {
            #expect { try store.value(ofHistory: "doc", atVersion: version, as: Doc.self) } throws: {
                isDamaged($0, reason)
            }
            #expect { try store.valueJSON(ofHistory: "doc", atVersion: version) } throws: {
                isDamaged($0, reason)
            }
        }
        #expect { try store.timeline(of: "doc") } throws: { isDamaged($0, reason) }
    }

    /// Damage to the version rows that SQLite reads without a word, and what opening says of
    /// it: a version deleted from the middle (without its check, the history opens without
    /// that version's edit); flagged undone behind the counters (the same); every flag neither
    /// applied nor undone (it opens as its base value).
    @Test(arguments: [
        ("DELETE FROM version WHERE position = 2", "version 2 is missing from its versions read in order"),
        (
            "UPDATE version SET is_undone = 1 WHERE position = 2",
            "version 3 is redone after version 2, undone in its own scope"
        ),
        (
            "UPDATE version SET is_undone = -1",
            "its newest stored version (4) is neither applied nor undone (is_undone = -1)"
        ),
    ])
    func aDamagedVersionRowIsDamageWhenOpenedNotALostEdit(sql: String, reason: String) throws {
        let (path, _) = try independentVersions()
        try damage(path, sql)
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: {
            isDamaged($0, reason)
        }
    }

    /// A version's flag set to a number neither applied (0) nor undone (1) while the newest is
    /// intact (found by the rich store's one-cell damage soak, seeds 76100 and 76101): opening
    /// reads the versions applied as those flagged 0, and reading a version by number read any
    /// flag but 1 as applied, so the value at version 4 came back with version 2's edit in it
    /// and without an error; the timeline listed it as applied. Each is the history's damage
    /// error naming the version.
    @Test func aVersionFlaggedNeitherAppliedNorUndoneIsDamageWhenReadByNumber() throws {
        let (path, newest) = try independentVersions()
        #expect(try KeepsakeStore(path: path).value(ofHistory: "doc", atVersion: 4, as: Doc.self) == newest)
        try damage(path, "UPDATE version SET is_undone = 37 WHERE position = 2")
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        // `keepsake log` showed it as applied.
        #expect { try store.timeline(of: "doc") } throws: {
            isDamaged($0, "version 2 is marked undone as 37, neither 0 nor 1")
        }
        for version in [1, 2, 3, 4] {
            #expect {
                try store.value(ofHistory: "doc", atVersion: version, as: Doc.self)
            } throws: { isDamaged($0, "version 2 is marked undone as 37, neither 0 nor 1") }
            #expect { try store.valueJSON(ofHistory: "doc", atVersion: version) } throws: {
                isDamaged($0, "version 2 is marked undone as 37, neither 0 nor 1")
            }
        }
        #expect(
            try store.verify().problems == [
                "history doc: its stored stack sizes do not match its versions",
                "history doc: a stored number is out of range",
            ])
        // Opening reads the applied versions as those flagged 0, and finds one missing.
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { isDamaged($0, "version 2 is missing from its versions read in order") }
    }

    /// An undone version flagged applied, as damage can leave it: the stack still reads as one
    /// (applied versions, then undone ones), but the history's counters say one version more is
    /// undone. Opening refused it; reading the current value without opening it gave version 4's
    /// value where the app had undone to version 3, and `keepsake log` listed version 4 as
    /// applied, both without an error (found by the rich store's one-cell damage soak, batch
    /// 78002). Each is now the history's damage error, in the root scope and in an inner one.
    @Test(arguments: [false, true])
    func anUndoneVersionFlaggedAppliedIsDamageWhenReadWithoutOpening(inScope: Bool) throws {
        let (path, newest) = try independentVersions(inScope: inScope)
        var undone = newest
        undone.scores = [:]
        do {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            _ = try history.undo()
            #expect(history.value == undone)
        }
        let before = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try before.value(ofHistory: "doc", as: Doc.self) == undone)
        #expect(try before.timeline(of: "doc")?.map(\.undone) == [false, false, false, false, true])
        before.close()
        try damage(path, "UPDATE version SET is_undone = 0 WHERE position = 4")
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let reason = "it holds 0 undone versions where its counters say 1"
        try expectReadsRefused(path, versions: [1, 2, 3, 4], reason)
        #expect(
            try store.verify().problems == ["history doc: its stored stack sizes do not match its versions"])
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { isDamaged($0, reason) }
    }

    /// A stack size on the newest version (where every write keeps the history's counters) set
    /// to `NULL` or below 0, as damage can leave it. Read as 0, a `NULL` redo count on a history
    /// with nothing undone opened it as sound (found by the rich store's one-cell damage soak:
    /// an undo count `NULL` opened and then failed on a later write), and `verify`, comparing
    /// with `!=`, reported nothing. Each is the history's damage error naming the column's
    /// value, for opening and for the reads without opening, and `verify` reports it.
    @Test(arguments: ["undo_count", "redo_count", "version_count"], [nil, -1] as [Int64?])
    func aStackSizeThatIsNotACountIsDamage(column: String, value: Int64?) throws {
        let (path, _) = try independentVersions()
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA ignore_check_constraints = ON")
        try connection.execute(
            "UPDATE version SET \(column) = ? WHERE position = 4", [value.map { .integer($0) } ?? .null])
        connection.close()
        let reason = "its newest stored version (4) holds a stack size of \(value.map(String.init) ?? "NULL")"
        try expectReadsRefused(path, versions: [1, 4], reason)
        #expect(
            try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems == [
                "history doc: its stored stack sizes do not match its versions",
                "history doc: \(reason)",
            ])
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { isDamaged($0, reason) }
    }

    /// A date no digest covers, set by damage to one no clock gives (the log printed version 1
    /// as written in the year 5838270): `verify` reports it, naming the history or snapshot.
    @Test(arguments: [
        (
            "UPDATE history SET created_at = -1e300",
            "history doc: a stored date is out of range (before 1970 or after 9999)"
        ),
        (
            "UPDATE version SET created_at = 9e18 WHERE position = 2",
            "history doc: a stored date is out of range (before 1970 or after 9999)"
        ),
        (
            "UPDATE version SET modified_at = -1 WHERE position = 4",
            "history doc: a stored date is out of range (before 1970 or after 9999)"
        ),
        (
            "UPDATE checkpoint SET created_at = 1e300",
            "history doc: a stored date is out of range (before 1970 or after 9999)"
        ),
        (
            "UPDATE snapshot SET created_at = 1e300",
            "snapshot kept: its date is out of range (before 1970 or after 9999)"
        ),
    ])
    func aDateNoClockGivesIsReportedByVerify(sql: String, problem: String) throws {
        let (path, newest) = try independentVersions()
        let store = try KeepsakeStore(path: path)
        try Caretaker(store: store).save(newest, as: "kept")
        #expect(try store.verify().problems == [])
        store.close()
        try damage(path, sql)
        #expect(try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems == [problem])
    }

    /// What the inspection calls (``KeepsakeStore/timeline(of:)``, which `keepsake log` prints,
    /// and ``KeepsakeStore/changes(ofVersion:in:)``, which `keepsake show` prints) say of a
    /// version whose changes are damaged: the history's damage error naming the version, as
    /// opening the history would, never SQLite's bare "malformed JSON" nor a damaged path shown
    /// as if stored.
    @Test(arguments: [
        (
            #"UPDATE version SET changes = substr(changes, 1, 20) WHERE position = 3"#,
            "the changes of version 3 are not readable: a patch is not closed"
        ),
        (
            #"UPDATE version SET changes = replace(changes, '"note"', '"title"') WHERE position = 3"#,
            "change 0 of version 3 (at title) does not match its digest"
        ),
    ])
    func aVersionsDamagedChangesAreDamageWhenInspected(sql: String, reason: String) throws {
        let (path, _) = try independentVersions()
        do {
            let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
            #expect(
                try store.timeline(of: "doc")?.map(\.paths) == [
                    [], ["title"], ["status"], ["note"], ["scores"],
                ])
            #expect(try store.changes(ofVersion: 3, in: "doc")?.map(\.path) == ["note"])
        }
        try damage(path, sql)
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect { try store.timeline(of: "doc") } throws: { isDamaged($0, reason) }
        #expect { try store.changes(ofVersion: 3, in: "doc") } throws: { isDamaged($0, reason) }
        #expect(try store.changes(ofVersion: 2, in: "doc")?.map(\.path) == ["status"])
        let problems = try store.verify().problems
        #expect(!problems.isEmpty && problems.allSatisfy { $0.hasPrefix("history doc, version 3: ") })
    }

    @Test func aVersionItsScopeNoLongerListsIsDamageNotSkippedByUndo() throws {
        let (path, newest) = try independentVersions()
        // Version 3 now claims a scope that does not exist: undo, which reads the current
        // scope's versions, would pass it over and undo version 2 in its place.
        try damage(path, "UPDATE version SET scope_level = 7 WHERE position = 3")
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(history.value == newest)
        var third = newest
        third.scores = [:]
        #expect(try history.undo() == third)
        #expect {
            try history.undo()
        } throws: {
            isDamaged($0, "its undo begins at version 2, though version 3 is its newest applied")
        }
        #expect(history.value == third)
    }

    @Test func aVersionItsScopeNoLongerListsIsDamageNotSquashedAway() throws {
        let (path, newest) = try independentVersions(inScope: true)
        // The scope's second version now claims another scope: ending the scope would start it
        // from a value that still holds that version's change.
        try damage(path, "UPDATE version SET scope_level = 7 WHERE position = 2")
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(history.value == newest)
        #expect {
            try history.popCurrentScope()
        } throws: {
            isDamaged($0, "version 2 is of scope 7, though its scope rows end at 1")
        }
        #expect(history.value == newest)
    }

    @Test func aVersionItsScopeNoLongerListsIsDamageNotFoldedAwayUncounted() throws {
        let (path, newest) = try independentVersions()
        // The limit stored before the damage: a new one would check every version at open.
        try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: 4).close()
        // Version 1 now claims a scope that does not exist: pruning to four versions, which
        // folds the root scope's oldest, would fold versions 1 and 2 and count one.
        try damage(path, "UPDATE version SET scope_level = 7 WHERE position = 1")
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: 4)
        #expect(history.value == newest)
        var fifth = newest
        fifth.title = "fifth"
        #expect {
            try history.append(fifth)
        } throws: {
            isDamaged($0, "its 1 oldest versions end at version 2, though they follow the floor at 0")
        }
        #expect(history.value == newest)
        #expect(history.versionCount == 4)
    }

    @Test func aVersionItsScopeNoLongerListsIsDamageNotAnotherVersionTagged() throws {
        let (path, _) = try independentVersions(inScope: true)
        // The scope's newest version now claims the root scope: the tag would go on version 3,
        // and undoing to it would undo one version too few.
        try damage(path, "UPDATE version SET scope_level = 0 WHERE position = 4")
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect {
            try history.tag("saved")
        } throws: {
            isDamaged($0, "its undo begins at version 3, though version 4 is its newest applied")
        }
        // Reading the tags finds the scope one version short, too.
        #expect {
            try history.tags()
        } throws: {
            isDamaged($0, "its scope holds 3 applied and 0 undone versions where its counters say 4 and 0")
        }
    }

    /// A version of the root scope lost from between two others while a scope is open, or its
    /// flag or scope changed (found by fuzzing): nothing the open scope counts changes, and
    /// opening (two look-ups, versions kept being consecutive) cannot see it. Ending the scope
    /// recounted the root scope without it, and undo then stopped one version short; reading
    /// the root scope's tags listed one fewer. Each is damage, and nothing changes.
    @Test(
        arguments: ["pop", "undo and pop", "root tags", "new limit"],
        [
            (
                "DELETE FROM version WHERE position = 2", "version 2 is missing from its versions kept",
                ["history doc: its stored stack sizes do not match its versions"]
            ),
            (
                "UPDATE version SET is_undone = -115 WHERE position = 2",
                "version 2 is marked undone as -115, neither 0 nor 1",
                ["history doc: a stored number is out of range"]
            ),
            (
                "UPDATE version SET is_undone = 1 WHERE position = 2",
                "version 3 is applied, after an undone version of its scope",
                ["history doc: an applied version comes after an undone one in the same scope"]
            ),
            (
                "UPDATE version SET scope_level = 1 WHERE position = 2",
                "version 3 is of scope 0, after a version of scope 1",
                [
                    "history doc: a version of an outer scope comes after one of an inner scope",
                    "history doc: its stored stack sizes do not match its versions",
                ]
            ),
        ])
    func aVersionOfAnOuterScopeLostIsDamageNotAShorterHistory(
        reading: String, damage: (sql: String, reason: String, problems: [String])
    ) throws {
        let path = directory.path("outer.keepsake")
        do {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            var doc = history.value
            // Each version changes a property of its own, so that replaying them without one
            // breaks no later one.
            let edits: [(inout Doc) -> Void] = [
                { $0.status = .review }, { $0.note = "n" }, { $0.scores["s"] = 1 }, { $0.title = "4" },
                { $0.title = "5" }, { $0.title = "6" },
            ]
            for (index, edit) in edits.enumerated() {
                if index == 4 { try history.pushNewScope() }
                edit(&doc)
                try history.append(doc)
            }
            // Closing stores the current value whole: opening replays nothing.
            try history.close()
            store.close()
        }
        try self.damage(path, damage.sql)
        // Verified read-only, as `keepsake verify` does: SQLite's integrity check then leaves
        // CHECK constraints (`is_undone IN (0, 1)`) unchecked.
        let problems = try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems
        #expect(problems == damage.problems)
        let store = try KeepsakeStore(path: path)
        let lost = damage.reason
        if reading == "new limit" {
            // Folding under a new limit recounts the versions too.
            #expect {
                _ = try store.history("doc", initialValue: Doc.empty, maximumVersions: 3)
            } throws: {
                isDamaged($0, lost)
            }
            return
        }
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect(history.value.title == "6")
        #expect(history.scopeLevel == 1)
        #expect {
            switch reading {
            case "pop": try history.popCurrentScope()
            case "undo and pop": _ = try history.undoAndPopCurrentScope()
            default: _ = try history.tags(inScopeLevel: 0)
            }
        } throws: {
            isDamaged($0, lost)
        }
        #expect(history.value.title == "6")
        #expect((history.scopeLevel, history.versionCount) == (1, 6))
        #expect(try history.undo().title == "5")
    }

    /// A store whose root scope has three versions, each changing a property of its own (the
    /// newest `undoing` of them undone), under an open scope with one version, 4; closed with
    /// no checkpoint, so that opening replays every applied version (or, `closingHistory`,
    /// with one on version 4, so that it replays none).
    func rootVersionsUnderAScope(undoing: Int, closingHistory: Bool = false) throws -> String {
        let path = directory.path("scoped.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        for edit in [{ (doc: inout Doc) in doc.title = "a" }, { $0.status = .review }, { $0.note = "n" }] {
            edit(&doc)
            try history.append(doc)
        }
        for _ in 0..<undoing { _ = try history.undo() }
        try history.pushNewScope()
        doc = history.value
        doc.scores["s"] = 1
        try history.append(doc)
        if closingHistory { try history.close() }
        store.close()
        return path
    }

    /// The partial index of undone versions damaged so that it lists none, under an open scope
    /// (found by fuzzing the file's bytes): undo, redo and the stack sizes read the undone
    /// versions through it. Reading the root scope's tags listed no redo stack, and ending the
    /// scope recounted the root's redo stack as empty: two undone versions gone from redo, with
    /// no error.
    @Test(arguments: [
        // Version 4 undone first (the index lists it), so that the scope ends with no change.
        ("pop", "the index of undone versions lists 1 of them, though the table holds 3"),
        ("root tags", "the index of undone versions lists 0 of them, though the table holds 2"),
    ])
    func anIndexThatLostAnOuterScopesUndoneVersionsIsDamageNotAnEmptyRedoStack(
        reading: String, reason: String
    )
        throws
    {
        let path = try rootVersionsUnderAScope(undoing: 2, closingHistory: true)
        // The index's leaf page says it holds no cells: SQLite finds no undone version through
        // it, and reports nothing.
        var (bytes, header) = try onlyPage(of: "version_undone", in: path)
        (bytes[header + 3], bytes[header + 4]) = (0, 0)
        try bytes.write(to: URL(fileURLWithPath: path))
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect {
            if reading == "pop" {
                _ = try history.undo()
                try history.popCurrentScope()
            } else {
                _ = try history.tags(inScopeLevel: 0)
            }
        } throws: {
            isDamaged($0, reason)
        }
        #expect(history.scopeLevel == 1)
    }

    /// A version of the root scope whose flag damage flipped, under an open scope (found by
    /// fuzzing): opening replays every applied version since the newest checkpoint, passing
    /// over undone ones as the root scope's redo stack, and the counters count the open scope's
    /// versions only. An undone version flagged applied was applied on a value that lacked the
    /// one undone before it; an applied one flagged undone was left out. Their changes touching
    /// other properties, the value opened was one the app never had. A version replayed above
    /// an undone version of its own scope is damage.
    @Test(arguments: [
        (undoing: 2, sql: "UPDATE version SET is_undone = 0 WHERE position = 3"),
        (undoing: 0, sql: "UPDATE version SET is_undone = 1 WHERE position = 2"),
    ])
    func aRootVersionFlaggedOtherwiseUnderAScopeIsDamageNotReplayed(undoing: Int, sql: String) throws {
        let path = try rootVersionsUnderAScope(undoing: undoing)
        try damage(path, sql)
        // Salvage, which redoes the applied versions the same way, stops short of the version
        // redone out of place: what it saves is a value the history had.
        let salvaged = directory.path("salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: salvaged)
        #expect(report.histories.map(\.version) == [1])
        #expect(
            try KeepsakeStore(path: salvaged).history("doc", initialValue: Doc.empty, maximumVersions: nil)
                .value
                == Doc(title: "a", status: .draft, items: [], blob: Data(), scores: [:], note: nil))
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: {
            isDamaged($0, "version 3 is redone after version 2, undone in its own scope")
        }
        // Read without opening it, the value was one the app never had too.
        try expectReadsRefused(
            path, versions: [1, 2, 3, 4], "version 3 is redone after version 2, undone in its own scope")
        #expect(
            try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems == [
                "history doc: an applied version comes after an undone one in the same scope"
            ])
    }

    /// As above, where the version flagged applied changed what the undone one below it had
    /// changed (the title, "b" to "c", over "a" to "b"): replaying it on a value without that
    /// change fails as a change the model cannot read would, and opening said so — *the value
    /// at `title` is not the version this reversion was made from* — as if the app's model had
    /// changed (found by the rich store's one-cell damage test). It is the history's damage.
    @Test func aFlagFlippedOnAChangeOverAnUndoneOneIsDamageNotAChangeThatDoesNotApply() throws {
        let path = directory.path("scoped.keepsake")
        do {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            var doc = history.value
            for title in ["a", "b", "c"] {
                doc.title = title
                try history.append(doc)
            }
            for _ in 0..<2 { _ = try history.undo() }
            try history.pushNewScope()
            doc = history.value
            doc.scores["s"] = 1
            try history.append(doc)
            #expect(history.value.title == "a")
        }
        try damage(path, "UPDATE version SET is_undone = 0 WHERE position = 3")
        let reason = "version 3 is redone after version 2, undone in its own scope"
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { isDamaged($0, reason) }
        try expectReadsRefused(path, versions: [1, 2, 3, 4], reason)
    }

    /// One flipped bit in the flag of the version a scope started from, or of the undone
    /// version above it (found by fuzzing): the rows keep a shape a store can have, the
    /// scope's versions simply starting one version lower or higher. Opening replayed the
    /// scope's version on a value without version 3's change, or with the one the app undid:
    /// a value the app never had. Schema 9 stores the version each scope started from.
    @Test(arguments: [
        (
            undoing: 0, sql: "UPDATE version SET is_undone = 1 WHERE position = 3",
            reason:
                "its scope 1 started from version 3, which is no longer an applied version of an outer scope"
        ),
        (
            undoing: 1, sql: "UPDATE version SET is_undone = 0 WHERE position = 3",
            reason: "version 3 is applied, above version 2 that its scope 1 started from"
        ),
    ])
    func aFlagFlippedWhereAScopeStartsIsDamageNotAnotherStart(undoing: Int, sql: String, reason: String)
        throws
    {
        let path = try rootVersionsUnderAScope(undoing: undoing)
        try damage(path, sql)
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: {
            isDamaged($0, reason)
        }
        // Read without opening it, the value was one the app never had too.
        try expectReadsRefused(path, versions: [1, 2, 3, 4], reason)
        #expect(
            try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems == [
                "history doc, scope 1: the version it started from is no longer applied, or one above it is"
            ])
    }

    /// A tag whose text damage changed into another valid tag: undoing to it would go to a
    /// version the app never tagged so. Each tag's digest covers its text and its place.
    @Test(arguments: [
        (
            "UPDATE version SET tag = '\"a\"' WHERE position = 3",
            "the tag of version 3 does not match its digest"
        ),
        (
            "UPDATE version SET (tag, tag_digest) = (SELECT tag, tag_digest FROM version WHERE position = 2) "
                + "WHERE position = 3",
            "the tag of version 3 does not match its digest"
        ),
        (
            "UPDATE scope SET base_tag = '\"a\"' WHERE level = 0",
            "the tag of a scope's first version does not match its digest"
        ),
        // A tag lost, its digest left (found by fuzzing): untagging clears both.
        (
            "UPDATE version SET tag = NULL WHERE position = 3",
            "the tag of version 3 is lost: its digest remains"
        ),
        (
            "UPDATE scope SET base_tag = NULL WHERE level = 0",
            "the tag of a scope's first version is lost: its digest remains"
        ),
    ])
    func aDamagedTagIsDamageNotAnotherVersionsTag(sql: String, reason: String) throws {
        let path = directory.path("tags.keepsake")
        do {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            try history.tag("base")
            var doc = history.value
            for (n, tag) in ["x", "a", "b", "c"].enumerated() {
                doc.title = "t\(n)"
                try history.append(doc, tag: tag)
            }
            store.close()
        }
        try damage(path, sql)
        let problems = try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems
        #expect(
            problems.count == 1
                && problems[0].hasSuffix(
                    sql.contains("NULL")
                        ? ": its tag is lost: its digest remains" : ": its tag does not match its digest")
        )
        // A version's tag is read with the version, as opening replays it; the base value's,
        // when the tags are read.
        guard sql.contains("scope") else {
            #expect {
                try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
            } throws: {
                isDamaged($0, reason)
            }
            return
        }
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
        #expect { try history.tags() } throws: { isDamaged($0, reason) }
        #expect { try history.undo(to: "a") } throws: { isDamaged($0, reason) }
        #expect(history.value.title == "t3")
    }

    /// Damage to the rows that frame the versions — the scope rows, the root scope's floor, the
    /// stored values — that SQLite reads without a word, and what opening says of it. Without
    /// these checks: a lost or renumbered scope row opened the history in the wrong scope (its
    /// first undo reported damage, or undid the wrong scope's version); a raised floor hid the
    /// oldest versions from undo; no stored value read as a value that does not decode.
    @Test(arguments: [
        ("DELETE FROM scope WHERE level = 0", "its scope rows are at levels 1, 2, not 0 to 1"),
        ("DELETE FROM scope WHERE level = 1", "its scope rows are at levels 0, 2, not 0 to 1"),
        (
            "DELETE FROM scope WHERE level = 2",
            "its newest version is of scope 2, though its scope rows end at 1"
        ),
        ("UPDATE scope SET level = 5 WHERE level = 1", "its scope rows are at levels 0, 2, 5, not 0 to 2"),
        (
            "UPDATE scope SET floor = 2 WHERE level = 0",
            "its versions kept run from the floor at 2 to version 6, 4 of them, though its counters say 6"
        ),
        ("DELETE FROM checkpoint", "it has no stored value, not even its base value"),
    ])
    func aDamagedScopeFloorOrValueIsDamageWhenOpened(sql: String, reason: String) throws {
        let path = directory.path("scoped.keepsake")
        do {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            var doc = history.value
            for (n, scoped) in [(1, false), (2, false), (3, false), (4, true), (5, false), (6, true)] {
                if scoped { try history.pushNewScope() }
                doc.title = "t\(n)"
                try history.append(doc)
            }
            #expect(history.scopeLevel == 2)
            store.close()
        }
        try damage(path, sql)
        for readOnly in [true, false] {
            #expect {
                _ = try KeepsakeStore(path: path, options: .init(readOnly: readOnly)).history(
                    "doc", initialValue: Doc.empty, maximumVersions: nil)
            } throws: {
                isDamaged($0, reason)
            }
        }
        // `keepsake verify` reports it too, in its own words (its queries of the scope rows,
        // the stack sizes and the base value).
        #expect(try !KeepsakeStore(path: path, options: .init(readOnly: true)).verify().isOK)
    }

    @Test func anUndamagedStoreWithScopesRedoAndAFloorOpensAsWritten() throws {
        // The checks above on a store that has every legitimate gap: undone versions below a
        // scope's, a redo stack, versions folded under a limit.
        let path = directory.path("legit.keepsake")
        var expected: Doc
        do {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: 8)
            var doc = history.value
            for n in 1...20 {
                doc.title = "t\(n)"
                try history.append(doc)
            }
            _ = try history.undo()
            _ = try history.undo()
            try history.pushNewScope()
            doc = history.value
            doc.note = "in scope"
            try history.append(doc)
            doc.scores["x"] = 1
            try history.append(doc)
            _ = try history.undo()
            expected = history.value
            store.close()
        }
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Doc.empty, maximumVersions: 8)
        #expect(history.value == expected)
        #expect(history.hasRedo)
    }

    @Test func aTableReadFromAnotherObjectsPagesIsCorruptNotEmpty() throws {
        let path = try store()
        // The version table's root page number now names the history name index's page: SQLite
        // would read no versions from it, and report nothing.
        let connection = try SQLiteConnection(path: path)
        let index = try #require(
            try connection.scalarInt(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'sqlite_autoindex_history_1'"))
        try connection.execute("PRAGMA writable_schema = ON")
        try connection.execute("UPDATE sqlite_schema SET rootpage = \(index) WHERE name = 'version'")
        connection.close()
        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { error in
            guard case .notAStore(path, let reason) = error as? KeepsakeError else { return false }
            return reason
                == "it is corrupt (sqlite_autoindex_history_1 and version share the root page \(index))"
        }
        #expect(throws: KeepsakeError.self) {
            _ = try KeepsakeStore(path: path, options: .init(readOnly: true))
        }
    }

    /// How many rows table `history` holds, read past its index.
    func historyRows(_ path: String) throws -> Int64? {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        return try connection.scalarInt("SELECT count(*) FROM history NOT INDEXED")
    }

    @Test func aHistoryLostFromItsNameIndexIsDamageNotANewHistory() throws {
        let path = try store()
        // The name index's leaf page says it holds no cells: SQLite finds no "doc" through it,
        // and reports nothing. Opening must not take that for a history never created (and
        // create it anew, empty, beside the one written).
        var (bytes, header) = try onlyPage(of: "sqlite_autoindex_history_1", in: path)
        (bytes[header + 3], bytes[header + 4]) = (0, 0)
        try bytes.write(to: URL(fileURLWithPath: path))
        let store = try KeepsakeStore(path: path)
        let lost = "the index of history names has lost it while the table holds it: the file is damaged"
        func isLost(_ error: any Error) -> Bool {
            guard case .damaged("doc", let reason) = error as? KeepsakeError else { return false }
            return reason == lost
        }
        #expect(
            performing: { _ = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil) },
            throws: isLost)
        #expect(performing: { _ = try store.timeline(of: "doc") }, throws: isLost)
        #expect(performing: { _ = try store.valueJSON(ofHistory: "doc") }, throws: isLost)
        #expect(performing: { try store.deleteHistory("doc") }, throws: isLost)
        #expect(try store.historyNames() == ["doc"])
        #expect(try store.summary().histories.map(\.name) == ["doc"])
        #expect(!(try store.verify().isOK))
        // The damaged index is never trusted with a miss: each is looked for in the table,
        // and the check that would trust it fails.
        for name in (0...IndexCheck.scannedMisses).map({ "new \($0)" }) {
            #expect(try store.timeline(of: name) == nil)
        }
        #expect(try store.database.write { $0.indexChecks["history"] } == .failed)
        #expect(performing: { _ = try store.timeline(of: "doc") }, throws: isLost)
        store.close()
        #expect(try historyRows(path) == 1)
    }

    /// A name the index lacks is looked for in the table only until the table's indexes have
    /// been checked against its rows, once per connection after a few misses: a new history or
    /// snapshot then costs no pass over every name.
    @Test func aMissAfterTheIndexesWereCheckedIsTrusted() throws {
        let path = try store()
        let store = try KeepsakeStore(path: path)
        #expect(try store.database.write { $0.indexChecks }.isEmpty)
        let fresh = try store.history("fresh", initialValue: Doc.empty, maximumVersions: nil)
        let misses = try #require(
            try store.database.write { connection -> Int? in
                guard case .misses(let count)? = connection.indexChecks["history"] else { return nil }
                return count
            })
        #expect(misses > 0)
        for name in (misses...IndexCheck.scannedMisses).map({ "absent \($0)" }) {
            #expect(try store.timeline(of: name) == nil)
        }
        #expect(try store.database.write { $0.indexChecks["history"] } == .passed)
        let caretaker = Caretaker(store: store)
        for name in (0...IndexCheck.scannedMisses).map({ "snapshot \($0)" }) {
            try caretaker.save(Doc.empty, as: name)
        }
        #expect(try store.database.write { $0.indexChecks["snapshot"] } == .passed)
        let other = try store.history("other", initialValue: Doc.empty, maximumVersions: nil)
        var doc = fresh.value
        doc.title = "fresh"
        try fresh.append(doc)
        #expect(try store.historyNames() == ["doc", "fresh", "other"])
        #expect(try store.history("fresh", initialValue: Doc.empty, maximumVersions: nil).value == doc)
        #expect(other.versionCount == 0)
        #expect(try store.integrityCheck() == ["ok"])
    }

    /// The only page of the index of checkpoints, or of undone versions, says it holds no
    /// cells: SQLite finds none through it (not even the base value; no version to redo), and
    /// reports nothing. Opening says which index lost them, and salvage reads them past it:
    /// the history comes back whole, not lost, nor stopped at a version it only seemed to lose.
    @Test(arguments: [
        (
            "checkpoint_by_position",
            "the index of checkpoints has lost its stored values while the table holds them: the file is damaged"
        ),
        (
            "version_undone",
            "the index of undone versions lists 0 of them while the table holds 1: the file is damaged"
        ),
    ])
    func rowsLostFromTheirIndexAreDamageAndSalvageReadsPastIt(index: String, reason: String) throws {
        let (path, store, history, doc) = try titled("indexed.keepsake", versions: 6)
        try history.writeCheckpoint()
        var newest = doc
        newest.title = "after the checkpoint"
        try history.append(newest)
        var undone = newest
        undone.title = "undone"
        try history.append(undone)
        #expect(try history.undo() == newest)
        try history.close()
        store.close()
        var (bytes, header) = try onlyPage(of: index, in: path)
        (bytes[header + 3], bytes[header + 4]) = (0, 0)
        try bytes.write(to: URL(fileURLWithPath: path))

        #expect {
            _ = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { error in
            guard case .damaged("doc", let said) = error as? KeepsakeError else { return false }
            return said == reason
        }
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try reader.verify().problems == ["the file is corrupt; the history checks were skipped"])
        if index == "checkpoint_by_position" {
            // A version read without opening looks the base value up the same way.
            #expect {
                _ = try reader.valueJSON(ofHistory: "doc", atVersion: 3)
            } throws: { error in
                guard case .damaged("doc", let said) = error as? KeepsakeError else { return false }
                return said == reason
            }
        }
        reader.close()

        let salvaged = directory.path("salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: salvaged)
        #expect(report.lost.isEmpty)
        #expect(report.histories.map { "\($0.version) \($0.damage ?? "whole")" } == ["7 whole"])
        let copy = try KeepsakeStore(path: salvaged)
        #expect(try copy.history("doc", initialValue: Doc.empty, maximumVersions: nil).value == newest)
        #expect(try copy.verify().isOK)
        copy.close()
    }

    @Test func aHistoryNameIndexPointingAtAnotherHistoryIsDamageNotItsValue() throws {
        let path = try store()
        let store = try KeepsakeStore(path: path)
        let other = try store.history("other", initialValue: Doc.empty, maximumVersions: nil)
        var doc = other.value
        doc.title = "other's own"
        try other.append(doc)
        store.close()
        // The index entry of "other" (its name, then its row id, 2, in one byte) points at row 1,
        // "doc"'s: SQLite follows it and reports nothing.
        var (bytes, header) = try onlyPage(of: "sqlite_autoindex_history_1", in: path)
        let page = header..<header + 4_096
        let entry = try #require(bytes[page].firstRange(of: Data("other".utf8) + [2]))
        #expect(bytes[page][entry.upperBound...].firstRange(of: Data("other".utf8)) == nil)
        bytes[entry.upperBound - 1] = 1
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try KeepsakeStore(path: path).history("other", initialValue: Doc.empty, maximumVersions: nil)
        } throws: { error in
            guard case .damaged("other", let reason) = error as? KeepsakeError else { return false }
            return reason
                == #"the index of history names points it at the row of history "doc": the file is damaged"#
        }
        #expect(try historyRows(path) == 2)
    }
}

/// The change held back by debouncing is checked like the rest of the history: held rows that
/// damage changed, lost or added give `.damaged` when the history is opened, never the held
/// value wrong or an edit silently gone.
@MainActor @Suite struct HeldChangeDamageTests {
    let directory = TemporaryDirectory()

    /// A store whose history "doc" has one version and holds a change to two fields, left held
    /// when the store was closed; the recorded value and the held one.
    func heldStore() throws -> (path: String, recorded: Doc, held: Doc) {
        let path = directory.path("held.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var doc = history.value
        doc.title = "recorded"
        try history.append(doc)
        let recorded = doc
        history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        doc.title = "held title"
        doc.note = "held note"
        try history.append(doc)
        store.close()
        return (path, recorded, doc)
    }

    func open(_ path: String, readOnly: Bool = false) throws -> KeepsakeHistory<Doc> {
        try KeepsakeStore(path: path, options: .init(readOnly: readOnly)).history(
            "doc", initialValue: Doc.empty, maximumVersions: nil)
    }

    @Test func anUndamagedHeldChangeOpensAsItsVersion() throws {
        let (path, recorded, held) = try heldStore()
        #expect(
            try KeepsakeStore(path: path).database.read {
                try $0.scalarInt("SELECT count(*) FROM pending_change")
            } == 2)
        // A read-only open does not record it: it reads the recorded value.
        #expect(try open(path, readOnly: true).value == recorded)
        let history = try open(path)
        #expect(history.value == held)
        #expect(history.versionCount == 2)
        try history.checkInvariants()
    }

    /// Each damage SQLite reads without a word, and what opening says of it, writable or not.
    @Test(arguments: [
        (
            "UPDATE pending_change SET patch = replace(patch, 'held', 'hold') WHERE ordinal = 0",
            "its change held back by debouncing does not match its digest"
        ),
        (
            "DELETE FROM pending_change WHERE ordinal = 1",
            "its change held back by debouncing does not match its digest"
        ),
        (
            "INSERT INTO pending_change SELECT history_id, ordinal + 2, path, kind, patch FROM pending_change",
            "its change held back by debouncing does not match its digest"
        ),
        (
            "UPDATE pending_change SET ordinal = 3 - ordinal",
            "its change held back by debouncing does not match its digest"
        ),
        (
            "DELETE FROM pending_change",
            "its change held back by debouncing was lost: its counters hold a digest, no row"
        ),
        (
            "UPDATE version SET held_digest = NULL",
            "it holds 2 rows of a held change its counters know nothing of"
        ),
    ])
    func damagedHeldRowsAreDamageWhenOpened(sql: String, reason: String) throws {
        let (path, _, _) = try heldStore()
        let connection = try SQLiteConnection(path: path)
        try connection.execute(sql)
        connection.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for readOnly in [true, false] {
            #expect {
                _ = try open(path, readOnly: readOnly)
            } throws: { error in
                guard case .damaged("doc", let found) = error as? KeepsakeError else { return false }
                return found == reason
            }
        }
        #expect(
            try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems == [
                "history doc: \(reason)"
            ])
        // Refused before anything was written: the held rows are still there to be inspected.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// A held change's `Data`, stored as a blob, lost: opening says so, writable or not, and
    /// `verify` names the blob and what refers to it. Until 2026-12 `verify` checked the blob
    /// references of versions and checkpoints only, and called the store sound.
    @Test func aHeldChangesBlobLostIsDamageThatVerifyReports() throws {
        let (path, _, _) = try heldStore()
        do {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
            history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
            var doc = history.value
            doc.blob = Data(repeating: 9, count: 4096)
            try history.append(doc)
            store.close()
        }
        let connection = try SQLiteConnection(path: path)
        let blob = try #require(try connection.scalarInt("SELECT max(id) FROM blob"))
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("DELETE FROM blob WHERE id = ?", [.integer(blob)])
        connection.close()
        for readOnly in [true, false] {
            #expect { _ = try open(path, readOnly: readOnly) } throws: { error in
                guard case .undecodableValue("doc", let reason) = error as? KeepsakeError else {
                    return false
                }
                return reason == "its change held back by debouncing does not apply: The stored change at "
                    + "`blob` does not decode as Data: Blob \(blob) is missing: the store is damaged (at new)"
            }
        }
        #expect(
            try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems == [
                "blob \(blob) is referred to by a held change but missing"
            ])
    }

    /// Every byte of the held rows' cells, flipped one bit at a time (a character of a patch
    /// becomes another that still parses, the common case): each copy opens with the held value
    /// (recorded as a version) or throws a typed error.
    @Test(arguments: [0x01, 0x04, 0x20] as [UInt8])
    func everyFlippedByteOfTheHeldRowsGivesTheHeldValueOrATypedError(bit: UInt8) throws {
        let (path, _, held) = try heldStore()
        let (bytes, start) = try onlyPage(of: "pending_change", in: path)
        // The cells, from the page header's start of the cell content area to the page's end.
        let cells = start + (Int(bytes[start + 5]) << 8 | Int(bytes[start + 6]))..<start + 4_096
        #expect(cells.count > 60)
        let copy = directory.path("flipped.keepsake")
        var (right, errors): (Int, Int) = (0, 0)
        for offset in cells {
            var damaged = bytes
            damaged[offset] ^= bit
            try damaged.write(to: URL(fileURLWithPath: copy))
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
            do throws(KeepsakeError) {
                let store = try KeepsakeStore(path: copy)
                let value = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil).value
                store.close()
                #expect(value == held, "byte \(offset - start) of the page, bit \(bit)")
                right += 1
            } catch {
                errors += 1
            }
        }
        // Most flips land in a patch or a path, and are caught.
        #expect(errors > cells.count / 2)
        print("held rows, bit \(bit): \(right) right, \(errors) typed errors")
    }

    /// A held change written before schema 5 has no digest: the migration marks it as such,
    /// and the next open records it unchecked.
    @Test func aHeldChangeFromBeforeSchema5OpensUnchecked() throws {
        let path = directory.path("schema-4.keepsake")
        try FileManager.default.copyItem(atPath: GoldenStores.url(schema: 4).path, toPath: path)
        let store = try KeepsakeStore(path: path)
        let digests = try store.database.read {
            try $0.query(
                """
                SELECT h.name, v.held_digest FROM version v JOIN history h ON h.id = v.history_id
                WHERE v.revision IS NOT NULL ORDER BY h.name
                """
            ) { "\($0.text(0)!) \($0.int64(1).map(String.init) ?? "NULL")" }
        }
        #expect(digests == ["golden NULL", "limited NULL", "scoped NULL", "typing 0"])
        let typing = try store.history("typing", initialValue: GoldenDocument.initial)
        #expect(typing.value.title == GoldenSchema2.heldTitle)
        try typing.checkInvariants()
    }
}

/// The bytes of the store at `path` and where in them the only page of b-tree `name` (a table
/// or an index small enough to fit one page) starts.
func onlyPage(of name: String, in path: String) throws -> (bytes: Data, start: Int) {
    let connection = try SQLiteConnection(path: path)
    let page = try #require(
        try connection.scalarInt("SELECT pageno FROM dbstat WHERE name = ?", [.text(name)]))
    #expect(try connection.scalarInt("SELECT count(*) FROM dbstat WHERE name = ?", [.text(name)]) == 1)
    connection.close()
    return (try Data(contentsOf: URL(fileURLWithPath: path)), Int(page - 1) * 4_096)
}
