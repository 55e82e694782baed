extension Schema {
    /// How the store's schema differs from the one Keepsake's migrations make (``shape``), one
    /// sentence each: a table, column or index missing, or one declared otherwise (another
    /// type, default, `NOT NULL`, key). Objects the store has beyond Keepsake's are not listed.
    ///
    /// SQLite keeps each table's `CREATE` statement as text and reads the table through it: a
    /// damaged statement that still parses (a column renamed, a type or a default changed) opens
    /// without an error, and the damage shows later as SQL errors in unrelated places ("no such
    /// column"), or not at all while rows are written with another default or affinity. Only a
    /// store at the current schema version is compared; `[]` for an older one.
    static func shapeDifferences(_ connection: SQLiteConnection) throws -> [String] {
        guard connection.schemaVersion == currentVersion else { return [] }
        let found = try connection.query(shapeQuery) { $0.text(0) ?? "" }
        let lines = Set(found)
        /// What a line is about: its first two words ("column version.undo_count").
        func subject(_ line: String) -> Substring {
            let words = line.split(separator: " ", maxSplits: 2)
            return words.count < 2 ? Substring(line) : line[..<words[1].endIndex]
        }
        let foundBySubject = Dictionary(
            found.map { (subject($0), $0) }, uniquingKeysWith: { first, _ in first })
        return shape.filter { !lines.contains($0) }.map { expected in
            if let other = foundBySubject[subject(expected)] {
                return "\(other), where Keepsake's schema has \(expected)"
            }
            return "no \(expected)"
        }
    }

    /// Whether each of Keepsake's tables and indexes has the statement a store the migrations
    /// make holds (``schemaTexts``), word for word (its `CHECK` constraints too): then the store
    /// has ``shape``. A store whose statements another SQLite wrote otherwise (`ALTER TABLE`
    /// rewrites them) may have it too; ``shapeDifferences(_:)`` says.
    static func hasKeepsakesStatements(_ connection: SQLiteConnection) throws -> Bool {
        let stored = try connection.query(
            "SELECT name, sql FROM sqlite_schema WHERE type IN ('table', 'index') AND sql IS NOT NULL"
        ) { ($0.text(0) ?? "", $0.text(1) ?? "") }
        var matched = 0
        for (name, sql) in stored {
            guard let expected = schemaTexts[name] else { continue }
            guard sql == expected else { return false }
            matched += 1
        }
        return matched == schemaTexts.count
    }

    /// The tables and indexes whose stored `CREATE` statement SQLite cannot parse for a writer,
    /// one sentence each; `[]` when every one of Keepsake's is word for word its own
    /// (``hasKeepsakesStatements(_:)``).
    ///
    /// SQLite parses a table's `CHECK` constraints only when the file can be written: a
    /// constraint damaged into naming a column that does not exist reads without a word
    /// read-only (so `integrity_check` and every read pass) and refuses the whole file to a
    /// writer ("malformed database schema"). Each statement is parsed here on a private
    /// in-memory database, as a writer would parse it: the tables, then the indexes on them.
    /// (Seen with SQLite 3.40; `DamagedSchemaTests` holds such a store.)
    static func unparsableStatements(_ connection: SQLiteConnection) throws -> [String] {
        guard try !hasKeepsakesStatements(connection) else { return [] }
        let statements = try connection.query(
            "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table', 'index') AND sql IS NOT NULL "
                + "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type = 'index', rowid"
        ) { (type: $0.text(0) ?? "", name: $0.text(1) ?? "", sql: $0.text(2) ?? "") }
        let scratch = try SQLiteConnection(path: ":memory:")
        defer { scratch.close() }
        return statements.compactMap { statement -> String? in
            do throws(SQLiteError) {
                try scratch.execute(statement.sql)
                return nil
            } catch {
                return "the statement of \(statement.type) \(statement.name) does not parse: \(error.message)"
            }
        }
    }

    /// The error of a store opened for writing whose schema SQLite refused as malformed, when
    /// the object it names is a table or index whose statement does not parse for a writer
    /// (``unparsableStatements(_:)``): read-only, SQLite reads it, so the error says to open it
    /// so. `nil` otherwise. Reads the schema past the object it refused (`PRAGMA
    /// writable_schema`), on a connection that is then closed.
    static func unparsableSchema(failing error: SQLiteError, _ connection: SQLiteConnection, path: String)
        -> KeepsakeError?
    {
        guard error.code == .corrupt, let object = unreadableObject(in: error.message), views[object] == nil,
            (try? connection.execute("PRAGMA writable_schema = ON")) != nil
        else { return nil }
        let unparsable = (try? unparsableStatements(connection)) ?? []
        return damagedSchema(unparsable, path: path, readOnly: false)
    }

    /// Refuses to write a store whose schema differs from Keepsake's (``shapeDifferences(_:)``):
    /// rows written through it could be written wrongly, and read later as another value. It
    /// reads as it is (``KeepsakeError/remedy``), and `salvage(from:to:)` copies what it holds
    /// into a new store. Only a store whose statements are not word for word Keepsake's
    /// (``hasKeepsakesStatements(_:)``, a fraction of the cost) has its shape listed.
    static func checkShape(_ connection: SQLiteConnection, path: String) throws {
        guard try !hasKeepsakesStatements(connection) else { return }
        if let error = try damagedSchema(shapeDifferences(connection), path: path, readOnly: false) {
            throw error
        }
    }

    /// The error of a read that failed on a statement of Keepsake's naming a column or table
    /// the store lacks (SQLite's "no such column"), when the store's schema differs from
    /// Keepsake's: the damage, said as opening for writing says it.
    static func damagedSchema(failing error: SQLiteError, _ connection: SQLiteConnection, path: String)
        -> KeepsakeError?
    {
        guard error.code == .error, error.message.hasPrefix("no such"),
            let differences = try? shapeDifferences(connection)
        else { return nil }
        return damagedSchema(differences, path: path, readOnly: true)
    }

    /// The store refused as corrupt, naming the first of `differences` (`nil` when there are
    /// none), with what to do.
    private static func damagedSchema(_ differences: [String], path: String, readOnly: Bool) -> KeepsakeError?
    {
        guard let first = differences.first else { return nil }
        let more = differences.count > 1 ? " and \(differences.count - 1) more" : ""
        let salvage = "KeepsakeStore.salvage(from:to:) to copy what it holds into a new store"
        return .notAStore(
            path: path,
            reason: "it is corrupt (its schema is not Keepsake's: \(first)\(more)); "
                + (readOnly ? "use \(salvage)" : "\(readOnlyAdvice), and \(salvage)"))
    }
}
