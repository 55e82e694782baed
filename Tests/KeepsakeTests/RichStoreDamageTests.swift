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
        /// A version's value read without opening the history (`valueJSON`), `nil` for none.
        case json(version: Int?, String?)
        /// That read refused with a typed error: the reader goes on.
        case refused(version: Int?)

        /// Whether a damaged copy's step `self` is what the undamaged store's `step` allows:
        /// the same, or a read of a version's value refused.
        func agrees(with step: Step) -> Bool {
            if case .refused(let version) = self, case .json(version, _) = step { return true }
            return self == step
        }
    }

    /// The versions whose values are read without opening the history: the current one, the
    /// base value, versions folded, kept, undone in the root scope, of the open scope, undone
    /// there, and one past the newest.
    static let versionsRead: [Int?] = [nil, 0, 1, 21, 22, 25, 29, 30, 32, 33, 36, 37, 38]

    /// What a reader gets from the store at `path`, in order: the values of ``versionsRead``,
    /// read-only; the value opened (the held change recorded), the tags, every value undoing to
    /// the start of each scope and ending it, every value redoing, undoing to the newest tag,
    /// and the snapshot; the tags of each scope; and the error that stopped it, if any.
    func trace(_ path: String, limit: Int = Self.limit) -> (steps: [Step], error: KeepsakeError?) {
        var steps: [Step] = []
        do throws(KeepsakeError) {
            let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
            for version in Self.versionsRead {
                do throws(KeepsakeError) {
                    steps.append(
                        .json(version: version, try reader.valueJSON(ofHistory: "doc", atVersion: version)))
                } catch {
                    steps.append(.refused(version: version))
                }
            }
            reader.close()
            let store = try KeepsakeStore(path: path)
            defer { store.close() }
            let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: limit)
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

    /// The rich store's bytes, and what a reader gets from them.
    func reference() throws -> (original: Data, expected: [Step]) {
        let original = try richStore()
        let reference = directory.path("reference.keepsake")
        try original.write(to: URL(fileURLWithPath: reference))
        let (expected, failure) = trace(reference)
        #expect(failure == nil)
        // The walk saw the scope, both redo stacks, the folded history and the held change.
        // The values of 13 versions (10 of them kept or folded into version 0); opened in the scope: the held change
        // recorded (5 versions) and undone, the scope ended, the root's 8 kept versions undone,
        // 11 redone (the root's redo stack, the squashed scope), undone to "t36", the snapshot;
        // the tags of both scopes.
        #expect(expected.count == 43)
        #expect(expected.prefix(13).filter { if case .json(_, nil) = $0 { true } else { false } }.count == 3)
        return (original, expected)
    }

    /// Reads the damaged copy at `path` and records an issue for a step that is not the
    /// undamaged store's, or for steps missing with no error and nothing `verify` reports;
    /// returns how it went.
    func readDamaged(_ path: String, expecting expected: [Step], limit: Int = Self.limit, _ context: String)
        -> String
    {
        let reported = verifyReports(path)
        let (steps, error) = trace(path, limit: limit)
        let agreeing = zip(steps, expected).prefix { $0.agrees(with: $1) }.count
        if agreeing < steps.count {
            Issue.record(
                "\(context): step \(agreeing) read \(steps[agreeing]), not \(expected[agreeing]) (verify reported: \(reported))"
            )
        } else if steps.count < expected.count, error == nil, !reported {
            Issue.record("\(context): \(steps.count) of \(expected.count) steps, and no error")
        }
        return error != nil ? "typed error" : steps.count == expected.count ? "right" : "short"
    }

    @Test(arguments: Soak.batches(usually: 3))
    func flippedBytesGiveWhatTheUndamagedStoreGivesOrATypedError(batch: UInt64) throws {
        let (original, expected) = try reference()
        var generator = SeededGenerator(seed: 0x41C4_0000 + batch)
        var outcomes: [String: Int] = [:]
        for variant in 0..<40 {
            let path = directory.path("rich-\(batch)-\(variant).keepsake")
            let offset = try writeWithAByteFlipped(original, to: path, using: &generator)
            outcomes[
                readDamaged(path, expecting: expected, "batch \(batch) variant \(variant) offset \(offset)"),
                default: 0] += 1
        }
        print("rich store, flipped bytes, batch \(batch): \(outcomes)")
    }

    /// One cell of one row set to another value, or one row deleted: what damage SQLite reads
    /// without a word can leave (a flag's bit flipped, a row lost from a b-tree page), written
    /// the shell's way (no foreign keys, no CHECK constraints, digests left as they were). A
    /// coverage-guided fuzzer doing this found wrong values that byte flips had not: a version
    /// lost from or flagged otherwise in an outer scope, at a scope's start, or below one undone
    /// on the stored form, and a tag lost with its digest left.
    @Test(arguments: Soak.batches(usually: 3))
    func aCellChangedGivesWhatTheUndamagedStoreGivesOrATypedError(batch: UInt64) throws {
        let (original, expected) = try reference()
        var generator = SeededGenerator(seed: 0xCE11_0000 + batch)
        var outcomes: [String: Int] = [:]
        for variant in 0..<60 {
            let path = directory.path("cell-\(batch)-\(variant).keepsake")
            try original.write(to: URL(fileURLWithPath: path))
            guard let damage = try damageOneCell(path, using: &generator) else { continue }
            outcomes[
                readDamaged(path, expecting: expected, "batch \(batch) variant \(variant): \(damage)"),
                default: 0] += 1
        }
        print("rich store, one cell changed, batch \(batch): \(outcomes)")
    }

    /// Every row's key changed by one where it lies in its b-tree page, in every table and index:
    /// the damage a flipped bit on disk leaves and no SQL statement can, a row out of key order
    /// (`integrity_check`: "not in PRIMARY KEY order"). Such a page reads right until a write
    /// rebalances it; then look-ups can miss rows a read of the whole history still finds. The
    /// fuzzer found ending a scope on one counting the outer scope short, with no error.
    @Test func aKeyChangedWhereItLiesGivesWhatTheUndamagedStoreGivesOrATypedError() throws {
        let (original, expected) = try reference()
        let outcomes = try readEveryKeyDamaged(original, expecting: expected, limit: Self.limit)
        print("rich store, a key changed where it lies: \(outcomes)")
        // Most of them read the undamaged store's steps: a version's key changed in a page that
        // no write rebalances, a snapshot's property row.
        #expect(outcomes.values.reduce(0, +) > 100)
    }

    /// The same, in the rich store with its scope ended, opened under a lower limit (an app update
    /// that lowered it): opening folds and compacts the root scope, which rebalances pages.
    @Test func aKeyChangedWhereItLiesUnderALowerLimitGivesWhatTheUndamagedStoreGivesOrATypedError() throws {
        let (original, _) = try reference()
        let path = directory.path("ended.keepsake")
        try original.write(to: URL(fileURLWithPath: path))
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: Self.limit)
        try history.popCurrentScope()
        store.close()
        let ended = try Data(contentsOf: URL(fileURLWithPath: path))
        let (expected, failure) = trace(path, limit: 6)
        #expect(failure == nil)
        // The values of 13 versions; opened with the limit lowered (6 versions kept, the
        // squashed scope the newest), its tags, 6 undone, 6 redone, undone to "t36", the
        // snapshot.
        #expect(expected.count == 29)
        let outcomes = try readEveryKeyDamaged(ended, expecting: expected, limit: 6)
        print("rich store, scope ended, a key changed where it lies, limit lowered: \(outcomes)")
        #expect(outcomes.values.reduce(0, +) > 100)
    }

    /// Reads (``readDamaged(_:expecting:limit:_:)``) a copy of the store `original` with each
    /// ``keyDamages(_:in:)`` of each row of its every table and index; returns how it went.
    func readEveryKeyDamaged(_ original: Data, expecting expected: [Step], limit: Int) throws -> [String: Int]
    {
        let undamaged = directory.path("undamaged.keepsake")
        try? FileManager.default.removeItem(atPath: undamaged)
        try original.write(to: URL(fileURLWithPath: undamaged))
        let connection = try SQLiteConnection(path: undamaged, readOnly: true)
        defer { connection.close() }
        let trees = try connection.query("SELECT name, type, rootpage FROM sqlite_schema WHERE rootpage > 0")
        {
            (name: $0.text(0)!, table: $0.text(1) == "table", root: Int($0.int64(2)!))
        }
        var outcomes: [String: Int] = [:]
        for tree in trees {
            let cells = BTreeCells(original, root: tree.root).cells
            if tree.table {
                // The walk finds every row.
                #expect(
                    cells.count
                        == Int(try connection.scalarInt("SELECT count(*) FROM \"\(tree.name)\"") ?? -1))
            }
            for (index, cell) in cells.enumerated() {
                for (damage, offset, byte) in Self.keyDamages(cell, in: original) {
                    var bytes = original
                    bytes[offset] = byte
                    let path = directory.path("key.keepsake")
                    for suffix in ["", "-wal", "-shm"] {
                        try? FileManager.default.removeItem(atPath: path + suffix)
                    }
                    try bytes.write(to: URL(fileURLWithPath: path))
                    let context = "\(tree.name), row \(index): \(damage)"
                    outcomes[readDamaged(path, expecting: expected, limit: limit, context), default: 0] += 1
                }
            }
        }
        return outcomes
    }

    /// The ways the key of the row in `cell` is changed by one where it lies, each as the byte
    /// to write at an offset: its first column a 0 or a 1 stored in the record's header turned
    /// into the other, its first one-byte integer (after those) one more or one less, its row
    /// id one more or one less.
    static func keyDamages(_ cell: BTreeCells.Cell, in bytes: Data) -> [(String, offset: Int, byte: UInt8)] {
        var damages: [(String, offset: Int, byte: UInt8)] = []
        if let first = cell.types.first, first.type == 8 || first.type == 9 {
            damages.append(
                ("first column \(first.type - 8) to \(9 - first.type)", first.offset, UInt8(first.type) ^ 1))
        }
        // Columns stored in the header (NULL, 0, 1) take no byte of the body.
        if let first = cell.types.first(where: { ![0, 8, 9].contains($0.type) }), first.type == 1 {
            let value = bytes[cell.body]
            damages += [
                ("an integer \(value) + 1", cell.body, value &+ 1),
                ("an integer \(value) - 1", cell.body, value &- 1),
            ]
        }
        if let rowID = cell.rowID, (1..<0x7F).contains(bytes[rowID]) {
            let value = bytes[rowID]
            damages += [("row id \(value) + 1", rowID, value + 1), ("row id \(value) - 1", rowID, value - 1)]
        }
        return damages
    }

    /// Changes one cell of a random row of the store at `path` (or deletes the row), and says
    /// how; `nil` when the table chosen is empty. What an app or a user may do on purpose is
    /// left out: renaming or deleting a history or a snapshot, and tagging a version in the
    /// shell (a tag with no digest reads as one written before schema 7).
    func damageOneCell(_ path: String, using generator: inout SeededGenerator) throws -> String? {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("PRAGMA ignore_check_constraints = ON")
        let table = [
            "version", "version", "version", "scope", "checkpoint", "history", "snapshot",
            "snapshot_property",
            "pending_change", "blob",
        ].randomElement(using: &generator)!
        let columns = try connection.query("SELECT name, pk FROM pragma_table_info(?)", [.text(table)]) {
            (name: $0.text(0)!, key: $0.int64(1)! > 0)
        }
        let keys = columns.filter(\.key).map(\.name).nilIfEmpty ?? ["rowid"]
        let keyList = keys.map { "\"\($0)\"" }.joined(separator: ", ")
        let rows = try connection.query("SELECT \(keyList) FROM \(table) ORDER BY \(keyList)") { row in
            (0..<keys.count).map { row.value($0) }
        }
        guard let row = rows.randomElement(using: &generator) else { return nil }
        let column = columns.randomElement(using: &generator)!.name
        let match = keys.map { "\(table).\"\($0)\" IS ?" }.joined(separator: " AND ")
        let protected = [
            "history.name", "snapshot.name", "snapshot.namespace", "version.tag", "scope.base_tag",
        ]
        var (sql, values): (String, [SQLiteValue])
        switch Int.random(in: 0..<6, using: &generator) {
        case 0 where table != "history" && table != "snapshot":
            (sql, values) = ("DELETE FROM \(table) WHERE \(match)", row)
        case _ where protected.contains("\(table).\(column)"):
            return nil
        case 1:
            (sql, values) = ("UPDATE OR IGNORE \(table) SET \"\(column)\" = NULL WHERE \(match)", row)
        case 2:
            let number = Int64.random(in: -2...40, using: &generator)
            (sql, values) = (
                "UPDATE OR IGNORE \(table) SET \"\(column)\" = ? WHERE \(match)", [.integer(number)] + row
            )
        case 3:
            let step: Int64 = Bool.random(using: &generator) ? 1 : -1
            (sql, values) = (
                "UPDATE OR IGNORE \(table) SET \"\(column)\" = \"\(column)\" + ? WHERE \(match)",
                [.integer(step)] + row
            )
        case 4:
            let other = rows.randomElement(using: &generator)!
            (sql, values) = (
                "UPDATE OR IGNORE \(table) SET \"\(column)\" = (SELECT \"\(column)\" FROM \(table) WHERE \(match)) "
                    + "WHERE \(match)", other + row
            )
        default:
            // A number or a string inside JSON text set to another.
            let leaves = try connection.query(
                "SELECT j.fullkey, j.type FROM \(table), json_tree(\(table).\"\(column)\") j WHERE \(match) "
                    + "AND json_valid(\(table).\"\(column)\") AND j.type IN ('integer', 'text')", row
            ) { (key: $0.text(0)!, type: $0.text(1)!) }
            guard let leaf = leaves.randomElement(using: &generator) else { return nil }
            let value: SQLiteValue =
                leaf.type == "integer"
                ? .integer(Int64.random(in: -2...40, using: &generator))
                : .text(["", "a", "title"].randomElement(using: &generator)!)
            (sql, values) = (
                "UPDATE OR IGNORE \(table) SET \"\(column)\" = json_set(\"\(column)\", ?, ?) WHERE \(match)",
                [.text(leaf.key), value] + row
            )
        }
        // A change SQLite refuses (a row id set to NULL) is no damage at all.
        guard (try? connection.execute(sql, values)) != nil else { return nil }
        return "\(sql) \(values)"
    }
}

extension Array {
    /// The array, or `nil` when it is empty.
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}
