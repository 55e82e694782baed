public import Foundation

/// Why a Keepsake store could not be opened, read or written.
///
/// Every case says what failed and where, in one sentence that is both its `description` and
/// its `localizedDescription` (it is a `LocalizedError`), so an app's alert can show it as it is:
///
/// ```swift
/// do {
///     let store = try KeepsakeStore(path: path)
/// } catch .newerSchema(let path, let version, let supported) {
///     print("\(path) was written by a newer Keepsake (schema \(version) > \(supported))")
/// } catch {
///     print(error)
/// }
/// ```
public enum KeepsakeError: Error, Hashable, Sendable {
    /// The file cannot be opened: it is missing, a directory, or in a missing folder; or, for
    /// writing, it cannot be written, or its rows refused an upgrade to this code's schema (a
    /// damaged store, left at the last schema committed). ``remedy`` says when a read-only
    /// open reads it.
    case cannotOpen(path: String, reason: String)
    /// The file is not a Keepsake store (not a SQLite database, empty, truncated, corrupt, a
    /// database of another application, or its write-ahead log damaged so that SQLite would
    /// drop commits); it was not modified.
    case notAStore(path: String, reason: String)
    /// The store was written by a newer Keepsake whose schema this code does not know; it was
    /// not modified. Thrown when opening it, and by every operation of a store that newer code
    /// upgraded while this one had it open (an app updated while its old version still runs):
    /// nothing is written from then on.
    case newerSchema(path: String, version: Int, supported: Int)
    /// SQLite reported an error (busy, full disk, I/O, …).
    case sqlite(SQLiteError)
    /// The history was deleted since this controller read it (by
    /// ``KeepsakeStore/deleteHistory(_:)``, in this process or another), or other writers
    /// changed it each time this controller read it again, eight times running. Nothing was
    /// written. Reopen the history (a deleted one opens anew, with the initial value). A
    /// history another writer changed once is read again by the controller, which writes on
    /// top of it: see <doc:DurableHistory>.
    case historyConflict(history: String)
    /// A change of `history` could not be stored or read back: its path no longer names a
    /// tracked property, its value no longer decodes, or the value is not `Encodable`.
    /// `version` is the stored version's number (`nil` for a change not stored yet).
    case reversion(history: String, version: Int?, error: ReversionError)
    /// The stored value of `history` (a checkpoint) does not decode as the requested type.
    case undecodableValue(history: String, reason: String)
    /// The value of `history` cannot be stored whole, as a new history's first version or as
    /// the version an edit would make: `JSONEncoder` refuses it (it nests arrays and objects
    /// deeper than the 511 levels JSON is written to, or the model's `encode(to:)` threw).
    /// Nothing was written; the history keeps its versions.
    case unencodableValue(history: String, reason: String)
    /// A snapshot called `name` already exists in `namespace`; nothing was written. Pass
    /// `replacingExisting: true` to overwrite it.
    case snapshotExists(namespace: String, name: String)
    /// No snapshot called `name` exists in `namespace`.
    case snapshotNotFound(namespace: String, name: String)
    /// The snapshot's property at `path` does not decode as the requested type (the type
    /// changed since it was saved); nothing was deleted.
    case undecodableSnapshot(name: String, path: PathDescriptor, reason: String)
    /// The path names nothing in the snapshot `name`: no such property, element, key or
    /// position. `reason` says which step found nothing.
    case snapshotPathNotFound(name: String, path: PathDescriptor, reason: String)
    /// The value cannot be stored as a snapshot, because it is not encodable as JSON.
    case unencodableSnapshot(name: String, reason: String)
    /// Stored data of `history` is damaged (a number out of range, rows out of order, bytes
    /// that do not match their digest); nothing was changed. `keepsake verify` lists every
    /// problem of the store.
    case damaged(history: String, reason: String)
}

extension KeepsakeError {
    /// A way to open a store that an error refused, by an option of ``KeepsakeStore/Options``.
    public enum Remedy: Sendable, Hashable {
        /// The file, or its folder, cannot be written (it is locked, on read-only media, not
        /// permitted, or the file has a second name), its schema is damaged so that writing
        /// through it could store rows wrongly, its rows refused an upgrade (a damaged store,
        /// left at the last schema committed), or the disk has no room for what opening for
        /// writing writes: ``KeepsakeStore/Options/readOnly`` opens it to read (and
        /// ``KeepsakeStore/salvage(from:to:)`` copies what it holds).
        case openReadOnly
        /// Its write-ahead log is damaged: ``KeepsakeStore/Options/readsDamagedLog`` opens it
        /// as SQLite reads it, as of the damage.
        case readDamagedLog
    }

