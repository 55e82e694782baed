internal import CSQLite
import Foundation
import Observation
import Revertible

extension KeepsakeHistoryStorage {
    /// Stack sizes read at the end of a write transaction, published after it commits. A type
    /// of its own: nested in this generic class, each use would look its metadata up at run time.
    typealias Counts = HistoryCounts

    /// Takes on the state a committed transaction left.
    private func settle(_ value: Value, _ counts: Counts, level: Int? = nil) {
        current = value
        undoCount = counts.undo
        redoCount = counts.redo
        total = counts.total
        if let level { self.level = level }
    }

    // MARK: - Appending versions

    /// Appends a version in one transaction that writes the changed paths only.
    func commit(_ reversion: Reversion<Value>, resulting newValue: Value, tag: VersionTag?)
        throws(KeepsakeError)
    {
        let (name, level, highest, redoCount) = (self.name, self.level, self.lastPosition, self.redoCount)
        // The counts after the append, known without asking the store unless pruning runs.
        var counts = Counts(undo: undoCount + 1, redo: 0, total: total - redoCount + 1)
        // The new version carries the history's counters as they will be, unless pruning
        // changes them: then they are written again at the end.
        let counters = HistoryRows.Counters(
            revision: revision + 1, undo: counts.undo, redo: counts.redo, total: counts.total)
        var folded = false
        let (wroteCheckpoint, bytes, position, final) = try transact { rows in
            // A version takes the position after the highest one; discarding the redo stack
            // (or pruning it) lowers that highest one, so it is read again then.
            var position = highest + 1
            if redoCount > 0 {
                try rows.deleteVersions(scope: level, undoneOnly: true)
                position = try rows.highestTaken() + 1
            }
            let bytes = try insert(
                reversion, resulting: newValue, rows: rows, position: position, scope: level, tag: tag,
                history: name, counters: counters)
            // The version records what was held: the held rows go in the same transaction.
            if hasPendingRows { try rows.replacePending(with: [], replacing: nil) }
            let wroteCheckpoint = try checkpointIfDue(
                rows, value: newValue, position: position, adding: bytes)
            let background = store.checkpointer != nil
            if let pruned = try pruneIfNeeded(
                rows, total: counts.total, force: false, compacting: !background)
            {
                counts = pruned.counts(after: counts, level: level)
                position = try rows.highestTaken()
                folded = pruned.folded > 0 && background
            }
            return (wroteCheckpoint, bytes, position, counts)
        } counts: {
            $0.3
        } newest: {
            .inserted(position: $0.2, holding: counters)
        } holding: { _ in
            nil
        }
        self.lastPosition = position
        heldRecords = []
        noteCheckpoint(wroteCheckpoint, adding: bytes)
        if folded { noteFolding() }
        settle(newValue, final)
    }

    private func insert(
        _ reversion: Reversion<Value>, resulting value: Value, rows: HistoryRows, position: Int, scope: Int,
        tag: VersionTag?, history: String, counters: HistoryRows.Counters? = nil
    ) throws -> Int {
        let changes = try stored(history: history, resulting: value) { () throws(ReversionError) in
            try StoredChanges.encode(reversion, position: position, encoderWhenNeeded: { rows.blobs.encoder })
        }
        if changes.liesDeep { try Self.checkEncodable(value, history: history) }
        return try rows.insertVersion(
            position: position, scope: scope, tag: tag, changes: (changes.text, changes.bytes),
            counters: counters)
    }

    /// The stored form of `reversion`, which makes `value`.
    private func records(
        of reversion: Reversion<Value>, resulting value: Value, _ rows: HistoryRows, history: String
    ) throws -> [ChangeRecord] {
        let records = try stored(history: history, resulting: value) { () throws(ReversionError) in
            try reversion.records(encoderWhenNeeded: { rows.blobs.encoder })
        }
        let liesDeep = records.contains { record in
            record.payload.withUnsafeBytes { StoredChanges.mayLieDeep(path: record.path, patch: $0) }
        }
        if liesDeep { try Self.checkEncodable(value, history: history) }
        return records
    }

    /// What `encode` makes of a reversion that makes `value`, its errors as the store reports
    /// them: a blob that could not be written (a full disk) as the store's own error, an error
    /// of the model's own `encode(to:)` and a change that does not encode as
    /// ``KeepsakeError/unencodableValue(history:reason:)`` — the latter when the value does not
    /// encode either (a subtree nested too deep for JSON), else as `.reversion`.
    private func stored<T>(history: String, resulting value: Value, _ encode: () throws(ReversionError) -> T)
        throws -> T
    {
        do {
            return try encode()
        } catch .storage(let failure) {
            guard failure.error is SQLiteError || failure.error is KeepsakeError else {
                // Thrown by the model's `encode(to:)` (before, reported as SQLite error 1).
                throw KeepsakeError.unencodableValue(
                    history: history, reason: KeepsakeError.encodingFailure(failure.error))
            }
            throw failure.error
        } catch {
            if case .notEncodable = error { try Self.checkEncodable(value, history: history) }
            throw KeepsakeError.reversion(history: history, version: nil, error: error)
        }
    }

    /// Refuses a value `JSONEncoder` cannot write whole, which no checkpoint, snapshot or base
    /// value could hold: a value a change reaches deep into (``StoredChanges/mayLieDeep(path:patch:)``)
    /// is encoded once, so that the edit that would nest it too deep is the one refused, rather
    /// than every later checkpoint failing on it. No blob is written.
    ///
    /// - Throws: ``KeepsakeError/unencodableValue(history:reason:)``.
    private static func checkEncodable(_ value: Value, history: String) throws {
        _ = try KeepsakeError.encoding(
            { try ChangeRecord.makeEncoder().encode(value) },
            refusedAs: { .unencodableValue(history: history, reason: $0) })
    }

    // MARK: - Held changes

    /// Writes the change held back by debouncing as it is held, replacing the one before: one
    /// small transaction per keystroke, so that a crash loses nothing typed. `nil` (or a value
    /// equal to the current one) clears it.
    func holdDurably(_ value: Value?) throws(KeepsakeError) {
        let change = value.flatMap { value in value.reversion(to: current).map { (value, $0) } }
        guard change != nil || hasPendingRows else { return }
        let (name, previous) = (self.name, heldRecords)
        let held = try transact { rows in
            let held =
                try change.map { value, reversion in
                    try records(of: reversion, resulting: value, rows, history: name)
                } ?? []
            try rows.replacePending(with: held, replacing: previous)
            return held
        } counts: { [counts] _ in
            counts
        } newest: { _ in
            .unchanged
        } holding: {
            HistoryRows.heldDigest($0)
        }
        heldRecords = held
    }

    /// Turns the change a previous process was holding (it stopped before recording it) into a
    /// version, as recording it would have.
    func recordHeldChange(_ held: Value) throws(KeepsakeError) {
        heldRecords = nil
        if let reversion = held.reversion(to: current) {
            try commit(reversion, resulting: held, tag: nil)
        } else {
            try holdDurably(nil)
        }
    }

    /// A checkpoint that fell due with a version.
    typealias DueCheckpoint = HistoryDueCheckpoint

