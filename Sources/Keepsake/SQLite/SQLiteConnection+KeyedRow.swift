/// What a connection knows of a table's unique indexes, for ``SQLiteConnection/keyedRow(in:columns:key:)``.
enum IndexCheck: Equatable {
    /// Not checked yet; this many keys the index lacked were looked for in the table.
    case misses(Int)
    /// They hold every row under its own key: a key they lack is in no row.
    case passed
    /// They do not (the file is damaged): every miss is looked for in the table.
    case failed

    /// How many misses are looked for in the table before the indexes are checked.
    static let scannedMisses = 8
}

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
    /// When the index finds none, the key is looked for in the table itself (`NOT INDEXED`, a
    /// pass over every row) for the first ``IndexCheck/scannedMisses`` misses on this
    /// connection; at the next, the table's indexes are checked against its rows once
    /// (`PRAGMA integrity_check(table)`, the cost of a few passes), and while they hold every
    /// row under its own key a key they lack is in no row. An app that creates a document or
    /// two per launch pays a pass each, as before; a server that creates thousands pays the
    /// check once (each new history cost 1 ms in a store of 15,000, growing with the count).
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
            switch indexChecks[table] ?? .misses(0) {
            case .passed: return .missing
            case .misses(let count) where count >= IndexCheck.scannedMisses:
                let passed = try query("PRAGMA integrity_check(\(table))", [], row: { $0.text(0) }) == ["ok"]
                indexChecks[table] = passed ? .passed : .failed
                if passed { return .missing }
            case .misses(let count): indexChecks[table] = .misses(count + 1)
            case .failed: break
            }
            // `+column`: SQLite 3.37 (Ubuntu 22.04's) answers `column = ?` on a unique column
            // through its index even when told NOT INDEXED (3.40 does not), which would take a
            // lost index entry for a missing row; a unary `+` keeps every version off the index.
            let unindexed = try scalarInt(
                "SELECT id FROM \(table) NOT INDEXED WHERE "
                    + columns.map { "+\($0) = ?" }.joined(separator: " AND "), values)
            return unindexed == nil ? .missing : .lostFromIndex
        }
        // The index holds the key and the row id: reading the row by its id checks both.
        let held = try query(
            "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE id = ?", [.integer(id)]
        ) { row in columns.indices.map { row.text($0) } }.first
        return held == key ? .found(id) : .misdirected(key: held)
    }
}
