/// Holds back appended versions until changes pause, on an injectable clock.
///
/// A held version is recorded when `interval` passes without another append, when
/// `maximumWait` has passed since the first held append (so a long burst still lands), or as
/// soon as the controller does anything else (undo, redo, tag, scope, transaction, `flush()`).
package protocol PendingVersionHolder<Value>: AnyObject {
    associatedtype Value
    var pending: Value? { get }
    /// Whether a version is held: ``pending`` is not `nil`. Asking this instead makes no
    /// `Value?`, whose type code not specialized for `Value` looks up at run time.
    var isHolding: Bool { get }
    func hold(_ value: Value)
    func take() -> Value?
    /// Whether the timer numbered `generation` is the live one: a timer that was cancelled or
    /// superseded (its sleep may still return, on a clock that ignores cancellation) is not.
    func isDue(_ generation: UInt64) -> Bool
}

package final class Debouncer<Value, C: Clock>: PendingVersionHolder {
    private let clock: C
    private let interval: C.Duration
    private let maximumWait: C.Duration?
    private let onDue: @Sendable (UInt64) async -> Void
    package private(set) var pending: Value?
    package var isHolding: Bool { pending != nil }
    private var firstHeldAt: C.Instant?
    private var timer: Task<Void, Never>?
    /// Numbers the timers; every `hold` and `take` starts a new generation.
    private var generation: UInt64 = 0

    package init(
        clock: C, interval: C.Duration, maximumWait: C.Duration?,
        onDue: @escaping @Sendable (_ generation: UInt64) async -> Void
    ) {
        self.clock = clock
        self.interval = interval
        self.maximumWait = maximumWait
        self.onDue = onDue
    }

    deinit { timer?.cancel() }

    package func hold(_ value: Value) {
        let now = clock.now
        pending = value
        let firstHeldAt = self.firstHeldAt ?? now
        self.firstHeldAt = firstHeldAt
        var deadline = now.advanced(by: interval)
        if let maximumWait {
            let latest = firstHeldAt.advanced(by: maximumWait)
            if latest < deadline { deadline = latest }
        }
        timer?.cancel()
        generation &+= 1
        let (clock, onDue, generation) = (self.clock, self.onDue, self.generation)
        timer = Task {
            do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
            // A clock may return from a cancelled sleep; `isDue` is checked again on the actor.
            guard !Task.isCancelled else { return }
            await onDue(generation)
        }
    }

    package func take() -> Value? {
        timer?.cancel()
        timer = nil
        generation &+= 1
        firstHeldAt = nil
        defer { pending = nil }
        return pending
    }

    package func isDue(_ generation: UInt64) -> Bool {
        pending != nil && generation == self.generation
    }
}

/// A weak reference to an object plus an action on it, that may cross into a `@Sendable`
/// closure because it only touches the object in ``fire(on:_:)``, isolated to the actor that
/// owns the object. It is not generic, so isolated closures capture no generic metadata.
package final class IsolatedReference: @unchecked Sendable {
    private weak var object: AnyObject?
    private let action: (AnyObject, UInt64) -> Void

    /// A reference whose action takes a number from the firing side (a timer's generation).
    package init<Object: AnyObject>(_ object: Object, _ action: @escaping (Object, UInt64) -> Void) {
        self.object = object
        self.action = { action($0 as! Object, $1) }
    }

    package convenience init<Object: AnyObject>(_ object: Object, _ action: @escaping (Object) -> Void) {
        self.init(object) { object, _ in action(object) }
    }

    /// Runs the action on the object, if it is still alive, isolated to `actor`.
    package func fire(on actor: isolated any Actor, _ argument: UInt64 = 0) {
        guard let object else { return }
        action(object, argument)
    }
}

extension VersioningController {
    /// Turns on debouncing: appends are held back and recorded as one version once changes
    /// pause for `interval`, or after `maximumWait` at the latest.
    ///
    /// A held change is recorded before any other operation, so `undo()` during the pause
    /// undoes it (the seed library's `undo()` did nothing then, and the change came back on
    /// redo). ``hasUndo`` counts it. Tests pass a manual clock; no sleeps are needed.
    ///
    /// ```swift
    /// let controller = VersioningController(note).withDebouncing(interval: .milliseconds(500))
    /// ```
    ///
    /// - Parameters:
    ///   - clock: The clock measuring the interval; `ContinuousClock()` by default.
    ///   - interval: How long changes must pause before a version is recorded.
    ///   - maximumWait: The longest a change is held back during continuous appends; by
    ///     default ten times `interval`.
    ///   - isolation: The actor the controller belongs to; the caller's by default.
    /// - Returns: The controller itself.
    @discardableResult
    public func withDebouncing<C: Clock>(
        clock: C = ContinuousClock(), interval: C.Duration, maximumWait: C.Duration? = nil,
        isolation: isolated any Actor = #isolation
    ) -> Self where C.Duration == Duration {
        performInBackground { () throws(ReversionError) in try recordPending() }
        debouncer = Debouncer<Value, C>(
            clock: clock, interval: interval, maximumWait: maximumWait ?? interval * 10,
            onDue: flushCallback(on: isolation))
        return self
    }

    /// A callback that flushes this controller on `actor`. (Built outside the clock-generic
    /// method: Swift 6.3's SILGen crashes on the equivalent closure inside it.)
    private func flushCallback(on actor: any Actor) -> @Sendable (UInt64) async -> Void {
        let reference = IsolatedReference(self) { controller, generation in
            guard let debouncer = controller.debouncer, debouncer.isDue(generation) else { return }
            controller.performInBackground { () throws(ReversionError) in try controller.recordPending() }
        }
        return { generation in await reference.fire(on: actor, generation) }
    }

    /// Turns debouncing off, recording any held change first.
    ///
    /// - Throws: ``ReversionError/storage(_:)`` in the throwing mode; debouncing stays on then,
    ///   with the change still held.
    public func withoutDebouncing() throws(Failure) {
        try flush()
        debouncer = nil
    }
}