    /// A checkpoint when enough versions or bytes have piled up since the last one (the byte
    /// rule keeps checkpoint writes within the size of the changes themselves): built off the
    /// committing thread when the store has a background connection and the value is not
    /// small (``buildCheckpoint(_:historyID:name:position:builds:sizes:waitForPause:deferring:)``),
    /// else written in this transaction.
    ///
    /// A small value (its last checkpoint within ``smallCheckpoint`` bytes) is encoded here:
    /// that costs this commit less than a page of JSON, where building it off the thread
    /// decodes and applies every version since the last checkpoint — some fifty times
    /// the work, on a core the app's other threads may need.
    private func checkpointIfDue(_ rows: HistoryRows, value: Value, position: Int, adding bytes: Int) throws
        -> DueCheckpoint?
    {
        // The byte rule weighs the changes against the newest checkpoint, built here or off
        // the thread: a value that grew since the last one written here is judged by its size.
        if let built = builtCheckpointSize.take() { checkpointBytes = built }
        let due =
            stepsSinceCheckpoint + 1 >= Self.checkpointInterval
            || bytesSinceCheckpoint + bytes >= max(4 * 1024, checkpointBytes)
        guard due else { return nil }
        if store.checkpointer != nil, checkpointBytes > Self.smallCheckpoint {
            return .deferred(position: position)
        }
        let written: Int?
        do {
            written = try rows.writeCheckpoint(
                value, position: position, history: name, unread: unreadStoredData)
        } catch KeepsakeError.unencodableValue {
            // The model's `encode(to:)` refuses this value, which it diffs and decodes: a
            // checkpoint only shortens reopening, so none is stored, as a build off the thread
            // stores none (the next append tries again). Refusing the append would refuse
            // every later one too, until the value changed back.
            return nil
        }
        // None stored (the stored values hold what the model does not read, and the model's
        // value is not theirs): the versions are replayed from the last one.
        return .written(written ?? checkpointBytes)
    }

    /// The size up to which a history's checkpoints are written by the committing thread, with
    /// the version they fall due with: 2 KiB, half a page.
    static var smallCheckpoint: Int { 2 * 1024 }

    /// Takes note of a version's checkpoint once its transaction committed, and hands a deferred
    /// one to the background connection.
    private func noteCheckpoint(_ due: DueCheckpoint?, adding bytes: Int) {
        switch due {
        case .written(let size):
            (stepsSinceCheckpoint, bytesSinceCheckpoint, checkpointBytes) = (0, 0, size)
        case .deferred(let position):
            (stepsSinceCheckpoint, bytesSinceCheckpoint) = (0, 0)
            // At most one build waits per history: a newer request moves its target, so builds
            // never pile up behind a fast writer.
            guard checkpointRequest.give(position), let checkpointer = store.checkpointer else { return }
            let (id, name, request, builds, sizes, rewrites, unread) = (
                self.id, self.name, checkpointRequest, checkpointBuilds, builtCheckpointSize, valueRewrites,
                unreadStoredData
            )
            checkpointer.perform { connection in
                guard let position = request.take() else { return }
                Self.buildCheckpoint(
                    connection, historyID: id, name: name, position: position, builds: builds, sizes: sizes,
                    rewrites: rewrites, unread: unread, waitForPause: checkpointer.logIsLong,
                    deferring: { store in
                        // Storing a large value holds the write lock for a millisecond or
                        // more, and any store keeps a long log from starting over: that waits
                        // for a pause in the app's writing, briefly. Reopening replays what
                        // lies above the newest checkpoint, and compacting deletes at most
                        // from one checkpoint to the next in a step: 2 s of a writer that
                        // never paused (22,000 versions) made a step hold its next append for
                        // 20–25 ms; 0.5 s, 8–9 ms. Meanwhile the builds go on from the value
                        // built last, and the newest one is stored.
                        checkpointer.perform(
                            whenQuietFor: Self.quietBeforeBackgroundWrites, patience: .milliseconds(500),
                            runsAtStop: true, store)
                    })
            }
        case nil:
            stepsSinceCheckpoint += 1
            bytesSinceCheckpoint += bytes
        }
    }

    /// How long the app's writer must have been idle before the background connection stores a
    /// large checkpoint (at most 0.5 s later) or compacts (at most 1 s later, then a step at most
    /// every 20 ms): their write transactions would hold up a commit arriving meanwhile.
    static var quietBeforeBackgroundWrites: Duration { .milliseconds(50) }

    /// Asks the background connection to delete what the root scope's floor covers, once a
    /// checkpoint lies under it (``compactOffThread(_:historyID:request:steps:then:)``): at
    /// most one compaction waits or runs per history.
    private func noteFolding() {
        guard compactionRequest.give(0), let checkpointer = store.checkpointer else { return }
        let (id, request, steps) = (self.id, compactionRequest, compactions)
        // Its write transactions (a base value copied, versions deleted) would hold up a commit
        // arriving meanwhile: it waits for a pause in the app's writing, briefly.
        checkpointer.perform(whenQuietFor: Self.quietBeforeBackgroundWrites, patience: .seconds(1)) {
            connection in
            Self.compactOffThread(
                connection, historyID: id, request: request, steps: steps, then: checkpointer)
        }
    }

    /// The most versions one step of compacting off the committing thread deletes, where the
    /// checkpoints allow (``HistoryRows/nextBasePlace(step:)``): 1,024, about 1 ms of the
    /// write lock.
    ///
    /// In one step, a writer that never paused for the 10 s a compaction then waited had left
    /// 50,000 versions or more to delete, which held the write lock, and that writer's next
    /// append, for 160–250 ms (a value of 3,000 items, 11,000 appends a second). A small value,
    /// whose checkpoints lie some 70 versions apart, had nothing deleted at all: the newest
    /// checkpoint under the floor changed between the read of its text and the write, and the
    /// compaction gave up (113 MiB in 22 s under a limit of 200 versions).
    static var compactionStep: Int { checkpointInterval }

    /// How long a step of compacting waits for the next one while the app's writer is busy:
    /// 20 ms, the least time between two background checkpoints of the write-ahead log.
    static var compactionPause: Duration { .milliseconds(20) }

