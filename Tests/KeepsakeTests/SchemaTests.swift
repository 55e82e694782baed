import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

@Suite struct SchemaTests {
    let directory = TemporaryDirectory()

    func open(_ path: String, readOnly: Bool = false) throws(KeepsakeError) -> SQLiteConnection {
        try Schema.open(path: path, readOnly: readOnly, synchronous: .normal, busyTimeout: .seconds(1))
    }

    @Test func aNewFileBecomesAStoreAtTheCurrentVersion() throws {
        let connection = try open(directory.path("new.keepsake"))
        #expect(try connection.scalarInt("PRAGMA application_id") == Int64(Schema.applicationID))
        #expect(try connection.scalarInt("PRAGMA user_version") == Int64(Schema.currentVersion))
        let tables = try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        { $0.text(0)! }
        #expect(
            tables == [
                "blob", "checkpoint", "history", "pending_change", "scope", "snapshot", "snapshot_property",
                "sqlite_sequence", "version",
            ])
        #expect(try connection.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try connection.query("PRAGMA integrity_check") { $0.text(0) } == ["ok"])
    }

    @Test(arguments: 0..<Schema.currentVersion)
    func migratesFromEveryEarlierVersion(start: Int) throws {
        let path = directory.path("old.keepsake")
        if start > 0 {
            let connection = try SQLiteConnection(path: path)
            for migration in Schema.migrations.prefix(start) {
                try connection.execute(migration.sql)
                try connection.execute("PRAGMA user_version = \(migration.version)")
                try connection.execute("PRAGMA application_id = \(Schema.applicationID)")
            }
            connection.close()
        }
        let connection = try open(path)
        #expect(try connection.scalarInt("PRAGMA user_version") == Int64(Schema.currentVersion))
        #expect(try connection.query("PRAGMA foreign_key_check") { $0.text(0) }.isEmpty)
        // Every way to the current version makes the same tables, columns and indexes, with
        // the same statements: opening it for writing takes the quick check.
        #expect(try connection.query(Schema.shapeQuery) { $0.text(0)! }.sorted() == Schema.shape)
        #expect(try Schema.hasKeepsakesStatements(connection))
        connection.close()
        _ = try open(path)  // opening again migrates nothing
    }

    /// Schema 11 rebuilds `history` to allow a limit of 0 (no undo): every row is kept as it
    /// was, id and all, and a deleted history's id is still never given again (the largest id
    /// ever given survives the rebuild, in `sqlite_sequence`).
    @Test func schema11KeepsEveryHistoryRowAndTheLargestIdEverGiven() throws {
        let path = directory.path("schema-10.keepsake")
        try FileManager.default.copyItem(atPath: GoldenStores.url(schema: 10).path, toPath: path)
        let old = try SQLiteConnection(path: path)
        let rows =
            "SELECT id, name, value_type, created_at, maximum_versions, revision, undo_count FROM history ORDER BY id"
        func read(_ connection: SQLiteConnection) throws -> [String] {
            try connection.query(rows) { row in (0..<7).map { row.text($0) ?? "NULL" }.joined(separator: "|")
            }
        }
        try old.execute("PRAGMA foreign_keys = ON")
        let deleted = try #require(try old.scalarInt("SELECT max(id) FROM history"))
        try old.execute("DELETE FROM history WHERE id = ?", [.integer(deleted)])
        let kept = try read(old)
        #expect(kept.count >= 3)
        #expect(throws: SQLiteError.self) { try old.execute("UPDATE history SET maximum_versions = 0") }
        old.close()

        let store = try KeepsakeStore(path: path)
        #expect(try store.database.read { try read($0) } == kept)
        let created = try store.history("created after the upgrade", initialValue: "", maximumVersions: 0)
        try created.append("edited")
        #expect(!created.hasUndo)
        let ids = try store.database.read {
            try $0.query("SELECT id FROM history ORDER BY id") { $0.int64(0)! }
        }
        #expect(ids.last == deleted + 1)
        #expect(try store.verify().problems == [])
        // Below 0 is still refused by the column, as any number the library never writes.
        #expect(throws: SQLiteError.self) {
            try store.database.write { try $0.execute("UPDATE history SET maximum_versions = -1") }
        }
    }

    /// A damaged store whose rows the upgrade refuses (the schema-10 golden store with its
    /// newest history's row garbled: its payload size swallows its row id, so that it reads
    /// under another id, with no name) is refused for writing with what happened, where, and
    /// what to do — not SQLite's error printing the whole migration — and is left as it was:
    /// it opens read-only, reading what the undamaged store reads, and salvage copies it.
    @Test func aStoreWhoseRowsRefuseTheUpgradeSaysSoAndStaysReadable() throws {
        // Copies only: a connection leaves files beside the store it opens.
        let golden = directory.path("schema-10.keepsake")
        try FileManager.default.copyItem(atPath: GoldenStores.url(schema: 10).path, toPath: golden)
        let path = directory.path("garbled-10.keepsake")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: golden))
        let file = try SQLiteConnection(path: golden, readOnly: true)
        let root = try #require(
            try file.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'history'"))
        file.close()
        let rowID = try #require(BTreeCells(bytes, root: Int(root)).cells.compactMap(\.rowID).last)
        bytes[rowID - 1] ^= 0x80
        try bytes.write(to: URL(fileURLWithPath: path))

        let reason =
            "it could not be upgraded from schema 10 to \(Schema.currentVersion): migration 11 "
            + "(limit_of_no_undo) failed on what the store holds (NOT NULL constraint failed: history_11.name), "
            + "so it is damaged or was changed by hand; it is left at schema 10: open it with "
            + "KeepsakeStore.Options(readOnly: true) to read it, and KeepsakeStore.salvage(from:to:) to copy "
            + "what it holds into a new store"
        #expect {
            try KeepsakeStore(path: path)
        } throws: { error in
            let error = error as? KeepsakeError
            return error == .cannotOpen(path: path, reason: reason) && error?.remedy == .openReadOnly
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let reader = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let undamaged = try KeepsakeStore(path: golden, options: .init(readOnly: true))
        for name in ["golden", "limited", "scoped"] {
            #expect(
                try reader.history(name, initialValue: GoldenDocument.initial).value
                    == undamaged.history(name, initialValue: GoldenDocument.initial).value)
        }
        let report = try KeepsakeStore.salvage(from: path, to: path + ".salvaged")
        #expect(report.histories.map(\.name) == ["golden", "limited", "scoped", "typing"])
        #expect(report.lost.map(\.what) == ["the history of row \(bytes[rowID + 1])"])
        // Its held change recorded, as a writable open of the undamaged store records it.
        let salvaged = try KeepsakeStore(path: path + ".salvaged")
        #expect(
            try salvaged.history("typing", initialValue: GoldenDocument.initial).value.title
                == GoldenSchema2.heldTitle)
        #expect(try salvaged.verify().problems == [])
    }

    /// A migration that runs with foreign keys off must not leave a row referring to a missing
    /// one: one that does is rolled back whole, and the connection has them on again.
    @Test func aMigrationWithForeignKeysOffThatLeavesDanglingRowsIsRolledBack() throws {
        let path = directory.path("store.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "kept"
        try history.append(doc)
        store.close()
        let next = Schema.currentVersion + 1
        let connection = try open(path)
        defer { connection.close() }
        let deletesHistories = "DELETE FROM history; PRAGMA user_version = \(next + 1);"
        let dangling = Schema.Migration(
            version: next, name: "dangling", sql: "\(Schema.foreignKeysOffLine)\n\(deletesHistories)")
        #expect(dangling.runsWithForeignKeysOff)
        #expect {
            try Schema.migrate(connection, from: Schema.currentVersion, through: next, using: [dangling])
        } throws: { error in
            (error as? SQLiteError)?.code == .constraint
                && (error as? SQLiteError)?.message
                    == "migration \(next) (dangling) left rows referring to missing ones; nothing was changed"
        }
        #expect(try connection.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try connection.scalarInt("PRAGMA user_version") == Int64(Schema.currentVersion))
        #expect(try connection.scalarInt("SELECT count(*) FROM history") == 1)
        #expect(try connection.scalarInt("SELECT count(*) FROM version") == 1)
        // The same migration with foreign keys on deletes what refers to the histories too.
        let cascading = Schema.Migration(version: next, name: "cascading", sql: deletesHistories)
        #expect(!cascading.runsWithForeignKeysOff)
        try Schema.migrate(connection, from: Schema.currentVersion, through: next, using: [cascading])
        #expect(try connection.scalarInt("SELECT count(*) FROM version") == 0)
        #expect(try connection.scalarInt("PRAGMA user_version") == Int64(next))
        #expect(try connection.query("PRAGMA integrity_check") { $0.text(0) } == ["ok"])
        #expect(try connection.query("PRAGMA foreign_key_check") { $0.text(0) }.isEmpty)
    }

    @Test func theEmbeddedMigrationsMatchTheMigrationsFolder() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasSuffix(".sql")
        }.sorted()
        #expect(files.count == Schema.migrations.count, "run Scripts/generate-migrations")
        for (file, migration) in zip(files, Schema.migrations) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            #expect(file == String(format: "%04d_%@.sql", migration.version, migration.name))
            #expect(
                text.trimmingCharacters(in: .whitespacesAndNewlines)
                    == migration.sql.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(file) differs from the embedded copy: run Scripts/generate-migrations")
        }
    }

    /// Before anything is written, its views too when this SQLite cannot read them (which a store
    /// of this schema would have rewritten).
    @Test(arguments: [false, true])
    func aNewerSchemaIsRefusedAndLeftByteForByte(unreadableViews: Bool) throws {
        let path = directory.path("newer.keepsake")
        try open(path).close()
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA user_version = \(Schema.currentVersion + 1)")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
        if unreadableViews {
            try ViewTests.setView("timeline", to: "CREATE VIEW timeline AS SELECT 1 ->>> 2", at: path)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(
            throws: KeepsakeError.newerSchema(
                path: path, version: Schema.currentVersion + 1, supported: Schema.currentVersion)
        ) {
            try open(path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aDatabaseOfAnotherApplicationIsRefusedAndLeftByteForByte() throws {
        for (name, applicationID) in [("other.db", 0x1234), ("plain.db", 0)] {
            let path = directory.path(name)
            do {
                let connection = try SQLiteConnection(path: path)
                try connection.execute("CREATE TABLE notes (body TEXT)")
                try connection.execute("PRAGMA application_id = \(applicationID)")
                connection.close()
            }
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let reason =
                applicationID == 0
                ? "it is a SQLite database of another application"
                : "it is a SQLite database of another application (application_id 0x1234)"
            #expect(throws: KeepsakeError.notAStore(path: path, reason: reason)) { try open(path) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func filesThatAreNotStoresAreRefusedUntouched() throws {
        let text = directory.path("notes.txt")
        try Data("just some text, long enough to look like a header maybe".utf8).write(
            to: URL(fileURLWithPath: text))
        #expect(throws: KeepsakeError.notAStore(path: text, reason: "it is not a SQLite database")) {
            try open(text)
        }

        let empty = directory.path("empty.keepsake")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        #expect(throws: KeepsakeError.notAStore(path: empty, reason: "the file is empty")) { try open(empty) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)

        let truncated = directory.path("truncated.keepsake")
        do {
            let connection = try open(truncated)
            try connection.execute(
                "INSERT INTO blob (digest, size, bytes) VALUES ('x', 100000, zeroblob(100000))")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
        let whole = try Data(contentsOf: URL(fileURLWithPath: truncated))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: truncated))
        #expect {
            try open(truncated)
        } throws: { error in
            guard case .notAStore(_, let reason) = error as? KeepsakeError else { return false }
            return reason.hasPrefix("it is truncated")
        }
    }

    @Test func pathsThatCannotBeOpenedSaySo() throws {
        #expect(throws: KeepsakeError.cannotOpen(path: directory.url.path, reason: "it is a directory")) {
            try open(directory.url.path)
        }
        let missingFolder = directory.path("missing/store.keepsake")
        #expect(
            throws: KeepsakeError.cannotOpen(
                path: missingFolder, reason: "the folder \(directory.path("missing")) does not exist")
        ) {
            try open(missingFolder)
        }
        let missing = directory.path("absent.keepsake")
        #expect(throws: KeepsakeError.cannotOpen(path: missing, reason: "no such file")) {
            try open(missing, readOnly: true)
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func errorsReadAsSentences() {
        #expect(
            KeepsakeError.newerSchema(path: "/a.keepsake", version: 3, supported: 1).description
                == "/a.keepsake was written by a newer Keepsake (schema version 3; this one knows up to 1). It was not modified; open it with a newer Keepsake."
        )
    }
}
