/// What looking a row up by a unique key found, the key's index checked against the table.
enum KeyedRow: Equatable {
    /// The row's id.
    case found(Int64)
    /// No row holds the key.
    case missing
    /// The key's index does not list the row the table holds: a damaged index page.
    case lostFromIndex
    /// The key's index points the key at a row that holds `key` instead (`nil`: at a row the
    /// table does not hold): a damaged index page.
    case misdirected(key: [String?]?)
}

extension SQLiteConnection {
    /// The row of `table` whose text columns `columns` hold `key`, found through their unique
    /// index and confirmed by the row the index points at. SQLite reads a damaged index page
    /// without a word: this tells the damage from a row never written, or another row's.
    ///
    /// When the index finds none, the first time on this connection, the table's indexes are
    /// checked against its rows (`PRAGMA integrity_check(table)`, O(rows) once); while they
    /// hold every row under its own key, a key they lack is in no row. Otherwise the key is
    /// looked for in the table itself (`NOT INDEXED`): it told each miss apart so, and a new
    /// history or snapshot cost a pass over every name (1 ms per new history in a store of
    /// 15,000).
    ///
    /// - Parameters:
    ///   - table: A table with an `id` rowid column (a name of the schema's, not the caller's).
    ///   - columns: The key's columns, as the unique index lists them.
    ///   - key: Their values.
    /// - Throws: ``SQLiteError``.
    func keyedRow(in table: String, columns: [String], key: [String]) throws -> KeyedRow {
        let matching = columns.map { "\($0) = ?" }.joined(separator: " AND ")
        let values = key.map(SQLiteValue.text)
        guard let id = try scalarInt("SELECT id FROM \(table) WHERE \(matching)", values) else {
            if checkedIndexes.contains(table) { return .missing }
            if try query("PRAGMA integrity_check(\(table))", [], row: { $0.text(0) }) == ["ok"] {
                checkedIndexes.insert(table)
                return .missing
            }
            let unindexed = try scalarInt("SELECT id FROM \(table) NOT INDEXED WHERE \(matching)", values)
            return unindexed == nil ? .missing : .lostFromIndex
        }
        // The index holds the key and the row id: reading the row by its id checks both.
        let held = try query(
            "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE id = ?", [.integer(id)]
        ) { row in columns.indices.map { row.text($0) } }.first
        return held == key ? .found(id) : .misdirected(key: held)
    }
}