    /// Compacts the history (``HistoryRows/compact(to:baseDigest:)``) on the background
    /// connection, one bounded step (``compactionStep``) per job until nothing is left to
    /// delete: the next base value is read and checked in a read snapshot, and the write
    /// transaction, which holds the write lock, only swaps it in and deletes the versions under
    /// it — provided that checkpoint may still become the base value
    /// (``HistoryRows/canBecomeBase(_:)``). The writer's commits and the
    /// other jobs go between two steps. Like a checkpoint, compacting only saves space: one that
    /// fails is tried again after the next folding.
    ///
    /// The steps run with foreign keys off (a transaction cannot turn them off; the connection
    /// is the jobs' alone): the compaction deletes the rows referring to what it deletes itself.
    ///
    /// - Parameters:
    ///   - request: Taken once nothing is left (or a step failed), so that the next folding asks
    ///     for a compaction again.
    ///   - steps: Told the versions each step deletes (for tests).
    ///   - checkpointer: Runs the next step.
    static func compactOffThread(
        _ connection: SQLiteConnection, historyID: Int64, request: Handoff, steps: CompactionSteps,
        then checkpointer: WALCheckpointer
    ) {
        let rows = HistoryRows(connection: connection, blobs: BlobCoding(connection), historyID: historyID)
        let step = compactionStep
        let deleted: Int?
        do {
            if let next = try connection.transaction(immediate: false, { try rows.nextBase(step: step) }) {
                let baseDigest = HistoryRows.checkpointDigest(next.json, position: nil)
                try connection.execute("PRAGMA foreign_keys = OFF")
                defer { try? connection.execute("PRAGMA foreign_keys = ON") }
                deleted = try connection.transaction {
                    guard try rows.canBecomeBase((next.position, next.digest)) else { return nil }
                    return try rows.compact(to: next, baseDigest: baseDigest)
                }
            } else {
                deleted = nil
            }
        } catch {
            deleted = nil
        }
        guard let deleted else {
            _ = request.take()
            return
        }
        steps.note(deleted: deleted)
        // Paced: steps back to back grew the write-ahead log faster than its background
        // checkpoints copied it, until a commit of the writer's copied it itself (10–50 ms).
        checkpointer.perform(whenQuietFor: quietBeforeBackgroundWrites, patience: compactionPause) {
            connection in
            compactOffThread(
                connection, historyID: historyID, request: request, steps: steps, then: checkpointer)
        }
    }

    /// Builds the checkpoint of the version at `position` on the background connection, from
    /// the stored rows alone: the value is decoded and changed here, from the newest checkpoint
    /// below it — or from the value the previous build made, while that one waits to be stored
    /// and its version is still applied as it was — and shared with no one. Nothing is written
    /// when the version is no longer applied, already has a checkpoint, or was replaced by
    /// another at its position meanwhile, nor when the stored versions' values were rewritten
    /// after the rows were read (``rebase(on:)``, under way or committed since): the value built
    /// would lack that change.
    ///
    /// A checkpoint only shortens reopening, so one that cannot be built is left out (the next
    /// one is tried at its turn); whatever stopped it reaches the app when the app reads those
    /// rows itself.
    ///
    /// - Parameters:
    ///   - builds: What the builds of this history keep between them.
    ///   - sizes: Given the size of each checkpoint built (its blobs included), for the
    ///     history's byte rule.
    ///   - rewrites: Counts the rewrites of the history's stored values by the committing
    ///     thread.
    ///   - unread: Whether the stored values hold what the model does not read: until it is
    ///     known that they do not, the build starts from a stored checkpoint, and stores the
    ///     form ``HistoryRows/checkpointJSON(of:position:history:unread:)`` gives.
    ///   - waitForPause: Whether even a small checkpoint waits to be stored, as a large one
    ///     does: while the write-ahead log is long (``WALCheckpointer/logIsLong``), a commit of
    ///     this connection's between two of the writer's would keep the log from starting over.
    ///   - deferring: Handed a store step when the checkpoint is large (over
    ///     ``largeCheckpoint`` bytes) or must wait, and none waits yet, to run it later on the
    ///     background connection: it stores the newest checkpoint built by then. Otherwise the
    ///     checkpoint is stored at once.
    static func buildCheckpoint(
        _ connection: SQLiteConnection, historyID: Int64, name: String, position: Int,
        builds: CheckpointBuilds, sizes: Handoff, rewrites: ValueRewrites, unread: UnreadStoredData,
        waitForPause: Bool = false,
        deferring: (@escaping @Sendable (SQLiteConnection) -> Void) -> Void
    ) {
        let rows = HistoryRows(connection: connection, blobs: BlobCoding(connection), historyID: historyID)
        func key(_ position: Int) -> [SQLiteValue] { [.integer(historyID), .integer(Int64(position))] }
        var encodedBytes = 0
        defer { releaseFreeMemory(afterValueOf: encodedBytes) }
        // Counted before the rows are read: a rewrite counted after began after, and one
        // committed before has its end counted too.
        let rewritesSeen = rewrites.count
        guard !ValueRewrites.isUnderWay(rewritesSeen) else { return }
        do {
            // The rows are read in one short snapshot: a read transaction held while decoding
            // would keep the write-ahead log from starting over. The work is done outside it.
            let read: (json: String?, versions: [HistoryRows.Version], version: AppliedVersion)? =
                try connection.transaction(immediate: false) {
                    guard let version = try AppliedVersion.read(connection, key(position)),
                        try connection.scalarInt(checkpointCountSQL, key(position)) == 0
                    else { return nil }
                    // A version row lost from the way (damage) would leave its change out of a
                    // checkpoint stored with a sound digest, which every later open would trust.
                    if unread.current.state == .none, let built = builds.built, built.position < position,
                        built.rewrites == rewritesSeen,
                        try AppliedVersion.read(connection, key(built.position)) == built.version
                    {
                        let versions = try rows.appliedVersions(after: built.position, upTo: position)
                        guard try rows.firstGap(redoing: versions, after: built.position) == nil else {
                            return nil
                        }
                        return (nil, versions, version)
                    }
                    guard let source = try rows.bestCheckpoint(below: position) else { return nil }
                    let versions = try rows.appliedVersions(after: source.position, upTo: position)
                    guard try rows.firstGap(redoing: versions, after: source.position) == nil else {
                        return nil
                    }
                    return (source.json, versions, version)
                }
            guard let read else { return }
            var value: Value
            if let json = read.json {
                value = try rows.decodeStored(json, history: name) { nil }
            } else if let built = builds.built {
                value = built.value
            } else {
                return
            }
            builds.built = nil
            for version in read.versions {
                try Self.apply(rows, version, to: &value, inverted: true, history: name)
            }
            builds.replayed = read.versions.count
            // The model's form, encoded out of any transaction (it stores large byte strings);
            // unless the stored values are known to hold nothing the model does not read, what
            // to store is found out in one snapshot of the rows.
            let encoded = try rows.encodeCheckpoint(value)
            let written: (json: String, size: Int)? =
                unread.current.state == .none
                ? encoded
                : try connection.transaction(immediate: false) {
                    try rows.checkpointJSON(
                        of: value, encoded: encoded, position: position, history: name, unread: unread)
                }
            guard let (json, size) = written else { return }
            encodedBytes = json.utf8.count
            sizes.give(size)
            let checkpoint = CheckpointBuilds.Built(
                position: position, version: read.version, json: json,
                digest: HistoryRows.checkpointDigest(json, position: position), blobs: rows.blobs.referenced,
                rewrites: rewritesSeen)
            guard json.utf8.count > largeCheckpoint || waitForPause else {
                store(checkpoint, connection, historyID: historyID, rewrites: rewrites)
                return
            }
            builds.built = (position, read.version, value, rewritesSeen)
            builds.waiting = checkpoint
            guard !builds.storeQueued else { return }
            builds.storeQueued = true
            deferring { connection in
                builds.storeQueued = false
                guard let waiting = builds.waiting else { return }
                // The next build starts from this checkpoint once stored: the value goes.
                (builds.waiting, builds.built) = (nil, nil)
                store(waiting, connection, historyID: historyID, rewrites: rewrites)
                releaseFreeMemory(afterValueOf: waiting.json.utf8.count)
            }
        } catch {
            builds.built = nil
            return
        }
    }

