import Foundation

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
    /// Whether the timer numbered `generation` is the live one: a timer that was cancelled
    /// (its sleep may still return, on a clock that ignores cancellation) is not.
    func isLive(_ generation: UInt64) -> Bool
    /// Whether the held version's deadline has come: a hold may have moved it since the timer
    /// last looked.
    var isDue: Bool { get }
}

/// Holds a burst's versions with one timer: a hold moves the deadline, and the timer, when it
/// wakes, sleeps on to the deadline as it stands then. (A timer per hold — cancelled, a task
/// made again — cost each keystroke a task and the work of another thread.)
package final class Debouncer<Value, C: Clock>: PendingVersionHolder {
    private let clock: C
    private let interval: C.Duration
    private let maximumWait: C.Duration?
    private let onDue: @Sendable (UInt64) async -> Bool
    package private(set) var pending: Value?
    package var isHolding: Bool { pending != nil }
    private var firstHeldAt: C.Instant?
    /// When the held version is due; the timer reads it too.
    private let deadline = Deadline<C.Instant>()
    private var timer: Task<Void, Never>?
    /// Numbers the timers; every timer started and every `take` starts a new generation.
    private var generation: UInt64 = 0

    /// - Parameter onDue: Run by the timer once the deadline it read has come: answers whether
    ///   the timer is done (the version recorded, or the timer no longer live), or must sleep
    ///   on to a deadline a hold moved meanwhile.
    package init(
        clock: C, interval: C.Duration, maximumWait: C.Duration?,
        onDue: @escaping @Sendable (_ generation: UInt64) async -> Bool
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
        var due = now.advanced(by: interval)
        if let maximumWait {
            let latest = firstHeldAt.advanced(by: maximumWait)
            if latest < due { due = latest }
        }
        deadline.instant = due
        // A timer whose clock failed to sleep has stopped: this hold starts another.
        guard timer == nil || deadline.takeFailure() else { return }
        generation &+= 1
        let (clock, onDue, generation, deadline) = (self.clock, self.onDue, self.generation, self.deadline)
        timer = Task {
            while let due = deadline.instant {
                do {
                    try await clock.sleep(until: due, tolerance: nil)
                } catch {
                    if !Task.isCancelled { deadline.noteFailure() }
                    return
                }
                // A clock may return from a cancelled sleep; the generation is checked again
                // on the actor.
                guard !Task.isCancelled else { return }
                if let moved = deadline.instant, clock.now < moved { continue }
                if await onDue(generation) { return }
            }
        }
    }

    package func take() -> Value? {
        timer?.cancel()
        timer = nil
        generation &+= 1
        firstHeldAt = nil
        deadline.instant = nil
        _ = deadline.takeFailure()
        defer { pending = nil }
        return pending
    }

    package func isLive(_ generation: UInt64) -> Bool {
        pending != nil && generation == self.generation
    }

    package var isDue: Bool {
        deadline.instant.map { clock.now >= $0 } ?? false
    }
}

/// A debouncer's deadline, shared with its timer: written on the controller's actor by each
/// hold, read by the timer's task between two sleeps; and whether the timer stopped because its
/// clock failed to sleep (a clock of the app's may throw more than `CancellationError`).
private final class Deadline<Instant: Sendable>: @unchecked Sendable {
    // Sound because `value` and `failed` are touched only while `lock` is held.
    private let lock = NSLock()
    private var value: Instant?
    private var failed = false

    var instant: Instant? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }

    /// Notes that the timer stopped, its sleep having thrown without being cancelled.
    func noteFailure() { lock.withLock { failed = true } }

    /// Whether the timer stopped that way since last asked.
    func takeFailure() -> Bool {
        lock.withLock {
            defer { failed = false }
            return failed
        }
    }
}

/// A weak reference to an object plus an action on it, that may cross into a `@Sendable`
/// closure because it only touches the object in ``fire(on:_:)``, isolated to the actor that
/// owns the object. It is not generic, so isolated closures capture no generic metadata.
package final class IsolatedReference: @unchecked Sendable {
    private weak var object: AnyObject?
    private let action: (AnyObject, UInt64) -> Bool

    /// A reference whose action takes a number from the firing side (a timer's generation) and
    /// answers whether that side is done (a timer: whether it stops, or sleeps on).
    package init<Object: AnyObject>(_ object: Object, _ action: @escaping (Object, UInt64) -> Bool) {
        self.object = object
        self.action = { action($0 as! Object, $1) }
    }

    package convenience init<Object: AnyObject>(_ object: Object, _ action: @escaping (Object) -> Void) {
        self.init(object) { object, _ in
            action(object)
            return true
        }
    }

    /// Runs the action on the object, if it is still alive, isolated to `actor`; returns its
    /// answer (`true` when the object is gone: nothing is left to do).
    @discardableResult
    package func fire(on actor: isolated any Actor, _ argument: UInt64 = 0) -> Bool {
        guard let object else { return true }
        return action(object, argument)
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
    ///   - clock: The clock measuring the interval; `ContinuousClock()` by default. A sleep on
    ///     it that throws, other than by cancellation, stops the timer; the next append starts
    ///     another.
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
    private func flushCallback(on actor: any Actor) -> @Sendable (UInt64) async -> Bool {
        let reference = IsolatedReference(self) { controller, generation in
            guard let debouncer = controller.debouncer, debouncer.isLive(generation) else { return true }
            // A hold since the timer looked moved the deadline: the timer sleeps on.
            guard debouncer.isDue else { return false }
            controller.performInBackground { () throws(ReversionError) in try controller.recordPending() }
            return true
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
