/// How a ``VersioningController`` reports a ``ReversionError``.
///
/// - `throwing`: operations throw (`Failure == ReversionError`); `throwing(_:)` throws an
///   error type of your own.
/// - ``assignToController``: operations never throw; the error is stored in
///   ``VersioningController/error`` (`Failure == Never`).
/// - ``assign(to:)``: operations never throw; the error is written to a property of a
///   reference root, such as a view model's `versioningError` (`Failure == Never`).
///
/// ```swift
/// let controller = VersioningController(model.document, errorMode: .assignToController)
/// controller.undo()          // no `try`
/// print(controller.error)    // nil, or what went wrong
/// ```
public struct VersioningErrorMode<Root, Failure: Error> {
    let handle: (ReversionError, Root?) throws(Failure) -> Void
    let assignsToController: Bool
}

extension VersioningErrorMode {
    /// Operations throw `transform(error)`: an error type of your own, or of the storage's
    /// (Keepsake's `KeepsakeHistory` throws `KeepsakeError` this way).
    ///
    /// - Parameter transform: Turns the controller's error into the one thrown.
    public static func throwing(_ transform: @escaping (ReversionError) -> Failure) -> Self {
        Self(handle: { error, _ throws(Failure) in throw transform(error) }, assignsToController: false)
    }
}

extension VersioningErrorMode where Failure == ReversionError {
    /// Operations throw the error.
    public static var throwing: Self {
        Self(handle: { error, _ throws(ReversionError) in throw error }, assignsToController: false)
    }
}

extension VersioningErrorMode where Failure == Never {
    /// Operations store the error in ``VersioningController/error`` instead of throwing.
    public static var assignToController: Self {
        Self(handle: { _, _ in }, assignsToController: true)
    }
}

extension VersioningErrorMode where Failure == Never, Root: AnyObject {
    /// Operations write the error to `keyPath` of the (weakly held) root instead of throwing.
    ///
    /// - Parameter keyPath: A property of the root that receives the latest error.
    public static func assign(to keyPath: ReferenceWritableKeyPath<Root, ReversionError?>) -> Self {
        Self(handle: { error, root in root?[keyPath: keyPath] = error }, assignsToController: true)
    }
}