    /// What tells a version from one that replaced it at its position: its `changes` text and
    /// the time it was created (``RowClock``: no two rows this process writes share one, and
    /// another process would have to hit the same quarter of a microsecond). The text alone
    /// does not: undoing two edits, making the first differently and the second again stores
    /// the second's text at its position on another value, and a checkpoint built for the old
    /// version would be stored for the new one, or built on, with the first edit's old value.
    struct AppliedVersion: Equatable {
        let changes: String
        let createdAt: Double

        /// The version at `key` (`?1` the history, `?2` its position) while it is applied; `nil`
        /// too when a damaged row lacks either column (nothing is built on it then).
        static func read(_ connection: SQLiteConnection, _ key: [SQLiteValue]) throws -> AppliedVersion? {
            try connection.query(
                """
                SELECT changes, created_at FROM version WHERE history_id = ? AND position = ? AND is_undone = 0
                """, key
            ) { row in
                row.text(0).flatMap { changes in
                    row.double(1).map { AppliedVersion(changes: changes, createdAt: $0) }
                }
            }.first ?? nil
        }
    }

    /// Whether a version (`?1` the history, `?2` its position) has a checkpoint.
    private static var checkpointCountSQL: String {
        "SELECT count(*) FROM checkpoint WHERE history_id = ? AND position = ?"
    }

    /// Stores a checkpoint built off the committing thread if its version is still the one it
    /// was built from, and still has none, and every blob it refers to is still stored as it
    /// was when encoded (the blobs were committed then, and ``KeepsakeStore/compact()`` may have
    /// deleted them since, nothing stored referring to them, their ids gone to other bytes), and
    /// no rewrite of the stored values began since its rows were read. Checked in the write
    /// transaction: a rewrite's own transaction comes before it (then it is counted) or after
    /// it (then it deletes the checkpoint with every other).
    private static func store(
        _ checkpoint: CheckpointBuilds.Built, _ connection: SQLiteConnection, historyID: Int64,
        rewrites: ValueRewrites
    ) {
        let rows = HistoryRows(connection: connection, blobs: BlobCoding(connection), historyID: historyID)
        let key: [SQLiteValue] = [.integer(historyID), .integer(Int64(checkpoint.position))]
        try? connection.transaction {
            guard rewrites.count == checkpoint.rewrites,
                try AppliedVersion.read(connection, key) == checkpoint.version,
                try connection.scalarInt(checkpointCountSQL, key) == 0,
                try checkpoint.blobs.allSatisfy(rows.blobs.isStored)
            else { return }
            try rows.insertCheckpoint(
                checkpoint.json, position: checkpoint.position, digest: checkpoint.digest)
        }
    }

    /// What the background connection keeps between two checkpoint builds of a history while a
    /// large checkpoint waits for a pause to be stored: the value the last build made, so that
    /// the next build starts from it instead of decoding the newest stored checkpoint and
    /// replaying every version since (a writer that never pauses would make each build longer
    /// than the last), and the newest large checkpoint, the one the waiting store writes.
    final class CheckpointBuilds: @unchecked Sendable {
        // Sound because only the background connection's jobs touch it, one at a time (they
        // run on one serial queue); the value is made there and never leaves.

        /// A checkpoint built: the version's position, the version when built (it is stored only
        /// if that version is still there), the value's JSON and its digest (computed with the
        /// JSON, not while the store's write lock is held), the blobs the JSON refers to (it is
        /// stored only if they are still there), and the rewrites of stored values counted
        /// before its rows were read (it is stored only if there was none since).
        struct Built {
            let position: Int
            let version: AppliedVersion
            let json: String
            let digest: Int64
            let blobs: Set<BlobCoding.Reference>
            let rewrites: Int
        }

        /// The value of the version at `position`, built last, while it waits to be stored, and
        /// the rewrites counted before its rows were read.
        var built: (position: Int, version: AppliedVersion, value: Value, rewrites: Int)?
        /// The newest large checkpoint built and not yet stored.
        var waiting: Built?
        /// Whether a store step waits for a pause.
        var storeQueued = false
        /// How many versions the last build applied (for tests).
        var replayed = 0
    }

    /// The size past which a checkpoint built off the committing thread waits for a pause in the
    /// app's writing before it is stored: 64 KiB.
    static var largeCheckpoint: Int { 64 * 1024 }

    /// The size of a value's JSON over which the allocator's free pages are given back to the
    /// system once the value has been worked on whole: 1 MiB.
    static var releasesMemoryAfter: Int { 1 << 20 }

    /// Gives the allocator's free pages back to the system after work on a whole value whose
    /// JSON took `bytes` (its blobs counted too, when opening), when that is over
    /// ``releasesMemoryAfter``: a checkpoint built or stored by the background connection, or a
    /// history opened, undone or redone by replaying its changes on the stored JSON. Decoding
    /// and encoding a large value takes about ten times its JSON's size for a moment, and a
    /// replay on the stored JSON some 15 times; glibc keeps what a thread other than the main
    /// one frees for that thread's next allocations, and returns none of what lies below memory
    /// still in use. A server holding a value of 500,000 items (24 MB of JSON)
    /// stayed at 350–430 MB resident after its checkpoints were built, against 75 MB with this;
    /// opened after a model change, at 1.5 GB. It costs a few milliseconds, and nothing where
    /// the C library returns such memory itself.
    static func releaseFreeMemory(afterValueOf bytes: Int) {
        if bytes > releasesMemoryAfter { keepsake_release_free_memory() }
    }

    /// ``writeCheckpoint()`` where the checkpoint only spares a later open a replay or a merge
    /// (at a close, at the first open after an update): a value the model's `encode(to:)`
    /// refuses — which it diffs and decodes — gets none, as for one due at an append.
    func writeCheckpointUnlessRefused() throws(KeepsakeError) {
        do {
            try writeCheckpoint()
        } catch .unencodableValue {
            // The next open replays instead.
        }
    }

    /// Stores the current value whole, so that reopening the history replays no change.
    ///
    /// Keepsake writes checkpoints by itself (every 1,024 versions, or when the changes since
    /// the last one outweigh it); call this when closing a document that will be reopened
    /// often, or before changing the value type.
    ///
    /// - Throws: ``KeepsakeError``.
    public func writeCheckpoint() throws(KeepsakeError) {
        let (value, level, name, unread) = (current, self.level, self.name, unreadStoredData)
        let written = try transact { rows in
            // With no version applied, the current value is the base value itself.
            return try rows.writeCheckpoint(
                value, position: try rows.topApplied(level: level), history: name, unread: unread)
        } counts: { [counts] _ in
            counts
        } newest: { _ in
            .unchanged
        }
        noteCheckpoint(.written(written ?? checkpointBytes), adding: 0)
    }

    /// What pruning removed.
    struct Pruned {
        /// Applied versions of the root scope folded into the base value.
        var folded: Int
        /// Versions dropped from the far end of the current scope's redo stack.
        var dropped: Int