    /// The option that opens the store this error refused, when one does, so that an app can
    /// offer it without reading the reason.
    ///
    /// ```swift
    /// let store: KeepsakeStore
    /// do {
    ///     store = try KeepsakeStore(path: path)
    /// } catch {
    ///     switch error.remedy {
    ///     case .readDamagedLog?:
    ///         // Tell the user that the newest edits cannot be read, then:
    ///         store = try KeepsakeStore(path: path, options: .init(readsDamagedLog: true))
    ///     case .openReadOnly?:
    ///         store = try KeepsakeStore(path: path, options: .init(readOnly: true))
    ///     case nil:
    ///         throw error
    ///     }
    /// }
    /// ```
    public var remedy: Remedy? {
        switch self {
        case .cannotOpen(_, let reason) where reason.contains(Schema.readOnlyAdvice): .openReadOnly
        case .notAStore(_, let reason) where reason.contains(Schema.readOnlyAdvice): .openReadOnly
        case .notAStore(_, let reason) where reason.contains(WriteAheadLog.Damage.advice): .readDamagedLog
        case .sqlite(let error) where error.message.hasSuffix(Schema.readOnlyAdvice): .openReadOnly
        default: nil
        }
    }

    /// This error with the history's name filled in where the rows that raised it did not
    /// know it.
    func naming(history name: String) -> KeepsakeError {
        switch self {
        case .reversion(let history, let version, let error) where history.isEmpty:
            .reversion(history: name, version: version, error: error)
        case .damaged(let history, let reason) where history.isEmpty:
            .damaged(history: name, reason: reason)
        case .historyConflict(let history) where history.isEmpty:
            .historyConflict(history: name)
        case .unencodableValue(let history, let reason) where history.isEmpty:
            .unencodableValue(history: name, reason: reason)
        default:
            self
        }
    }
}

extension KeepsakeError: CustomStringConvertible {
    /// A sentence saying what failed, where, and what to do.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "Cannot open \(path): \(reason)."
        case .notAStore(let path, let reason):
            "\(path) is not a Keepsake store: \(reason). It was not modified."
        case .newerSchema(let path, let version, let supported):
            """
            \(path) was written by a newer Keepsake (schema version \(version); this one knows up to \
            \(supported)). It was not modified; open it with a newer Keepsake.
            """
        case .sqlite(let error):
            error.description
        case .historyConflict(let history):
            """
            The history "\(history)" was deleted since this controller read it (by deleteHistory, in \
            this process or another), or other writers kept changing it as this controller read it again; \
            reopen it. Nothing was written.
            """
        case .reversion(let history, let version, let error) where history.isEmpty:
            "\(version.map { "Version \($0): " } ?? "")\(error)"
        case .reversion(let history, let version, let error):
            "History \"\(history)\"\(version.map { ", version \($0)" } ?? ""): \(error)"
        case .undecodableValue(let history, let reason):
            "The stored value of history \"\(history)\" does not decode: \(reason)."
        case .unencodableValue(let history, let reason):
            "The value of history \"\(history)\" cannot be stored: \(reason). Nothing was written."
        case .snapshotExists(let namespace, let name):
            "A snapshot \"\(name)\" already exists in \(namespace); pass replacingExisting: true to overwrite it."
        case .snapshotNotFound(let namespace, let name):
            "There is no snapshot \"\(name)\" in \(namespace)."
        case .undecodableSnapshot(let name, let path, let reason):
            "The snapshot \"\(name)\" does not decode at \(path.isRoot ? "(root)" : "`\(path)`"): \(reason)."
        case .snapshotPathNotFound(let name, let path, let reason):
            "The snapshot \"\(name)\" has no value at `\(path)`: \(reason)."
        case .unencodableSnapshot(let name, let reason):
            "The value cannot be saved as snapshot \"\(name)\": \(reason)."
        case .damaged(let history, let reason):
            "The stored history \"\(history)\" is damaged: \(reason). Nothing was changed."
        }
    }
}

