internal import CSQLite
public import Foundation

/// A value SQLite stores: what statements bind and rows return.
public enum SQLiteValue: Hashable, Sendable {
    /// `INTEGER`.
    case integer(Int64)
    /// `REAL`.
    case real(Double)
    /// `TEXT`.
    case text(String)
    /// `BLOB` (copied when bound).
    case blob(Data)
    /// `NULL`.
    case null
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral,
    ExpressibleByFloatLiteral
{
    /// An `INTEGER` from a literal: `[1, "a", nil]` binds three values.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A `TEXT` from a literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// `NULL` from `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// A `REAL` from a literal.
    public init(floatLiteral value: Double) { self = .real(value) }
}

/// A prepared statement. It belongs to its connection and is not `Sendable`.
///
/// Statements are prepared once and cached by SQL text; see ``SQLiteConnection/prepare(_:)``.
public final class SQLiteStatement {
    let handle: OpaquePointer
    /// The statement's SQL.
    public let sql: String
    unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings, so it can run again.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds values by position (1-based, in order).
    ///
    /// - Parameter values: One value per `?` parameter.
    /// - Throws: ``SQLiteError`` when a value cannot be bound.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds values by parameter name, such as `:name`.
    ///
    /// - Parameter values: Values keyed by their parameter's full name, prefix included.
    /// - Throws: ``SQLiteError`` naming an unknown parameter.
    public func bind(_ values: [String: SQLiteValue]) throws(SQLiteError) {
        for (name, value) in values {
            let index = sqlite3_bind_parameter_index(handle, name)
            guard index > 0 else {
                throw SQLiteError(code: .init(SQLITE_RANGE), message: "no parameter named \(name)", sql: sql)
            }
            try bind(value, at: index)
        }
    }

    /// The size from which ``run(binding:)`` binds a text or blob where it lies.
    static let inPlaceSize = 4 * 1024

    /// Binds `values` and runs the statement to its end.
    ///
    /// A text or blob of ``inPlaceSize`` bytes or more is bound where it lies, for the run
    /// only (the bindings are cleared when it ends), instead of being copied by SQLite: a
    /// large value's copy lands in fresh memory whose pages fault in one by one, and cost more
    /// than its insert (577 KB of a checkpoint's JSON: inserted in 0.6 ms, 1.5 ms with the
    /// copy) — all of it while the write lock keeps every other writer waiting. Small values
    /// are bound as `bind(_:)` binds them, with nothing more to do.
    func run(binding values: [SQLiteValue]) throws(SQLiteError) {
        guard values.contains(where: Self.bindsInPlace) else {
            try bind(values)
            while try step() {}
            return
        }
        try run(binding: values[...])
    }

    /// Whether `value` is a text or blob of ``inPlaceSize`` bytes or more.
    private static func bindsInPlace(_ value: SQLiteValue) -> Bool {
        switch value {
        case .text(let text): text.utf8.count >= inPlaceSize
        case .blob(let data): data.count >= inPlaceSize
        case .integer, .real, .null: false
        }
    }