        /// The stack sizes `counts` become, in scope `level`.
        func counts(after counts: Counts, level: Int) -> Counts {
            Counts(
                undo: counts.undo - (level == 0 ? folded : 0), redo: counts.redo - dropped,
                total: counts.total - folded - dropped)
        }
    }

    /// Folds the oldest versions of the root scope into the base value when the history holds
    /// more than the limit (plus an eighth, `VersionHistory.slack(over:)`, as in memory, unless
    /// `force`), down to the limit, then drops the furthest redo versions if still over.
    ///
    /// Folding raises the root scope's floor over those versions (one row written): nothing is
    /// decoded or encoded, so an append that prunes costs what any append costs. Versions under
    /// the floor are deleted once a checkpoint lies under it too (``HistoryRows/compact()``),
    /// whose text becomes the base value; until then the base value and they give the value at
    /// the floor.
    /// - Parameter total: The number of versions the history keeps now.
    /// - Returns: What was pruned, or `nil` when nothing was.
    /// - Parameter compacting: Whether to delete what the floor now covers in this transaction;
    ///   an append leaves that to the background connection (``noteFolding()``), since copying a
    ///   checkpoint as the base value and deleting a thousand rows would stall it.
    @discardableResult
    func pruneIfNeeded(_ rows: HistoryRows, total: Int, force: Bool, compacting: Bool = true) throws
        -> Pruned?
    {
        guard let limit else { return nil }
        let slack = force ? 0 : VersionHistory<Value>.slack(over: limit)
        guard total - limit > slack else { return nil }
        var pruned = Pruned(folded: 0, dropped: 0)
        if let oldest = try rows.newestOfOldest(total - limit, scope: 0) {
            try rows.checkFolding(oldest, history: name)
            try rows.raiseFloor(to: oldest.version.position, tag: oldest.version.tag)
            pruned.folded = oldest.count
            if compacting { try rows.compact() }
        }
        let excess = total - limit - pruned.folded
        if excess > 0 {
            for version in try rows.versions(scope: level, undone: true, newestFirst: true, limit: excess) {
                try rows.deleteVersion(at: version.position)
                pruned.dropped += 1
            }
        }
        return pruned
    }

    // MARK: - Undo and redo

    /// Undoes or redoes `steps` versions of the current scope in one transaction.
    ///
    /// The changes are applied to the current value in place (a change to one element of a large
    /// array costs O(change), not a copy of the value); if the transaction fails, they are taken
    /// back, so the value is as it was.
    func move(undo: Bool, steps: Int) throws(KeepsakeError) {
        // The JSON the move worked on: the changes it read, and the stored value it replayed
        // them on, if any. The memory of a replay, or of a long move's versions and their
        // reversions (about four times their JSON: undoing 100,000 versions left 100 MB free
        // in the allocator, kept from the system), is handed back once the move has let go of
        // it, as an open's is.
        var bytes = 0
        defer { Self.releaseFreeMemory(afterValueOf: bytes) }
        try move(undo: undo, steps: steps, workingOn: &bytes)
    }

    /// ``move(undo:steps:)``, adding the bytes of JSON it works on to `bytes`.
    private func move(undo: Bool, steps: Int, workingOn bytes: inout Int) throws(KeepsakeError) {
        guard steps > 0 else { return }
        let (name, level) = (self.name, self.level)
        var applied: [Reversion<Value>] = []
        // The value before the move, kept only when it was reached on the stored form.
        var original: Value?
        // The lowest position moved: a version below those this history wrote may carry what
        // the model does not read.
        var lowest = Int.max
        do throws(KeepsakeError) {
            let counts = try transact { rows in
                let versions = try rows.versions(
                    scope: level, undone: !undo, newestFirst: undo, limit: steps, changes: true)
                // The stack sizes stored with the history promised these versions.
                guard versions.count == steps else {
                    throw KeepsakeError.damaged(
                        history: name,
                        reason:
                            "its stored \(undo ? "undo" : "redo") count promises \(steps) more versions than its rows hold"
                    )
                }
                bytes += versions.reduce(0) { $0 + ($1.changes?.utf8.count ?? 0) }
                try rows.checkMoving(versions, undo: undo, level: level, history: name)
                lowest = versions.lazy.map(\.position).min() ?? lowest
                var index = 0
                while index < versions.count {
                    do {
                        let reversion = try Self.reversion(
                            rows, versions[index], against: current, inverted: !undo, history: name)
                        do throws(ReversionError) {
                            try reversion.revert(&current)
                        } catch {
                            throw KeepsakeError.reversion(
                                history: name, version: versions[index].position, error: error)
                        }
                        applied.append(reversion)
                        index += 1
                    } catch let unreadable as KeepsakeError {
                        // A version today's model cannot read (the app changed the model since
                        // it was stored): the value past it, computed on the stored form.
                        guard case .reversion = unreadable else { throw unreadable }
                        if original == nil {
                            var before = current
                            for reversion in applied.reversed() { try? reversion.inverse.revert(&before) }
                            (original, applied) = (before, [])
                        }
                        // Undoing, every version below one the old model wrote is its too: the
                        // value below them all. Redoing, the old model's versions as far as they
                        // go, the new model's after them on the value decoded there. What the
                        // stored form lacks (added since) is the value's before that version:
                        // the app's own changes to it stay as the model's steps left them.
                        let reached = try storedFormValue(
                            rows, moving: undo ? Array(versions[index...]) : versions, undo: undo,
                            filling: current, atLeast: undo ? nil : index + 1, unreadable: unreadable)
                        current = reached.value
                        bytes += reached.checkpointBytes
                        index = undo ? versions.count : reached.moved
                    }
                }
                try rows.setUndone(versions.map(\.position), undo)
                let moved = undo ? versions.count : -versions.count
                return Counts(undo: undoCount - moved, redo: redoCount + moved, total: total)
            } counts: {
                $0
            } newest: { _ in
                .unchanged
            }
            settle(current, counts)
            if lowest <= positionWhenRead { unreadStoredData.forget() }
        } catch {
            // The transaction was rolled back: so are the changes applied in memory.
            for reversion in applied.reversed() { try? reversion.inverse.revert(&current) }
            if let original { current = original }
            throw error
        }
    }

    /// ``storedFormValue(_:moving:undo:filling:atLeast:)`` where today's model could not read a
    /// version (`unreadable`, its error): damage found on the way is said; any other failure
    /// is the model's own error.
    func storedFormValue(
        _ rows: HistoryRows, moving versions: [HistoryRows.Version], undo: Bool, filling template: Value,
        atLeast required: Int? = nil, unreadable: KeepsakeError
    ) throws -> (value: Value, checkpointBytes: Int, moved: Int) {
        do {
            return try storedFormValue(
                rows, moving: versions, undo: undo, filling: template, atLeast: required)
        } catch {
            guard case .damaged? = error as? KeepsakeError else { throw unreadable }
            throw error
        }
    }

