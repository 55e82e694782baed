import Foundation
public import Observation

/// A versioning controller whose history lives in a ``KeepsakeStore``: undo and redo survive
/// quitting the app, a crash, and a restart.
///
/// It has the operations of ``VersioningController`` — append, undo, redo, tags, scopes,
/// transactions, debouncing — with the same semantics, and every operation that changes the
/// history is one SQLite transaction. If the transaction fails (a full disk, a busy store, a
/// conflict with another writer), the controller does not move: memory and disk never disagree.
///
/// ```swift
/// let store = try KeepsakeStore(path: "Notes.keepsake")
/// let history = try store.history("note-42", initialValue: Note(title: "", body: "", tags: []))
/// var note = history.value            // the value as the last process left it
/// note.title = "Groceries"
/// try history.append(note)            // a few small rows, never the whole value
/// note = try history.undo()           // also works on the versions of earlier processes
/// ```
///
/// The store owns the value: it keeps change records plus occasional checkpoints of the whole
/// value, so opening a long history reads one checkpoint and a bounded stretch of changes, and
/// the undo and redo stacks are read from the store one version at a time when needed.
///
/// Tags are strings here, since they are stored. Like the in-memory controller, a history is
/// not `Sendable`: it belongs to the actor that opened it. Open one history per name per
/// process; a second writer on the same history (another process included) gets
/// ``KeepsakeError/historyConflict(history:)`` instead of silently diverging.
public final class KeepsakeHistory<Value: Versionable & Codable>: Observable {
    /// The store holding the history.
    public let store: KeepsakeStore
    /// The history's name in the store.
    public let name: String
    let id: Int64
    var revision: Int64
    var current: Value
    var level: Int
    var undoCount: Int
    var redoCount: Int
    var total: Int
    var limit: Int?
    var stepsSinceCheckpoint = 0
    var bytesSinceCheckpoint = 0
    var checkpointBytes = 0
    var debouncer: (any PendingVersionHolder<Value>)?
    let registrar = ObservationRegistrar()
    var storedError: KeepsakeError?

    /// Versions between checkpoints at most, so reopening replays at most this many.
    static var checkpointInterval: Int { 1_024 }

