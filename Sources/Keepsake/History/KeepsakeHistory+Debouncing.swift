import Foundation
import Observation
import Revertible

extension KeepsakeHistory {
    /// Turns on debouncing: appends are held back and written as one version once changes
    /// pause for `interval`, or after `maximumWait` at the latest. A held change is written
    /// before any other operation, and ``hasUndo`` counts it.
    ///
    /// A write made by the timer has no caller to throw to: if it fails, the change stays held
    /// (and is retried with the next append or ``flush()``) and the error is in ``error``.
    ///
    /// - Parameters:
    ///   - clock: The clock measuring the interval; `ContinuousClock()` by default.
    ///   - interval: How long changes must pause before a version is written.
    ///   - maximumWait: The longest a change is held back; by default ten times `interval`.
    ///   - isolation: The actor the history belongs to; the caller's by default.
    /// - Returns: The history itself.
    /// - Throws: ``KeepsakeError`` from writing a change held by an earlier debouncer.
    @discardableResult
    public func withDebouncing<C: Clock>(
        clock: C = ContinuousClock(), interval: C.Duration, maximumWait: C.Duration? = nil,
        isolation: isolated any Actor = #isolation
    ) throws(KeepsakeError) -> Self where C.Duration == Duration {
        try flush()
        debouncer = Debouncer<Value, C>(
            clock: clock, interval: interval, maximumWait: maximumWait ?? interval * 10,
            onDue: flushCallback(on: isolation))
        return self
    }

    /// A callback that flushes on `actor`, recording a failure in ``error``. (Built outside
    /// the clock-generic method: Swift 6.3's SILGen crashes on the equivalent closure in it.)
    private func flushCallback(on actor: any Actor) -> @Sendable () async -> Void {
        let reference = IsolatedReference(self) { history in
            do throws(KeepsakeError) {
                try history.flush()
            } catch {
                history.registrar.withMutation(of: history, keyPath: \.error) { history.storedError = error }
            }
        }
        return { await reference.fire(on: actor) }
    }

    /// Checks the stored history against itself, for tests and `keepsake verify`: SQLite's
    /// integrity check, foreign keys, the stack sizes, and that reverting the current value
    /// through every applied version reaches the stored base value.
    ///
    /// - Throws: ``KeepsakeError`` describing the first problem.
    public func checkInvariants() throws(KeepsakeError) {
        let (id, name, current, level) = (self.id, self.name, self.current, self.level)
        let expected = (undoCount, redoCount, total)
        try store.read { connection, blobs in
            func fail(_ reason: String) -> KeepsakeError {
                .undecodableValue(history: name, reason: "invariant: \(reason)")
            }
            let integrity = try connection.query("PRAGMA integrity_check") { $0.text(0) ?? "" }
            guard integrity == ["ok"] else {
                throw fail("integrity_check: \(integrity.joined(separator: "; "))")
            }
            guard try connection.query("PRAGMA foreign_key_check", row: { _ in 0 }).isEmpty else {
                throw fail("foreign keys")
            }
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            guard try rows.scopeCount() == level + 1 else { throw fail("scope rows") }
            let counts = try Counts(rows, level: level)
            guard (counts.undo, counts.redo, counts.total) == expected else { throw fail("stack sizes") }
            var value = current
            for version in try rows.appliedVersions(after: 0).reversed() {
                try Self.apply(rows, version, to: &value, inverted: false, history: name)
            }
            guard let base = try rows.baseCheckpoint() else { throw fail("no base value") }
            let stored = try blobs.decoder.decode(Value.self, from: Data(base.utf8))
            guard value.reversion(to: stored) == nil else {
                throw fail("undoing every version does not reach the base")
            }
        }
    }
}
