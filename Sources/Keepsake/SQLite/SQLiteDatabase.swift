import Foundation

/// The `Sendable` face of one ``SQLiteConnection``: every access holds a lock, so any number of
/// tasks and threads may share it; they take turns.
///
/// ```swift
/// let count = try database.read { try $0.scalarInt("SELECT count(*) FROM history") }
/// try database.write { try $0.execute("DELETE FROM snapshot WHERE name = ?", [.text(name)]) }
/// ```
public final class SQLiteDatabase: @unchecked Sendable {
    // Sound because `connection` is only touched while `lock` is held.
    private let lock = NSLock()
    private let connection: SQLiteConnection

    /// Wraps a connection; the database owns it from now on.
    public init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Runs `body` with the connection, holding the lock; no transaction is opened.
    ///
    /// - Parameter body: The work; it must not keep the connection.
    /// - Returns: What `body` returns.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction, holding the lock: committed when it
    /// returns, rolled back when it throws.
    ///
    /// - Parameter body: The work; it must not keep the connection.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError``, or what `body` throws.
    public func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try connection.transaction { try body(connection) }
    }

    /// Closes the connection; later calls fail with `SQLITE_MISUSE`.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        connection.close()
    }
}