    /// The value undoing or redoing `versions` reaches, computed on the stored form: the newest
    /// checkpoint below them, the applied versions after it, and — redoing — the versions
    /// themselves, redone on its JSON and decoded as today's `Value` (what it lacks taken from
    /// `template`: the value before the first of them that today's model cannot read); the size
    /// of that checkpoint's JSON; and how many of `versions` it redid.
    ///
    /// With `required`, redoing stops where the stored form does not fit a version (the new
    /// model's, after the old model's), once the first `required` are redone.
    ///
    /// A checkpoint the versions do not fit is passed over for the one below it: one that
    /// today's model stored (the first open after an app update stores the value it read) is
    /// today's encoding, which the old model's versions above it, undone by the old app and
    /// redone now, may not fit (a `Set` written in its own order, where an old change of an
    /// array names positions). Until 2026-11 such a redo failed, at random, for good.
    func storedFormValue(
        _ rows: HistoryRows, moving versions: [HistoryRows.Version], undo: Bool, filling template: Value,
        atLeast required: Int? = nil
    ) throws -> (value: Value, checkpointBytes: Int, moved: Int) {
        guard let lowest = versions.map(\.position).min(),
            let reached = try rows.fromFittingCheckpoint(
                below: lowest,
                { checkpoint in
                    try storedFormValue(
                        rows, moving: versions, from: checkpoint, below: lowest, undo: undo,
                        filling: template,
                        atLeast: required)
                })
        else {
            throw KeepsakeError.damaged(history: name, reason: "it has no stored value below its versions")
        }
        return reached
    }

    /// ``storedFormValue(_:moving:undo:filling:atLeast:)`` from `checkpoint`, the versions
    /// being moved starting at `lowest`.
    private func storedFormValue(
        _ rows: HistoryRows, moving versions: [HistoryRows.Version],
        from checkpoint: (position: Int, json: String),
        below lowest: Int, undo: Bool, filling template: Value, atLeast required: Int?
    ) throws -> (value: Value, checkpointBytes: Int, moved: Int) {
        let below = try rows.appliedVersions(after: checkpoint.position, upTo: lowest - 1)
        let moving = undo ? [] : versions.sorted { $0.position < $1.position }
        let redone = below + moving
        // The way from the checkpoint passes over nothing but an outer scope's undone versions,
        // up to the version undone: a row lost below it would leave its change out of the value.
        if let gap = try rows.firstGap(
            redoing: redone + (undo ? [HistoryRows.Version(position: lowest)] : []),
            after: checkpoint.position)
        {
            throw KeepsakeError.damaged(history: name, reason: gap)
        }
        let (form, redoneCount) = try rows.storedForm(
            checkpoint.json, redoing: redone, history: name, keys: CodingKeyTree(for: Value.self),
            atLeast: below.count + (required ?? moving.count))
        return (
            try rows.decodeStored(form.json, history: name) { template },
            checkpoint.json.utf8.count, redoneCount - below.count
        )
    }

    // MARK: - Tags

    /// Tags the current version, replacing its tag.
    func writeTag(_ tag: VersionTag?) throws(KeepsakeError) {
        let (name, level, undoCount) = (self.name, self.level, self.undoCount)
        try transact { rows in
            if let top = try rows.versions(scope: level, undone: false, newestFirst: true, limit: 1).first {
                // The version undo would undo next: the one the tag belongs to.
                try rows.checkMoving([top], undo: true, level: level, history: name)
                try rows.setTag(tag, version: top.position)
            } else if undoCount == 0 {
                try rows.setBaseTag(tag, scope: level)
            } else {
                throw KeepsakeError.damaged(
                    history: name,
                    reason: "its stored undo count is \(undoCount), though its scope holds no applied version"
                )
            }
        } counts: { [counts] _ in
            counts
        } newest: { _ in
            .unchanged
        }
    }

    /// The tags of a scope's versions, `nil` for untagged ones: those up to and including the
    /// current version, and those after it (next to redo first).
    ///
    /// The versions read are checked as undo and redo check theirs: a damaged page must not
    /// lose some of a scope's tags or give another version's.
    func readTags(level: Int) throws(KeepsakeError) -> (undo: [VersionTag?], redo: [VersionTag?]) {
        let (id, name, currentLevel, undoCount, redoCount, total) = (
            self.id, self.name, self.level, self.undoCount, self.redoCount, self.total
        )
        return try store.read { connection, blobs in
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            let applied = try rows.versions(scope: level, undone: false)
            let undone = try rows.versions(scope: level, undone: true)
            if level != currentLevel {
                _ = try rows.checkedKeptVersions(stored: total, level: currentLevel, history: name)
            } else {
                guard applied.count == undoCount, undone.count == redoCount else {
                    throw KeepsakeError.damaged(
                        history: name,
                        reason:
                            "its scope holds \(applied.count) applied and \(undone.count) undone versions "
                            + "where its counters say \(undoCount) and \(redoCount)")
                }
                try rows.checkMoving(applied.reversed(), undo: true, level: level, history: name)
            }
            try rows.checkMoving(undone, undo: false, level: level, history: name)
            return ([try rows.baseTag(scope: level)] + applied.map(\.tag), undone.map(\.tag))
        }
    }

    // MARK: - Scopes

    /// Starts a scope whose first version is the current one.
    func insertScope() throws(KeepsakeError) {
        let level = self.level
        try transact { rows in
            try rows.insertScope(level: level + 1, start: try rows.topApplied(level: level) ?? 0)
        } counts: { [total] _ in
            Counts(undo: 0, redo: 0, total: total)
        }
        settle(current, Counts(undo: 0, redo: 0, total: total), level: level + 1)
    }

    /// Ends the current scope, squashing everything it changed into one version of the parent
    /// scope. Does nothing in the root scope.
    func squashScope() throws(KeepsakeError) {
        guard level > 0 else { return }
        let (name, level, value, total) = (self.name, self.level, self.current, self.total)
        let background = store.checkpointer != nil
        let (counts, checkpoint, bytes, position, folded) = try transact { rows in
            let (start, topTag, outer) = try deleteScope(rows, level: level, total: total, history: name)
            var counts = outer
            var checkpoint: DueCheckpoint?
            var bytes = 0
            var folded = false
            if let reversion = value.reversion(to: start) {
                try rows.deleteVersions(scope: level - 1, undoneOnly: true)
                let position = try rows.highestTaken() + 1
                bytes = try insert(
                    reversion, resulting: value, rows: rows, position: position, scope: level - 1,
                    tag: topTag, history: name)
                checkpoint = try checkpointIfDue(rows, value: value, position: position, adding: bytes)
                counts = Counts(undo: counts.undo + 1, redo: 0, total: counts.total - counts.redo + 1)
            }
            try rows.checkCounts(level: level - 1, expected: counts, history: name)
            // The squashed version may take the history over its limit, as an append may (under
            // a limit of 0, always). The parent's redo versions are deleted above, so only the
            // root's oldest are folded.
            if let pruned = try pruneIfNeeded(
                rows, total: counts.total, force: false, compacting: !background)
            {
                counts = pruned.counts(after: counts, level: level - 1)
                folded = pruned.folded > 0 && background
            }
            return (counts, checkpoint, bytes, try rows.highestTaken(), folded)
        } counts: {
            $0.0
        }
        lastPosition = position
        noteCheckpoint(checkpoint, adding: bytes)
        if folded { noteFolding() }
        settle(value, counts, level: level - 1)
    }

