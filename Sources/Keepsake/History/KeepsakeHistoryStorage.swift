import Foundation
public import Revertible

/// The durable storage of a ``VersioningController``: a named history in a ``KeepsakeStore``,
/// so that undo and redo survive quitting the app, a crash, and a restart.
///
/// You do not use it directly: pass ``HistoryStorage/keepsake(_:history:)`` to a controller, or
/// open a ``KeepsakeHistory`` with ``KeepsakeStore/history(_:of:initialValue:maximumVersions:)``.
/// Every operation that changes the history is one SQLite transaction, and memory moves only
/// after it commits: if the transaction fails (a full disk, a busy store, a conflict with
/// another writer), nothing changes.
///
/// The store owns the value: it keeps change records plus occasional checkpoints of the whole
/// value, so opening a long history reads one checkpoint and a bounded stretch of changes, and
/// the undo and redo stacks are read from the store one version at a time when needed.
///
/// Several writers may share one history (another process, another controller): a write
/// that finds another writer's since this storage read it writes nothing and throws
/// ``KeepsakeError/historyConflict(history:)``; the controller then reads the history again
/// (``reload(after:)``) and makes its write from there, never diverging. Opening itself is
/// not refused so: processes opening one history at the same moment each read it again after
/// the first one's write.
public final class KeepsakeHistoryStorage<Value: Versionable & Codable & SendableMetatype> {
    /// The store holding the history.
    public let store: KeepsakeStore
    /// The history's name in the store.
    public let name: String
    let id: Int64
    var revision: Int64 = 0
    public internal(set) var current: Value
    var level = 0
    public internal(set) var undoCount = 0
    public internal(set) var redoCount = 0
    var total = 0
    var limit: Int?
    /// The highest version position in the store; the next version takes the one after.
    var lastPosition = 0
    /// This history's last transaction, when it is known to have been the store's last write:
    /// the next one then knows the stored counters without reading them.
    var lastWrite: LastWrite?
    var stepsSinceCheckpoint = 0
    var bytesSinceCheckpoint = 0
    var checkpointBytes = 0
    /// The records the history's `pending_change` rows hold (the change held back by
    /// debouncing): empty when there are none, `nil` when there are some this history did not
    /// write (a previous process held them). A hold rewrites only the rows that differ.
    var heldRecords: [ChangeRecord]? = []
    /// The digest of the held change as the history's counters store it
    /// (``HistoryRows/Counters/held``): every transaction writes it again with them.
    var heldDigest: Int64?
    /// Whether the store holds a change held back by debouncing.
    var hasPendingRows: Bool { heldRecords != [] }
    /// The newest version whose checkpoint waits to be built off the committing thread, taken
    /// by the job that builds it.
    let checkpointRequest = Handoff()
    /// What the background builds of this history's checkpoints keep between them.
    let checkpointBuilds = CheckpointBuilds()
    /// The rewrites of the stored values, which the background builds check.
    let valueRewrites = ValueRewrites()
    /// Whether the stored values hold what the model does not read, which checkpoints keep.
    let unreadStoredData = UnreadStoredData()
    /// The highest version position when the history was read: the versions above it are this
    /// history's own, written by this model.
    var positionWhenRead = 0
    /// The size of the checkpoint built last off the committing thread (its blobs included),
    /// taken by the next version: the byte rule weighs the changes against it.
    let builtCheckpointSize = Handoff()
    /// Whether a compaction waits to run off the committing thread (any number given).
    let compactionRequest = Handoff()
    /// What compacting off the committing thread did (for tests).
    let compactions = CompactionSteps()

    /// A change to hold that the store refused because the app had closed it (an edit made in
    /// the turn of `store.close()`, given to the storage as its controller was let go of),
    /// held as this history is let go of.
    var unheld: Value?
    /// The store a hold after the app closed ``store`` writes through (``holdAfterClose(_:)``).
    var reopened: KeepsakeStore?
    /// The change a previous writer held back when it stopped, which opening could not record
    /// as a version (a full disk, a store kept locked: it stays stored as held), and the
    /// error: the controller takes it (``takeUnrecordedHeldChange()``) and keeps it pending.
    var unrecordedHeld: (value: Value, error: KeepsakeError)?

    /// Versions between checkpoints at most, so reopening replays at most this many.
    static var checkpointInterval: Int { 1_024 }

