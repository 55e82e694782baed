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
    ///   - wrappedValue: The first version.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    public init(
        wrappedValue: Value,
        maximumVersions: Int? = VersioningController<Value, Value, Never>.defaultMaximumVersions
    ) {
        projectedValue = VersioningController(
            wrappedValue, errorMode: .assignToController, maximumVersions: maximumVersions)
    }
}

/// A property whose every change is a version, like ``Versioned``, but whose projected
/// controller throws ``ReversionError`` instead of storing it.
///
/// ```swift
/// @ThrowingVersioned var activity = Activity(title: "Title")
/// try $activity.undo()
/// ```
@propertyWrapper
public struct ThrowingVersioned<Value: Versionable> {
    /// The controller tracking the property.
    public let projectedValue: VersioningController<Value, Value, ReversionError>

    /// The current version; setting it appends a version.
    public var wrappedValue: Value {
        get { projectedValue.value }
        nonmutating set { projectedValue.append(newValue) }
    }

    /// Starts tracking `wrappedValue`.
    ///
    /// - Parameters:
    ///   - wrappedValue: The first version.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all.
    public init(
        wrappedValue: Value,
        maximumVersions: Int? = VersioningController<Value, Value, ReversionError>.defaultMaximumVersions
    ) {
        projectedValue = VersioningController(wrappedValue, maximumVersions: maximumVersions)
    }
}
