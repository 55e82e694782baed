import Foundation
import Revertible

/// The SQL of one history, in one place. Every function runs inside a transaction the caller
/// opened.
struct HistoryRows {
    let connection: SQLiteConnection
    let blobs: BlobCoding
    let historyID: Int64

    /// A version's row: its position (its key within the history), its tag, and its changes'
    /// text when the query read it.
    struct Version {
        let position: Int
        let tag: VersionTag?
        /// The `changes` column (``StoredChanges``), when read with the row.
        let changes: String?

        init(position: Int, tag: VersionTag? = nil, changes: String? = nil) {
            (self.position, self.tag, self.changes) = (position, tag, changes)
        }

        /// Reads `SELECT position, tag, tag_digest[, changes] FROM version …` (the columns
        /// ``HistoryRows/versionColumns(changes:)`` names).
        init(row: SQLiteStatement) throws {
            position = Int(try row.requiredInt64(0))
            tag = try HistoryRows.decodeTag(row.text(1), digest: row.int64(2), version: position)
            changes = row.columnCount > 3 ? row.text(3) : nil
        }
    }

    /// The time written into a row's `created_at` or `modified_at`: seconds since 1970, from the
    /// wall clock, but always later than the last time this process wrote (``RowClock``).
    static func now() -> Double { RowClock.shared.next() }

    /// Whether the store has schema 2's tables and columns (a schema 1 store opened read-only
    /// has not).
    var hasSchema2: Bool { connection.schemaVersion >= 2 }

    // MARK: Histories by name

    /// The row id of history `name`, or `nil` when the store has none, with the name's index
    /// checked against the table: a damaged index page reads as damage, not as another
    /// history or as one never created (which opening would then create anew, empty, beside
    /// the one the app wrote).
    ///
    /// The lookup is ``SQLiteConnection/keyedRow(in:columns:key:)``'s: through the index of
    /// names, confirmed by the row, and looked up once more in the table (one row per history)
    /// when the index finds none.
    ///
    /// A name is found as Swift compares strings: `"Café"` with its `é` as one code point
    /// finds the history created as `"Café"` with `e` and a combining accent, as file names on
    /// some disks spell it, and the other way round. New histories are named in the composed
    /// form (``KeepsakeStore/canonicalName(_:)``); a name stored in another form, by an earlier release, is
    /// found by one pass over the names that are not ASCII, when its own bytes find none.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` when the index and the table
    ///   disagree; ``SQLiteError`` from the queries.
    static func historyID(named name: String, in connection: SQLiteConnection) throws -> Int64? {
        if let id = try historyID(exactly: name, in: connection) { return id }
        let canonical = KeepsakeStore.canonicalName(name)
        if !canonical.utf8.elementsEqual(name.utf8),
            let id = try historyID(exactly: canonical, in: connection)
        {
            return id
        }
        // `==` on `String` compares canonical equivalence.
        guard KeepsakeStore.hasOtherForms(name) else { return nil }
        return try connection.query(
            "SELECT id, name FROM history NOT INDEXED WHERE length(CAST(name AS BLOB)) != length(name) ORDER BY id"
        ) { (id: try $0.requiredInt64(0), name: $0.text(1) ?? "") }.first { $0.name == name }?.id
    }

    /// The row id of the history named by exactly `name`'s bytes.
    private static func historyID(exactly name: String, in connection: SQLiteConnection) throws -> Int64? {
        func damaged(_ reason: String) -> KeepsakeError {
            .damaged(history: name, reason: "the index of history names \(reason): the file is damaged")
        }
        switch try connection.keyedRow(in: "history", columns: ["name"], key: [name]) {
        case .found(let id): return id
        case .missing: return nil
        case .lostFromIndex: throw damaged("has lost it while the table holds it")
        case .misdirected(let held?):
            throw damaged("points it at the row of history \"\(held.first.flatMap { $0 } ?? "")\"")
        case .misdirected(nil): throw damaged("points it at a row the table does not hold")
        }
    }

    /// Inserts the row of a new history and its scope 0, with no value yet; returns the rows
    /// of the new history, for its base value to be written.
    ///
    /// - Parameters:
    ///   - limit: Its `maximum_versions`, `nil` for none.
    ///   - createdAt: When it was created (now, unless it is copied).
    static func insertHistory(
        named name: String, valueType: String, limit: Int64?, createdAt: Double = now(),
        in connection: SQLiteConnection, blobs: BlobCoding
    ) throws -> HistoryRows {
        try connection.execute(
            """
            INSERT INTO history (name, value_type, created_at, modified_at, maximum_versions)
            VALUES (?, ?, ?, ?, ?)
            """,
            [
                .text(name), .text(valueType), .real(createdAt), .real(now()),
                limit.map { .integer($0) } ?? .null,
            ])
        let rows = HistoryRows(connection: connection, blobs: blobs, historyID: connection.lastInsertRowID)
        try rows.insertScope(level: 0, start: 0)
        return rows
    }

    // MARK: Tags

    /// The values of a tag's columns (`tag, tag_digest` of version `position`, or `base_tag,
    /// base_tag_digest` of a scope when `position` is `nil`, at `level`).
    static func encodeTag(_ tag: VersionTag?, version position: Int?, level: Int = 0) -> [SQLiteValue] {
        guard let tag else { return [.null, .null] }
        return [.text(tag.json), .integer(tagDigest(tag.json, version: position, level: level))]
    }

    /// The digest of a stored tag: it covers where the tag belongs, a version's position or a
    /// scope's level.
    static func tagDigest(_ json: String, version position: Int?, level: Int) -> Int64 {
        if let position {
            digest(position: position, "tag", json)
        } else {
            digest(position: 0, ordinal: Int64(level), "base tag", json)
        }
    }

    /// The columns ``Version/init(row:)`` reads.
    func versionColumns(changes: Bool) -> String {
        "position, tag, \(connection.column("tag_digest", since: 7))" + (changes ? ", changes" : "")
    }