    init(store: KeepsakeStore, name: String, initialValue: () -> Value, maximumVersions: Int?)
        throws(KeepsakeError)
    {
        let maximumVersions = VersionHistory<Value>.keptLimit(maximumVersions)
        self.store = store
        self.name = name
        // Read first (no write lock); create under the write lock only if still missing, since
        // another process may create the same history in between — and another may delete it
        // again before it is read: then start over.
        var loaded = try Self.load(name, from: store, initialValue: initialValue)
        var attempts = 0
        while loaded == nil {
            if let created = try Self.create(
                name, in: store, initialValue: initialValue, limit: maximumVersions)
            {
                (id, checkpointBytes, current, limit) = (
                    created.id, created.checkpointBytes, created.value, maximumVersions
                )
                return
            }
            attempts += 1
            guard attempts < 8 else { throw .historyConflict(history: name) }
            loaded = try Self.load(name, from: store, initialValue: initialValue)
        }
        guard let state = loaded else { throw .historyConflict(history: name) }
        (id, current) = (state.id, state.value)
        adopt(state)
        try writeWhatReadingNeeds(state, limit: maximumVersions, initialValue: initialValue, opening: true)
    }

    /// Writes what reading the history left to write: a value replayed on its stored form, the
    /// limit `requested` (`nil`: the one stored is kept), a change held when the last writer
    /// stopped. Another writer may write first (a process opening the same history at the same
    /// moment: a document opened twice); the history is then read again, and what is left is
    /// written, rather than refusing.
    ///
    /// These writes are made for later's sake, so one that fails for a moment's reason
    /// (``KeepsakeError/isMomentary``: a disk too full for it, a store another connection
    /// keeps locked past the busy timeout) is left to the next open: the history opens as
    /// stored — an app updated while the disk is full opens its documents to show them, its
    /// writes (undo and redo too) failing typed until there is room (until 2026-12 the open
    /// failed) — and the rest are not tried (each would wait the busy timeout again). When
    /// `opening`, a held change so left stays held, for the controller to keep pending
    /// (``unrecordedHeld``); read again after another writer's version, the write that met
    /// that version fails instead, typed.
    private func writeWhatReadingNeeds(
        _ state: LoadedState, limit requested: Int??, initialValue: () -> Value, opening: Bool = false
    ) throws(KeepsakeError) {
        var state = state
        // A replay on the stored form parses the whole value into a tree, some 15 times its
        // JSON for a moment (420 MB for 24 MB of JSON, which the process then kept); a merge
        // with what the stored value lacks walks it as Foundation objects.
        defer {
            if state.rewritesCheckpoint { Self.releaseFreeMemory(afterValueOf: state.checkpointBytes) }
        }
        for attempt in 0... {
            // Why a write was left to later, if one was: the rest are left too.
            var leftForLater: KeepsakeError?
            func unlessLeft(_ write: () throws(KeepsakeError) -> Void) throws(KeepsakeError) {
                guard leftForLater == nil else { return }
                do {
                    try write()
                } catch let error where error.isMomentary {
                    leftForLater = error
                }
            }
            do throws(KeepsakeError) {
                // Replayed on the stored form, or read from an older model's checkpoint: stored
                // whole in today's model, so that the next open (and the next checkpoint, built
                // from this one) replays and merges nothing old.
                // Not when today's model refuses to encode the value it decoded (an update made
                // `encode(to:)` validate): the next open replays or merges again.
                if state.rewritesCheckpoint, !store.options.readOnly {
                    try unlessLeft { () throws(KeepsakeError) in try writeCheckpointUnlessRefused() }
                }
                // A read-only store keeps its stored limit: opening must not write.
                if let requested, requested != limit, !store.options.readOnly {
                    try unlessLeft { () throws(KeepsakeError) in try storeLimit(requested) }
                }
                if let held = state.pending, !store.options.readOnly {
                    if opening {
                        try unlessLeft { () throws(KeepsakeError) in try recordHeldChange(held) }
                        unrecordedHeld = leftForLater.map { (held, Self.leavingHeld($0)) }
                    } else {
                        try recordHeldChange(held)
                    }
                }
                return
            } catch .historyConflict(_) where attempt < 8 {
                guard let again = try Self.load(name, from: store, initialValue: initialValue), again.id == id
                else { throw .historyConflict(history: name) }
                state = again
                adopt(state)
            }
        }
    }

