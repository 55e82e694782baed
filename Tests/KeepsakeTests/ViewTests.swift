import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// Keepsake's views (`timeline`, `changes`, `sizes`, `snapshots`) are for people with the
/// `sqlite3` shell; Keepsake reads none. SQLite refuses a whole file when one view does not
/// parse, so the views must parse on every SQLite Keepsake supports (3.37, Ubuntu 22.04's, has
/// no `->>`), and a store whose views this SQLite cannot read (the first release's, written
/// with `->>`) still opens: read as it is, and given today's views when opened for writing.
@Suite struct ViewTests {
    let directory = TemporaryDirectory()

    func open(_ path: String, readOnly: Bool = false) throws(KeepsakeError) -> SQLiteConnection {
        try Schema.open(path: path, readOnly: readOnly, synchronous: .normal, busyTimeout: .seconds(1))
    }

    static func views(_ connection: SQLiteConnection) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try connection.query(
                "SELECT name, sql FROM sqlite_schema WHERE type = 'view'"
            ) {
                ($0.text(0)!, $0.text(1)!)
            })
    }

    /// Every row of every view, for comparing what two definitions show.
    static func viewRows(_ connection: SQLiteConnection) throws -> [String] {
        try ["timeline", "changes", "sizes", "snapshots"].flatMap { view in
            try rows(connection, "SELECT * FROM \(view)").map { view + ": " + $0 }.sorted()
        }
    }

    /// The rows of a query, columns joined by `|`, read as the sqlite3 shell reads the views:
    /// Keepsake's connections do not trust the functions a schema calls, and SQLite 3.40 does not
    /// count json_type as harmless.
    static func rows(_ connection: SQLiteConnection, _ sql: String) throws -> [String] {
        try connection.execute("PRAGMA trusted_schema = ON")
        defer { try? connection.execute("PRAGMA trusted_schema = OFF") }
        return try connection.query(sql) { row in
            (0..<row.columnCount).map { row.text($0) ?? "NULL" }.joined(separator: "|")
        }
    }

    /// Rewrites a view's text in `sqlite_schema`, as SQLite keeps it, without parsing it.
    static func setView(_ name: String, to sql: String, at path: String) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute("PRAGMA writable_schema = ON")
        try connection.transaction {
            try connection.execute(
                "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'view' AND name = ?2",
                [.text(sql), .text(name)])
            let version = try connection.scalarInt("PRAGMA schema_version")!
            try connection.execute("PRAGMA schema_version = \(version + 1)")
        }
        try connection.execute("PRAGMA writable_schema = OFF")
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// A store with a history of three versions, closed.
    func storeWithAHistory(_ name: String) throws -> String {
        let path = directory.path(name)
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        for title in ["one", "two", "three"] {
            var next = history.value
            next.title = title
            try history.append(next)
        }
        store.close()
        return path
    }

    @Test func theViewsAreTheMigrationsLastDefinitionsAndUseNoOperatorSQLite337Lacks() throws {
        #expect(Schema.views.keys.sorted() == ["changes", "sizes", "snapshots", "timeline"])
        let connection = try open(directory.path("new.keepsake"))
        #expect(try Self.views(connection) == Schema.views)
        // `->` and `->>` came with SQLite 3.38; nothing in a migration may use them.
        for migration in Schema.migrations {
            for line in migration.sql.split(separator: "\n") {
                let code = line.components(separatedBy: "--")[0]
                #expect(!code.contains("->"), "migration \(migration.version): \(line)")
            }
        }
        // Nor any SQL in the sources: Swift has no `->>`, and no `->` before a literal.
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap {
            $0 as? String
        }
        .filter { $0.hasSuffix(".swift") && !$0.hasSuffix("Migrations+Generated.swift") }
        #expect(files.count > 50)
        let operators = try Regex(#"->>|->\s*['0-9]"#)
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect(line.firstMatch(of: operators) == nil, "\(file):\(number + 1): \(line)")
            }
        }
    }

    /// The first release's views read the JSON with `->>` and `->`: opening its stores for
    /// writing gives them today's, which show exactly the same rows; a reader leaves them.
    @Test(arguments: 4...8)
    func viewsAnEarlierReleaseWroteAreReplacedWhenOpenedForWriting(schema: Int) throws {
        let path = directory.path("schema-\(schema).keepsake")
        try FileManager.default.copyItem(atPath: GoldenStores.url(schema: schema).path, toPath: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // A SQLite older than 3.38 (run under one, these tests read the old views only there).
        let readsTheOldViews = try {
            let connection = try SQLiteConnection(path: ":memory:")
            defer { connection.close() }
            return try connection.scalarInt("SELECT sqlite_version() >= '3.38'") == 1
        }()
        let (oldViews, oldRows) = try {
            let reader = try open(path, readOnly: true)
            defer { reader.close() }
            return (try Self.views(reader), readsTheOldViews ? try Self.viewRows(reader) : [])
        }()
        #expect(oldViews["changes"]?.contains("->>") == true && oldViews["timeline"]?.contains("->>") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let writer = try open(path)
        #expect(try Self.views(writer) == Schema.views)
        if readsTheOldViews {
            #expect(try Self.viewRows(writer) == oldRows)
            #expect(!oldRows.isEmpty)
        }
        #expect(try writer.query("PRAGMA integrity_check") { $0.text(0) } == ["ok"])
        writer.close()
        // Nothing more is written at the next open.
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        try open(path).close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == after)
    }

    /// A store whose views this SQLite cannot parse, as Ubuntu 22.04's SQLite 3.37 cannot parse
    /// the first release's `->>`: SQLite alone refuses the whole file. Here the views are given
    /// syntax no SQLite has.
    @Test func aStoreWhoseViewsThisSQLiteCannotReadOpensAndIsGivenThemWhenWritten() throws {
        let path = try storeWithAHistory("unreadable.keepsake")
        try Self.setView("timeline", to: "CREATE VIEW timeline AS SELECT 1 ->>> 2", at: path)
        try Self.setView("changes", to: "CREATE VIEW changes AS SELECT json('[1]') -->> 0", at: path)
        #expect {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            defer { connection.close() }
            _ = try connection.scalarInt("SELECT count(*) FROM history")
        } throws: { error in
            (error as? SQLiteError)?.message.hasPrefix("malformed database schema (") == true
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // Read as it is, without the views it cannot read, and left byte for byte.
        do {
            let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
            #expect(try store.value(ofHistory: "doc", as: Doc.self)?.title == "three")
            #expect(try store.integrityCheck() == ["ok"])
            let version = try SQLiteConnection(path: ":memory:").scalarText("SELECT sqlite_version()")!
            #expect(
                try store.verify().problems == [
                    "the views changes, timeline do not parse in this SQLite (\(version)), nor in its sqlite3 shell "
                        + "(the first release wrote them with a JSON operator SQLite has only since 3.38, or they are damaged): "
                        + "they hold no data, and opening the store for writing rewrites them"
                ])
            store.close()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        // Opened for writing, it is given today's views, and its history goes on.
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        #expect(history.value.title == "three")
        #expect(try history.undo().title == "two")
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.verify().problems == [])
        store.close()
        let connection = try open(path)
        defer { connection.close() }
        #expect(try Self.views(connection) == Schema.views)
        #expect(
            try Self.rows(
                connection,
                "SELECT version, state, paths FROM timeline WHERE history = 'doc' ORDER BY version")
                == ["0|base|", "1|applied|title", "2|applied|title", "3|undone|title"])
        #expect(
            try Self.rows(connection, "SELECT version, path, kind, patch FROM changes ORDER BY version") == [
                #"1|title|text|{"new":"one","newCount":3,"offset":0,"old":"","oldCount":0}"#,
                #"2|title|text|{"new":"two","newCount":3,"offset":0,"old":"one","oldCount":3}"#,
                #"3|title|text|{"new":"three","newCount":5,"offset":0,"old":"two","oldCount":3}"#,
            ])
    }

    /// Only Keepsake's own views are dropped and written again: another view, or a table, that
    /// does not parse is damage, and the store is refused untouched.
    @Test func anotherObjectThatDoesNotParseIsStillRefused() throws {
        let path = try storeWithAHistory("theirs.keepsake")
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute("CREATE VIEW mine AS SELECT 1")
            connection.close()
        }
        try Self.setView("mine", to: "CREATE VIEW mine AS SELECT 1 ->>> 2", at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for readOnly in [true, false] {
            #expect {
                try open(path, readOnly: readOnly).close()
            } throws: { error in
                guard case .notAStore(_, let reason) = error as? KeepsakeError else { return false }
                return reason.hasPrefix("it is corrupt (malformed database schema (mine)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    @Test func theUnreadableObjectIsReadFromSQLitesMessage() {
        #expect(
            Schema.unreadableObject(in: #"malformed database schema (timeline) - near ">>": syntax error"#)
                == "timeline")
        #expect(Schema.unreadableObject(in: "database disk image is malformed") == nil)
    }
}
