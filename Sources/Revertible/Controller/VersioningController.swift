public import Observation

/// Tracks the versions of a value and moves between them: undo, redo, scopes, tags,
/// transactions, debouncing.
///
/// Only what changed is kept: each version is a ``Reversion`` made by diffing it with the one
/// before. Four ways to track a value:
///
/// - **Direct**: `VersioningController(value)`; `append(_:)` each new version; `undo()` returns
///   the previous one.
/// - **Key path**: `VersioningController(on: root, at: \.activity)`; `append(root:)` and
///   `undo(root:)` read and write the property of a root you own.
/// - **Reference key path**: the same initializer with a class root, held weakly;
///   `appendCurrentVersion()`, `undo()` and `redo()` read and write the object directly.
/// - **Observation**: ``init(observing:at:errorMode:isolation:)`` with an `@Observable` root
///   appends every change by itself.
///
/// ```swift
/// let controller = VersioningController(activity)
/// activity.title = "New title"
/// controller.append(activity)
/// activity = try controller.undo()   // title is "Title" again
/// ```
///
/// ## Isolation
///
/// The controller is not `Sendable`: it belongs to the isolation domain that created it (the
/// main actor in an app, your own actor in a server) and is used from there. Debouncing and
/// observation schedule their work back onto that same actor, which is why their APIs take an
/// `isolation` argument that defaults to the caller's (`#isolation`). The controller is itself
/// `Observable`: SwiftUI views reading ``hasUndo``, ``hasRedo``, ``scopeLevel`` or ``error``
/// update when they change.
public final class VersioningController<Root, Value: Versionable, Failure: Error>: Observable {
    var history: VersionHistory<Value>
    let keyPath: WritableKeyPath<Root, Value>
    /// The root of the reference key path mode, held weakly.
    weak var object: AnyObject?
    let errorMode: VersioningErrorMode<Root, Failure>
    let registrar = ObservationRegistrar()
    var debouncer: (any PendingVersionHolder<Value>)?
    var storedError: ReversionError?
    /// The key paths observers are told about, made once: a key path literal in a generic
    /// class is instantiated anew on every use, which made notifying cost more than diffing.
    private lazy var observed = (
        history: \VersioningController.versionHistory, value: \VersioningController.value,
        hasUndo: \VersioningController.hasUndo, hasRedo: \VersioningController.hasRedo,
        scopeLevel: \VersioningController.scopeLevel
    )

    init(
        value: Value, keyPath: WritableKeyPath<Root, Value>, object: AnyObject?,
        errorMode: VersioningErrorMode<Root, Failure>, maximumVersions: Int?
    ) {
        history = VersionHistory(value, maximumVersions: maximumVersions)
        self.keyPath = keyPath
        self.object = object
        self.errorMode = errorMode
    }

    /// The default ``maximumVersions``: 1,000.
    public static var defaultMaximumVersions: Int { 1_000 }

    // MARK: - Creating a controller

    /// Tracks `value` directly; errors are thrown.
    ///
    /// - Parameters:
    ///   - value: The first version.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    public convenience init(_ value: Value, maximumVersions: Int? = defaultMaximumVersions)
    where Root == Value, Failure == ReversionError {
        self.init(
            value: value, keyPath: \.self, object: nil, errorMode: .throwing, maximumVersions: maximumVersions
        )
    }

    /// Tracks `value` directly, reporting errors as `errorMode` says.
    ///
    /// - Parameters:
    ///   - value: The first version.
    ///   - errorMode: ``VersioningErrorMode/throwing`` or ``VersioningErrorMode/assignToController``.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    public convenience init(
        _ value: Value, errorMode: VersioningErrorMode<Root, Failure>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Root == Value {
        self.init(
            value: value, keyPath: \.self, object: nil, errorMode: errorMode, maximumVersions: maximumVersions
        )
    }