    /// `error`, which kept opening from recording the change held back when the history was
    /// last left, saying so: it was not a write of the app's.
    private static func leavingHeld(_ error: KeepsakeError) -> KeepsakeError {
        guard case .sqlite(let failure) = error else { return error }
        return .sqlite(
            failure.saying(
                "the change held back by debouncing when the history was last left stays held, as "
                    + "the value shows it, and the next operation records it"))
    }

    /// Reads the history again after another writer changed it, keeping its stored limit; see
    /// ``VersionStorage/reload(after:)``.
    ///
    /// - Returns: Whether it was read again: not when the history was deleted (a history
    ///   created since under its name is another one).
    func readAgain() throws(KeepsakeError) -> Bool {
        guard let state = try Self.load(name, from: store, initialValue: { current }), state.id == id
        else { return false }
        adopt(state)
        try writeWhatReadingNeeds(state, limit: nil, initialValue: { current })
        return true
    }

    /// Reads the history again when its stored revision is not the one this storage last read
    /// or wrote; see ``reloadIfChanged()``.
    ///
    /// - Returns: Whether it was read again.
    /// - Throws: ``KeepsakeError/historyConflict(history:)`` when the history was deleted.
    func readAgainIfChanged() throws(KeepsakeError) -> Bool {
        let (id, name) = (self.id, self.name)
        let stored = try store.read { connection, blobs -> Int64? in
            guard try HistoryRows.historyID(named: name, in: connection) == id else { return nil }
            return try HistoryRows(connection: connection, blobs: blobs, historyID: id).storedCounters()
                .counters
                .revision
        }
        guard let stored else { throw .historyConflict(history: name) }
        guard stored != revision else { return false }
        guard try readAgain() else { throw .historyConflict(history: name) }
        return true
    }

    deinit {
        if let unheld { holdAfterClose(unheld) }
    }

    /// Holds `value` as a held change, which the next open records as a version, through the
    /// store's file opened again: the app closed the store in the turn of the edit (an edit
    /// its controller had not recorded yet), then let go of the controller, which gives such an
    /// edit to its storage. Best effort, as that giving is: nothing is written when the file is
    /// gone or cannot be opened, or when its history of this name is not the one this storage
    /// left — another id, revision, value or stack sizes (another writer since, another file
    /// put at the path, a backup restored; its inode tells nothing, as a new file may take the
    /// number of one deleted).
    private func holdAfterClose(_ value: Value) {
        guard !store.options.readOnly, store.path != ":memory:",
            FileManager.default.fileExists(atPath: store.path),
            let again = try? KeepsakeStore(path: store.path, options: store.options)
        else { return }
        defer { again.close() }
        guard let stored = try? Self.load(name, from: again, initialValue: { current }),
            (stored.id, stored.revision, stored.counts) == (id, revision, counts),
            stored.value.reversion(to: current) == nil
        else { return }
        (reopened, lastWrite) = (again, nil)
        try? holdDurably(value)
        reopened = nil
    }

    /// Takes what opening read: the value, the counters and what replaying them left.
    private func adopt(_ state: LoadedState) {
        (revision, limit, current, level) = (state.revision, state.limit, state.value, state.level)
        (undoCount, redoCount, total) = (state.counts.undo, state.counts.redo, state.counts.total)
        (stepsSinceCheckpoint, checkpointBytes, lastPosition, heldDigest) = (
            state.replayed, state.checkpointBytes, state.lastPosition, state.heldDigest
        )
        (heldRecords, lastWrite, positionWhenRead) = ([], nil, state.lastPosition)
        unreadStoredData.forget()
    }

    /// Creates history `name` in one write transaction, unless it exists by then (another
    /// process created it first): then `nil`.
    private static func create(
        _ name: String, in store: KeepsakeStore, initialValue: () -> Value, limit: Int?
    ) throws(KeepsakeError) -> (id: Int64, checkpointBytes: Int, value: Value)? {
        try store.write { connection, blobs in
            guard try HistoryRows.historyID(named: name, in: connection) == nil else { return nil }
            let value = initialValue()
            let rows = try HistoryRows.insertHistory(
                named: KeepsakeStore.canonicalName(name), valueType: Caretaker.stableName(of: Value.self),
                limit: limit.map(Int64.init),
                in: connection, blobs: blobs)
            return (rows.historyID, try rows.writeCheckpoint(value, position: nil), value)
        }
    }

