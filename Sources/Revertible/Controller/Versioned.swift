/// A property whose every change is a version that `$property.undo()` reverts.
///
/// The projected value is the ``VersioningController`` itself, so it offers undo and redo,
/// scopes, tags, transactions, debouncing and `setWithoutTracking(_:)`. Errors never throw:
/// they are stored in `$property.error`. Use ``ThrowingVersioned`` to have them thrown.
///
/// ```swift
/// struct Editor {
///     @Versioned var activity = Activity(title: "Title")
/// }
/// editor.activity.title = "New title"
/// editor.$activity.undo()   // title is "Title"
/// ```
///
/// Pass a `storage` to keep the versions durably; a storage that cannot be opened leaves the
/// versions in memory, with the reason in `$property.error` until the next operation succeeds,
/// and in `$property.openingError` for as long as the versions stay in memory:
///
/// ```swift
/// @Versioned(storage: .keepsake(path: "Editor.keepsake", history: "activity"))
/// var activity = Activity(title: "Title")
/// ```
///
/// Inside an `@Observable` class, mark the property `@ObservationIgnored`: the controller is
/// itself observable, so views reading the property still update when it changes.
///
/// The wrapper holds a reference to its controller: copies of the enclosing value share one
/// history.
@propertyWrapper
public struct Versioned<Value: Versionable> {
    /// The controller tracking the property.
    public let projectedValue: VersioningController<Value, Value, Never>

    /// The current version; setting it appends a version.
    public var wrappedValue: Value {
        get { projectedValue.value }
        nonmutating set { projectedValue.append(newValue) }
    }

    /// Starts tracking `wrappedValue`.
    ///
    /// - Parameters:
    ///   - wrappedValue: The first version (of a new history, with a durable storage).
    ///   - storage: Where the versions are kept; in memory by default.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    public init(
        wrappedValue: Value, storage: HistoryStorage<Value> = .inMemory,
        maximumVersions: Int? = VersioningController<Value, Value, Never>.defaultMaximumVersions
    ) {
        projectedValue = VersioningController(
            opened: VersioningController<Value, Value, Never>.open(
                storage, initialValue: wrappedValue, maximumVersions: maximumVersions),
            keyPath: \.self, object: nil, errorMode: .assignToController)
    }
}

/// A property whose every change is a version, like ``Versioned``, but whose projected
/// controller throws ``ReversionError`` instead of storing it.
///
/// ```swift
/// @ThrowingVersioned var activity = Activity(title: "Title")
/// try $activity.undo()
/// ```
///
/// What cannot be thrown — a storage that fails to open, an append made by assigning the
/// property — is stored in `$property.error`.
@propertyWrapper
public struct ThrowingVersioned<Value: Versionable> {
    /// The controller tracking the property.
    public let projectedValue: VersioningController<Value, Value, ReversionError>

    /// The current version; setting it appends a version. A setter cannot throw: an error is
    /// stored in `$property.error`; call `try $property.append(_:)` to have it thrown.
    public var wrappedValue: Value {
        get { projectedValue.value }
        nonmutating set {
            projectedValue.performInBackground { () throws(ReversionError) in
                try projectedValue.keepingOnFailure(newValue) { () throws(ReversionError) in
                    try projectedValue.record(newValue, tag: nil)
                }
            }
        }
    }

    /// Starts tracking `wrappedValue`.
    ///
    /// - Parameters:
    ///   - wrappedValue: The first version (of a new history, with a durable storage).
    ///   - storage: Where the versions are kept; in memory by default.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    public init(
        wrappedValue: Value, storage: HistoryStorage<Value> = .inMemory,
        maximumVersions: Int? = VersioningController<Value, Value, ReversionError>.defaultMaximumVersions
    ) {
        projectedValue = VersioningController(
            opened: VersioningController<Value, Value, ReversionError>.open(
                storage, initialValue: wrappedValue, maximumVersions: maximumVersions),
            keyPath: \.self, object: nil, errorMode: .throwing)
    }
}
