import Foundation
public import Revertible

extension KeepsakeHistoryStorage: VersionStorage {
    public var scopeLevel: Int { level }
    public var versionCount: Int { total }

    /// The most versions kept; `nil` keeps all. When exceeded by an eighth, the
    /// oldest versions are folded into the base value, down to the limit.
    public var maximumVersions: Int? { limit }

    public func setMaximumVersions(_ maximumVersions: Int?) throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try storeLimit(maximumVersions) }
    }

    public func append(_ reversion: Reversion<Value>, resulting value: Value, tag: VersionTag?)
        throws(ReversionError)
    {
        try durably { () throws(KeepsakeError) in
            do throws(KeepsakeError) {
                try commit(reversion, resulting: value, tag: tag)
            } catch {
                throw error.placingTooLong(placeOfLargestChange(in: reversion))
            }
        }
    }

    public func undo(_ count: Int) throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try move(undo: true, steps: min(count, undoCount)) }
    }

    public func redo(_ count: Int) throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try move(undo: false, steps: min(count, redoCount)) }
    }

    public func tag(_ tag: VersionTag?) throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try writeTag(tag) }
    }

    public func tags(inScopeLevel level: Int) throws(ReversionError) -> (
        undo: [VersionTag?], redo: [VersionTag?]
    ) {
        try durably { () throws(KeepsakeError) in try readTags(level: level) }
    }

    public func pushScope() throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try insertScope() }
    }

    public func popScope() throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try squashScope() }
    }

    public func undoAndPopScope() throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try discardScope() }
    }

    public func replaceCurrent(with value: Value) throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try rebase(on: value) }
    }

    /// Holds `value` in the store. One that a store the app closed refuses is kept, and held as
    /// the history is let go of, through the file opened again (see ``KeepsakeStore/close()``).
    public func holdPending(_ value: Value?) throws(ReversionError) {
        do {
            try durably { () throws(KeepsakeError) in
                do throws(KeepsakeError) {
                    try holdDurably(value)
                } catch {
                    throw error.placingTooLong(
                        value.flatMap { $0.reversion(to: current) }.flatMap(placeOfLargestChange))
                }
            }
            unheld = nil
        } catch {
            if store.isClosed { unheld = value }
            throw error
        }
    }

    /// Stores the current value whole when versions were added since the last checkpoint.
    public func close() throws(ReversionError) {
        guard stepsSinceCheckpoint > 0 else { return }
        try durably { () throws(KeepsakeError) in try writeCheckpointUnlessRefused() }
    }

    /// Reads the history again when `error` is a ``KeepsakeError/historyConflict(history:)``:
    /// another process, or another controller on the same history, wrote since this one read
    /// it. A history deleted since is not read again (`false`): the controller keeps getting
    /// the conflict, and writes nowhere.
    public func reload(after error: ReversionError) throws(ReversionError) -> Bool {
        guard case .historyConflict = error.keepsakeError else { return false }
        return try durably { () throws(KeepsakeError) in try readAgain() }
    }

    /// Reads the history again when another writer (another process, or another controller
    /// on the same history) wrote since this one read or wrote it: the stored revision is read
    /// (the history's id and counters, two rows), and the history only when it moved on.
    ///
    /// - Throws: ``KeepsakeError/historyConflict(history:)`` when the history was deleted
    ///   since: this one writes nowhere any more.
    public func reloadIfChanged() throws(ReversionError) -> Bool {
        try durably { () throws(KeepsakeError) in try readAgainIfChanged() }
    }

    /// The change a previous writer held back when it stopped, which opening could not record
    /// (a full disk, a store another connection kept locked past the busy timeout): it stays
    /// stored as held, and the controller keeps it pending.
    public func takeUnrecordedHeldChange() -> (value: Value, error: ReversionError)? {
        defer { unrecordedHeld = nil }
        return unrecordedHeld.map { ($0.value, reported($0.error)) }
    }

    public func checkInvariants() throws(ReversionError) {
        try durably { () throws(KeepsakeError) in try checkStoredInvariants() }
    }

    /// Where a change of `reversion` too long for SQLite to store lies: the history, and the
    /// path of its largest change, its patches encoded again to find it (only when a write
    /// failed so); `nil` when they do not encode.
    private func placeOfLargestChange(in reversion: Reversion<Value>) -> String? {
        guard let largest = (try? reversion.records())?.max(by: { $0.payload.count < $1.payload.count })
        else { return nil }
        return "in history \"\(name)\", the largest change is at \(largest.path.displayText)"
    }

    /// Runs a store operation, reporting its error as ``ReversionError/storage(_:)`` with the
    /// history's name filled in.
    func durably<T>(_ operation: () throws(KeepsakeError) -> T) throws(ReversionError) -> T {
        do {
            return try operation()
        } catch {
            throw reported(error)
        }
    }

    /// `error` as the controller reports it: ``ReversionError/storage(_:)``, with the history's
    /// name filled in.
    private func reported(_ error: KeepsakeError) -> ReversionError {
        .storage(StorageFailure(error.naming(history: name)))
    }

}