extension KeepsakeError {
    /// Why a value could not be encoded whole, for an error's reason: where and what
    /// `JSONEncoder` refused, without the value itself, which an `EncodingError`'s own
    /// description prints whole (megabytes of text, for a large document); the model's own
    /// error as it describes itself. `property` names the property whose value alone was
    /// encoded, where a place is named.
    static func encodingFailure(_ error: any Error, property: String? = nil) -> String {
        guard let error = error as? EncodingError, case .invalidValue(_, let context) = error else {
            return "\(error)"
        }
        // The one error of Foundation's JSON writer (its nesting limit), reported at the top.
        if context.codingPath.isEmpty, context.underlyingError == nil,
            context.debugDescription == "Unable to encode the given top-level value to JSON."
        {
            return "it nests arrays and objects deeper than the 511 levels JSONEncoder writes"
        }
        let path = RecordCoding.text(of: context.codingPath)
        let place =
            switch (property, path) {
            case (nil, ""): ""
            case (nil, _): " at \(path)"
            case (let property?, _) where path.isEmpty || path.hasPrefix("["): " at \(property)\(path)"
            case (let property?, _): " at \(property).\(path)"
            }
        return "JSONEncoder refused it\(place): \(context.debugDescription)"
    }

    /// What `encode` returns, where it encodes a value whole: an error of the store's own (a
    /// large byte string's blob that could not be written: a full disk) is thrown as it is, and
    /// any other — `JSONEncoder` refusing the value, or the model's `encode(to:)` throwing — as
    /// `refusal` of its ``encodingFailure(_:property:)`` (`property` naming the property whose
    /// value alone `encode` encodes).
    static func encoding<T>(
        _ encode: () throws -> T, property: String? = nil,
        refusedAs refusal: (_ reason: String) -> KeepsakeError
    ) throws -> T {
        do {
            return try encode()
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw refusal(encodingFailure(error, property: property))
        }
    }
}

extension KeepsakeError {
    /// Whether a write failed for want of room on the disk: the file or its write-ahead log
    /// could not grow, or the log's shared-memory index could not.
    var isOutOfRoom: Bool {
        guard case .sqlite(let error) = self else { return false }
        return error.code == .full || error.code.extended == SQLiteError.Code.sharedMemorySize.extended
    }

    /// Whether a write failed for a moment's reason, rather than for what the store or the
    /// value holds: no room on the disk (``isOutOfRoom``), or another connection keeping the
    /// store locked past the busy timeout (`.busy`, `.locked`). The same write may succeed
    /// later, unchanged.
    var isMomentary: Bool {
        guard case .sqlite(let error) = self else { return false }
        return isOutOfRoom || error.code == .busy || error.code == .locked
    }

    /// This error, when it says that a value is longer than SQLite stores in one (`.tooBig`),
    /// followed by where that value is (`place`, made only then): SQLite's message names no
    /// history, snapshot or path.
    func placingTooLong(_ place: @autoclosure () -> String?) -> KeepsakeError {
        guard case .sqlite(let error) = self, error.code == .tooBig, let place = place() else { return self }
        return .sqlite(error.saying(place))
    }

    /// This error of opening a store for writing, advising a read-only open when the disk had
    /// no room for what opening writes (the log's shared-memory index, an upgrade): one reads
    /// the store meanwhile, and ``remedy`` offers it.
    var advisingReadOnlyWhenOutOfRoom: KeepsakeError {
        guard isOutOfRoom, case .sqlite(let error) = self else { return self }
        return .sqlite(
            SQLiteError(
                code: error.code, message: "\(error.message); \(Schema.readOnlyAdvice)", sql: error.sql))
    }
}

extension KeepsakeError: ValueRefusal {
    /// Whether the value itself is refused: it cannot be encoded whole, a change of it is not
    /// `Encodable`, or it is longer than SQLite stores.
    package var refusesValue: Bool {
        switch self {
        case .unencodableValue: true
        case .reversion(_, _, let error): error.refusesValue
        case .sqlite(let error): error.code == .tooBig
        default: false
        }
    }
}

extension KeepsakeError: LocalizedError {
    /// The ``description``: what an app shows with `error.localizedDescription` (in an alert,
    /// say), which would otherwise read "The operation could not be completed".
    public var errorDescription: String? { description }
}