    /// Ends the current scope and discards its changes, returning to the value it started
    /// from. Does nothing in the root scope.
    func discardScope() throws(KeepsakeError) {
        guard level > 0 else { return }
        let (name, level, total) = (self.name, self.level, self.total)
        let (start, counts, position) = try transact { rows in
            let (start, _, counts) = try deleteScope(rows, level: level, total: total, history: name)
            try rows.checkCounts(level: level - 1, expected: counts, history: name)
            return (start, counts, try rows.highestTaken())
        } counts: {
            $0.1
        }
        lastPosition = position
        settle(start, counts, level: level - 1)
        // Undone to where the scope started: perhaps over versions another process wrote.
        unreadStoredData.forget()
    }

    /// Deletes scope `level` and its versions, what ending it begins with, once every version
    /// kept and each scope's start are checked (``HistoryRows/checkedKeptVersions(stored:level:history:)``,
    /// ``HistoryRows/checkScopeStarts(history:)``): `total` is the number of versions kept.
    ///
    /// - Returns: The value the scope started from, the tag of its current version, and the
    ///   outer scope's stack sizes and the number of versions kept, as read less those deleted.
    private func deleteScope(_ rows: HistoryRows, level: Int, total: Int, history: String) throws -> (
        start: Value, topTag: VersionTag?, counts: Counts
    ) {
        let kept = try rows.checkedKeptVersions(stored: total, level: level, history: history)
        try rows.checkScopeStarts(history: history)
        let (start, topTag) = try scopeStart(rows, level: level, history: history)
        try rows.deleteVersions(scope: level, undoneOnly: false)
        try rows.deleteScope(level: level)
        return (start, topTag, kept.counts(level: level - 1).dropping(scope: kept.counts(level: level)))
    }

    /// The value the scope started from (the current value reverted through the scope's
    /// applied versions), and the tag of its current version.
    private func scopeStart(_ rows: HistoryRows, level: Int, history: String) throws -> (Value, VersionTag?) {
        var value = current
        let applied = try rows.versions(scope: level, undone: false, newestFirst: true, changes: true)
        // Every applied version of the scope, one position after another down from the newest:
        // a damaged row passed over would make the scope start from a value it never had.
        guard applied.count == undoCount else {
            throw KeepsakeError.damaged(
                history: history,
                reason:
                    "its stored undo count is \(undoCount), though its scope holds \(applied.count) applied versions"
            )
        }
        try rows.checkMoving(applied, undo: true, level: level, history: history)
        do {
            for version in applied {
                try Self.apply(rows, version, to: &value, inverted: false, history: history)
            }
        } catch let unreadable as KeepsakeError {
            // A version today's model cannot read (the app changed the model since it was
            // stored; an old app's scope left open): the value before the scope's versions,
            // computed on the stored form from there down, as undoing them all computes it.
            guard case .reversion(_, let position?, _) = unreadable,
                let index = applied.firstIndex(where: { $0.position == position })
            else { throw unreadable }
            value = try storedFormValue(
                rows, moving: Array(applied[index...]), undo: true, filling: value, unreadable: unreadable
            ).value
        }
        return (value, applied.first?.tag)
    }
}

extension KeepsakeHistoryStorage {
    /// Makes `value` the current version without a version of its own: the base value and the
    /// checkpoints are rewritten from it, so that reopening gives `value` and undoing from it
    /// gives what undoing from it gives in memory.
    ///
    /// A value that changes a path a version changes is refused, as in memory: that version's
    /// undo or redo would never apply again. Before, a value changing a path back to what the
    /// base value held there (a title edited and edited back, then set by a server) was made
    /// the base value's, under versions that then did not apply: undo refused for good.
    ///
    /// - Complexity: O(versions), for the new base value: it is meant for rare, untracked
    ///   changes.
    func rebase(on value: Value) throws(KeepsakeError) {
        let (name, current, level, unread) = (self.name, self.current, self.level, unreadStoredData)
        // Every stored version's value changes, at the same positions, with the same changes:
        // a checkpoint built meanwhile from the rows before would be stored, or built on,
        // without the change (a killed app then reopened without it).
        valueRewrites.begin()
        defer { valueRewrites.end() }
        let written = try transact { rows in
            // Positions only: the walk below reads the versions' changes scope by scope.
            let applied = try rows.appliedVersions(after: 0, changes: false)
            try rows.checkLoaded(
                replayed: applied.map(\.position), from: 0, level: level, redo: redoCount, total: total,
                history: name)
            let (baseJSON, baseBytes): (String, Int)
            // Where the base value lies: the floor, when the model reads every version above
            // it; else where it lay, with the versions folded between it and the floor.
            let floor = try rows.floor()
            var basePosition: Int?
            do {
                // The value at the floor: the versions folded under it, which undo no longer
                // reaches (in memory they are gone), are deleted, as compaction deletes them,
                // rather than checked against the change.
                let base = try Self.base(rows, below: value, level: level, history: name)
                // Stored values holding what the model does not read (a later release's
                // properties) keep it: the change is made on the stored base value's JSON.
                if try rows.holdsUnread(
                    current, position: applied.last?.position, history: name, unread: unread),
                    let json = try? Self.baseJSON(
                        rows, history: name, changedFrom: current, to: value,
                        failure: .damaged(history: name, reason: ""))
                {
                    (baseJSON, baseBytes) = (json, json.utf8.count)
                } else {
                    (baseJSON, baseBytes) = try rows.encodeCheckpoint(base)
                    basePosition = floor
                }
            } catch let unreadable as KeepsakeError {
                // A version today's model cannot read (the app changed the model since it was
                // stored): the change is made to the stored base value's JSON instead, which
                // the old model wrote and every version's change fits. The versions above it
                // that the model read did not refuse the value, so it touches no path they do.
                guard case .reversion(_, _, let error) = unreadable, !error.isWrongVersion else {
                    throw unreadable
                }
                baseJSON = try Self.baseJSON(
                    rows, history: name, changedFrom: current, to: value, failure: unreadable)
                baseBytes = baseJSON.utf8.count
            }
            try rows.connection.execute(
                "DELETE FROM checkpoint WHERE history_id = ?", [.integer(rows.historyID)])
            let baseDigest = HistoryRows.checkpointDigest(baseJSON, position: nil)
            if let basePosition {
                try rows.compact(to: (basePosition, baseJSON, nil), baseDigest: baseDigest)
            } else {
                try rows.insertCheckpoint(baseJSON, position: nil, digest: baseDigest)
            }
            guard let top = applied.last, top.position > basePosition ?? 0 else { return baseBytes }
            return try rows.writeCheckpoint(value, position: top.position, history: name, unread: unread)
                ?? baseBytes
        } counts: { [counts] _ in
            counts
        }
        // The newest version is read again when the counters are stored: the versions the floor
        // covers are deleted above, and under a limit of 0 the floor covers every version, the
        // newest included, whose row held the counters (they were written to that deleted row,
        // and the history's next write found another revision: a conflict, for good).
        self.current = value
        (stepsSinceCheckpoint, bytesSinceCheckpoint, checkpointBytes) = (0, 0, written)
    }