    /// What opening an existing history reads.
    private struct LoadedState {
        var id: Int64
        var revision: Int64
        var limit: Int?
        var counts: Counts
        var value: Value
        var level: Int
        var replayed: Int
        var checkpointBytes: Int
        var lastPosition: Int
        /// The value a debounced change was holding when the last process stopped, if any.
        var pending: Value?
        /// The digest of its rows the counters hold.
        var heldDigest: Int64?
        /// Whether today's model writes the value opened otherwise than it is stored: replayed
        /// on the stored form, or read from a checkpoint that lacks a property added since
        /// (which every open would otherwise read again through the merge: 110–160 ms against
        /// 25 ms for 10,000 items). The value opened then wants a checkpoint of its own.
        var rewritesCheckpoint = false
    }

    /// Reads the current value and the stack sizes of history `name`, or `nil` when there is
    /// none: one checkpoint and the changes after it, and the sizes stored on the history row.
    private static func load(_ name: String, from store: KeepsakeStore, initialValue: () -> Value)
        throws(KeepsakeError) -> LoadedState?
    {
        try store.read { connection, blobs in
            guard let id = try HistoryRows.historyID(named: name, in: connection) else { return nil }
            let limit = try connection.scalarInt(
                "SELECT maximum_versions FROM history WHERE id = ?", [.integer(id)])
            let stored = try HistoryRows(connection: connection, blobs: blobs, historyID: id)
                .storedCounters().counters
            let row = (
                id: id, revision: stored.revision, limit: limit.map(Int.init),
                counts: Counts(undo: stored.undo, redo: stored.redo, total: stored.total)
            )
            // Every stored number is range-checked before any arithmetic is done with it.
            let numbers = [
                ("revision", Int(row.revision)), ("undo_count", row.counts.undo),
                ("redo_count", row.counts.redo),
                ("version_count", row.counts.total), ("maximum_versions", row.limit ?? 1),
            ]
            for (field, number) in numbers where !(0...HistoryRows.largestNumber).contains(number) {
                throw KeepsakeError.damaged(history: name, reason: "its \(field) is \(number), out of range")
            }
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: row.id)
            // The changes since the checkpoint are replayed on today's model; when it can no
            // longer read one, or the checkpoint (the app changed the model after a run that did
            // not close the history), on the checkpoint's stored form instead, as the old model
            // wrote both. A checkpoint the old versions above it do not fit (one today's model
            // stored, then the old app's undone versions redone above it) is passed over for the
            // one below: until 2026-11 such a history did not open, at random.
            let loaded: ((position: Int, json: String), [HistoryRows.Version], Value, StoredForm?, Bool)?
            do {
                loaded = try rows.fromFittingCheckpoint { checkpoint in
                    let replay = try rows.appliedVersions(after: checkpoint.position)
                    let (value, form, merged) = try rows.replayed(
                        from: checkpoint.json, redoing: replay, history: name, template: { initialValue() })
                    return (checkpoint, replay, value, form, merged)
                }
            } catch {
                // A flag flipped by damage puts a version on the way that does not fit the
                // value: that is damage, not a change the model cannot read.
                try rows.checkVersions(rows.places(), floor: rows.floor())
                throw error
            }
            // Every history is created with its base value: none at all is a damaged file.
            guard let (checkpoint, replay, value, form, merged) = loaded else {
                throw KeepsakeError.damaged(
                    history: name, reason: "it has no stored value, not even its base value")
            }
            let level = try rows.scopeCount() - 1
            try rows.checkLoaded(
                replayed: replay.map(\.position), from: checkpoint.position, level: level,
                redo: row.counts.redo, total: row.counts.total, history: name)
            let held = try rows.pendingRecords(digest: stored.held, history: name)
            var pending: Value?
            if !held.isEmpty {
                do {
                    pending = try Reversion(
                        records: held, resolvingAgainst: value, inverted: true, decoder: blobs.decoder
                    ).reverted(value)
                } catch {
                    guard
                        var heldForm = try? form
                            ?? rows.storedForm(
                                checkpoint.json, redoing: replay, history: name,
                                keys: CodingKeyTree(for: Value.self)),
                        (try? heldForm.revert(held, inverted: true)) != nil,
                        let heldValue = try? rows.decodeStored(
                            heldForm.json, history: name, template: initialValue)
                    else {
                        throw KeepsakeError.undecodableValue(
                            history: name,
                            reason:
                                "its change held back by debouncing does not apply: \(RecordCoding.sentence("\(error)"))"
                        )
                    }
                    pending = heldValue
                }
            }
            return LoadedState(
                id: row.id, revision: row.revision, limit: row.limit, counts: row.counts, value: value,
                level: level, replayed: replay.count,
                checkpointBytes: checkpoint.json.utf8.count + (try rows.blobBytes(inJSON: checkpoint.json)),
                lastPosition: try rows.highestTaken(), pending: pending, heldDigest: stored.held,
                rewritesCheckpoint: merged)
        }
    }

    /// The stored reversion of `version`, resolved against `value`.
    static func reversion(
        _ rows: HistoryRows, _ version: HistoryRows.Version, against value: Value, inverted: Bool,
        history: String
    ) throws -> Reversion<Value> {
        do {
            return try Reversion(
                records: try rows.records(of: version), resolvingAgainst: value, inverted: inverted,
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

    /// Stores a new limit, folding versions over it.
    func storeLimit(_ maximumVersions: Int?) throws(KeepsakeError) {
        let maximumVersions = VersionHistory<Value>.keptLimit(maximumVersions)
        let (id, name, level, previous, stored) = (self.id, self.name, self.level, self.limit, self.total)
        limit = maximumVersions
        do {
            let (counts, position) = try transact { rows in
                let kept = try rows.checkedKeptVersions(stored: stored, level: level, history: name)
                try rows.connection.execute(
                    "UPDATE history SET maximum_versions = ? WHERE id = ?",
                    [maximumVersions.map { .integer(Int64($0)) } ?? .null, .integer(id)])
                let before = kept.counts(level: level)
                let pruned = try pruneIfNeeded(rows, total: kept.count, force: true)
                let counts = pruned?.counts(after: before, level: level) ?? before
                try rows.checkCounts(level: level, expected: counts, history: name)
                return (counts, try rows.highestTaken())
            } counts: {
                $0.0
            }
            lastPosition = position
            (undoCount, redoCount, total) = (counts.undo, counts.redo, counts.total)
        } catch {
            limit = previous
            throw error
        }
    }

    // MARK: - Plumbing

    /// Runs `body` in one write transaction, which starts by checking that the stored revision
    /// is still the one this history last wrote (otherwise another writer got there first:
    /// ``KeepsakeError/historyConflict(history:)``, and nothing is written) and ends by storing
    /// the next revision and the stack sizes `counts` derives from the result. `BEGIN
    /// IMMEDIATE` holds the write lock throughout, so no other writer comes in between. In-memory
    /// state is changed by the caller only after this returns. `newest` tells what `body` knows
    /// of the newest version (by default nothing: it is read); `holding`, the digest of the held
    /// change `body` leaves (by default the one stored before), stored with the counters.
    @discardableResult
    func transact<T>(
        _ body: (HistoryRows) throws -> T, counts: (T) -> Counts,
        newest: (T) -> HistoryRows.NewestVersion = { _ in .unknown },
        holding: ((T) -> Int64?)? = nil
    ) throws(KeepsakeError) -> T {
        let (id, name, revision, known) = (self.id, self.name, self.revision, self.lastWrite)
        var held = heldDigest
        lastWrite = nil
        var written: LastWrite?
        let result = try (reopened ?? store).write { connection, blobs in
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            let previousNewest: Int?
            if let known, connection.isUnchanged(sinceCommit: known.commit) {
                // Nothing wrote to the store since this history's last transaction: its
                // counters and newest version are as that transaction left them.
                previousNewest = known.newest
            } else {
                let (newest, stored) = try rows.storedCounters()
                guard stored.revision == revision else { throw KeepsakeError.historyConflict(history: name) }
                previousNewest = newest
            }
            let result = try body(rows)
            let sizes = counts(result)
            if let holding { held = holding(result) }
            let newestNow = try rows.store(
                .init(
                    revision: revision + 1, undo: sizes.undo, redo: sizes.redo, total: sizes.total, held: held
                ),
                previousNewest: previousNewest, newest: newest(result))
            written = LastWrite(commit: connection.writeCommits + 1, newest: newestNow)
            return result
        }
        self.revision += 1
        (lastWrite, heldDigest) = (written, held)
        return result
    }

    /// This history's last transaction: the number of its commit on the store's connection, and
    /// the newest version it left (`nil`: none).
    struct LastWrite {
        var commit: Int
        var newest: Int?
    }

    /// The stack sizes as they are.
    var counts: Counts { Counts(undo: undoCount, redo: redoCount, total: total) }
}
