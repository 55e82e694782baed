import Foundation
public import Observation

extension VersioningController where Root: AnyObject & Observable {
    /// Tracks the property at `keyPath` of an `@Observable` object by itself: every change to
    /// it is appended without calling ``append(_:tag:)``. Combine with
    /// ``withDebouncing(clock:interval:maximumWait:isolation:)`` to group keystrokes.
    ///
    /// ```swift
    /// @Observable final class Model { var activity: Activity = … }
    /// let controller = VersioningController(observing: model, at: \.activity)
    /// model.activity.title = "New title"   // appended on the next turn of the actor
    /// ```
    ///
    /// Changes are appended asynchronously, on the actor that created the controller: the
    /// changes made in one turn of the actor become one version. An operation made in the
    /// same turn as a change (an `undo()` right after an edit) records the change first, so it
    /// is a version that the operation acts on: the undo undoes exactly that edit, and
    /// `redo()` brings it back. An append that fails with no caller to throw to leaves its
    /// error in ``error``, and the change pending: the recording of the next change, the next
    /// operation, ``flush()`` or ``close()`` records it.
    ///
    /// Until its change is recorded, the object is kept alive, so a controller that the app
    /// lets go of in the turn of an edit (with the object, or the object that owns it) still
    /// has the edit: it gives it to its storage to hold, as debouncing does, and a durable
    /// history records it when it is next opened (see ``close()``).
    ///
    /// - Parameters:
    ///   - root: The object, held weakly.
    ///   - keyPath: The tracked property.
    ///   - errorMode: How errors are reported.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    ///   - isolation: The actor the controller belongs to; the caller's by default.
    public convenience init(
        observing root: Root, at keyPath: WritableKeyPath<Root, Value>,
        errorMode: VersioningErrorMode<Root, Failure>,
        maximumVersions: Int? = defaultMaximumVersions, isolation: isolated any Actor = #isolation
    ) {
        self.init(on: root, at: keyPath, errorMode: errorMode, maximumVersions: maximumVersions)
        startObserving(on: isolation)
    }

    /// Tracks the property at `keyPath` of an `@Observable` object by itself, keeping its
    /// versions in `storage`: the SwiftUI way to durable undo.
    ///
    /// ```swift
    /// @Observable final class DrawingModel { var drawing = Drawing() }
    ///
    /// let model = DrawingModel()
    /// let store = try KeepsakeStore(path: "Drawings.keepsake")
    /// let undo = try VersioningController(
    ///     observing: model, at: \.drawing, storage: .keepsake(store, history: "drawing-1"))
    /// model.drawing.strokes.append(stroke)   // recorded on the next turn, durably
    /// try undo.undo()                        // model.drawing has no stroke again
    /// ```
    ///
    /// When the storage holds an existing history, the object's property is set to its
    /// current version first.
    ///
    /// - Parameters:
    ///   - root: The object, held weakly; its property is the first version of a new history.
    ///   - keyPath: The tracked property.
    ///   - storage: Where the versions are kept.
    ///   - errorMode: How errors are reported, opening errors included.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    ///   - isolation: The actor the controller belongs to; the caller's by default.
    /// - Throws: What the error mode throws when the storage cannot be opened.
    public convenience init(
        observing root: Root, at keyPath: WritableKeyPath<Root, Value>, storage: HistoryStorage<Value>,
        errorMode: VersioningErrorMode<Root, Failure>, maximumVersions: Int? = defaultMaximumVersions,
        isolation: isolated any Actor = #isolation
    ) throws(Failure) {
        try self.init(
            on: root, at: keyPath, storage: storage, errorMode: errorMode, maximumVersions: maximumVersions)
        startObserving(on: isolation)
    }

    private func startObserving(on actor: any Actor) {
        observeAgain = { [weak self] in self?.observeRoot(on: actor) }
        observeRoot(on: actor)
    }

    /// Tracks the root's property until its next change. Observation reports one change per
    /// tracking, so whoever lowers the raised flag tracks it again: the delivery on the next
    /// turn, or the operation that recorded the change before it (``observeAgain``).
    private func observeRoot(on actor: any Actor) {
        guard let root = object as? Root else { return }
        let keyPath = self.keyPath
        let flag = observedChange ?? ChangeFlag(root: root)
        observedChange = flag
        let reference = IsolatedReference(self) { $0.rootDidChange(on: actor) }
        withObservationTracking {
            _ = root[keyPath: keyPath]
        } onChange: {
            // Raised at once, delivered on the next turn: an operation in between records it.
            flag.raise()
            Task { await reference.fire(on: actor) }
        }
    }