    init(store: KeepsakeStore, name: String, initialValue: () -> Value, maximumVersions: Int?)
        throws(KeepsakeError)
    {
        precondition(maximumVersions.map { $0 >= 1 } ?? true, "maximumVersions must be at least 1")
        self.store = store
        self.name = name
        let existing = try store.read { connection, _ in
            try connection.query(
                "SELECT id, revision, maximum_versions FROM history WHERE name = ?", [.text(name)]
            ) {
                (id: $0.int64(0)!, revision: $0.int64(1)!, limit: $0.int64(2).map(Int.init))
            }.first
        }
        if let existing {
            id = existing.id
            revision = existing.revision
            limit = existing.limit
            (current, level, undoCount, redoCount, total) = (initialValue(), 0, 0, 0, 0)
            try load()
            if maximumVersions != limit { try setMaximumVersions(maximumVersions) }
        } else {
            let value = initialValue()
            let typeName = String(reflecting: Value.self)
            (id, checkpointBytes) = try store.write { connection, blobs in
                try connection.execute(
                    """
                    INSERT INTO history (name, value_type, created_at, modified_at, maximum_versions)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                    [
                        .text(name), .text(typeName), .real(HistoryRows.now()), .real(HistoryRows.now()),
                        maximumVersions.map { .integer(Int64($0)) } ?? .null,
                    ])
                let id = connection.lastInsertRowID
                let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
                try rows.insertScope(level: 0)
                return (id, try rows.writeCheckpoint(value, version: nil))
            }
            (revision, current, level, undoCount, redoCount, total, limit) = (
                0, value, 0, 0, 0, 0, maximumVersions
            )
        }
    }

    /// Reads the current value and the stack sizes from the store.
    private func load() throws(KeepsakeError) {
        let name = self.name
        let state = try store.read { connection, blobs in
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            let level = try rows.scopeCount() - 1
            guard let checkpoint = try rows.bestCheckpoint() else {
                throw KeepsakeError.undecodableValue(
                    history: name, reason: "the store holds no checkpoint for it")
            }
            var value: Value
            do {
                value = try blobs.decoder.decode(Value.self, from: Data(checkpoint.json.utf8))
            } catch {
                throw KeepsakeError.undecodableValue(history: name, reason: "\(error)")
            }
            let replay = try rows.appliedVersions(after: checkpoint.position)
            for version in replay {
                try Self.apply(rows, version, to: &value, inverted: true, history: name)
            }
            return (
                value, level, try rows.count(scope: level, undone: false),
                try rows.count(scope: level, undone: true),
                try rows.totalCount(), replay.count, checkpoint.json.utf8.count
            )
        }
        (current, level, undoCount, redoCount, total, stepsSinceCheckpoint, checkpointBytes) = state
    }

    /// The stored reversion of `version`, resolved against `value`.
    static func reversion(
        _ rows: HistoryRows, _ version: HistoryRows.Version, against value: Value, inverted: Bool,
        history: String
    ) throws -> Reversion<Value> {
        do {
            return try Reversion(
                records: try rows.records(of: version.id), resolvingAgainst: value, inverted: inverted,
                decoder: rows.blobs.decoder)
        } catch let error as ReversionError {
            throw KeepsakeError.reversion(history: history, version: version.position, error: error)
        } catch let error as PathDescriptor.ParseError {
            throw KeepsakeError.reversion(
                history: history, version: version.position,
                error: .undecodable(path: [], type: "PathDescriptor", reason: error.description))
        }
    }

    /// Applies the stored version to `value` (reverting it, or redoing it when `inverted`),
    /// naming the history and version in any error.
    static func apply(
        _ rows: HistoryRows, _ version: HistoryRows.Version, to value: inout Value, inverted: Bool,
        history: String
    ) throws {
        let reversion = try reversion(rows, version, against: value, inverted: inverted, history: history)
        do {
            try reversion.revert(&value)
        } catch {
            throw KeepsakeError.reversion(history: history, version: version.position, error: error)
        }
    }

    // MARK: - State

    /// The current version.
    public var value: Value {
        registrar.access(self, keyPath: \.value)
        return current
    }

    /// Whether ``undo()`` has a version to go back to in the current scope, counting a pending
    /// debounced change.
    public var hasUndo: Bool {
        registrar.access(self, keyPath: \.hasUndo)
        return undoCount > 0 || debouncer?.pending != nil
    }

    /// Whether ``redo()`` has a version to go forward to in the current scope.
    public var hasRedo: Bool {
        registrar.access(self, keyPath: \.hasRedo)
        return redoCount > 0 && debouncer?.pending == nil
    }

    /// The 0-based level of the current scope.
    public var scopeLevel: Int {
        registrar.access(self, keyPath: \.scopeLevel)
        return level
    }

    /// The number of versions stored, undo and redo, in every scope.
    public var versionCount: Int {
        registrar.access(self, keyPath: \.versionCount)
        return total
    }

    /// The error of the last debounced write that failed on its own (there was no caller to
    /// throw to); `nil` after a successful operation.
    public var error: KeepsakeError? {
        registrar.access(self, keyPath: \.error)
        return storedError
    }

    /// The most versions kept; `nil` keeps all. When exceeded by an eighth (at least 16), the
    /// oldest versions are folded into the base value, down to the limit.
    public var maximumVersions: Int? { limit }

    /// Changes ``maximumVersions``, storing the new limit (and folding versions over it).
    ///
    /// - Parameter maximumVersions: The new limit, or `nil` for none.
    /// - Throws: ``KeepsakeError``; the limit is unchanged then.
    public func setMaximumVersions(_ maximumVersions: Int?) throws(KeepsakeError) {
        precondition(maximumVersions.map { $0 >= 1 } ?? true, "maximumVersions must be at least 1")
        let (id, level, previous) = (self.id, self.level, self.limit)
        limit = maximumVersions
        do {
            let counts = try transact { rows in
                try rows.connection.execute(
                    "UPDATE history SET maximum_versions = ? WHERE id = ?",
                    [maximumVersions.map { .integer(Int64($0)) } ?? .null, .integer(id)])
                try pruneIfNeeded(rows, force: true)
                return try Counts(rows, level: level)
            }
            publish { (undoCount, redoCount, total) = (counts.undo, counts.redo, counts.total) }
        } catch {
            limit = previous
            throw error
        }
    }

    // MARK: - Plumbing

    /// Runs `body` in one write transaction that first claims the history's revision. In-memory
    /// state is changed by the caller only after this returns.
    @discardableResult
    func transact<T>(_ body: (HistoryRows) throws -> T) throws(KeepsakeError) -> T {
        let (id, name, revision) = (self.id, self.name, self.revision)
        let result = try store.write { connection, blobs in
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            try rows.claim(revision: revision, name: name)
            return try body(rows)
        }
        self.revision += 1
        return result
    }

    /// Publishes new state to observers.
    func publish(_ change: () -> Void) {
        registrar.willSet(self, keyPath: \.value)
        registrar.willSet(self, keyPath: \.hasUndo)
        registrar.willSet(self, keyPath: \.hasRedo)
        registrar.willSet(self, keyPath: \.scopeLevel)
        registrar.willSet(self, keyPath: \.versionCount)
        change()
        registrar.didSet(self, keyPath: \.versionCount)
        registrar.didSet(self, keyPath: \.scopeLevel)
        registrar.didSet(self, keyPath: \.hasRedo)
        registrar.didSet(self, keyPath: \.hasUndo)
        registrar.didSet(self, keyPath: \.value)
        if storedError != nil { registrar.withMutation(of: self, keyPath: \.error) { storedError = nil } }
    }
}

extension KeepsakeStore {
    /// Opens the durable history called `name`, creating it with `initialValue` if the store
    /// has none by that name.
    ///
    /// Opening reads the newest checkpoint and the changes after it, never the whole past.
    ///
    /// - Parameters:
    ///   - name: The history's name, such as a document id; any string.
    ///   - type: The value type (inferred from `initialValue`).
    ///   - initialValue: The first version of a new history; not evaluated for an existing one.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all. Stored with
    ///     the history; passing a different value changes it.
    /// - Returns: The history, at the version the last writer left it.
    /// - Throws: ``KeepsakeError``; `.reversion` or `.undecodableValue` when stored data no longer
    ///   decodes as `Value`.
    public func history<Value: Versionable & Codable>(
        _ name: String, of type: Value.Type = Value.self, initialValue: @autoclosure () -> Value,
        maximumVersions: Int? = 1_000
    ) throws(KeepsakeError) -> KeepsakeHistory<Value> {
        try KeepsakeHistory(
            store: self, name: name, initialValue: initialValue, maximumVersions: maximumVersions)
    }
}
