public import Foundation
public import Keepsake
import TestSupport

/// A store that uses everything — versions folded under a limit and compacted, a redo stack, an
/// open scope with its own redo stack, tags, a snapshot and a change held back by debouncing —
/// what a reader gets from it, and the damage done to copies of it: what `RichStoreDamageTests`
/// and the `keepsake-fuzz` fuzzer share. A damaged copy must give what the undamaged store
/// gives, up to a typed error: never a crash, never a wrong value, never an edit or a version
/// silently missing.
public enum RichStore {
    /// The rich store's limit on versions kept.
    public static let limit = 16

    /// Writes the rich store at `path` and closes it; returns its bytes. Its debounced history
    /// belongs to `isolation`, the caller's actor by default.
    public static func write(to path: String, isolation: isolated (any Actor) = #isolation) throws -> Data {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: limit)
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

    // MARK: - Reading

    /// One thing a reader got.
    public enum Step: Equatable, CustomStringConvertible {
        case value(String, Doc)
        case tags([String?], [String?])
        case snapshot(Doc?)
        /// A version's value read without opening the history (`valueJSON`), `nil` for none.
        case json(version: Int?, String?)
        /// That read refused with a typed error: the reader goes on.
        case refused(version: Int?)

        /// Whether a damaged copy's step `self` is what the undamaged store's `step` allows:
        /// the same, or a read of a version's value refused.
        public func agrees(with step: Step) -> Bool {
            if case .refused(let version) = self, case .json(version, _) = step { return true }
            if case .json(let version, let found?) = self, case .json(version, let expected?) = step {
                return Self.sameValue(found, expected)
            }
            return self == step
        }

        /// Whether two JSON texts of a value hold the same value: the same members but for
        /// `null` ones, which the model's encoder leaves out (`nil`) and a change redone on the
        /// stored JSON writes (`"note": null`, where the stored value is read with a checkpoint
        /// gone); compared written again with keys sorted, byte for byte (`String`'s `==` would
        /// take text in another Unicode normalization as the same).
        static func sameValue(_ a: String, _ b: String) -> Bool {
            func normalized(_ text: String) -> Data? {
                func withoutNulls(_ node: Any) -> Any {
                    if let object = node as? [String: Any] {
                        return object.filter { !($0.value is NSNull) }.mapValues(withoutNulls)
                    }
                    if let array = node as? [Any] { return array.map(withoutNulls) }
                    return node
                }
                guard
                    let node = try? JSONSerialization.jsonObject(
                        with: Data(text.utf8), options: .fragmentsAllowed)
                else { return nil }
                return try? JSONSerialization.data(
                    withJSONObject: withoutNulls(node), options: [.sortedKeys, .fragmentsAllowed])
            }
            guard let a = normalized(a), let b = normalized(b) else { return Array(a.utf8) == Array(b.utf8) }
            return a == b
        }

        public var description: String {
            switch self {
            case .value(let label, let doc): "\(label): \(doc.summary)"
            case .tags(let undo, let redo): "tags \(undo) | \(redo)"
            case .snapshot(let doc): "snapshot: \(doc?.summary ?? "none")"
            case .json(let version, let json):
                "version \(version.map(String.init) ?? "current"): \(json?.count ?? 0) bytes of JSON"
            case .refused(let version): "version \(version.map(String.init) ?? "current"): refused"
            }
        }
    }

    /// The versions whose values are read without opening the history: the current one, the
    /// base value, versions folded, kept, undone in the root scope, of the open scope, undone
    /// there, and one past the newest.
    public static let versionsRead: [Int?] = [nil, 0, 1, 21, 22, 25, 29, 30, 32, 33, 36, 37, 38]

    /// What a reader gets from the store at `path`, in order: the values of ``versionsRead``,
    /// read-only; the value opened (the held change recorded), the tags, every value undoing to
    /// the start of each scope and ending it, every value redoing, undoing to the newest tag,
    /// and the snapshot; the tags of each scope; and the error that stopped it, if any.
    public static func trace(_ path: String, limit: Int = limit) -> (steps: [Step], error: KeepsakeError?) {
        var steps: [Step] = []
        do throws(KeepsakeError) {
            let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
            for version in versionsRead {
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
            steps.append(try tags(of: history))
            // Bounded: damaged counts must not make a loop of this.
            var budget = 200
            while budget > 0 {
                budget -= 1
                if history.hasUndo {
                    steps.append(.value("undo", try history.undo()))
                } else if history.scopeLevel > 0 {
                    try history.popCurrentScope()
                    steps.append(.value("end of scope, now \(history.scopeLevel)", history.value))
                    steps.append(try tags(of: history))
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

    static func tags(of history: KeepsakeHistory<Doc>) throws(KeepsakeError) -> Step {
        let tags = try history.tags()
        return .tags(tags.undo.map { $0?.json }, tags.redo.map { $0?.json })
    }

    /// Whether the store at `path` reports a problem when verified (read-only).
    public static func verifyReports(_ path: String) -> Bool {
        (try? KeepsakeStore(path: path, options: .init(readOnly: true)).verify().isOK) != true
    }

    /// How reading a damaged copy went.
    public enum Outcome: String, Sendable, CustomStringConvertible {
        /// Every step the undamaged store's.
        case right
        /// Fewer steps, the rest missing with a stack `verify` reports.
        case short
        /// A typed error stopped the reader.
        case typedError = "typed error"

        public var description: String { rawValue }
    }

    /// Reads (``trace(_:limit:)``) the damaged copy at `path`; returns how it went, and the
    /// problem when a step is not what the undamaged store's `expected` allows, or steps are
    /// missing with no error and nothing `verify` reports, or a step throws and `verify`
    /// reports nothing.
    public static func readDamaged(_ path: String, expecting expected: [Step], limit: Int = limit)
        -> (outcome: Outcome, problem: String?)
    {
        let reported = verifyReports(path)
        let (steps, error) = trace(path, limit: limit)
        let agreeing = zip(steps, expected).prefix { $0.agrees(with: $1) }.count
        var problem: String?
        if agreeing < steps.count {
            problem =
                "step \(agreeing) read \(steps[agreeing]), not \(expected[agreeing]) (verify reported: \(reported))"
        } else if steps.count < expected.count, error == nil, !reported {
            problem = "\(steps.count) of \(expected.count) steps, and no error"
        } else if let error, !reported {
            // What makes a read say damaged, `verify` reports: a user told so checks the file.
            problem = "step \(steps.count) threw \(error), and verify reports nothing"
        }
        return (error != nil ? .typedError : steps.count == expected.count ? .right : .short, problem)
    }

    // MARK: - Damage

    /// A byte to write at an offset of the file, and what that does.
    public struct ByteDamage: Sendable {
        public var what: String
        public var offset: Int
        public var byte: UInt8
    }

    /// The ways the key of the row in `cell` of the file `bytes` is changed by one where it lies:
    /// its first column a 0 or a 1 stored in the record's header turned into the other, its
    /// first one-byte integer (after those) one more or one less, its row id one more or one
    /// less. The damage a flipped bit on disk leaves and no SQL statement can: a row out of key
    /// order (`integrity_check`: "not in PRIMARY KEY order").
    public static func keyDamages(_ cell: BTreeCells.Cell, in bytes: Data) -> [ByteDamage] {
        var damages: [ByteDamage] = []
        if let first = cell.types.first, first.type == 8 || first.type == 9 {
            damages.append(
                .init(
                    what: "first column \(first.type - 8) to \(9 - first.type)", offset: first.offset,
                    byte: UInt8(first.type) ^ 1))
        }
        // Columns stored in the header (NULL, 0, 1) take no byte of the body.
        if let first = cell.types.first(where: { ![0, 8, 9].contains($0.type) }), first.type == 1 {
            let value = bytes[cell.body]
            damages += [
                .init(what: "an integer \(value) + 1", offset: cell.body, byte: value &+ 1),
                .init(what: "an integer \(value) - 1", offset: cell.body, byte: value &- 1),
            ]
        }
        if let rowID = cell.rowID, (1..<0x7F).contains(bytes[rowID]) {
            let value = bytes[rowID]
            damages += [
                .init(what: "row id \(value) + 1", offset: rowID, byte: value + 1),
                .init(what: "row id \(value) - 1", offset: rowID, byte: value - 1),
            ]
        }
        return damages
    }

    /// The b-trees of the store at `path` (its every table and index): name, whether a table,
    /// root page.
    public static func trees(ofStoreAt path: String) throws -> [(name: String, table: Bool, root: Int)] {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        defer { connection.close() }
        return try connection.query("SELECT name, type, rootpage FROM sqlite_schema WHERE rootpage > 0") {
            (name: $0.text(0)!, table: $0.text(1) == "table", root: Int($0.int64(2)!))
        }
    }

    /// Every ``keyDamages(_:in:)`` of every row of every table and index of the store `bytes`,
    /// whose copy lies at `path`.
    public static func everyKeyDamage(_ bytes: Data, copyAt path: String) throws -> [ByteDamage] {
        try trees(ofStoreAt: path).flatMap { tree in
            BTreeCells(bytes, root: tree.root).cells.enumerated().flatMap { index, cell in
                keyDamages(cell, in: bytes).map {
                    ByteDamage(
                        what: "\(tree.name), row \(index): \($0.what)", offset: $0.offset, byte: $0.byte)
                }
            }
        }
    }

    /// Changes one cell of a random row of the store at `path` (or deletes the row), and says
    /// how; `nil` when the table chosen is empty or SQLite refuses the change. What an app or a
    /// user may do on purpose is left out: renaming or deleting a history or a snapshot, and
    /// tagging a version in the shell (a tag with no digest reads as one written before
    /// schema 7). Written the shell's way: no foreign keys, no CHECK constraints, digests left
    /// as they were — what damage SQLite reads without a word can leave (a flag's bit flipped, a
    /// row lost from a b-tree page).
    public static func damageOneCell(_ path: String, using generator: inout some RandomNumberGenerator) throws
        -> String?
    {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("PRAGMA ignore_check_constraints = ON")
        let table = [
            "version", "version", "version", "scope", "checkpoint", "history", "snapshot",
            "snapshot_property", "pending_change", "blob",
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

extension Doc {
    /// A short account of the document, to say what a step read.
    var summary: String {
        "title \(title.prefix(12).debugDescription), \(items.count) items, \(blob.count) bytes, note \(note ?? "none")"
    }
}

extension Array {
    /// The array, or `nil` when it is empty.
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}
