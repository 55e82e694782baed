/// Why a Keepsake store could not be opened, read or written.
///
/// Every case says what failed and where:
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
    /// The file cannot be opened: it is missing, a directory, or in a missing folder.
    case cannotOpen(path: String, reason: String)
    /// The file is not a Keepsake store (not a SQLite database, empty, truncated, corrupt, or a
    /// database of another application); it was not modified.
    case notAStore(path: String, reason: String)
    /// The store was written by a newer Keepsake whose schema this code does not know; it was
    /// not modified.
    case newerSchema(path: String, version: Int, supported: Int)
    /// SQLite reported an error (busy, full disk, I/O, …).
    case sqlite(SQLiteError)
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
        }
    }
}
