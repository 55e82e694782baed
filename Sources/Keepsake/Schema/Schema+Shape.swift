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