    /// A stored tag; text that is not JSON, or that does not match its digest, or a digest with
    /// no text, is damage, reported rather than read as no tag or another tag.
    static func decodeTag(_ json: String?, digest: Int64?, version: Int?, level: Int = 0) throws
        -> VersionTag?
    {
        guard let json else {
            // Untagging clears both columns: a digest alone is a tag lost.
            guard digest == nil else {
                throw KeepsakeError.damaged(
                    history: "",
                    reason:
                        "the tag of \(version.map { "version \($0)" } ?? "a scope's first version") is lost: its digest remains"
                )
            }
            return nil
        }
        if let digest, digest != tagDigest(json, version: version, level: level) {
            throw KeepsakeError.damaged(
                history: "",
                reason:
                    "the tag of \(version.map { "version \($0)" } ?? "a scope's first version") does not match its digest"
            )
        }
        guard let tag = VersionTag(json: json) else {
            throw ReversionError.undecodable(
                path: [], type: "VersionTag",
                reason:
                    "the tag of \(version.map { "version \($0)" } ?? "a scope's first version") is not JSON")
        }
        return tag
    }

    // MARK: Versions

    /// Applied versions of a scope, oldest first, or undone ones, next to redo first; with their
    /// changes when `changes`.
    ///
    /// Undone versions are read through the partial index `version_undone`. Applied ones are
    /// read by position, below the scope's first undone version: within a scope every applied
    /// version comes before every undone one, and inner scopes come after it, so the newest
    /// applied version is the first row met walking down from there.
    func versions(
        scope: Int, undone: Bool, newestFirst: Bool = false, limit: Int? = nil, changes: Bool = false
    ) throws -> [Version] {
        try connection.query(
            versionsSQL(undone: undone, newestFirst: newestFirst, limit: limit, changes: changes),
            [.integer(historyID), .integer(Int64(scope))]
        ) { try Version(row: $0) }
    }

    /// The newest of the `count` oldest applied versions of `scope`, and how many of them there
    /// are (fewer than `count` when the scope holds fewer): what pruning folds. One row is read
    /// into Swift, the `count`th; only when the scope holds fewer are they all read.
    func newestOfOldest(_ count: Int, scope: Int) throws -> (version: Version, count: Int)? {
        guard count > 0 else { return nil }
        let nth =
            versionsSQL(undone: false, newestFirst: false, limit: 1, changes: false) + " OFFSET \(count - 1)"
        if let version = try connection.query(
            nth, [.integer(historyID), .integer(Int64(scope))], row: Version.init
        )
        .first {
            return (version, count)
        }
        let all = try versions(scope: scope, undone: false, limit: count)
        return all.last.map { ($0, all.count) }
    }

    /// Checks that the versions pruning would fold, ``newestOfOldest(_:scope:)``, are the
    /// root scope's oldest kept ones, one after another from just above the floor: a row that
    /// damage hid from the scope's filter would otherwise be folded away uncounted, and the
    /// counters would no longer match the rows.
    func checkFolding(_ oldest: (version: Version, count: Int), history: String) throws {
        let floor = try floor()
        guard oldest.version.position == floor + oldest.count else {
            throw KeepsakeError.damaged(
                history: history,
                reason:
                    "its \(oldest.count) oldest versions end at version \(oldest.version.position), "
                    + "though they follow the floor at \(floor)")
        }
    }

    /// The query of ``versions(scope:undone:newestFirst:limit:changes:)``: `?1` the history's
    /// id, `?2` the scope.
    func versionsSQL(undone: Bool, newestFirst: Bool, limit: Int?, changes: Bool) -> String {
        let order = newestFirst ? "DESC" : "ASC"
        let limitClause = limit.map { " LIMIT \($0)" } ?? ""
        let columns = versionColumns(changes: changes)
        let filter =
            undone
            ? "is_undone = 1"
            : """
            is_undone = 0 AND position < coalesce((SELECT min(position) FROM version \(undoneIndex)
                WHERE history_id = ?1 AND scope_level = ?2 AND is_undone = 1), \(Self.largestNumber + 1))
            """
        return """
            SELECT \(columns) FROM version \(undone ? undoneIndex : "")
            WHERE history_id = ?1 AND scope_level = ?2 AND \(filter)
            AND \(Self.aboveFloor) ORDER BY position \(order)\(limitClause)
            """
    }

    /// `INDEXED BY` the partial index of undone versions, for a query with `is_undone = 1`:
    /// SQLite's planner, with no statistics, would rather walk the primary key from one end of
    /// the history (every version, when there is no undone one). Empty on a store older than
    /// schema 4 opened read-only, whose `version` is a view; `NOT INDEXED` for a salvage
    /// (``SQLiteConnection/readsPastIndexes``).
    var undoneIndex: String {
        guard connection.schemaVersion >= 4 else { return "" }
        return connection.readsPastIndexes ? "NOT INDEXED" : "INDEXED BY version_undone"
    }

    /// The condition that keeps the versions above the root scope's floor (those kept), for a
    /// query whose first parameter is the history's id. Versions at or below it are folded into
    /// the base value: not listed, counted or undone, and deleted at the next ``compact(to:)``.
    static let aboveFloor = "position > (SELECT floor FROM scope WHERE history_id = ?1 AND level = 0)"

    /// The root scope's floor (0 when nothing was folded since the last compaction).
    ///
    /// - Throws: `.damaged` when the stored floor is out of range (arithmetic is done with it),
    ///   or the root scope's row is missing (every history has one from its creation on).
    func floor() throws -> Int {
        guard
            let stored = try connection.scalarInt(
                "SELECT floor FROM scope WHERE history_id = ? AND level = 0", [.integer(historyID)])
        else {
            throw KeepsakeError.damaged(history: "", reason: "the row of its root scope is missing")
        }
        let floor = Int(stored)
        guard (0...Self.largestNumber).contains(floor) else {
            throw KeepsakeError.damaged(history: "", reason: "its floor is \(floor), out of range")
        }
        return floor
    }

    /// Checks the versions of the history that a read without opening it found (`versions`,
    /// oldest first) as opening checks them: consecutive positions, an outer scope's before an
    /// inner one's, as many above the root scope's `floor` as the stored version count, as many
    /// of the innermost scope's undone as the stored redo count, no version applied above one
    /// undone in its own scope, and each inner scope starting from the version it started
    /// from (``checkScopeStarts(history:)``). Every such read
    /// depends on the floor (version 0 is the value at it, versions at or below it are folded)
    /// and on which versions are applied (the current version is the newest of them, and an
    /// inner scope's versions lie on the outer ones applied): a floor raised or lowered, a
    /// version kept lost, or a flag flipped would make version 0 another version's value, a
    /// version kept read as none, or a value one the app never had.
    ///
    /// - Throws: `.damaged`, naming no history, when they differ.
    func checkVersions(_ versions: [(position: Int, place: Place)], floor: Int) throws {
        // Pruning deletes the lowest versions, ending a scope or a new version the highest: a
        // row lost, or read at another's position by a damaged page, would make a version read
        // as none.
        if let first = versions.first?.position,
            let (index, version) = versions.enumerated().first(where: {
                $0.element.position != first + $0.offset
            })
        {
            throw KeepsakeError.damaged(
                history: "",
                reason:
                    "version \(first + index) is missing from its versions, where version \(version.position) is read"
            )
        }
        // A version's level raised by damage would put the outer scope's later versions on its
        // way, and read another version's value (`verify` checks it too).
        if let (inner, outer) = zip(versions, versions.dropFirst()).first(where: {
            $0.place.level > $1.place.level
        }) {
            throw KeepsakeError.damaged(
                history: "",
                reason:
                    "version \(outer.position) of scope \(outer.place.level) comes after version \(inner.position) of inner scope \(inner.place.level)"
            )
        }
        let stored = try storedCounters().counters
        let kept = versions.filter { $0.position > floor }
        guard kept.count == stored.total else {
            throw KeepsakeError.damaged(
                history: "",
                reason:
                    "its stored version count is \(stored.total), though it holds \(kept.count) versions above its floor (\(floor))"
            )
        }
        let level = try scopeCount() - 1
        let undone = kept.count { $0.place.level == level && $0.place.undone }
        guard undone == stored.redo else {
            throw KeepsakeError.damaged(
                history: "",
                reason: "it holds \(undone) undone versions where its counters say \(stored.redo)")
        }
        var firstUndone: [Int: Int] = [:]
        for (position, place) in versions {
            if place.undone {
                firstUndone[place.level] = firstUndone[place.level] ?? position
            } else if let below = firstUndone[place.level] {
                throw KeepsakeError.damaged(
                    history: "", reason: Self.redone(position, afterUndone: below))
            }
        }
        try checkScopeStarts(history: "")
    }

    func count(scope: Int, undone: Bool) throws -> Int {
        Int(
            try connection.scalarInt(
                "SELECT count(*) FROM version \(undone ? undoneIndex : "") WHERE history_id = ?1 AND scope_level = ?2 AND "
                    + (undone ? "is_undone = 1" : "is_undone = 0") + " AND \(Self.aboveFloor)",
                [.integer(historyID), .integer(Int64(scope))]) ?? 0)
    }

    /// The number of versions kept (above the floor).
    func totalCount() throws -> Int {
        Int(
            try connection.scalarInt(
                "SELECT count(*) FROM version WHERE history_id = ?1 AND \(Self.aboveFloor)",
                [.integer(historyID)])
                ?? 0)
    }

    /// The number of versions kept, read whole and checked against the shape every history
    /// has: `stored` of them (the history's counter), at consecutive positions from the floor
    /// up, each scope's versions after the outer scope's and applied ones before undone ones,
    /// no scope deeper than `level`, every `is_undone` flag 0 or 1.
    ///
    /// Opening checks the versions kept in two look-ups, and the current scope's versions are
    /// checked as they move; an outer scope's row lost from between two others, or one whose
    /// flag or scope changed, shows only here. Whatever reads an outer scope whole (ending a
    /// scope, folding under a new limit, its tags) checks first: it would count without the
    /// row, and undo would stop a version short with no error.
    /// - Returns: How many versions are kept, and how many of them each scope holds applied
    ///   and undone.
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` at the first disagreement.
    func checkedKeptVersions(stored: Int, level: Int, history: String) throws -> KeptVersions {
        func damaged(_ reason: String) -> KeepsakeError { .damaged(history: history, reason: reason) }
        let floor = try self.floor()
        let versions = try connection.query(
            "SELECT position, scope_level, is_undone FROM version WHERE history_id = ? AND position > ? ORDER BY position",
            [.integer(historyID), .integer(Int64(floor))]
        ) {
            (
                position: Int(try $0.requiredInt64(0)), scope: try $0.requiredInt64(1),
                undone: try $0.requiredInt64(2)
            )
        }
        // A store pruned before schema 4 had floors keeps its versions from the lowest up.
        if floor > 0, let first = versions.first?.position, first != floor + 1 {
            throw damaged("its versions kept begin at version \(first), though the floor is at \(floor)")
        }
        var kept = KeptVersions(count: versions.count, stacks: Array(repeating: (0, 0), count: level + 1))
        for (previous, next) in zip([nil] + versions.map(Optional.some), versions) {
            guard next.undone == 0 || next.undone == 1 else {
                throw damaged("version \(next.position) is marked undone as \(next.undone), neither 0 nor 1")
            }
            guard (0...Int64(level)).contains(next.scope) else {
                throw damaged(
                    "version \(next.position) is of scope \(next.scope), though its scope rows end at \(level)"
                )
            }
            if next.undone == 1 {
                kept.stacks[Int(next.scope)].undone += 1
            } else {
                kept.stacks[Int(next.scope)].applied += 1
            }
            guard let previous else { continue }
            guard next.position == previous.position + 1 else {
                throw damaged("version \(previous.position + 1) is missing from its versions kept")
            }
            guard next.scope >= previous.scope else {
                throw damaged(
                    "version \(next.position) is of scope \(next.scope), after a version of scope \(previous.scope)"
                )
            }
            guard next.scope > previous.scope || next.undone >= previous.undone else {
                throw damaged("version \(next.position) is applied, after an undone version of its scope")
            }
        }
        guard versions.count == stored else {
            throw damaged("its stored version count is \(stored), though it holds \(versions.count) versions")
        }
        // The undone versions of each scope, as the partial index that undo, redo and the
        // stack sizes read lists them: a damaged index page that lost an entry (or gave one
        // another scope) would recount a redo stack short, with no error.
        let listed = try connection.query(
            "SELECT scope_level, count(*) FROM version \(undoneIndex) WHERE history_id = ? AND is_undone = 1 "
                + "AND position > ? GROUP BY scope_level ORDER BY scope_level",
            [.integer(historyID), .integer(Int64(floor))]
        ) { [try $0.requiredInt64(0), try $0.requiredInt64(1)] }
        let held = kept.stacks.enumerated().filter { $0.element.undone > 0 }.map {
            [Int64($0.offset), Int64($0.element.undone)]
        }
        guard listed == held else {
            let (inIndex, inTable) = (listed.map { $0[1] }.reduce(0, +), held.map { $0[1] }.reduce(0, +))
            throw damaged(
                inIndex == inTable
                    ? "the index of undone versions puts them in other scopes than the table does"
                    : "the index of undone versions lists \(inIndex) of them, though the table holds \(inTable)"
            )
        }
        return kept
    }

    /// What ``checkedKeptVersions(stored:level:history:)`` read.
    struct KeptVersions {
        /// How many versions are kept.
        var count: Int
        /// How many versions each scope holds, applied and undone, by level.
        var stacks: [(applied: Int, undone: Int)]

        /// The stack sizes of scope `level`, and the number of versions kept.
        func counts(level: Int) -> HistoryCounts {
            HistoryCounts(undo: stacks[level].applied, redo: stacks[level].undone, total: count)
        }
    }

    /// Checks that the look-ups undo and redo use count `expected` in scope `level` after a write
    /// that moved versions between scopes or folded them: what the versions read whole before
    /// it (``checkedKeptVersions(stored:level:history:)``) and what it wrote add up to.
    ///
    /// A b-tree page with one key damaged where it lies (`PRAGMA integrity_check`: "not in
    /// PRIMARY KEY order") reads right until a write rebalances it; from then on a look-up can
    /// miss rows a read of the whole history still finds. Counted without them, the outer scope
    /// would undo versions short with no error.
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` when they differ; the write is rolled
    ///   back with the transaction.
    func checkCounts(level: Int, expected: HistoryCounts, history: String) throws {
        let counts = try HistoryCounts(self, level: level)
        guard counts == expected else {
            throw KeepsakeError.damaged(
                history: history,
                reason:
                    "after the write, its scope counts \(counts.undo) applied and \(counts.redo) undone versions "
                    + "of \(counts.total), where \(expected.undo), \(expected.redo) and \(expected.total) were "
                    + "left (a damaged page can hide rows from look-ups)")
        }
    }

    /// Folds the root scope's versions up to `position` into the base value: raises the floor
    /// over them and gives the base value their newest one's tag. One row is written.
    func raiseFloor(to position: Int, tag: VersionTag?) throws {
        try connection.execute(
            "UPDATE scope SET floor = ?, base_tag = ?, base_tag_digest = ? WHERE history_id = ? AND level = 0",
            [.integer(Int64(position))] + Self.encodeTag(tag, version: nil) + [.integer(historyID)])
    }

    /// Deletes the versions folded under the floor when a checkpoint lies at or below it: the
    /// newest such checkpoint's text becomes the base value (copied, not decoded), and the
    /// versions up to it go (their checkpoints with them). Versions between it and the floor
    /// stay, still folded, until a later checkpoint passes under it.
    ///
    /// - Returns: Whether anything was deleted.
    @discardableResult
    func compact() throws -> Bool {
        guard let next = try nextBase() else { return false }
        try compact(to: next, baseDigest: Self.checkpointDigest(next.json, position: nil))
        return true
    }

    /// The checkpoint that compacting would make the base value: the newest one at or under the
    /// floor, below the newest version (whose row holds the history's counters), or the one a
    /// bounded step takes (``nextBasePlace(step:)``). Its text is read and checked against its
    /// digest.
    func nextBase(step: Int? = nil) throws -> (position: Int, json: String, digest: Int64?)? {
        guard let place = try nextBasePlace(step: step) else { return nil }
        let json = try connection.scalarText(
            "SELECT value FROM checkpoint WHERE history_id = ? AND position = ?",
            [.integer(historyID), .integer(Int64(place.position))])
        let checked = try Self.checkedCheckpoint(position: place.position, json: json, digest: place.digest)
        return (place.position, checked.json, place.digest)
    }

    /// Where ``nextBase(step:)`` lies, and its digest, without reading its text.
    ///
    /// Only a checkpoint above the base value is one (``canBecomeBase(_:)``): a checkpoint row
    /// at or under it (left by versions deleted with foreign keys off, as the `sqlite3` shell
    /// has them) would make the base value an older one than the versions left start from.
    ///
    /// - Parameter step: When given, the most versions above the base value to delete, where
    ///   the checkpoints allow: the newest checkpoint that far up, else the oldest one at or
    ///   under the floor (a step never stops for want of a checkpoint). A writer that never
    ///   pauses folds versions faster than compaction waits for: the steps keep each write
    ///   transaction, which holds the store's write lock, short.
    func nextBasePlace(step: Int? = nil) throws -> (position: Int, digest: Int64?)? {
        let floor = try floor()
        guard floor > 0 else { return nil }
        let base = try basePosition() ?? 0
        func place(atOrBelow bound: Int, newest: Bool) throws -> (position: Int, digest: Int64?)? {
            try connection.query(
                "SELECT position, digest FROM checkpoint WHERE \(Self.basePlaces) AND position <= ?3 "
                    + "ORDER BY position \(newest ? "DESC" : "ASC") LIMIT 1",
                [.integer(historyID), .integer(Int64(base)), .integer(Int64(bound))]
            ) { (position: Int(try $0.requiredInt64(0)), digest: $0.int64(1)) }.first
        }
        if let step, let near = try place(atOrBelow: min(floor, base + step), newest: true) { return near }
        return try place(atOrBelow: floor, newest: step == nil)
    }

    /// Whether the checkpoint at `place` (from ``nextBasePlace(step:)``, read before) may still
    /// become the base value: it is still stored with that digest, above the base value, at or
    /// under the floor, and below the newest version. Any such checkpoint may, the newest or
    /// not: a compaction that asked for the newest one gave up whenever the floor had risen over
    /// a newer one meanwhile, which a writer that never pauses does every few appends.
    func canBecomeBase(_ place: (position: Int, digest: Int64?)) throws -> Bool {
        try connection.scalarInt(
            """
            SELECT count(*) FROM checkpoint WHERE \(Self.basePlaces) AND position = ?3 AND digest IS ?4
              AND position <= ?5
            """,
            [
                .integer(historyID), .integer(Int64(try basePosition() ?? 0)),
                .integer(Int64(place.position)),
                place.digest.map { .integer($0) } ?? .null, .integer(Int64(try floor())),
            ]) == 1
    }

    /// The checkpoints of history `?1` that may become its base value, whose current position is
    /// `?2`: above it, and below the newest version (whose row holds the history's counters).
    private static let basePlaces = """
        history_id = ?1 AND position > ?2 AND position < (SELECT max(position) FROM version WHERE history_id = ?1)
        """

    /// Makes `next` (from ``nextBase(step:)``) the base value and deletes the versions up to it;
    /// `baseDigest` is its text's ``checkpointDigest(_:position:)`` as the base value.
    ///
    /// It deletes every row that refers to a version it deletes (their checkpoints, the only
    /// such rows) itself, so that it may run with foreign keys off: checking them made each
    /// version deleted cost twice as much (a lookup of its checkpoints), and a compaction
    /// holds the store's write lock.
    ///
    /// - Returns: The number of versions deleted.
    @discardableResult
    func compact(to next: (position: Int, json: String, digest: Int64?), baseDigest: Int64) throws -> Int {
        try connection.execute(
            "DELETE FROM checkpoint WHERE history_id = ? AND position IS NULL", [.integer(historyID)])
        try connection.execute(
            "INSERT INTO checkpoint (history_id, position, value, created_at, digest) VALUES (?, NULL, ?, ?, ?)",
            [
                .integer(historyID), .text(next.json), .real(Self.now()), .integer(baseDigest),
            ])
        // The versions' checkpoints first, rather than by the foreign key's cascade, so that a
        // caller may turn foreign keys off around the transaction (see above).
        try connection.execute(
            "DELETE FROM checkpoint WHERE history_id = ? AND position <= ?",
            [.integer(historyID), .integer(Int64(next.position))])
        try connection.execute(
            "DELETE FROM version WHERE history_id = ? AND position <= ?",
            [.integer(historyID), .integer(Int64(next.position))])
        let deleted = connection.changes
        try connection.execute(
            "UPDATE scope SET base_position = ? WHERE history_id = ? AND level = 0",
            [.integer(Int64(next.position)), .integer(historyID)])
        return deleted
    }

    /// The version the base value is (schema 10): 0 for the history's initial value, else the
    /// checkpoint compaction made the base value; the versions left run from just above it.
    /// `nil` in a store older than schema 10 opened read-only.
    ///
    /// - Throws: `.damaged` when it is out of range. (It lies above the floor in a store pruned
    ///   before schema 4, which deleted the oldest versions and had no floor.)
    func basePosition() throws -> Int? {
        guard connection.schemaVersion >= 10 else { return nil }
        let stored =
            try connection.query(
                "SELECT base_position FROM scope WHERE history_id = ? AND level = 0", [.integer(historyID)]
            ) { $0.int64(0) }.first ?? nil
        guard let stored else { return nil }
        guard (0...Int64(Self.largestNumber)).contains(stored) else {
            throw KeepsakeError.damaged(
                history: "", reason: "its base value is version \(stored), out of range")
        }
        return Int(stored)
    }

    /// The change records of `version`, each checked against its digest (changes written before
    /// schema 2 have none): from the row already read, or read now.
    func records(of version: Version) throws -> [ChangeRecord] {
        let text =
            try version.changes
            ?? connection.scalarText(
                "SELECT changes FROM version WHERE history_id = ? AND position = ?",
                [.integer(historyID), .integer(Int64(version.position))])
        guard let text else {
            throw KeepsakeError.damaged(
                history: "", reason: "version \(version.position) vanished while read")
        }
        return try StoredChanges.records(text, position: version.position)
    }

    /// The digest of a stored row: XXH64 of its parts, each followed by a NUL, as a signed
    /// 64-bit integer (SQLite's INTEGER).
    static func digest(position: Int, ordinal: Int64? = nil, _ parts: String...) -> Int64 {
        var input: [UInt8] = []
        input.reserveCapacity(parts.reduce(48) { $0 + $1.utf8.count + 1 })
        return digest(position: position, ordinal: ordinal, input: &input) { input in
            for part in parts {
                input.appendUTF8(part)
                input.append(0)
            }
        }
    }

    /// ``digest(position:ordinal:_:)`` with its parts appended by `appendParts` (each followed
    /// by a zero byte) to `input`, emptied first: a caller holding the parts as bytes reuses
    /// one buffer and makes no strings for them.
    static func digest(
        position: Int, ordinal: Int64?, input: inout [UInt8], parts appendParts: (inout [UInt8]) -> Void
    ) -> Int64 {
        // The bytes of "\(position)\0\(ordinal)\0" and each part followed by a zero byte.
        input.removeAll(keepingCapacity: true)
        input.appendDecimal(Int64(position))
        input.append(0)
        if let ordinal {
            input.appendDecimal(ordinal)
            input.append(0)
        }
        appendParts(&input)
        return Int64(bitPattern: input.withUnsafeBytes { StableDigest.of($0) })
    }

    /// The highest position a version has taken, which the next version's follows: the
    /// newest version's, or the floor when every version above it was deleted (undone, then
    /// dropped by an edit or a limit) and those under it were compacted away with it.
    func highestTaken() throws -> Int {
        Swift.max(try maxPosition(), try floor())
    }

    /// The highest position in the history (0 when it has no version).
    func maxPosition() throws -> Int {
        let highest = Int(
            try connection.scalarInt(
                "SELECT max(position) FROM version WHERE history_id = ?", [.integer(historyID)]) ?? 0)
        // The next version takes the position after it: a damaged number must not overflow.
        guard highest <= Self.largestNumber else {
            throw KeepsakeError.damaged(
                history: "", reason: "a version's position is \(highest), out of range")
        }
        return highest
    }

    /// The largest number a store's counters and positions may hold: far beyond any real
    /// history (a trillion versions), far below where adding to it could overflow.
    static let largestNumber = 1 << 40

    /// The limits of versions a store of `schemaVersion` may hold: 0 (no undo) from schema 11 on,
    /// which refused it before.
    static func limits(schemaVersion: Int) -> ClosedRange<Int> {
        (schemaVersion >= 11 ? 0 : 1)...largestNumber
    }

    /// The dates a clock gives, as rows hold them: seconds since 1970, up to the end of 9999.
    /// No digest covers a date: one outside is damage (``KeepsakeStore/verify()`` reports it).
    static let dates: ClosedRange<Double> = 0...253_402_300_799

    /// Inserts a version with its changes (the `changes` text made by ``StoredChanges``, and the
    /// bytes they took), one row, holding `counters` (the history's counters once the
    /// transaction commits, when the caller knows them: the new version is the newest); returns
    /// the bytes its changes took.
    func insertVersion(
        position: Int, scope: Int, tag: VersionTag?, changes encoded: (text: String, bytes: Int),
        counters: Counters?
    ) throws -> Int {
        let (changes, bytes) = encoded
        let now = Self.now()
        // One array, built in place: every append binds these twelve values.
        var values: [SQLiteValue] = []
        values.reserveCapacity(12)
        values.append(.integer(historyID))
        values.append(.integer(Int64(position)))
        values.append(.integer(Int64(scope)))
        let tagJSON = tag?.json
        values.append(tagJSON.map { .text($0) } ?? .null)
        values.append(.real(now))
        values.append(.text(changes))
        if let counters {
            assert(counters.held == nil, "a version is inserted with the held rows deleted")
            counters.appendColumns(modifiedAt: now, to: &values)
        } else {
            for _ in 0..<5 { values.append(.null) }
        }
        values.append(tagJSON.map { .integer(Self.tagDigest($0, version: position, level: 0)) } ?? .null)
        try connection.execute(AppendStatements.insertVersion, values)
        return bytes
    }

    // MARK: Pending changes

    /// Replaces the history's held change with `records` (none: no change is held).
    ///
    /// - Parameter previous: The records the rows hold now, when known: only the rows that
    ///   differ are written (a keystroke usually changes one), the others are left as they are.
    func replacePending(with records: [ChangeRecord], replacing previous: [ChangeRecord]?) throws {
        var kept = 0
        if let previous {
            for ordinal in 0..<min(previous.count, records.count) where previous[ordinal] != records[ordinal]
            {
                let record = records[ordinal]
                try connection.execute(
                    "UPDATE pending_change SET path = ?, kind = ?, patch = ? WHERE history_id = ? AND ordinal = ?",
                    Self.pendingColumns(record) + [.integer(historyID), .integer(Int64(ordinal))])
            }
            kept = min(previous.count, records.count)
            if previous.count > records.count {
                try connection.execute(
                    "DELETE FROM pending_change WHERE history_id = ? AND ordinal >= ?",
                    [.integer(historyID), .integer(Int64(kept))])
            }
        } else {
            try connection.execute("DELETE FROM pending_change WHERE history_id = ?", [.integer(historyID)])
        }
        for (ordinal, record) in records.enumerated().dropFirst(kept) {
            try connection.execute(
                "INSERT INTO pending_change (history_id, ordinal, path, kind, patch) VALUES (?, ?, ?, ?, ?)",
                [.integer(historyID), .integer(Int64(ordinal))] + Self.pendingColumns(record))
        }
    }

    /// The values of a held record's columns `path, kind, patch`, in that order.
    private static func pendingColumns(_ record: ChangeRecord) -> [SQLiteValue] {
        let text = pendingText(record)
        return [.text(text.path), .text(text.kind), .text(text.patch)]
    }

    /// The texts a held record's row stores as `path, kind, patch`.
    private static func pendingText(_ record: ChangeRecord) -> (path: String, kind: String, patch: String) {
        (record.path.description, record.kind, String(decoding: record.payload, as: UTF8.self))
    }

    /// The held change's records, in order; empty when no change is held.
    ///
    /// - Parameter digest: The digest the history's counters hold of them
    ///   (``Counters/held``): the rows read must match it, unless it is
    ///   ``uncheckedHeldDigest`` or the store predates schema 5.
    /// - Throws: `.damaged` when the rows do not match the digest: a byte changed, a row lost
    ///   or added, or all of them lost.
    func pendingRecords(digest: Int64?, history: String) throws -> [ChangeRecord] {
        // A store of schema 1, opened read-only, has no such table: nothing is held then.
        guard hasSchema2 else { return [] }
        let texts = try connection.query(
            "SELECT path, kind, patch FROM pending_change WHERE history_id = ? ORDER BY ordinal",
            [.integer(historyID)]
        ) { row in (path: row.text(0) ?? "", kind: row.text(1) ?? "", patch: row.text(2) ?? "") }
        if connection.schemaVersion >= 5, digest != Self.uncheckedHeldDigest {
            let found = Self.heldDigest(texts)
            if found != digest {
                let reason =
                    switch (digest, found) {
                    case (nil, _):
                        "it holds \(texts.count) rows of a held change its counters know nothing of"
                    case (_, nil):
                        "its change held back by debouncing was lost: its counters hold a digest, no row"
                    default: "its change held back by debouncing does not match its digest"
                    }
                throw KeepsakeError.damaged(history: history, reason: reason)
            }
        }
        return try texts.map {
            ChangeRecord(
                path: try PathDescriptor(parsing: $0.path), kind: $0.kind, payload: Data($0.patch.utf8))
        }
    }

    /// The digest of a held change stored with the history's counters: XXH64 of the number of
    /// its rows and, for each in order, its path, kind and patch as stored; `nil` for none.
    /// Never ``uncheckedHeldDigest``.
    static func heldDigest(_ rows: [(path: String, kind: String, patch: String)]) -> Int64? {
        guard !rows.isEmpty else { return nil }
        var input: [UInt8] = []
        let digest = digest(position: rows.count, ordinal: nil, input: &input) { input in
            for row in rows {
                for part in [row.path, row.kind, row.patch] {
                    input.appendUTF8(part)
                    input.append(0)
                }
            }
        }
        return digest == uncheckedHeldDigest ? 1 : digest
    }

    /// ``heldDigest(_:)`` of `records` as ``replacePending(with:replacing:)`` stores them.
    static func heldDigest(_ records: [ChangeRecord]) -> Int64? {
        heldDigest(records.map(pendingText))
    }

    /// The digest schema 5's migration gives a held change written before it: read unchecked.
    static let uncheckedHeldDigest: Int64 = 0

    func setUndone(_ positions: [Int], _ undone: Bool) throws {
        for position in positions {
            try connection.execute(
                "UPDATE version SET is_undone = ? WHERE history_id = ? AND position = ?",
                [.integer(undone ? 1 : 0), .integer(historyID), .integer(Int64(position))])
        }
    }

    /// Deletes a scope's versions, or only its undone ones (through the partial index); returns
    /// how many.
    @discardableResult
    func deleteVersions(scope: Int, undoneOnly: Bool) throws -> Int {
        try connection.execute(
            "DELETE FROM version \(undoneOnly ? undoneIndex : "") WHERE history_id = ? AND scope_level = ?"
                + (undoneOnly ? " AND is_undone = 1" : ""),
            [.integer(historyID), .integer(Int64(scope))])
        return connection.changes
    }

    func deleteVersion(at position: Int) throws {
        try connection.execute(
            "DELETE FROM version WHERE history_id = ? AND position = ?",
            [.integer(historyID), .integer(Int64(position))])
    }

    func setTag(_ tag: VersionTag?, version position: Int) throws {
        try connection.execute(
            "UPDATE version SET tag = ?, tag_digest = ? WHERE history_id = ? AND position = ?",
            Self.encodeTag(tag, version: position) + [.integer(historyID), .integer(Int64(position))])
    }

    // MARK: Scopes

    func baseTag(scope: Int) throws -> VersionTag? {
        let stored = try connection.query(
            "SELECT base_tag, \(connection.column("base_tag_digest", since: 7)) FROM scope WHERE history_id = ? AND level = ?",
            [.integer(historyID), .integer(Int64(scope))]
        ) { (json: $0.text(0), digest: $0.int64(1)) }.first
        return try Self.decodeTag(stored?.json, digest: stored?.digest, version: nil, level: scope)
    }

    func setBaseTag(_ tag: VersionTag?, scope: Int) throws {
        try connection.execute(
            "UPDATE scope SET base_tag = ?, base_tag_digest = ? WHERE history_id = ? AND level = ?",
            Self.encodeTag(tag, version: nil, level: scope) + [.integer(historyID), .integer(Int64(scope))])
    }

    /// Inserts the row of scope `level`, which starts from version `start` (0: the base value,
    /// which the root scope starts from: the history's initial value, version 0).
    func insertScope(level: Int, start: Int? = nil) throws {
        try connection.execute(
            "INSERT INTO scope (history_id, level, base_position) VALUES (?, ?, ?)",
            [.integer(historyID), .integer(Int64(level)), start.map { .integer(Int64($0)) } ?? .null])
    }

    /// Checks that each scope inside the root one still starts from the version it started
    /// from (schema 9's `scope.base_position`): that version applied, of an outer scope, and
    /// nothing applied between it and the scope's versions but the scope's own. A flag flipped
    /// on either would leave rows in a shape a store can have: replaying would put the
    /// scope's versions on a value without that version's change (or with one the app undid),
    /// and ending the scope would delete it with the outer scope's redo stack. Two look-ups a
    /// scope; scopes started before schema 9 (`NULL`), and those whose start pruning has
    /// folded under the floor, are not checked.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` on a disagreement.
    func checkScopeStarts(history: String) throws {
        guard connection.schemaVersion >= 9 else { return }
        func damaged(_ reason: String) -> KeepsakeError { .damaged(history: history, reason: reason) }
        let floor = try self.floor()
        for (level, start) in try scopeStarts().sorted(by: { $0.key < $1.key }) where start > floor {
            guard let origin = try place(at: start), !origin.undone, origin.level < level else {
                throw damaged(
                    "its scope \(level) started from version \(start), which is no longer an applied version of an outer scope"
                )
            }
            if let above = try place(at: start + 1), !above.undone, above.level < level {
                throw damaged(
                    "version \(start + 1) is applied, above version \(start) that its scope \(level) started from"
                )
            }
        }
    }

    /// The version each inner scope started from (schema 9's `scope.base_position`), by level;
    /// scopes started before schema 9 are left out.
    func scopeStarts() throws -> [Int: Int] {
        Dictionary(
            try connection.query(
                "SELECT level, base_position FROM scope WHERE history_id = ? AND level > 0 AND base_position IS NOT NULL",
                [.integer(historyID)]
            ) { (Int(try $0.requiredInt64(0)), Int(try $0.requiredInt64(1))) },
            uniquingKeysWith: { $1 })
    }

    func deleteScope(level: Int) throws {
        try connection.execute(
            "DELETE FROM scope WHERE history_id = ? AND level = ?",
            [.integer(historyID), .integer(Int64(level))])
    }

    func scopeCount() throws -> Int {
        Int(
            try connection.scalarInt("SELECT count(*) FROM scope WHERE history_id = ?", [.integer(historyID)])
                ?? 0)
    }

    // MARK: Checkpoints

    /// How many checkpoints below the first one a replay the versions do not fit tries, each
    /// from further down (undo and redo, opening, reading a version by number): enough for the
    /// ones today's model stored after an app update, below which lie versions the old app had
    /// undone; a change no checkpoint fits (the model changed in a way not declared) then fails
    /// in a few replays, not in one per checkpoint of a long history.
    static let checkpointsPassedOver = 4

    /// `body` given the newest checkpoint below `position` (of all, when `nil`; the base value
    /// is at 0), or — where the versions above it do not fit it (`body` throws a `.reversion`:
    /// one today's model stored after an app update, below versions the old app had undone) —
    /// each checkpoint below it in turn, at most ``checkpointsPassedOver`` of them; `nil` when
    /// there is none at all.
    ///
    /// - Throws: The first checkpoint's error when none fits; any other error at once.
    func fromFittingCheckpoint<T>(
        below position: Int? = nil, _ body: (_ checkpoint: (position: Int, json: String)) throws -> T
    ) throws -> T? {
        guard let checkpoint = try bestCheckpoint(below: position) else { return nil }
        return try Self.passingOverUnfit(
            from: checkpoint, at: \.position, below: { try bestCheckpoint(below: $0) }, body)
    }

    /// `body` given `first`, a start at a checkpoint's version (`position` reads it; 0 is the
    /// base value), or — where `body` throws a `.reversion`, the versions above it not fitting
    /// it — each start `older` gives below the one before, at most ``checkpointsPassedOver``
    /// of them: the one way of passing over a checkpoint that undo and redo, opening and the
    /// reads by number share.
    ///
    /// Where a start's JSON is not in the form a version's change of a moved property was made
    /// on (``StoredForm/unreadHereReason``: today's model stored it) and no start fits, the
    /// first is tried again making such changes all the same, as before they were refused.
    ///
    /// - Throws: The first start's error when none fits; any other error at once.
    static func passingOverUnfit<Start, T>(
        from first: Start, at position: (Start) -> Int, below older: (Int) throws -> Start?,
        _ body: (Start) throws -> T
    ) throws -> T {
        var start = first
        var firstFailure: KeepsakeError?
        var passedOver = 0
        var refusedUnreadHere = false
        while true {
            do {
                return try body(start)
            } catch let failure as KeepsakeError {
                if case .reversion(_, _, let error) = failure, StoredForm.isUnreadHere(error) {
                    refusedUnreadHere = true
                }
                guard case .reversion = failure, position(start) > 0, passedOver < checkpointsPassedOver,
                    let next = try older(position(start))
                else {
                    // No start holds the earlier form a moved property's change was made on:
                    // made on the first all the same, as before, where it does not show.
                    guard refusedUnreadHere else { throw firstFailure ?? failure }
                    return try StoredForm.$makesChangesWhereUnread.withValue(true) { try body(first) }
                }
                firstFailure = firstFailure ?? failure
                start = next
                passedOver += 1
            }
        }
    }

    /// A stored whole value's JSON (a checkpoint's, or the base value's) as a ``StoredForm``,
    /// with `versions` redone on it in order: the value they reach, without the app's type.
    ///
    /// Large `Data` stays `{"$blob": id}` as stored (bytes a change within them redid are
    /// base64): which object is a blob's and which is the app's own — a dictionary whose one
    /// key is `"$blob"`, a JSON document's object — only the model's type tells, and its
    /// decoder reads both forms where it reads `Data`. Until 2026-11 every such object was
    /// replaced by its blob's bytes, and the app's became text: an `[String: Int]` did not
    /// decode (the history did not open after an app update), and a JSON value type read a
    /// string where it had stored an object.
    ///
    /// A property is found under its JSON key: its name, or the key `keys` give it (the app's
    /// model's `CodingKeys`).
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` when `json` is not JSON;
    ///   ``KeepsakeError/reversion(history:version:error:)`` naming the first version whose
    ///   changes do not apply.
    func storedForm(
        _ json: String, redoing versions: [Version], history name: String,
        keys: CodingKeyTree = CodingKeyTree()
    ) throws -> StoredForm {
        try storedForm(json, redoing: versions, history: name, keys: keys, atLeast: versions.count).form
    }

    /// ``storedForm(_:redoing:history:keys:)`` with `versions` redone as far as they go, and
    /// how many that is: at least the first `required`, else the error of the first of those
    /// whose changes do not apply. After an app update, the old model's versions fit the JSON
    /// it wrote, and the new model's after them may not (they name a property renamed or
    /// added since).
    ///
    /// With `shapeOnly`, the form holds the value's shape only (``StoredForm/shapeOnly``):
    /// changes within bytes are passed over.
    func storedForm(
        _ json: String, redoing versions: [Version], history name: String, keys: CodingKeyTree,
        atLeast required: Int, shapeOnly: Bool = false
    ) throws -> (form: StoredForm, redone: Int) {
        var form: StoredForm
        do {
            form = try StoredForm(json: json, decoder: blobs.decoder, keys: keys)
        } catch {
            throw KeepsakeError.damaged(history: name, reason: "its stored value is not JSON")
        }
        form.shapeOnly = shapeOnly
        for (index, version) in versions.enumerated() {
            do {
                try form.revert(try records(of: version), inverted: true)
            } catch let error as ReversionError {
                guard index >= required else {
                    throw KeepsakeError.reversion(history: name, version: version.position, error: error)
                }
                return (form, index)
            }
        }
        return (form, versions.count)
    }

    /// The value `versions` reach, redone on the stored whole value `json` (a checkpoint): on
    /// today's model, or, where it cannot read one of those changes or that stored value (the
    /// app changed the model since), on the stored JSON as far as the stored JSON goes, then
    /// decoded and, for the versions left, on today's model again.
    ///
    /// The versions the old model wrote come first, the new model's after them: the old ones
    /// are redone on the JSON the old model wrote, which the new model's may not fit (a
    /// property renamed or added since, which the new model's changes name), and the new ones
    /// on the value decoded from it, as the new model read it. Before, every version was redone
    /// on the JSON once one was not readable, and a checkpoint below the old versions with new
    /// ones above them (the new app's checkpoints undone or folded away since) kept the history
    /// from opening.
    ///
    /// A value reached that does not decode either gives the error of the change the model
    /// could not read (which says which change and where), or, when it was the stored value
    /// that did not decode, the value reached's own: a checkpoint may hold what the newer
    /// versions no longer do (a case since removed, a `nil` where the model wants a value), so
    /// it alone keeps no history from opening.
    ///
    /// `form` is the stored form of the value reached when the last versions were redone on
    /// it. `merged` says that today's model writes the value reached otherwise than it is
    /// stored: it was replayed on the stored JSON, or its checkpoint lacked a property added
    /// since (see ``decodeStoredNotingMerge(_:history:template:)``).
    func replayed<Value: Versionable & Codable & SendableMetatype>(
        from json: String, redoing versions: [Version], history name: String, template: () -> Value?
    ) throws -> (value: Value, form: StoredForm?, merged: Bool) {
        var value: Value
        var merged: Bool
        var next = 0
        do {
            (value, merged) = try decodeStoredNotingMerge(json, history: name, template: template)
        } catch let error as KeepsakeError {
            guard case .undecodableValue = error else { throw error }
            return try replayedOnStoredForm(
                json, redoing: versions, from: 0, history: name, failure: error, template: template)
        }
        while next < versions.count {
            do {
                try KeepsakeHistoryStorage<Value>.apply(
                    self, versions[next], to: &value, inverted: true, history: name)
                next += 1
            } catch let error as KeepsakeError {
                guard case .reversion = error else { throw error }
                return try replayedOnStoredForm(
                    json, redoing: versions, from: next, history: name, failure: error, template: template)
            }
        }
        return (value, nil, merged)
    }

    /// ``replayed(from:redoing:history:template:)`` from the version at `index`, which today's
    /// model could not read (`failure`; the stored value itself when it is an
    /// `.undecodableValue`): `versions` redone on the stored JSON `json` up to that one and
    /// past it as far as they go, the value decoded there, the versions left redone on it.
    private func replayedOnStoredForm<Value: Versionable & Codable & SendableMetatype>(
        _ json: String, redoing versions: [Version], from index: Int, history name: String,
        failure: KeepsakeError, template: () -> Value?
    ) throws -> (value: Value, form: StoredForm?, merged: Bool) {
        let form: StoredForm
        let next: Int
        do {
            (form, next) = try storedForm(
                json, redoing: versions, history: name, keys: CodingKeyTree(for: Value.self),
                atLeast: index + 1)
        } catch KeepsakeError.reversion(let history, let version?, let error)
            where index < versions.count && version < versions[index].position
        {
            // A version today's model reads that does not redo on the JSON: why is the
            // JSON's to say (a property's key the model does not show, say).
            throw KeepsakeError.reversion(history: history, version: version, error: error)
        } catch KeepsakeError.reversion(let history, let version, let error)
            where StoredForm.isUnreadHere(error)
        {
            // The JSON is not in the form the change was made on: an older start may be.
            throw KeepsakeError.reversion(history: history, version: version, error: error)
        } catch {
            throw failure
        }
        var value: Value
        do {
            value = try decodeStored(form.json, history: name, template: template)
        } catch let reached {
            guard case .undecodableValue = failure, next == versions.count else { throw failure }
            throw reached
        }
        guard next < versions.count else { return (value, form, true) }
        for version in versions[next...] {
            try KeepsakeHistoryStorage<Value>.apply(self, version, to: &value, inverted: true, history: name)
        }
        return (value, nil, true)
    }

    /// A stored whole value (a checkpoint) as today's `Value`: what it lacks (properties added
    /// since) is filled from `template`, renamed and converted properties are read as declared.
    func decodeStored<Value: Versionable & Codable>(
        _ json: String, history name: String, template: () -> Value?
    ) throws -> Value {
        try decodeStoredNotingMerge(json, history: name, template: template).value
    }

    /// ``decodeStored(_:history:template:)``, and whether today's model writes the value
    /// otherwise (see ``EvolvingDecoding/decodeNotingMerge(_:from:template:decoder:)``).
    func decodeStoredNotingMerge<Value: Versionable & Codable>(
        _ json: String, history name: String, template: () -> Value?
    ) throws -> (value: Value, merged: Bool) {
        do {
            return try EvolvingDecoding.decodeNotingMerge(
                Value.self, from: Data(json.utf8),
                template: { template().flatMap { try? ChangeRecord.makeEncoder().encode($0) } },
                decoder: blobs.decoder)
        } catch let error as KeepsakeError {
            throw error
        } catch {
            throw KeepsakeError.undecodableValue(
                history: name, reason: RecordCoding.describe(error, decodingModelAt: nil))
        }
    }

    /// Stores `value` whole, as the value right after the version at `position` (the base
    /// value when `nil`), in the form ``checkpointJSON(of:position:history:unread:)`` gives;
    /// returns its size, blobs included, or `nil` when none may be stored.
    func writeCheckpoint<Value: Versionable & Codable>(
        _ value: Value, position: Int?, history name: String, unread: UnreadStoredData
    ) throws -> Int? {
        guard
            let (json, size) = try checkpointJSON(
                of: value, position: position, history: name, unread: unread)
        else { return nil }
        try insertCheckpoint(
            json, position: position, digest: Self.checkpointDigest(json, position: position))
        return size
    }

    /// Stores `value` whole, in the model's form, as the value right after the version at
    /// `position` (the base value when `nil`): a new history's; returns its size, blobs
    /// included.
    func writeCheckpoint<Value: Encodable>(_ value: Value, position: Int?) throws -> Int {
        let (json, size) = try encodeCheckpoint(value)
        try insertCheckpoint(
            json, position: position, digest: Self.checkpointDigest(json, position: position))
        return size
    }

    /// `value` as a checkpoint's JSON (its large byte strings stored as blobs), and its size,
    /// blobs included.
    ///
    /// - Throws: ``KeepsakeError/unencodableValue(history:reason:)`` (with no history name: the
    ///   caller fills it in) when `JSONEncoder` refuses the value; a blob's write error as it is.
    func encodeCheckpoint<Value: Encodable>(_ value: Value) throws -> (json: String, size: Int) {
        let blobBytesBefore = blobs.blobBytesEncoded
        let data = try KeepsakeError.encoding(
            { try blobs.encoder.encode(value) }, refusedAs: { .unencodableValue(history: "", reason: $0) })
        let json = String(decoding: data, as: UTF8.self)
        return (json, json.utf8.count + blobs.blobBytesEncoded - blobBytesBefore)
    }

    /// The digest a checkpoint's row holds: of its JSON and its position (the base value's, 0).
    /// Hashing a large value's JSON takes a fraction of a millisecond: a connection that writes
    /// one while others wait for its lock computes it before its transaction.
    static func checkpointDigest(_ json: String, position: Int?) -> Int64 {
        digest(position: position ?? 0, json)
    }

    /// Stores `json` as the checkpoint of the version at `position` (the base value when `nil`),
    /// replacing one there; `digest` is its ``checkpointDigest(_:position:)``.
    func insertCheckpoint(_ json: String, position: Int?, digest: Int64) throws {
        try connection.execute(
            "DELETE FROM checkpoint WHERE history_id = ? AND position "
                + (position == nil ? "IS NULL" : "= ?"),
            [.integer(historyID)] + (position.map { [.integer(Int64($0))] } ?? []))
        try connection.execute(
            "INSERT INTO checkpoint (history_id, position, value, created_at, digest) VALUES (?, ?, ?, ?, ?)",
            [
                .integer(historyID), position.map { .integer(Int64($0)) } ?? .null, .text(json),
                .real(Self.now()), .integer(digest),
            ])
    }

    /// The newest checkpoint on an applied version (below `position`, when given): its
    /// position and JSON; else the base value's.
    func bestCheckpoint(below position: Int? = nil) throws -> (position: Int, json: String)? {
        let applied = try connection.query(
            """
            SELECT c.position, c.value, c.digest FROM checkpoint c
            JOIN version v ON v.history_id = c.history_id AND v.position = c.position
            WHERE c.history_id = ? AND v.is_undone = 0 AND c.position < ? ORDER BY c.position DESC LIMIT 1
            """, [.integer(historyID), .integer(position.map(Int64.init) ?? .max)]
        ) {
            try Self.checkedCheckpoint(
                position: Int(try $0.requiredInt64(0)), json: $0.text(1), digest: $0.int64(2))
        }
        if let applied = applied.first { return applied }
        return try baseCheckpoint().map { (0, $0) }
    }

    /// The base value's JSON: the value before every version kept.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` when the index of checkpoints,
    ///   through which it is looked up, has lost it while the table holds it (a damaged index
    ///   page hides rows without a word).
    func baseCheckpoint() throws -> String? {
        if let json = try checkpoint(at: nil) { return json }
        // Past the index (`+history_id` keeps SQLite 3.37 off it too); a salvage reads past
        // it already (``SQLiteConnection/readsPastIndexes``), and a store before schema 4 has
        // a view of this name.
        guard connection.schemaVersion >= 4, !connection.readsPastIndexes,
            let hidden = try connection.scalarInt(
                "SELECT count(*) FROM checkpoint NOT INDEXED WHERE +history_id = ? AND position IS NULL",
                [.integer(historyID)]),
            hidden > 0
        else { return nil }
        throw KeepsakeError.damaged(
            history: "",
            reason:
                "the index of checkpoints has lost its stored values while the table holds them: the file is damaged"
        )
    }

    /// The JSON of the checkpoint of the version at `position` (the base value's when `nil`),
    /// checked against its digest; `nil` when there is none.
    func checkpoint(at position: Int?) throws -> String? {
        try connection.query(
            "SELECT value, digest FROM checkpoint WHERE history_id = ? AND position "
                + (position == nil ? "IS NULL" : "= ?"),
            [.integer(historyID)] + (position.map { [.integer(Int64($0))] } ?? [])
        ) { try Self.checkedCheckpoint(position: position ?? 0, json: $0.text(0), digest: $0.int64(1)).json }
        .first
    }

    /// A checkpoint read back, checked against its digest.
    static func checkedCheckpoint(position: Int, json: String?, digest: Int64?) throws -> (
        position: Int, json: String
    ) {
        let json = json ?? ""
        if let digest, digest != Self.digest(position: position, json) {
            throw KeepsakeError.damaged(
                history: "",
                reason: position == 0
                    ? "its base value does not match its digest"
                    : "the checkpoint of version \(position) does not match its digest")
        }
        return (position, json)
    }

    /// The position of the newest applied version (of scope `level` or, when it has none, of an
    /// outer one), or `nil` when none is applied.
    func topApplied(level: Int) throws -> Int? {
        try connection.scalarInt(
            """
            SELECT max(position) FROM version WHERE history_id = ?1 AND is_undone = 0
            AND position < coalesce((SELECT min(position) FROM version \(undoneIndex)
                WHERE history_id = ?1 AND scope_level = ?2 AND is_undone = 1), \(Self.largestNumber + 1))
            """, [.integer(historyID), .integer(Int64(level))]
        ).map(Int.init)
    }

    /// Checks the versions an undo (`undo`, newest first) or a redo (oldest first) of scope
    /// `level` is about to move against the rows' own account of them: a scope's versions
    /// have consecutive positions, its applied ones before its undone ones, and an inner
    /// scope's come after its parents', so an undo starts just below the scope's first undone
    /// version (or the newest version, when none is undone), a redo just above a version that
    /// is not one of the scope's undone ones, and each goes on one position at a time. A
    /// damaged row that no longer matches the scope's filter would otherwise be passed over,
    /// and the version below it undone in its place: a value the app never had. Two look-ups,
    /// whatever the history's length.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` on a gap.
    func checkMoving(_ versions: [Version], undo: Bool, level: Int, history: String) throws {
        guard let first = versions.first?.position else { return }
        let step = undo ? -1 : 1
        if undo {
            let firstUndone = try connection.scalarInt(
                "SELECT min(position) FROM version \(undoneIndex) WHERE history_id = ? AND scope_level = ? AND is_undone = 1",
                [.integer(historyID), .integer(Int64(level))]
            ).map(Int.init)
            let above = try firstUndone ?? maxPosition() + 1
            guard first + 1 == above else {
                throw KeepsakeError.damaged(
                    history: history,
                    reason:
                        "its undo begins at version \(first), though version \(above - 1) is its newest applied"
                )
            }
            // The index of undone versions said where the applied ones end; the table says what
            // lies above the first one to undo: an applied version there (an index entry
            // renumbered by damage) would be passed over.
            if let next = try place(at: first + 1), !next.undone {
                throw KeepsakeError.damaged(
                    history: history,
                    reason:
                        "its undo begins at version \(first), below version \(first + 1), which is applied")
            }
        } else if first - 1 > (try floor()) {
            // A redo begins just above the scope's newest applied version, or above an outer
            // scope's versions: never above one its own scope undid, which an entry of the index
            // of undone versions renumbered by damage would pass over.
            let below = try place(at: first - 1)
            if below.map({ $0.level >= level && $0.undone }) ?? true {
                throw KeepsakeError.damaged(
                    history: history,
                    reason: below == nil
                        ? "its redo begins at version \(first), though version \(first - 1) is missing"
                        : "its redo begins at version \(first), above version \(first - 1), which it undid")
            }
        }
        for (previous, next) in zip(versions, versions.dropFirst())
        where next.position != previous.position + step {
            throw KeepsakeError.damaged(
                history: history,
                reason:
                    "version \(previous.position + step) is missing from its versions to \(undo ? "undo" : "redo")"
            )
        }
    }

    /// Checks what opening a history read against the rows' own account of it: the versions
    /// replayed from the checkpoint at `start` follow it and one another (a position skipped is
    /// an undone version's), end at the newest applied version (read from the other end of the
    /// table), the versions undone at `level` are the stored `redo` count, the versions kept
    /// run from the floor to the newest, `total` of them, and the scope rows are levels 0 to
    /// `level`. A damaged b-tree page can end a scan early, lose rows from it, flip a version's
    /// `is_undone` flag or change a floor while SQLite reports nothing: the value opened would
    /// then lack versions the app made, or hold one it undid, or undo would stop short.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` on a disagreement; when the index
    ///   of undone versions lists other than the table holds (a damaged index page hides them,
    ///   and the rows read as if versions were lost), saying so.
    func checkLoaded(replayed: [Int], from start: Int, level: Int, redo: Int, total: Int, history: String)
        throws
    {
        do {
            try checkLoadedRows(
                replayed: replayed, from: start, level: level, redo: redo, total: total, history: history)
        } catch let error as KeepsakeError {
            guard let (indexed, held) = try undoneIndexDisagreement() else { throw error }
            throw KeepsakeError.damaged(
                history: history,
                reason:
                    "the index of undone versions lists \(indexed) of them while the table holds \(held): the file is damaged"
            )
        }
    }

    /// How many of this history's undone versions their partial index lists, and how many its
    /// table holds, when the two differ.
    private func undoneIndexDisagreement() throws -> (indexed: Int64, held: Int64)? {
        guard connection.schemaVersion >= 4, !connection.readsPastIndexes else { return nil }
        let id: [SQLiteValue] = [.integer(historyID)]
        let indexed =
            try connection.scalarInt(
                "SELECT count(*) FROM version INDEXED BY version_undone WHERE history_id = ? AND is_undone = 1",
                id) ?? 0
        let held =
            try connection.scalarInt(
                "SELECT count(*) FROM version NOT INDEXED WHERE +history_id = ? AND +is_undone = 1", id) ?? 0
        return indexed == held ? nil : (indexed, held)
    }

    /// ``checkLoaded(replayed:from:level:redo:total:history:)``'s checks.
    private func checkLoadedRows(
        replayed: [Int], from start: Int, level: Int, redo: Int, total: Int, history: String
    ) throws {
        func damaged(_ reason: String) -> KeepsakeError { .damaged(history: history, reason: reason) }
        let levels = try connection.query(
            "SELECT level FROM scope WHERE history_id = ? ORDER BY level", [.integer(historyID)]
        ) { Int(try $0.requiredInt64(0)) }
        guard !levels.isEmpty, levels == Array(0..<max(level + 1, 0)) else {
            throw damaged(
                "its scope rows are at levels \(levels.map(String.init).joined(separator: ", ")), not 0 to \(level)"
            )
        }
        // Inner scopes' versions come after outer ones': the newest row is of the innermost
        // scope that has versions, which has its scope row.
        if let innermost = try connection.scalarInt(
            "SELECT scope_level FROM version WHERE history_id = ? ORDER BY position DESC LIMIT 1",
            [.integer(historyID)]), innermost > level
        {
            throw damaged(
                "its newest version is of scope \(innermost), though its scope rows end at \(level)")
        }
        let undone = Set(
            try connection.query(
                "SELECT position FROM version \(undoneIndex) WHERE history_id = ? AND is_undone = 1",
                [.integer(historyID)]
            ) { Int(try $0.requiredInt64(0)) })
        // From the checkpoint on: a version lost just above it would leave its change out of the
        // value with every later one in order. The base value (start 0) is the version its
        // position says (schema 10), or lies just below the oldest version left.
        let way = [start > 0 ? start : try basePosition()].compactMap { $0 } + replayed
        for (previous, next) in zip(way, way.dropFirst()) where next > previous + 1 {
            if let missing = (previous + 1..<next).first(where: { !undone.contains($0) }) {
                throw damaged("version \(missing) is missing from its versions read in order")
            }
            // Passed over as undone: each must be an outer scope's (its redo stack lies under
            // the inner scope's versions), or the replay applied a version above one its own
            // scope undid. Read only at such a gap: rare, one per scope.
            if let gap = try Self.gap(between: previous, and: next, places: place(at:)) {
                throw damaged(gap)
            }
        }
        let floor = try self.floor()
        let lowest = try connection.scalarInt(
            "SELECT min(position) FROM version WHERE history_id = ?", [.integer(historyID)]
        ).map(Int.init)
        // The newest applied version: the newest row below every undone one above it (rows
        // have consecutive positions), walked down in memory. Below every version kept, with
        // those folded under the floor compacted away, it is the base value itself.
        let highest = try maxPosition()
        var newest = highest
        while newest > start, undone.contains(newest) { newest -= 1 }
        if newest <= floor, (lowest ?? .max) > floor { newest = start }
        let (reached, expected) = (replayed.last ?? start, max(start, newest))
        guard reached == expected else {
            throw damaged(
                "its versions read in order end at \(reached), though version \(expected) is applied")
        }
        let count = try self.count(scope: level, undone: true)
        guard count == redo else {
            throw damaged("it holds \(count) undone versions where its counters say \(redo)")
        }
        // Versions kept have consecutive positions above the floor (or, in a store pruned
        // before schema 4 had floors, above the lowest deleted): counting them is two look-ups.
        if let lowest, lowest < 1 || lowest > highest {
            throw damaged("a version's position is \(lowest), out of range")
        }
        let kept = lowest.map { highest - Swift.max(floor, $0 - 1) } ?? 0
        guard kept == total else {
            throw damaged(
                "its versions kept run from the floor at \(floor) to version \(highest), \(kept) of them, "
                    + "though its counters say \(total)")
        }
        try checkScopeStarts(history: history)
    }

    /// Applied versions after `position` (up to `last`, when given), oldest first, with their
    /// changes when `changes`.
    func appliedVersions(after position: Int, upTo last: Int? = nil, changes: Bool = true) throws -> [Version]
    {
        try connection.query(
            """
            SELECT \(versionColumns(changes: changes)) FROM version WHERE history_id = ? AND is_undone = 0 AND position > ?
            AND position <= ? ORDER BY position
            """,
            [.integer(historyID), .integer(Int64(position)), .integer(last.map(Int64.init) ?? .max)]
        ) { try Version(row: $0) }
    }

    // MARK: The history's counters

    /// The counters every write transaction stores: the revision it bumps (so that another
    /// writer is noticed) and the stack sizes (so that opening counts nothing).
    struct Counters: Equatable {
        var revision: Int64
        var undo: Int
        var redo: Int
        var total: Int
        /// The digest of the change held back by debouncing (``heldDigest(_:)``), `nil` when
        /// none is held: schema 5's `held_digest`.
        var held: Int64? = nil

        /// The values of the columns `revision, undo_count, redo_count, version_count,
        /// modified_at, held_digest`, in that order.
        func columns(modifiedAt: Double) -> [SQLiteValue] {
            var values: [SQLiteValue] = []
            values.reserveCapacity(8)
            appendColumns(modifiedAt: modifiedAt, to: &values)
            values.append(held.map { .integer($0) } ?? .null)
            return values
        }

        /// Appends the values of the columns `revision, undo_count, redo_count, version_count,
        /// modified_at` to `values`: those an append inserts, whose version holds no held change
        /// (the held rows go in its transaction).
        func appendColumns(modifiedAt: Double, to values: inout [SQLiteValue]) {
            values.append(.integer(revision))
            values.append(.integer(Int64(undo)))
            values.append(.integer(Int64(redo)))
            values.append(.integer(Int64(total)))
            values.append(.real(modifiedAt))
        }
    }

    /// What a write transaction knows of its history's newest version when it ends.
    enum NewestVersion {
        /// No version was inserted or deleted: the newest is the one the transaction began with.
        case unchanged
        /// The transaction inserted the newest version, at `position`, holding these counters.
        case inserted(position: Int, holding: Counters)
        /// Versions may have been deleted: the newest is read.
        case unknown
    }

    /// The counters as stored, and the newest version's position (`nil` when there is none).
    ///
    /// They are kept on the newest version's row, which an append writes anyway, so that an
    /// append writes one b-tree page where a history row would make two; on the history row
    /// while there is no version (or when the newest row holds none).
    func storedCounters() throws -> (newest: Int?, counters: Counters) {
        // A store older than schema 5, opened read-only, has no digest of the held change.
        let held = connection.column("held_digest", since: 5)
        let newest = try connection.query(
            """
            SELECT position, revision, undo_count, redo_count, version_count, is_undone, \(held) FROM version
            WHERE history_id = ? ORDER BY position DESC LIMIT 1
            """, [.integer(historyID)]
        ) { row in
            (
                position: Int(try row.requiredInt64(0)),
                undone: row.int64(5),
                counters: try row.int64(1).map {
                    try Self.counters(
                        revision: $0, row, from: 2, held: 6, version: Int(try row.requiredInt64(0)))
                }
            )
        }.first
        if let newest, newest.undone != 0, newest.undone != 1 {
            throw KeepsakeError.damaged(
                history: "",
                reason: "its newest stored version (\(newest.position)) is neither applied nor undone "
                    + "(is_undone = \(newest.undone.map(String.init) ?? "NULL"))")
        }
        if let counters = newest?.counters { return (newest?.position, counters) }
        // Every write leaves the counters on the newest version of a schema 4 table: a newest
        // row without them is a damaged file hiding rows (a b-tree page that lost its last
        // cells), not the history as written.
        if let newest, connection.schemaVersion >= 4 {
            throw KeepsakeError.damaged(
                history: "",
                reason: "its newest stored version (\(newest.position)) does not hold its counters")
        }
        let counters = try connection.query(
            "SELECT revision, undo_count, redo_count, version_count, \(held) FROM history WHERE id = ?",
            [.integer(historyID)]
        ) { try Self.counters(revision: try $0.requiredInt64(0), $0, from: 1, held: 4, version: nil) }.first
        // No history row and no version: the history was deleted (with its versions) since
        // this connection read it. Its id is never given to another history (schema 8).
        guard let counters else { throw KeepsakeError.historyConflict(history: "") }
        return (newest?.position, counters)
    }

    /// The counters of a row holding `revision`: its undo, redo and version counts in the
    /// columns from `first` on, the held change's digest in column `held`.
    ///
    /// - Parameter version: The version whose row it is; `nil` for the history row.
    /// - Throws: `.damaged`, naming no history, when a count is not a number (damage to a
    ///   column every write fills): read as 0 it would make the stacks another size.
    private static func counters(
        revision: Int64, _ row: SQLiteStatement, from first: Int, held: Int, version: Int?
    ) throws -> Counters {
        let counts = try (first..<first + 3).map { column in
            guard let count = row.int64(column), count >= 0 else {
                let value = row.int64(column).map(String.init) ?? "NULL"
                throw KeepsakeError.damaged(
                    history: "",
                    reason: (version.map { "its newest stored version (\($0))" } ?? "its history row")
                        + " holds a stack size of \(value)")
            }
            return Int(count)
        }
        return Counters(
            revision: revision, undo: counts[0], redo: counts[1], total: counts[2], held: row.int64(held))
    }

    /// Stores `counters` on the newest version (taking them off `previousNewest`, the newest
    /// version when the transaction began, when that is another row), or on the history row when
    /// the history has no version.
    ///
    /// - Parameter newest: What the transaction knows of the newest version: what it knows is
    ///   not read again, and counters a row already holds are not written again.
    /// - Returns: The newest version's position (`nil`: the history has none).
    @discardableResult
    func store(_ counters: Counters, previousNewest: Int?, newest known: NewestVersion = .unknown) throws
        -> Int?
    {
        var newest = previousNewest ?? 0
        var holding: Counters?
        switch known {
        case .unchanged: break
        case .inserted(let position, let counters): (newest, holding) = (position, counters)
        case .unknown: newest = try maxPosition()
        }
        if let previousNewest, previousNewest != newest {
            try connection.execute(
                AppendStatements.clearCounters, [.integer(historyID), .integer(Int64(previousNewest))])
        }
        guard holding != counters else { return newest > 0 ? newest : nil }
        var values = counters.columns(modifiedAt: Self.now())
        if newest > 0 {
            values.append(.integer(historyID))
            values.append(.integer(Int64(newest)))
            try connection.execute(
                """
                UPDATE version SET revision = ?, undo_count = ?, redo_count = ?, version_count = ?, modified_at = ?,
                    held_digest = ?
                WHERE history_id = ? AND position = ?
                """, values)
        } else {
            values.append(.integer(historyID))
            try connection.execute(
                """
                UPDATE history SET revision = ?, undo_count = ?, redo_count = ?, version_count = ?, modified_at = ?,
                    held_digest = ?
                WHERE id = ?
                """, values)
        }
        return newest > 0 ? newest : nil
    }

    /// The size of the blobs a checkpoint's JSON refers to.
    func blobBytes(inJSON json: String) throws -> Int {
        Int(
            try connection.scalarInt(
                "SELECT coalesce(sum(b.size), 0) FROM json_tree(?) AS j JOIN blob b ON b.id = j.value WHERE j.key = '$blob'",
                [.text(json)]) ?? 0)
    }
}

/// The two statements an append runs besides `BEGIN` and `COMMIT`, shared with the benchmark,
/// whose baseline of Keepsake's own rows runs exactly these through the C API.
package enum AppendStatements {
    /// Inserts a version: `?1` history, `?2` position, `?3` scope level, `?4` tag, `?5`
    /// created at, `?6` its `changes` text, `?7`…`?11` the history's counters (revision, undo,
    /// redo and version counts, modified at), or `NULL`s, `?12` the tag's digest (`NULL`, as
    /// when left unbound, for no tag).
    package static let insertVersion = """
        INSERT INTO version (history_id, position, scope_level, tag, created_at, changes,
            revision, undo_count, redo_count, version_count, modified_at, tag_digest)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Clears the counters of the version that was the newest (`?1` history, `?2` position):
    /// only the newest holds them, which makes a damaged page that hides it an error.
    package static let clearCounters = """
        UPDATE version SET revision = NULL, undo_count = NULL, redo_count = NULL, version_count = NULL,
            modified_at = NULL, held_digest = NULL
        WHERE history_id = ? AND position = ?
        """
}

/// The clock of the times written into rows: the wall clock, made strictly increasing within the
/// process, so that no two rows it writes share a time. A version is told from one that replaced
/// it at its position by its `changes` text and its `created_at`
/// (``KeepsakeHistoryStorage/AppliedVersion``), and the wall clock can give a time twice (a
/// `Double` of seconds since 1970 tells times a quarter of a microsecond apart, and reading the
/// clock can take less) or give an earlier one once it is set back.
final class RowClock: @unchecked Sendable {
    // Sound because `last` is touched only while `lock` is held.
    private let lock = NSLock()
    private var last = -Double.infinity
    private let wallClock: @Sendable () -> Double

    /// The clock every store of the process writes with.
    static let shared = RowClock { Date().timeIntervalSince1970 }

    /// A clock reading `wallClock` (tests give a clock of their own).
    init(wallClock: @escaping @Sendable () -> Double) {
        self.wallClock = wallClock
    }

    /// The wall clock's time, or the smallest time after the last one given when the wall clock
    /// is not past it.
    func next() -> Double {
        let time = wallClock()
        return lock.withLock {
            last = time > last ? time : last.nextUp
            return last
        }
    }
}

extension HistoryRows {
    /// The history's name, for an error found where only its id is at hand: read on that error's
    /// path only, and `#` and its id when it cannot be read.
    var historyName: String {
        (try? connection.query("SELECT name FROM history WHERE id = ?", [.integer(historyID)]) { $0.text(0) })?
            .first?.flatMap { $0 } ?? "#\(historyID)"
    }

    /// Where a version row stands: its scope, and whether it is undone.
    struct Place {
        let level: Int
        let undone: Bool

        init(level: Int, undone: Bool) { (self.level, self.undone) = (level, undone) }

        /// Reads `scope_level, is_undone` at column `index` on, of the version at `position` of
        /// `rows`' history.
        ///
        /// - Throws: ``KeepsakeError/damaged(history:reason:)`` for a flag other than 0 or 1,
        ///   which damage can leave: read as applied here, it was neither to the queries that
        ///   ask for 0 or 1, and a version read by number came back wrong without an error
        ///   (found by the rich store's one-cell damage test, seeds 76100 and 76101);
        ///   `SQLiteError` (`.corrupt`) for a `NULL`.
        init(row: SQLiteStatement, from index: Int, position: Int, of rows: HistoryRows) throws {
            level = Int(try row.requiredInt64(index))
            let flag = try row.requiredInt64(index + 1)
            guard flag == 0 || flag == 1 else {
                throw KeepsakeError.damaged(
                    history: rows.historyName,
                    reason: "version \(position) is marked undone as \(flag), neither 0 nor 1")
            }
            undone = flag == 1
        }
    }

    /// Where each version stands, oldest first.
    func places() throws -> [(position: Int, place: Place)] {
        try connection.query(
            "SELECT position, scope_level, is_undone FROM version WHERE history_id = ? ORDER BY position",
            [.integer(historyID)]
        ) { row in
            let position = Int(try row.requiredInt64(0))
            return (position, try Place(row: row, from: 1, position: position, of: self))
        }
    }

    /// Where version `position` stands, or `nil` when the history has no such row.
    func place(at position: Int) throws -> Place? {
        try connection.query(
            "SELECT scope_level, is_undone FROM version WHERE history_id = ? AND position = ?",
            [.integer(historyID), .integer(Int64(position))]
        ) { try Place(row: $0, from: 0, position: position, of: self) }.first
    }

    /// Why the version at `next` cannot be redone right after the one at `before`, or `nil`
    /// when nothing lies between them but versions the way does not take: an outer scope's
    /// undone versions (its redo stack, under an inner scope's versions). Versions are
    /// numbered one after another, so a version row lost or renumbered by damage shows as a
    /// number no row has, or as one repeated; one whose flag or scope damage changed shows as
    /// a version of `next`'s own scope (or an inner one) passed over.
    ///
    /// - Parameter places: Where each version row stands, by position; `nil` for no row.
    static func gap(between before: Int, and next: Int, places: (Int) throws -> Place?) rethrows -> String? {
        if next == before { return "version \(next) is stored twice" }
        guard next > before + 1 else { return nil }
        guard let level = try places(next)?.level else { return "version \(next) is missing" }
        for position in before + 1..<next {
            guard let place = try places(position) else { return "version \(position) is missing" }
            guard place.undone else { return "version \(position) is applied, though the way passes over it" }
            guard place.level < level else {
                return place.level == level
                    ? redone(next, afterUndone: position)
                    : "version \(next) is of scope \(level), after a version of scope \(place.level)"
            }
        }
        return nil
    }

    /// What damage that applies version `next` above version `undone` of its own scope, undone,
    /// is called.
    static func redone(_ next: Int, afterUndone undone: Int) -> String {
        "version \(next) is redone after version \(undone), undone in its own scope"
    }

    /// The first ``gap(between:and:places:)`` in `positions`, the first of them being the
    /// value's own (a checkpoint's, or the base value's), each next one redone on it.
    static func firstGap(in positions: [Int], places: [Int: Place]) -> String? {
        zip(positions, positions.dropFirst()).lazy.compactMap {
            gap(between: $0, and: $1, places: { places[$0] })
        }
        .first
    }

    /// The first ``gap(between:and:stored:)`` in the versions redone after `start`, with the
    /// stored positions read from the table. Start 0 is the base value's: the version its
    /// position says (schema 10), or just below the oldest version left (compaction replaces it
    /// and deletes the versions under it).
    func firstGap(redoing versions: [Version], after start: Int) throws -> String? {
        guard let first = versions.first?.position, let last = versions.last?.position else { return nil }
        let start = start == 0 ? try basePosition() ?? first - 1 : start
        guard last > start + 1 else { return nil }
        let places = try connection.query(
            "SELECT position, scope_level, is_undone FROM version WHERE history_id = ? AND position > ? AND position <= ?",
            [.integer(historyID), .integer(Int64(start)), .integer(Int64(last))]
        ) {
            let position = Int(try $0.requiredInt64(0))
            return (position, try Place(row: $0, from: 1, position: position, of: self))
        }
        return Self.firstGap(
            in: [start] + versions.map(\.position), places: Dictionary(places, uniquingKeysWith: { $1 }))
    }
}
