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
    /// Changes are appended asynchronously, on the actor that created the controller.
    ///
    /// - Parameters:
    ///   - root: The object, held weakly.
    ///   - keyPath: The tracked property.
    ///   - errorMode: How errors are reported.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    ///   - isolation: The actor the controller belongs to; the caller's by default.
    public convenience init(
        observing root: Root, at keyPath: WritableKeyPath<Root, Value>,
        errorMode: VersioningErrorMode<Root, Failure>,
        maximumVersions: Int? = defaultMaximumVersions, isolation: isolated any Actor = #isolation
    ) {
        self.init(
            value: root[keyPath: keyPath], keyPath: keyPath, object: root, errorMode: errorMode,
            maximumVersions: maximumVersions)
        observeRoot(on: isolation)
    }

    func observeRoot(on actor: any Actor) {
        guard let root = object as? Root else { return }
        let keyPath = self.keyPath
        let reference = IsolatedReference(self) { $0.rootDidChange(on: actor) }
        withObservationTracking {
            _ = root[keyPath: keyPath]
        } onChange: {
            Task { await reference.fire(on: actor) }
        }
    }

    private func rootDidChange(on actor: any Actor) {
        observeRoot(on: actor)
        guard let value = readRoot(), value.reversion(to: debouncer?.pending ?? history.current) != nil else {
            return
        }
        append(value)
    }
}

extension VersioningController where Root: AnyObject & Observable, Failure == ReversionError {
    /// Tracks the property at `keyPath` of an `@Observable` object by itself; errors are
    /// thrown. See ``init(observing:at:errorMode:maximumVersions:isolation:)``.
    public convenience init(
        observing root: Root, at keyPath: WritableKeyPath<Root, Value>,
        maximumVersions: Int? = defaultMaximumVersions, isolation: isolated any Actor = #isolation
    ) {
        self.init(
            observing: root, at: keyPath, errorMode: .throwing, maximumVersions: maximumVersions,
            isolation: isolation)
    }
}
