import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// A table's or an index's `CREATE` statement damaged so that it still parses: a column renamed,
/// a default changed, an index's columns swapped, a `CHECK` constraint naming a column that
/// does not exist (which SQLite parses only for a writer; bytes changed in place, as damage
/// changes them). SQLite opens such a store without a word and reads its tables through the damaged
/// statement. Opening it for writing is refused, naming the difference, and leaves the file as
/// it was; read-only it opens, `verify` says what differs, and salvage copies its value.
@Suite struct DamagedSchemaTests {
    let directory = TemporaryDirectory()

    struct Damage: CustomTestStringConvertible, Sendable {
        let object: String
        let from: String
        let to: String
        let difference: String
        /// Whether the damage puts rows out of order in an index: SQLite's integrity check
        /// says so (salvage reads past it).
        var misordersAnIndex = false
        var testDescription: String { "\(object): \(from) → \(to)" }
    }

    static let damages: [Damage] = [
        Damage(
            object: "version", from: "undo_count INTEGER,", to: "undo_cofnt INTEGER,",
            difference: "no column version.undo_count INTEGER"),
        Damage(
            object: "history", from: "revision INTEGER NOT NULL DEFAULT 0",
            to: "revision INTEGER NOT NULL DEFAULT 8",
            difference:
                "column history.revision INTEGER NOT NULL DEFAULT 8, where Keepsake's schema has column history.revision INTEGER NOT NULL DEFAULT 0"
        ),
        Damage(
            object: "checkpoint_by_position", from: "(history_id, position)", to: "(position, history_id)",
            difference:
                "index checkpoint_by_position ON checkpoint (position, history_id), where Keepsake's schema has index checkpoint_by_position ON checkpoint (history_id, position)",
            misordersAnIndex: true),
        // SQLite parses CHECK constraints only for a writer: read-only this reads without a
        // word, integrity_check included (verify said OK until 2026-12); for writing SQLite
        // refused the whole file as "malformed", with no remedy (the operations soak, batch
        // 79002, flipped a byte of it).
        Damage(
            object: "scope", from: "CHECK (base_position", to: "CHECK (base_posjtion",
            difference: "the statement of table scope does not parse: no such column: base_posjtion"),
    ]

    /// A store with a history of 30 edits (some undone) and a snapshot; returns its value.
    func writeStore(at path: String) throws -> Doc {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        var generator = SeededGenerator(seed: 0x5C4E_3A00)
        for _ in 0..<30 {
            var doc = history.value
            DocEdits.edit(&doc, using: &generator)
            try history.append(doc)
        }
        try history.undo()
        try history.writeCheckpoint()
        try Caretaker(store: store).save(history.value, as: "kept")
        try history.close()
        store.close()
        return try KeepsakeStore(path: path, options: .init(readOnly: true)).history(
            "doc", initialValue: Doc.empty
        ).value
    }

    @Test(arguments: damages)
    func aDamagedStatementThatStillParsesIsRefusedForWritingAndReadAsItIs(damage: Damage) throws {
        let path = directory.path("damaged.keepsake")
        let value = try writeStore(at: path)
        do {
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            try connection.execute("PRAGMA writable_schema = ON")
            try connection.execute(
                "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE name = ?3",
                [.text(damage.from), .text(damage.to), .text(damage.object)])
            #expect(connection.changes == 1)
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let damaged = try Data(contentsOf: URL(fileURLWithPath: path))

        // For writing: refused before anything is written, with what differs and what to do.
        let reason =
            "it is corrupt (its schema is not Keepsake's: \(damage.difference)); open it with "
            + "KeepsakeStore.Options(readOnly: true) to read it, and KeepsakeStore.salvage(from:to:) to copy "
            + "what it holds into a new store"
        let error = #expect(throws: KeepsakeError.notAStore(path: path, reason: reason)) {
            try KeepsakeStore(path: path)
        }
        #expect(error?.remedy == .openReadOnly)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)

        // Read-only: it opens, and verify says what differs, not the SQL errors it would meet.
        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        defer { reader.close() }
        // `keepsake inspect` lists the store, saying where a history cannot be checked.
        #expect(
            try reader.summary().histories.map(\.damage)
                == [
                    damage.object == "version"
                        ? "its versions cannot be checked: no such column: undo_count" : nil
                ])
        let verification = try reader.verify()
        #expect((verification.integrity == ["ok"]) != damage.misordersAnIndex)
        #expect(
            verification.problems
                == (damage.misordersAnIndex
                    ? ["the file is corrupt; the history checks were skipped"] : [])
                + ["the schema is not Keepsake's: \(damage.difference)"]
                + (damage.misordersAnIndex
                    ? [] : ["the history checks were skipped: they read the tables above"]))
        // A read that meets a column the damage took away says so, not "no such column".
        if damage.difference.hasPrefix("no column") {
            let reading = #expect(throws: KeepsakeError.self) {
                try reader.history("doc", initialValue: Doc.empty)
            }
            #expect(
                reading
                    == .notAStore(
                        path: path,
                        reason: "it is corrupt (its schema is not Keepsake's: \(damage.difference)); use "
                            + "KeepsakeStore.salvage(from:to:) to copy what it holds into a new store"))
        }

        // Salvage copies the value and the snapshot into a store that opens for writing.
        let salvaged = directory.path("salvaged.keepsake")
        let report = try KeepsakeStore.salvage(from: path, to: salvaged)
        let store = try KeepsakeStore(path: salvaged)
        defer { store.close() }
        #expect(report.histories.map(\.name) == ["doc"] && report.lost.isEmpty)
        #expect(try store.history("doc", initialValue: Doc.empty).value == value)
        #expect(try Caretaker(store: store).restore("kept", as: Doc.self) == value)
        #expect(try store.verify().isOK)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)
    }

    /// Objects of the app's own beside Keepsake's (a table, an index on a Keepsake table) are
    /// not damage: the store opens for writing and verifies.
    @Test func objectsBesideKeepsakesAreNotDamage() throws {
        let path = directory.path("extended.keepsake")
        let value = try writeStore(at: path)
        do {
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            try connection.execute("CREATE TABLE app_notes (id INTEGER PRIMARY KEY, body TEXT)")
            try connection.execute("CREATE INDEX app_version_by_date ON version(created_at)")
        }
        let store = try KeepsakeStore(path: path)
        defer { store.close() }
        #expect(try store.history("doc", initialValue: Doc.empty).value == value)
        #expect(try store.verify().problems == [])
    }
}