    private func rootDidChange(on actor: any Actor) {
        // Closed, or already recorded by an operation made in the same turn as the change.
        guard let flag = observedChange, let root = flag.lower() as? Root else { return }
        observeRoot(on: actor)
        let value = root[keyPath: keyPath]
        guard value.reversion(to: heldOrCurrent) != nil else {
            // Edited back to what is recorded: nothing is left to keep.
            if hasUnrecorded {
                unrecorded = nil
                announceHeldChange()
            }
            return
        }
        // Kept when it fails, as a value rather than by keeping the root: nothing may be
        // delivered again, and a root that owns the controller would keep itself alive.
        performInBackground { () throws(ReversionError) in
            try keepingOnFailure(value) { () throws(ReversionError) in try record(value, tag: nil) }
        }
    }
}

extension VersioningController where Root: AnyObject & Observable, Failure == ReversionError {
    /// Tracks the property at `keyPath` of an `@Observable` object by itself; errors are
    /// thrown. See ``init(observing:at:errorMode:maximumVersions:isolation:)``.
    ///
    /// - Parameters:
    ///   - root: The object, held weakly.
    ///   - keyPath: The tracked property.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    ///   - isolation: The actor the controller belongs to; the caller's by default.
    public convenience init(
        observing root: Root, at keyPath: WritableKeyPath<Root, Value>,
        maximumVersions: Int? = defaultMaximumVersions, isolation: isolated any Actor = #isolation
    ) {
        self.init(
            observing: root, at: keyPath, errorMode: .throwing, maximumVersions: maximumVersions,
            isolation: isolation)
    }
}

extension VersioningController where Root: AnyObject & Observable, Failure == ReversionError {
    /// Tracks the property at `keyPath` of an `@Observable` object by itself, keeping its
    /// versions in `storage`; errors are thrown. See
    /// ``init(observing:at:storage:errorMode:maximumVersions:isolation:)``.
    ///
    /// - Parameters:
    ///   - root: The object, held weakly; its property is the first version of a new history.
    ///   - keyPath: The tracked property.
    ///   - storage: Where the versions are kept.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    ///   - isolation: The actor the controller belongs to; the caller's by default.
    /// - Throws: ``ReversionError/storage(_:)`` when the storage cannot be opened.
    public convenience init(
        observing root: Root, at keyPath: WritableKeyPath<Root, Value>, storage: HistoryStorage<Value>,
        maximumVersions: Int? = defaultMaximumVersions, isolation: isolated any Actor = #isolation
    ) throws(ReversionError) {
        try self.init(
            observing: root, at: keyPath, storage: storage, errorMode: .throwing,
            maximumVersions: maximumVersions,
            isolation: isolation)
    }
}

/// Set when an observed root changes, cleared when the change is recorded; raised from any
/// thread by Observation's `onChange`, read on the controller's actor.
///
/// While raised it keeps the root alive, so that the change can still be read where it is
/// recorded: on the next turn, when the app let go of the root (and of the controller it
/// owns) in the turn of the edit, or in the controller's `deinit`, when the app let go of
/// both. Held weakly, the root would be gone by then, and the edit with it.
final class ChangeFlag: @unchecked Sendable {
    // Sound because `kept` is only touched while `lock` is held, and the root is only
    // retained here, never read; `root` is a weak reference, safe to load from any thread.
    private let lock = NSLock()
    private weak var root: AnyObject?
    private var kept: AnyObject?

    init(root: AnyObject) {
        self.root = root
    }

    func raise() {
        lock.withLock { kept = root }
    }

    /// Clears the flag; returns the root whose change it was raised by, alive until the caller
    /// lets go of it, or `nil` when it was not raised.
    func lower() -> AnyObject? {
        // Released by the caller, after the lock: the root's deinit may run then, and release
        // the controller that holds this flag.
        lock.withLock {
            defer { kept = nil }
            return kept
        }
    }
}