    /// Tracks the property at `keyPath` of a value root; errors are thrown.
    ///
    /// - Parameters:
    ///   - root: The root holding the first version.
    ///   - keyPath: The tracked property.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Failure == ReversionError {
        self.init(
            value: root[keyPath: keyPath], keyPath: keyPath, object: nil, errorMode: .throwing,
            maximumVersions: maximumVersions)
    }

    /// Tracks the property at `keyPath` of an object, held weakly; the object is read by
    /// ``appendCurrentVersion()`` and written by ``undo()`` and ``redo()``.
    ///
    /// - Parameters:
    ///   - root: The object holding the first version.
    ///   - keyPath: The tracked property.
    ///   - errorMode: How errors are reported.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>,
        errorMode: VersioningErrorMode<Root, Failure>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Root: AnyObject {
        self.init(
            value: root[keyPath: keyPath], keyPath: keyPath, object: root, errorMode: errorMode,
            maximumVersions: maximumVersions)
    }

    /// Tracks the property at `keyPath` of an object, held weakly; errors are thrown.
    ///
    /// - Parameters:
    ///   - root: The object holding the first version.
    ///   - keyPath: The tracked property.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Root: AnyObject, Failure == ReversionError {
        self.init(
            value: root[keyPath: keyPath], keyPath: keyPath, object: root, errorMode: .throwing,
            maximumVersions: maximumVersions)
    }

    // MARK: - State

    /// The current version.
    public var value: Value {
        registrar.access(self, keyPath: \.value)
        return history.current
    }

    /// Whether ``undo()`` has a version to go back to in the current scope, counting a pending
    /// debounced change.
    public var hasUndo: Bool {
        registrar.access(self, keyPath: \.hasUndo)
        return history.hasUndo || debouncer?.pending != nil
    }

    /// Whether ``redo()`` has a version to go forward to in the current scope.
    public var hasRedo: Bool {
        registrar.access(self, keyPath: \.hasRedo)
        return history.hasRedo && debouncer?.pending == nil
    }

    /// The 0-based level of the current scope.
    public var scopeLevel: Int {
        registrar.access(self, keyPath: \.scopeLevel)
        return history.scopeLevel
    }

    /// The latest error, in the assigning error modes; `nil` after a successful operation.
    public var error: ReversionError? {
        registrar.access(self, keyPath: \.error)
        return storedError
    }

    /// The most versions kept across all scopes; the oldest are dropped first. `nil` keeps all.
    public var maximumVersions: Int? {
        get { history.maximumVersions }
        set { mutate { $0.maximumVersions = newValue } }
    }

    /// The history behind the controller: every scope with its steps and tags.
    public var versionHistory: VersionHistory<Value> {
        registrar.access(self, keyPath: \.versionHistory)
        return history
    }

    // MARK: - Plumbing shared by every operation

    /// Applies `change` to the history and notifies observers; the root is written when the
    /// current version changed.
    @discardableResult
    func mutate<T, E: Error>(_ change: (inout VersionHistory<Value>) throws(E) -> T) throws(E) -> T {
        var copy = history
        let result = try change(&copy)
        let paths = observed
        registrar.willSet(self, keyPath: paths.history)
        registrar.willSet(self, keyPath: paths.value)
        registrar.willSet(self, keyPath: paths.hasUndo)
        registrar.willSet(self, keyPath: paths.hasRedo)
        registrar.willSet(self, keyPath: paths.scopeLevel)
        history = copy
        registrar.didSet(self, keyPath: paths.scopeLevel)
        registrar.didSet(self, keyPath: paths.hasRedo)
        registrar.didSet(self, keyPath: paths.hasUndo)
        registrar.didSet(self, keyPath: paths.value)
        registrar.didSet(self, keyPath: paths.history)
        // Writing an unchanged value back is harmless; finding out would cost a second diff.
        writeRoot()
        return result
    }

    /// Runs `operation`, reporting a ``ReversionError`` as the error mode says; returns `nil`
    /// when it failed in an assigning mode.
    func perform<T>(_ operation: () throws(ReversionError) -> T) throws(Failure) -> T? {
        do {
            let result = try operation()
            if errorMode.assignsToController, storedError != nil { setError(nil) }
            return result
        } catch {
            if errorMode.assignsToController { setError(error) }
            try errorMode.handle(error, object as? Root)
            return nil
        }
    }

    func setError(_ error: ReversionError?) {
        registrar.withMutation(of: self, keyPath: \.error) { storedError = error }
    }

    /// Writes the current version into the reference root, if there is one.
    func writeRoot() {
        guard let object, var root = object as? Root else { return }
        root[keyPath: keyPath] = history.current
    }

    /// Reads the current version from the reference root, if it is still alive.
    func readRoot() -> Value? {
        guard let root = object as? Root else { return nil }
        return root[keyPath: keyPath]
    }
}