    /// The base value below `value`, walking each scope from it, innermost first, as
    /// `checkInvariants()` walks a history in memory: the scope's undone versions must redo
    /// from it, and its applied versions are undone, down to the value it started from.
    ///
    /// - Throws: ``KeepsakeError/reversion(history:version:error:)`` for the first version
    ///   that does not apply: ``ReversionError/wrongVersion(path:reason:)`` when `value`
    ///   changes a path it changes. An undone version today's model cannot read (stored before
    ///   an app update), or whose change of a property renamed since does not fit (an earlier
    ///   release's), ends the check of its scope's redo.
    static func base(_ rows: HistoryRows, below value: Value, level: Int, history: String) throws
        -> Value
    {
        var value = value
        for scope in stride(from: level, through: 0, by: -1) {
            var forward = value
            for version in try rows.versions(scope: scope, undone: true, changes: true) {
                do {
                    try apply(rows, version, to: &forward, inverted: true, history: history)
                } catch KeepsakeError.reversion(_, _, let error)
                    where !error.isWrongVersion
                    || (try? rows.records(of: version))?.contains(where: namesRenamed) == true
                {
                    // Redo reads it on the stored form, which the value's change is not made on;
                    // so does one of a property renamed since that does not fit (an earlier
                    // release's change of it, from its default: it lacked the property).
                    break
                }
            }
            for version in try rows.versions(scope: scope, undone: false, newestFirst: true, changes: true) {
                try apply(rows, version, to: &value, inverted: false, history: history)
            }
        }
        return value
    }

    /// Whether `record` changes a property under the name it had before a rename the model
    /// declares.
    private static func namesRenamed(_ record: ChangeRecord) -> Bool {
        var keys = CodingKeyTree(for: Value.self)
        for component in record.path.components {
            if case .property(let name) = component, keys.currentName(of: name) != name { return true }
            keys = keys[component]
        }
        return false
    }

    /// The stored base value's JSON with the change from `current` to `value` made on it (its
    /// blobs inlined, as bytes in base64); `failure` when the change does not fit it (it names
    /// a property renamed since, or one a version changed).
    private static func baseJSON(
        _ rows: HistoryRows, history name: String, changedFrom current: Value, to value: Value,
        failure: KeepsakeError
    ) throws -> String {
        guard let stored = try rows.baseCheckpoint() else { throw failure }
        let keys = CodingKeyTree(for: Value.self)
        var form = try rows.storedForm(stored, redoing: [], history: name, keys: keys)
        guard let change = value.reversion(to: current) else { return form.json }
        do {
            let records = try change.records()
            // A property added since the old model stored the base value is not in its JSON:
            // where the change names one, it first gets the value today's model reads there
            // (filled from the current value, which no version changes there: the old model's
            // cannot name it, and the new model's above did not refuse the change). Before,
            // such a change was refused, though memory took it. An optional the JSON leaves
            // out reads as `nil`, and gets nothing; a base value the model cannot read (a case
            // removed since) gets nothing either, and the change is made as it was.
            if let read = try? StoredForm(
                json: String(
                    decoding: try JSONEncoder().encode(rows.decodeStored(stored, history: name) { current }),
                    as: UTF8.self),
                keys: keys)
            {
                form.fill(absentAt: records.map(\.path), from: read)
            }
            try form.revert(records, inverted: true)
        } catch {
            throw failure
        }
        return form.json
    }
}

/// The undo and redo stack sizes of a history's current scope, and its versions in all scopes
/// (``KeepsakeHistoryStorage/Counts``).
struct HistoryCounts: Equatable {
    var undo: Int
    var redo: Int
    var total: Int

    init(undo: Int, redo: Int, total: Int) {
        (self.undo, self.redo, self.total) = (undo, redo, total)
    }

    /// These counts once the versions of an inner scope, counted in `scope`, are deleted.
    func dropping(scope: HistoryCounts) -> HistoryCounts {
        HistoryCounts(undo: undo, redo: redo, total: total - scope.undo - scope.redo)
    }

    init(_ rows: HistoryRows, level: Int) throws {
        undo = try rows.count(scope: level, undone: false)
        redo = try rows.count(scope: level, undone: true)
        total = try rows.totalCount()
    }
}

/// A checkpoint that fell due with a version.
enum HistoryDueCheckpoint {
    /// Written in the version's transaction, this size (blobs included).
    case written(Int)
    /// To be built off the committing thread once the transaction commits.
    case deferred(position: Int)
}

/// The steps a history's compactions off the committing thread took, and the most versions one
/// of them deleted (for tests).
final class CompactionSteps: @unchecked Sendable {
    // Sound because the counts are touched only while `lock` is held.
    private let lock = NSLock()
    private var steps = 0
    private var most = 0

    /// Counts a step that deleted `deleted` versions.
    func note(deleted: Int) {
        lock.withLock { (steps, most) = (steps + 1, max(most, deleted)) }
    }

    /// The steps taken so far, and the most versions one of them deleted.
    var taken: (count: Int, mostDeleted: Int) { lock.withLock { (steps, most) } }
}

/// Counts the rewrites of a history's stored values (``KeepsakeHistoryStorage/rebase(on:)``) by
/// its committing thread, for the checkpoint builds of its background connection: one at the
/// start of a rewrite, one at its end, once committed or not, so that an odd count says one is
/// under way. A build counts them before it reads the rows; its value is built on, or stored,
/// only while the count is the same.
final class ValueRewrites: @unchecked Sendable {
    // Sound because `counted` is touched only while `lock` is held.
    private let lock = NSLock()
    private var counted = 0

    /// The starts and ends counted so far.
    var count: Int { lock.withLock { counted } }

    /// Whether a rewrite was under way when `count` read `count`.
    static func isUnderWay(_ count: Int) -> Bool { !count.isMultiple(of: 2) }

    /// Counts a rewrite's start, before its transaction begins.
    func begin() { lock.withLock { counted += 1 } }

    /// Counts its end, once its transaction has committed or rolled back.
    func end() { lock.withLock { counted += 1 } }
}

/// A number handed from one thread to another — from a history's committing thread to its
/// background jobs, or back: the newest one given waits until taken. A type of its own: nested
/// in the generic storage class, each use would look its metadata up at run time.
final class Handoff: @unchecked Sendable {
    // Sound because `number` is touched only while `lock` is held.
    private let lock = NSLock()
    private var number: Int?

    /// Gives `number`, replacing one not taken yet; returns whether none was waiting (then the
    /// taker must be asked for: a job queued).
    @discardableResult
    func give(_ number: Int) -> Bool {
        lock.withLock {
            defer { self.number = number }
            return self.number == nil
        }
    }

    /// The number given last, taken; `nil` when none waits.
    func take() -> Int? {
        lock.withLock {
            defer { number = nil }
            return number
        }
    }
}

extension ReversionError {
    /// Whether the change was read and found not to fit the value (a path that holds another
    /// value than the change was made from), rather than not read at all.
    fileprivate var isWrongVersion: Bool {
        if case .wrongVersion = self { true } else { false }
    }
}