    /// Binds `values` (the parameters from `values.startIndex + 1` on) and runs the statement.
    private func run(binding values: ArraySlice<SQLiteValue>) throws(SQLiteError) {
        guard let value = values.first else {
            while try step() {}
            return
        }
        let (index, rest) = (Int32(values.startIndex + 1), values.dropFirst())
        var failure: SQLiteError?
        switch value {
        case .text(var text) where Self.bindsInPlace(value):
            text.withUTF8 { bytes in
                failure = bound(
                    sqlite3_bind_text64(
                        handle, index, bytes.baseAddress, UInt64(bytes.count), nil, UInt8(SQLITE_UTF8)),
                    bytes: bytes.count, then: rest)
            }
        case .blob(let data) where Self.bindsInPlace(value):
            data.withUnsafeBytes { bytes in
                failure = bound(
                    sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count), nil),
                    bytes: bytes.count, then: rest)
            }
        default:
            try bind(value, at: index)
            try run(binding: rest)
        }
        if let failure { throw failure }
    }

    /// Runs the statement with `rest` bound once binding a value of `bytes` bytes in place
    /// returned `result`; clears the bindings before that value's bytes can go, whatever
    /// happened. Returns the failure.
    private func bound(_ result: Int32, bytes: Int, then rest: ArraySlice<SQLiteValue>) -> SQLiteError? {
        defer { sqlite3_clear_bindings(handle) }
        guard result == SQLITE_OK else { return bindingFailure(result, bytes: bytes) }
        do {
            try run(binding: rest)
            return nil
        } catch {
            return error
        }
    }

    private func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let result: Int32
        var length = 0
        switch value {
        case .integer(let integer): result = sqlite3_bind_int64(handle, index, integer)
        case .real(let real): result = sqlite3_bind_double(handle, index, real)
        case .text(let text):
            // With its byte length, so that text holding NUL characters is stored whole (and as
            // a 64-bit length: a longer text than `Int32` holds is SQLite's to refuse).
            length = text.utf8.count
            result = sqlite3_bind_text64(
                handle, index, text, UInt64(length), keepsake_sqlite_transient(), UInt8(SQLITE_UTF8))
        case .blob(let data):
            length = data.count
            result = data.withUnsafeBytes { bytes in
                // An empty blob still binds as a zero-length BLOB, never NULL.
                sqlite3_bind_blob64(
                    handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(bytes.count),
                    keepsake_sqlite_transient())
            }
        case .null: result = sqlite3_bind_null(handle, index)
        }
        guard result == SQLITE_OK else { throw bindingFailure(result, bytes: length) }
    }

    /// The failure of binding a value of `bytes` bytes that returned `result`: SQLite's, with
    /// the sizes said when the value is longer than SQLite stores in one (its message alone,
    /// "string or blob too big", said neither).
    private func bindingFailure(_ result: Int32, bytes: Int) -> SQLiteError {
        let error = connection.error(code: result, sql: sql)
        guard result & 0xFF == SQLITE_TOOBIG else { return error }
        let limit = sqlite3_limit(connection.handle, SQLITE_LIMIT_LENGTH, -1)
        return SQLiteError(
            code: error.code,
            message:
                "\(error.message): a value of \(bytes) bytes, longer than the \(limit) SQLite stores in one",
            sql: error.sql)
    }

    /// Runs one step.
    ///
    /// - Returns: `true` when a row is available, `false` when the statement is done.
    /// - Throws: ``SQLiteError``.
    public func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            let error = connection.error(code: code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// The number of columns in a row.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// The name of column `index`.
    public func columnName(_ index: Int) -> String {
        String(cString: sqlite3_column_name(handle, Int32(index)))
    }

    /// Whether column `index` of the current row is `NULL`.
    public func isNull(_ index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    /// Column `index` as an integer, or `nil` when `NULL`.
    public func int64(_ index: Int) -> Int64? {
        isNull(index) ? nil : sqlite3_column_int64(handle, Int32(index))
    }

    /// Column `index` as an integer, which the schema says cannot be `NULL`.
    ///
    /// - Throws: ``SQLiteError`` with code ``SQLiteError/Code/corrupt`` when it is `NULL` all
    ///   the same (a damaged or hand-edited file), instead of trapping.
    public func requiredInt64(_ index: Int) throws(SQLiteError) -> Int64 {
        guard let value = int64(index) else {
            throw SQLiteError(
                code: .corrupt, message: "unexpected NULL in column \(columnName(index)) (\(index))", sql: sql
            )
        }
        return value
    }

    /// Column `index` as a double, or `nil` when `NULL`.
    public func double(_ index: Int) -> Double? {
        isNull(index) ? nil : sqlite3_column_double(handle, Int32(index))
    }

    /// Column `index` as text, or `nil` when `NULL`.
    public func text(_ index: Int) -> String? {
        guard !isNull(index), let bytes = sqlite3_column_text(handle, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes (copied), or `nil` when `NULL`. An empty blob is empty `Data`.
    public func blob(_ index: Int) -> Data? {
        guard !isNull(index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        guard count > 0, let bytes = sqlite3_column_blob(handle, Int32(index)) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// Column `index` as a ``SQLiteValue`` of its stored type.
    public func value(_ index: Int) -> SQLiteValue {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, Int32(index)))
        case SQLITE_FLOAT: .real(sqlite3_column_double(handle, Int32(index)))
        case SQLITE_TEXT: .text(text(index) ?? "")
        case SQLITE_BLOB: .blob(blob(index) ?? Data())
        default: .null
        }
    }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}
