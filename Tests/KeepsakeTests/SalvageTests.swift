import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// `KeepsakeStore.salvage(from:to:)` copies what a damaged store still proves into a new store:
/// each history at a value it had (the newest its rows prove), each intact snapshot whole, and
/// says what it left out. Never a value the history did not have.
///
/// An actor, so that each test has one of its own for the debounced histories it writes: on the
/// main actor, each would wait for every other test running there.
@Suite(.removesTemporaryDirectories) actor SalvageTests {
    let directory = TemporaryDirectory()

    /// What the undamaged sample store holds.
    struct Expected {
        /// History "doc"'s value after each version, by version number (0: the base value).
        var doc: [Int: Doc]
        /// The newest version of "doc".
        var newest: Int
        /// History "other"'s current value.
        var other: Doc
        var snapshot: Doc
    }

    /// A store with a 60-version history (blobs, tags), a second history with an undone version
    /// and a change held back by debouncing, and a snapshot; its bytes, and its values.
    func sampleStore() throws -> (bytes: Data, expected: Expected) {
        let path = directory.path("sample.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var generator = SeededGenerator(seed: 17)
        var doc = history.value
        var values = [0: doc]
        for index in 0..<60 {
            DocEdits.edit(&doc, using: &generator)
            if index % 9 == 0 { doc.blob.append(Data(repeating: UInt8(index), count: 1_500)) }
            try history.append(doc, tag: index % 10 == 0 ? "t\(index)" : nil)
            values[history.versionCount] = history.value
        }
        let other = try store.history("other", initialValue: Doc.empty)
        var second = other.value
        for title in ["one", "two", "three"] {
            second.title = title
            try other.append(second)
        }
        _ = try other.undo()
        other.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        second = other.value
        second.title = "held"
        try other.append(second)
        try Caretaker(store: store).save(doc, as: "latest")
        // Closed the way an app that is killed closes: the held change stays held.
        let bytes = try Self.checkpointedBytes(path)
        return (bytes, Expected(doc: values, newest: history.versionCount, other: second, snapshot: doc))
    }

    /// The bytes of the store at `path` with its log copied in, read through a second connection.
    static func checkpointedBytes(_ path: String) throws -> Data {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// A copy of `bytes` at `name`, edited through a bare connection: the shell's way in, the
    /// digests left as they were.
    func copy(_ bytes: Data, as name: String, editedWith edit: (SQLiteConnection) throws -> Void) throws
        -> String
    {
        let path = directory.path(name)
        try bytes.write(to: URL(fileURLWithPath: path))
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try edit(connection)
        return path
    }

    /// Checks a salvaged store: it is sound, every history in `report` opens at the value
    /// `expected` has for the version the report names, with nothing to undo, and every
    /// snapshot kept restores whole. Returns how many histories were salvaged at their newest
    /// value.
    @discardableResult
    func checkSalvaged(_ output: String, _ report: SalvageReport, _ expected: Expected, _ context: String)
        throws -> Int
    {
        let store = try KeepsakeStore(path: output)
        defer { store.close() }
        #expect(try store.integrityCheck() == ["ok"], "\(context)")
        #expect(try store.verify().problems == [], "\(context)")
        #expect(try store.historyNames() == report.histories.map(\.name).sorted(), "\(context)")
        var newest = 0
        for salvaged in report.histories {
            let history = try store.history(salvaged.name, initialValue: Doc.empty)
            #expect(!history.hasUndo && !history.hasRedo, "\(context)")
            // A name damaged in its row or in the index of names is copied under the row's
            // and said: the history is the one the row names, or else the one the index names
            // (batch 80115 damaged the index's).
            var name = salvaged.name
            if !["doc", "other"].contains(name), let damage = salvaged.damage,
                let range = damage.range(of: "\" in the index of names")
            {
                let head = damage[..<range.lowerBound]
                name = String(head[head.index(after: try #require(head.lastIndex(of: "\"")))...])
            }
            switch name {
            case "doc":
                #expect(
                    history.value == expected.doc[salvaged.version], "\(context): doc at \(salvaged.version)")
                #expect(salvaged.version <= expected.newest, "\(context)")
                if salvaged.version == expected.newest { newest += 1 }
            case "other":
                // Its versions: "one", "two" (and "three", undone), then the held "held".
                if salvaged.version == 2, history.value.title == "held" {
                    #expect(history.value == expected.other, "\(context)")
                    newest += 1
                } else {
                    let titles = [2: "two", 1: "one", 0: ""]
                    #expect(
                        history.value.title == titles[salvaged.version],
                        "\(context): other at \(salvaged.version)")
                }
            default:
                Issue.record("\(context): a history the store never had, \(salvaged.name)")
            }
            try history.checkInvariants()
        }
        let kept = Set(report.snapshots.map(\.name))
        #expect(kept.isSubset(of: ["latest"]), "\(context)")
        if kept.contains("latest") {
            #expect(
                try Caretaker(store: store).restore("latest", as: Doc.self) == expected.snapshot, "\(context)"
            )
        } else {
            #expect(try Caretaker(store: store).restore("latest", as: Doc.self) == nil, "\(context)")
        }
        return newest
    }

    /// Salvages the damaged store at `path`: a typed error must leave no output, and a report
    /// a salvaged store ``checkSalvaged(_:_:_:_:)`` accepts, at the newest of everything when
    /// the report says nothing was damaged. Returns what happened: "typed error", "whole" or
    /// "partial".
    func salvageDamaged(_ path: String, _ expected: Expected, _ context: String) throws -> String {
        let output = path + ".salvaged"
        let report: SalvageReport
        do throws(KeepsakeError) {
            report = try KeepsakeStore.salvage(from: path, to: output)
        } catch {
            #expect(!FileManager.default.fileExists(atPath: output), "\(context)")
            return "typed error"
        }
        // A salvaged store that does not open, or holds a wrong value, fails the test.
        let newest = try checkSalvaged(output, report, expected, context)
        guard report.isComplete else { return "partial" }
        #expect(newest == 2 && report.snapshots.count == 1, "\(context)")
        return "whole"
    }

    @Test func aSoundStoreIsCopiedWholeEachHistoryAtItsNewestValue() throws {
        let (bytes, expected) = try sampleStore()
        let path = directory.path("sound.keepsake")
        try bytes.write(to: URL(fileURLWithPath: path))
        let output = directory.path("sound-salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: output)
        #expect(report.isComplete)
        #expect(report.lost == [])
        #expect(
            report.histories == [
                .init(
                    name: "doc", valueType: Caretaker.stableName(of: Doc.self), version: expected.newest,
                    newestVersion: expected.newest, damage: nil),
                .init(
                    name: "other", valueType: Caretaker.stableName(of: Doc.self), version: 2,
                    newestVersion: 2,
                    damage: nil),
            ])
        #expect(report.snapshots.map(\.name) == ["latest"])
        #expect(try checkSalvaged(output, report, expected, "sound") == 2)
        // Read, never written.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func aPrunedHistoryWithoutCheckpointsIsRedoneFromItsBaseValue() throws {
        let path = directory.path("pruned.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: 64)
        for index in 1...300 {
            var doc = history.value
            doc.title = "v\(index)"
            try history.append(doc)
            // As at a person's pace: the background work done before the next edit.
            store.checkpointer?.waitUntilIdle()
        }
        try history.close()
        store.close()
        let connection = try SQLiteConnection(path: path)
        // Pruning replaced the base value and deleted the versions under it.
        let oldest = try #require(try connection.scalarInt("SELECT min(position) FROM version"))
        #expect(oldest > 1)
        try connection.execute("DELETE FROM checkpoint WHERE position IS NOT NULL")
        connection.close()

        let output = directory.path("pruned-salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: output)
        #expect(report.isComplete && report.histories.map(\.version) == [300], "\(report)")
        #expect(try KeepsakeStore(path: output).history("doc", initialValue: Doc.empty).value.title == "v300")
    }

    /// An inner scope's versions are numbered after the outer scope's undone ones, which its
    /// value does not redo: a gap of stored versions, not of lost ones.
    @Test func anInnerScopeAboveUndoneVersionsIsSalvagedWhole() throws {
        let path = directory.path("scoped.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        for index in 1...6 {
            var doc = history.value
            doc.title = "outer \(index)"
            try history.append(doc)
        }
        _ = try history.undo()
        _ = try history.undo()
        try history.pushNewScope()
        for index in 1...3 {
            var doc = history.value
            doc.status = index.isMultiple(of: 2) ? .review : .final
            doc.scores["inner"] = index
            try history.append(doc)
        }
        let value = history.value
        store.close()
        let output = directory.path("scoped-salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: output)
        #expect(report.isComplete, "\(report)")
        #expect(report.histories.map(\.version) == [9])
        #expect(try KeepsakeStore(path: output).history("doc", initialValue: Doc.empty).value == value)
    }

    /// Each version's flag flipped, or its scope moved a level, in a history with an inner scope
    /// above the root's undone versions, an undone version in that scope and a change held
    /// back: the rows may still read as a history can be, and the salvaged value is one the
    /// history had. Before, an undone root version flagged applied under the scope was redone
    /// with the scope's versions and the held change on a value without it, and an undone
    /// version of the scope flagged applied had the held change redone on it: values the app
    /// never had, with the damage said (found from the rich store's one-cell damage).
    @Test func aFlagOrScopeChangedSalvagesOnlyAValueTheHistoryHad() throws {
        let path = directory.path("scoped.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var had = [history.value]
        // Each title over the one before: a version redone without the one below it fails.
        func append(_ count: Int, marked mark: String) throws {
            for index in 1...count {
                var doc = history.value
                doc.title += "\(mark)\(index)"
                doc.scores[mark] = index
                try history.append(doc)
                had.append(history.value)
            }
        }
        try append(6, marked: "r")
        for _ in 0..<2 { _ = try history.undo() }
        try history.pushNewScope()
        try append(3, marked: "i")
        _ = try history.undo()
        had.append(history.value)
        history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        var held = history.value
        held.note = "held"
        try history.append(held)
        had.append(held)
        // Closed the way an app that is killed closes: the held change stays held.
        let bytes = try Self.checkpointedBytes(path)
        let whole = directory.path("whole.salvaged")
        #expect(try KeepsakeStore.salvage(from: path, to: whole).isComplete)
        #expect(try KeepsakeStore(path: whole).history("doc", initialValue: Doc.empty).value == held)
        var outcomes: [String: Int] = [:]
        for position in 1...9 {
            for (index, change) in [
                "is_undone = 1 - is_undone", "scope_level = scope_level + 1",
                "scope_level = scope_level - 1",
            ].enumerated() {
                let damaged = try copy(bytes, as: "damaged-\(position)-\(index).keepsake") {
                    try $0.execute("PRAGMA ignore_check_constraints = ON")
                    try $0.execute("UPDATE version SET \(change) WHERE position = \(position)")
                }
                let context = "version \(position): \(change)"
                let output = damaged + ".salvaged"
                let report: SalvageReport
                do throws(KeepsakeError) {
                    report = try KeepsakeStore.salvage(from: damaged, to: output)
                } catch {
                    #expect(!FileManager.default.fileExists(atPath: output), "\(context)")
                    outcomes["typed error", default: 0] += 1
                    continue
                }
                let value = try KeepsakeStore(path: output).history("doc", initialValue: Doc.empty).value
                #expect(had.contains(value), "\(context): \(report)")
                #expect(!report.isComplete || value == held, "\(context): \(report)")
                outcomes[value == held ? "newest" : "had", default: 0] += 1
            }
        }
        print("salvage of a flag or scope changed: \(outcomes)")
    }

    /// Soak batch 80119, variant 14: a byte flipped in the key of history "other"'s row
    /// garbles the row (the table lists it under another id, with no name) and hides it from a
    /// search by its own id. Salvage skipped it without a word and called the report complete.
    /// The index of names still holds its name and id, and its versions and checkpoints are
    /// intact under that id: it is copied from them, at its newest value, the report saying what
    /// was lost of its row; the garbled row is reported lost. The damage is done where the row
    /// lies (``BTreeCells``), not at the soak's random offset, which a change of layout moves:
    /// its payload size gains a continuation bit and swallows the row id, so that the row is
    /// listed under the id its record header's size reads as.
    @Test func aHistoryWhoseRowIsGarbledIsRebuiltFromTheIndexOfNames() throws {
        let (original, expected) = try sampleStore()
        let path = directory.path("garbled.keepsake")
        try original.write(to: URL(fileURLWithPath: path))
        let connection = try SQLiteConnection(path: path, readOnly: true)
        let root = try #require(
            try connection.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'history'"))
        let id = try #require(try connection.scalarInt("SELECT id FROM history WHERE name = 'other'"))
        connection.close()
        let rowID = try #require(BTreeCells(original, root: Int(root)).cells.compactMap(\.rowID).last)
        try #require(original[rowID] == UInt8(id) && original[rowID - 1] < 0x80)
        var damaged = original
        damaged[rowID - 1] ^= 0x80
        try damaged.write(to: URL(fileURLWithPath: path))
        let report = try KeepsakeStore.salvage(from: path, to: path + ".salvaged")
        #expect(report.histories.map(\.name) == ["doc", "other"])
        let other = try #require(report.histories.last)
        #expect(other.version == 2 && other.newestVersion == 2)
        #expect(
            other.damage
                == "its row cannot be read: its name is the index of names', and its value type, creation date "
                + "and limit are lost (the salvage's date is given, and no limit)")
        #expect(report.lost.map(\.what) == ["the history of row \(original[rowID + 1])"])
        let store = try KeepsakeStore(path: path + ".salvaged")
        #expect(try store.history("other", initialValue: Doc.empty).value == expected.other)
        store.close()
        try checkSalvaged(path + ".salvaged", report, expected, "garbled")
    }

    /// A history that keeps no undo (a limit of 0, allowed from schema 11) is copied with its
    /// limit, as any other; from a store of schema 10, which refused 0, the 0 is damage, as
    /// `verify` says there, and the history is copied without a limit.
    @Test(arguments: [KeepsakeStore.schemaVersion, 10])
    func aLimitOfZeroIsCopiedFromAStoreThatAllowsIt(schema: Int) throws {
        let (bytes, expected) = try sampleStore()
        let path = try copy(bytes, as: "no-undo-\(schema).keepsake") {
            try $0.execute("UPDATE history SET maximum_versions = 0 WHERE name = 'other'")
            try $0.execute("PRAGMA user_version = \(schema)")
        }
        let damage =
            schema >= 11 ? nil : "its limit of versions is out of range (0): it is copied without one"
        #expect(
            try KeepsakeStore(path: path, options: .init(readOnly: true)).verify().problems
                == (damage == nil ? [] : ["history other: a stored number is out of range"]))
        let report = try KeepsakeStore.salvage(from: path, to: path + ".salvaged")
        #expect(report.histories.map(\.damage) == [nil, damage])
        #expect(report.lost.isEmpty)
        let summary = try KeepsakeStore(path: path + ".salvaged").summary()
        #expect(summary.histories.map(\.maximumVersions) == [nil, schema >= 11 ? 0 : nil])
        try checkSalvaged(path + ".salvaged", report, expected, "no undo \(schema)")
    }

    /// A date no clock gives and a limit no history has (damage no digest covers, which
    /// `verify` reports) are not copied: the salvage's date is given, the history copied
    /// without a limit, and the report says so. Copied, they made the salvaged store fail
    /// `verify` (a soak found it, batch 80202: a history's creation date).
    @Test func aDateOrLimitOutOfRangeIsNotCopied() throws {
        let (bytes, expected) = try sampleStore()
        let path = try copy(bytes, as: "dates.keepsake") {
            try $0.execute("PRAGMA ignore_check_constraints = ON")
            try $0.execute("UPDATE history SET created_at = 9e18, maximum_versions = -1 WHERE name = 'doc'")
            try $0.execute("UPDATE history SET created_at = -1e300 WHERE name = 'other'")
            try $0.execute("UPDATE snapshot SET created_at = -1")
        }
        let before = Date()
        let report = try KeepsakeStore.salvage(from: path, to: path + ".salvaged")
        #expect(
            report.histories.map(\.damage) == [
                "its creation date is out of range (9e+18): the salvage's date is given; "
                    + "its limit of versions is out of range (-1): it is copied without one",
                "its creation date is out of range (-1e+300): the salvage's date is given",
            ])
        #expect(
            report.lost == [
                .init(
                    what: "the date of snapshot \"latest\" of KeepsakeTestSupport.Doc",
                    reason: "it is out of range (-1.0): the salvage's date is given")
            ])
        #expect(report.snapshots.map(\.date).allSatisfy { $0 >= before })
        #expect(report.histories.map(\.version) == [expected.newest, 2])
        // As copied (opening a history below gives it the limit it is opened with).
        let summary = try KeepsakeStore(path: path + ".salvaged").summary()
        #expect(summary.histories.map(\.maximumVersions) == [nil, 1_000])
        #expect(summary.histories.allSatisfy { $0.created >= before })
        try checkSalvaged(path + ".salvaged", report, expected, "dates")
    }

    /// A version row whose position damage made negative (or that damage removed) stops the
    /// replay below it and says so: its change is never left out of a value said to be whole.
    @Test func aVersionRenumberedOrLostStopsTheReplayBelowIt() throws {
        let (bytes, expected) = try sampleStore()
        let doc = "(SELECT id FROM history WHERE name = 'doc')"
        let damaged = expected.newest - 3
        for (name, edit) in [
            (
                "renumbered",
                "UPDATE version SET position = -32 WHERE history_id = \(doc) AND position = \(damaged)"
            ),
            ("lost", "DELETE FROM version WHERE history_id = \(doc) AND position = \(damaged)"),
        ] {
            let path = try copy(bytes, as: "\(name).keepsake") {
                try $0.execute("PRAGMA ignore_check_constraints = ON")
                try $0.execute(edit)
            }
            let report = try KeepsakeStore.salvage(from: path, to: path + ".salvaged")
            #expect(!report.isComplete)
            let salvaged = try #require(report.histories.first { $0.name == "doc" })
            #expect(salvaged.version < damaged && salvaged.damage != nil, "\(name): \(salvaged)")
            try checkSalvaged(path + ".salvaged", report, expected, name)
        }
    }

    @Test func aDamagedVersionLeavesTheValueBeforeIt() throws {
        let (bytes, expected) = try sampleStore()
        // The changes of a version after the newest checkpoint rewritten.
        let doc = "(SELECT id FROM history WHERE name = 'doc')"
        var damaged = 0
        let path = try copy(bytes, as: "damaged.keepsake") { connection in
            let checkpoint = Int(
                try connection.scalarInt(
                    "SELECT coalesce(max(position), 0) FROM checkpoint WHERE history_id = \(doc)")
                    ?? 0)
            damaged = checkpoint + (expected.newest - checkpoint) / 2 + 1
            try connection.execute(
                "UPDATE version SET changes = json_set(changes, '$[0][0]', 'title') "
                    + "WHERE position = \(damaged) AND history_id = \(doc)")
        }
        let output = directory.path("damaged-salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: output)
        #expect(!report.isComplete)
        let salvaged = try #require(report.histories.first { $0.name == "doc" })
        #expect(salvaged.version == damaged - 1 && salvaged.newestVersion == expected.newest)
        #expect(salvaged.damage?.hasPrefix("version \(damaged): ") == true, "\(salvaged.damage ?? "")")
        #expect(report.histories.first { $0.name == "other" }?.damage == nil)
        #expect(report.lost == [])
        try checkSalvaged(output, report, expected, "version \(damaged)")
    }

    @Test func aCheckpointThatFailsItsDigestIsPassedOver() throws {
        let (bytes, expected) = try sampleStore()
        let doc = "(SELECT id FROM history WHERE name = 'doc')"
        var checkpoint: Int64 = 0
        let path = try copy(bytes, as: "checkpoint.keepsake") { connection in
            checkpoint = try #require(
                try connection.scalarInt("SELECT max(position) FROM checkpoint WHERE history_id = \(doc)"))
            try connection.execute(
                "UPDATE checkpoint SET value = json_set(value, '$.title', 'forged') "
                    + "WHERE position = \(checkpoint) AND history_id = \(doc)")
        }
        let output = directory.path("checkpoint-salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: output)
        let salvaged = try #require(report.histories.first { $0.name == "doc" })
        // From the checkpoint before it (the base value), every version redone.
        #expect(salvaged.version == expected.newest)
        #expect(
            salvaged.damage
                == "the checkpoint of version \(checkpoint): The stored history \"doc\" is damaged: "
                + "the checkpoint of version \(checkpoint) does not match its digest. Nothing was changed.")
        #expect(try checkSalvaged(output, report, expected, "checkpoint \(checkpoint)") == 2)
    }

    @Test func aDamagedSnapshotIsLeftOutAndSaid() throws {
        let (bytes, expected) = try sampleStore()
        let path = try copy(bytes, as: "snapshot.keepsake") { connection in
            try connection.execute("UPDATE snapshot_property SET value = '\"Final\"' WHERE path = 'title'")
        }
        let output = directory.path("snapshot-salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: output)
        #expect(report.snapshots == [])
        #expect(report.lost.map(\.what) == ["snapshot \"latest\" of \(Caretaker.stableName(of: Doc.self))"])
        #expect(report.lost.first?.reason.contains("digest") == true)
        #expect(try checkSalvaged(output, report, expected, "snapshot") == 2)
    }

    @Test func aFileAtTheOutputIsRefusedAndLeftAsItWas() throws {
        let (bytes, _) = try sampleStore()
        let path = directory.path("source.keepsake")
        try bytes.write(to: URL(fileURLWithPath: path))
        let output = directory.path("taken.keepsake")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: output))
        #expect {
            try KeepsakeStore.salvage(from: path, to: output)
        } throws: { error in
            guard case .cannotOpen(let refused, let reason) = error as? KeepsakeError else { return false }
            return refused == output && reason == "a file is already there; salvage writes a new store"
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data("mine".utf8))
    }

    @Test func aFileThatIsNoStoreGivesItsTypedErrorAndNoOutput() throws {
        let path = directory.path("text.keepsake")
        try Data(repeating: 0x41, count: 8_192).write(to: URL(fileURLWithPath: path))
        let output = directory.path("text-salvaged.keepsake")
        #expect {
            try KeepsakeStore.salvage(from: path, to: output)
        } throws: { error in
            guard case .notAStore = error as? KeepsakeError else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Batches of random byte flips: whatever a flip damages, salvage gives a typed error or a
    /// sound store whose every value is one the history had, at the version the report names.
    /// Soak batches that once found a salvaged history short of its newest version, or under
    /// another name, though the report said nothing: 70015 (a version flagged undone), 110004
    /// (a position in the index of versions, which listed it out of order), 130004 (a byte of
    /// a history's name), 80119 (a history row's key, which hid the row from a search by its
    /// id: the history was left out without a word). Kept in every run.
    nonisolated static let regressions: [UInt64] = [70015, 110004, 130004, 80119]

    @Test(arguments: Array(Soak.batches(usually: 2)) + regressions)
    func flippedBytesSalvageOnlyValuesTheHistoriesHad(batch: UInt64) throws {
        let (original, expected) = try sampleStore()
        var generator = SeededGenerator(seed: 0x5A17_0000 + batch)
        var outcomes: [String: Int] = [:]
        for variant in 0..<40 {
            let path = directory.path("flip-\(batch)-\(variant).keepsake")
            let offset = try writeWithAByteFlipped(original, to: path, using: &generator)
            let context = "batch \(batch) variant \(variant) offset \(offset)"
            outcomes[try salvageDamaged(path, expected, context), default: 0] += 1
        }
        print("salvage of flipped bytes, batch \(batch): \(outcomes)")
    }

    /// Every page but the first, in turn, overwritten with noise: SQLite then finds tables and
    /// indexes corrupt, not only rows that fail their digests. Salvage reads around the page.
    @Test func aPageOfNoiseLeavesOutWhatItHeldAndNothingElse() throws {
        let (original, expected) = try sampleStore()
        let pageSize = 4_096
        var generator = SeededGenerator(seed: 0x5A17_9A6E)
        var outcomes: [String: Int] = [:]
        for page in 1..<(original.count / pageSize) {
            var bytes = original
            for offset in page * pageSize..<(page + 1) * pageSize {
                bytes[offset] = UInt8.random(in: 0...255, using: &generator)
            }
            let path = directory.path("page-\(page).keepsake")
            try bytes.write(to: URL(fileURLWithPath: path))
            outcomes[try salvageDamaged(path, expected, "page \(page)"), default: 0] += 1
        }
        print("salvage of a page of noise: \(outcomes)")
        // Most pages hold a version, a checkpoint or a snapshot: their loss is said.
        #expect((outcomes["partial"] ?? 0) > (original.count / pageSize) / 2)
    }

    /// Every golden store is salvaged whole: each history at the value it opens at, each
    /// snapshot as saved, from every schema's rows.
    @Test(arguments: GoldenStoreTests.stores)
    func everyGoldenStoreIsSalvagedWhole(url: URL) throws {
        let output = directory.path("golden-salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: url.path, to: output)
        #expect(report.isComplete)
        let schema1 = url == GoldenSchema1.url
        #expect(
            report.histories.map(\.name).sorted()
                == (schema1 ? ["golden", "limited", "scoped"] : ["golden", "limited", "scoped", "typing"]))
        #expect(report.snapshots.map(\.name).sorted() == ["final", "saved", "v100"])
        let store = try KeepsakeStore(path: output)
        defer { store.close() }
        let top = GoldenSchema1.goldenAppends - GoldenSchema1.goldenUndone
        #expect(
            try store.history("golden", initialValue: GoldenDocument.initial).value
                == GoldenSchema1.golden[top])
        #expect(
            try store.history("limited", initialValue: GoldenDocument.initial).value
                == GoldenSchema1.limited[GoldenSchema1.limitedAppends])
        #expect(
            try store.history("scoped", initialValue: GoldenDocument.initial).value == GoldenSchema1.scoped[5]
        )
        if !schema1 {
            #expect(
                try store.history("typing", initialValue: GoldenDocument.initial).value.title
                    == GoldenSchema2.heldTitle)
        }
        #expect(
            try Caretaker(store: store).restore("v100", as: GoldenDocument.self) == GoldenSchema1.golden[100])
        #expect(
            try Caretaker(store: store, scope: "doc-1").restore("final", as: GoldenDocument.self)
                == GoldenSchema1.golden[GoldenSchema1.goldenAppends])
        let settings = GoldenSettings()
        try settings.restore(withKey: "saved", from: Caretaker(store: store))
        #expect(settings.theme == "light" && settings.fontSize == 14)
        #expect(try store.verify().problems == [])
        #expect(try store.integrityCheck() == ["ok"])
    }

    /// A store another process writes while it is salvaged — saving snapshots again, appending
    /// versions past a limit that prunes the oldest — is read as of one moment: every history
    /// and snapshot is copied, as it was then. Salvage used to read each row in a transaction
    /// of its own, and a snapshot saved again between the read of its row and of its
    /// properties was left out as damaged ("it holds 0 of the NULL property rows it was saved
    /// with").
    /// The snapshot `name` as `round` of the writer below saves it.
    static func saved(_ name: String, _ round: Int) -> Doc {
        var doc = Doc.empty
        doc.title = "\(name) \(round)"
        doc.items = [.init(id: 1, title: name, done: round % 2 == 0)]
        return doc
    }

    @Test func aStoreAnotherProcessWritesIsSalvagedAsOfOneMoment() async throws {
        let path = directory.path("live.keepsake")
        let names = (0..<30).map { "s\($0)" }
        let store = try KeepsakeStore(path: path)
        for name in names { try Caretaker(store: store).save(Self.saved(name, 0), as: name) }
        store.close()
        async let writer = #expect(processExitsWith: .success) {
            [path = path as String, names = names as [String]] in
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: 20)
            let caretaker = Caretaker(store: store)
            let end = ContinuousClock.now + .seconds(3)
            var round = 1
            while ContinuousClock.now < end {
                let name = names[round % names.count]
                try caretaker.save(SalvageTests.saved(name, round), as: name, replacingExisting: true)
                var doc = history.value
                doc.title = "v\(round)"
                try history.append(doc)
                round += 1
            }
        }
        var salvaged = 0
        let end = ContinuousClock.now + .seconds(3)
        while salvaged < 4 || ContinuousClock.now < end && salvaged < 40 {
            let output = directory.path("salvaged-\(salvaged).keepsake")
            let report = try KeepsakeStore.salvage(from: path, to: output)
            salvaged += 1
            #expect(report.lost == [])
            #expect(report.snapshots.count == names.count)
            for history in report.histories {
                #expect(history.damage == nil && history.version == history.newestVersion)
            }
            let copy = try KeepsakeStore(path: output)
            for name in names {
                let restored = try Caretaker(store: copy).restore(name, as: Doc.self)
                let round = Int(restored?.title.split(separator: " ").last ?? "") ?? -1
                #expect(restored == Self.saved(name, round))
            }
            #expect(try copy.verify().problems == [])
            copy.close()
        }
        _ = await writer
        #expect(salvaged >= 4)
    }
}
