public import Foundation

/// Why a reversion could not be made, applied, stored or read back.
///
/// Each case names the path it is about, so a message can say exactly where. Its sentence is
/// both its `description` and its `localizedDescription` (it is a `LocalizedError`, as the
/// storage errors it carries are):
///
/// ```swift
/// do {
///     try reversion.revert(&user)
/// } catch .wrongVersion(let path, let reason) {
///     print("not the version this reversion was made from: \(path): \(reason)")
/// } catch {
///     print(error)
/// }
/// ```
public enum ReversionError: Error, Hashable, Sendable {
    /// The value at `path` is not the one the reversion was made from; nothing was changed.
    case wrongVersion(path: PathDescriptor, reason: String)
    /// A stored path does not name a tracked location of `type` (a property was renamed or
    /// removed, or an element is missing).
    case pathNotFound(path: PathDescriptor, type: String)
    /// The change at `path` holds a `type` that is not `Encodable`, so it cannot be stored.
    case notEncodable(path: PathDescriptor, type: String)
    /// A stored change at `path` could not be decoded as `type`.
    case undecodable(path: PathDescriptor, type: String, reason: String)
    /// The storage below a ``VersioningController`` failed: a full disk, a busy store, another
    /// writer, or stored data that no longer reads. Nothing changed. For a Keepsake store the
    /// failure's ``StorageFailure/error`` is a `KeepsakeError` saying what and where.
    case storage(StorageFailure)
}

/// An error of a ``VersionStorage``, carried by ``ReversionError/storage(_:)``.
///
/// ```swift
/// do {
///     try controller.undo()
/// } catch .storage(let failure) {
///     print(failure.error)   // such as KeepsakeError.sqlite(… database or disk is full …)
/// } catch {
///     print(error)
/// }
/// ```
public struct StorageFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The storage's own error.
    public let error: any Error

    /// Wraps a storage's error.
    ///
    /// - Parameter error: What the storage threw.
    public init(_ error: any Error) {
        self.error = error
    }

    /// The storage error's own description.
    public var description: String { String(describing: error) }

    /// Two failures are equal when their errors are of the same type and describe themselves
    /// the same way.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        String(reflecting: lhs.error) == String(reflecting: rhs.error)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(String(reflecting: error))
    }
}

/// A storage error that can say whether it refuses a value itself — recording the same value
/// again can only fail the same way — rather than the moment (a full disk, a busy store).
package protocol ValueRefusal: Error {
    /// Whether the value itself is refused.
    var refusesValue: Bool { get }
}

extension ReversionError {
    /// Whether the value itself was refused: a change that is not `Encodable`, or a storage
    /// error saying so (``ValueRefusal``).
    package var refusesValue: Bool {
        switch self {
        case .notEncodable: true
        case .storage(let failure): (failure.error as? any ValueRefusal)?.refusesValue ?? false
        default: false
        }
    }
}

extension ReversionError: CustomStringConvertible {
    /// A sentence saying what failed and where.
    public var description: String {
        switch self {
        case .wrongVersion(let path, let reason):
            "The value at \(path.displayText) is not the version this reversion was made from: \(reason)."
        case .pathNotFound(let path, let type):
            "The stored path \(path.displayText) does not name a tracked location of \(type)."
        case .notEncodable(let path, let type):
            "The change at \(path.displayText) holds \(type), which is not Encodable, so it cannot be stored."
        case .undecodable(let path, let type, let reason):
            "The stored change at \(path.displayText) does not decode as \(type): \(reason)."
        case .storage(let failure):
            failure.description
        }
    }
}

extension PathDescriptor {
    /// The text form, or `(root)` for the root, for messages.
    package var displayText: String { isRoot ? "(root)" : "`\(description)`" }
}

extension ReversionError: LocalizedError {
    /// The ``description``: what an app shows with `error.localizedDescription` (in an alert,
    /// say), which would otherwise read "The operation could not be completed".
    public var errorDescription: String? { description }
}

extension StorageFailure: LocalizedError {
    /// The storage error's own `localizedDescription`.
    public var errorDescription: String? { error.localizedDescription }
}
