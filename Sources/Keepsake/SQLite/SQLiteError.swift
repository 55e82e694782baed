internal import CSQLite
public import Foundation

/// An error reported by SQLite: its extended result code, its message and the SQL that failed.
///
/// A store, history or caretaker call throws it as ``KeepsakeError/sqlite(_:)``, with a message
/// that names the store; match it by code in a `catch`:
///
/// ```swift
/// do {
///     try history.append(document)
/// } catch KeepsakeError.sqlite(let error) where error.code == .busy {
///     // another connection held the write lock for longer than the busy timeout;
///     // nothing was written
/// } catch {
///     // any other failure
/// }
/// ```
///
/// End with a plain `catch`, as here: Swift 6.3.1's compiler crashes on a `do` whose catches
/// leave part of a typed error to be rethrown when one of them has a `where` clause.
///
/// ``SQLiteConnection`` and ``SQLiteDatabase``, used directly, throw it as it is.
///
/// Related SQLite documentation: https://www.sqlite.org/rescode.html
public struct SQLiteError: Error, Hashable, Sendable {
    /// A SQLite result code. Comparing with `==` uses the primary code, so
    /// `SQLITE_BUSY_SNAPSHOT` equals ``busy``; ``extended`` keeps the full code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The extended result code.
        public let extended: Int32

        /// Wraps a result code.
        public init(_ code: Int32) { extended = code }

        /// The primary result code (the low byte of the extended code).
        public var primary: Int32 { extended & 0xFF }

        /// Compares primary result codes.
        public static func == (a: Code, b: Code) -> Bool { a.primary == b.primary }
        /// Hashes the primary result code.
        public func hash(into hasher: inout Hasher) { hasher.combine(primary) }

        /// Another connection holds a conflicting lock (`SQLITE_BUSY`).
        public static let busy = Code(SQLITE_BUSY)
        /// The table is locked within this connection (`SQLITE_LOCKED`).
        public static let locked = Code(SQLITE_LOCKED)
        /// The disk or the database is full (`SQLITE_FULL`).
        public static let full = Code(SQLITE_FULL)
        /// The file is malformed (`SQLITE_CORRUPT`).
        public static let corrupt = Code(SQLITE_CORRUPT)
        /// The file is not a database (`SQLITE_NOTADB`).
        public static let notADatabase = Code(SQLITE_NOTADB)
        /// A constraint was violated (`SQLITE_CONSTRAINT`).
        public static let constraint = Code(SQLITE_CONSTRAINT)
        /// The file cannot be opened (`SQLITE_CANTOPEN`).
        public static let cannotOpen = Code(SQLITE_CANTOPEN)
        /// A write to a read-only database (`SQLITE_READONLY`).
        public static let readOnly = Code(SQLITE_READONLY)
        /// An I/O error (`SQLITE_IOERR`).
        public static let ioError = Code(SQLITE_IOERR)
        /// The write-ahead log's shared-memory file could not grow (`SQLITE_IOERR_SHMSIZE`, an
        /// extended code of ``ioError``: compare ``extended``).
        static let sharedMemorySize = Code(SQLITE_IOERR | (19 << 8))
        /// The file was deleted or replaced since it was opened, so a write would be lost
        /// (`SQLITE_READONLY_DBMOVED`, an extended code of ``readOnly``: compare ``extended``).
        /// Keepsake refuses every write transaction then; open the store again.
        public static let databaseMoved = Code(SQLITE_READONLY | (4 << 8))
        /// A SQL error or missing database (`SQLITE_ERROR`).
        public static let error = Code(SQLITE_ERROR)
        /// A value too large (`SQLITE_TOOBIG`).
        public static let tooBig = Code(SQLITE_TOOBIG)

        /// SQLite's name for the code, such as `SQLITE_BUSY`.
        public var description: String {
            String(cString: sqlite3_errstr(extended)) + " (\(extended))"
        }
    }

    /// The result code.
    public let code: Code
    /// SQLite's message.
    public let message: String
    /// The SQL that failed, if any.
    public let sql: String?

    /// Describes a SQLite failure.
    ///
    /// - Parameters:
    ///   - code: The extended result code.
    ///   - message: SQLite's message.
    ///   - sql: The SQL that failed.
    public init(code: Code, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }
}

extension SQLiteError {
    /// The same error, its message followed by `detail` (which store, what became of the
    /// write).
    func saying(_ detail: String) -> SQLiteError {
        SQLiteError(code: code, message: "\(message): \(detail)", sql: sql)
    }
}

extension SQLiteError: CustomStringConvertible {
    /// The code, the message and the SQL, on one line.
    public var description: String {
        var text = "SQLite error \(code.extended): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}

extension SQLiteError: LocalizedError {
    /// The ``description``, for `error.localizedDescription`.
    public var errorDescription: String? { description }
}
