import Foundation
import Testing

@testable import Keepsake

@Suite struct SQLiteConnectionTests {
    let directory = TemporaryDirectory()

    @Test func everyTypeRoundTripsIncludingNullAndEmptyBlob() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        let values: [SQLiteValue] = [
            .integer(.min), .real(-0.5), .text("héllo 👋 '; DROP TABLE t; --"), .blob(Data([0, 1, 255])),
            .null,
        ]
        try connection.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", values)
        try connection.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            [.integer(.max), .real(.infinity), .text(""), .blob(Data()), .null])
        let rows = try connection.query("SELECT i, r, s, b, n FROM t ORDER BY rowid") { row in
            (0..<5).map { row.value($0) }
        }
        #expect(rows[0] == values)
        #expect(rows[1] == [.integer(.max), .real(.infinity), .text(""), .blob(Data()), .null])
        let accessors = try connection.query("SELECT i, r, s, b, n FROM t ORDER BY rowid LIMIT 1") { row in
            (row.int64(0), row.double(1), row.text(2), row.blob(3), row.int64(4), row.text(4), row.blob(4))
        }
        #expect(
            accessors[0].0 == .min && accessors[0].1 == -0.5
                && accessors[0].2 == "héllo 👋 '; DROP TABLE t; --")
        #expect(
            accessors[0].3 == Data([0, 1, 255]) && accessors[0].4 == nil && accessors[0].5 == nil
                && accessors[0].6 == nil)
    }

    /// Texts and blobs from ``SQLiteStatement/inPlaceSize`` on are bound where they lie for the
    /// run only: stored byte for byte, and unbound when the run ends, done or failed, so that no
    /// later step reads memory that was the caller's.
    @Test func largeValuesAreBoundInPlaceForTheRunOnly() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, s TEXT, b BLOB)")
        let size = SQLiteStatement.inPlaceSize
        var generator = SystemRandomNumberGenerator()
        func text(_ count: Int) -> String {
            // `count` bytes: a four-byte character, then NUL characters, quotes and letters.
            let pattern = Array("a\0'\"z".utf8)
            return "👋" + String(decoding: (0..<count - 4).map { pattern[$0 % pattern.count] }, as: UTF8.self)
        }
        func blob(_ count: Int) -> Data {
            Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        #expect(text(size).utf8.count == size)
        let cases = [
            (1, text(size - 1), blob(size - 1)), (2, text(size), blob(size)),
            (3, text(300_000), blob(1 << 20)),
        ]
        let insert = "INSERT INTO t VALUES (?, ?, ?)"
        for (key, s, b) in cases {
            try connection.execute(insert, [.integer(Int64(key)), .text(s), .blob(b)])
        }
        let rows = try connection.query("SELECT k, s, b FROM t ORDER BY k") { row in
            (Int(row.int64(0) ?? 0), row.text(1), row.blob(2))
        }
        #expect(rows.count == 3)
        for ((key, s, b), row) in zip(cases, rows) {
            #expect(row.0 == key && row.1.map { Array($0.utf8) } == Array(s.utf8) && row.2 == b, "row \(key)")
        }

        // Stepping the same statement again, unbound, inserts NULLs: nothing stayed bound.
        let statement = try connection.prepare(insert)
        try statement.run(binding: [.integer(4), .text(text(2 * size)), .blob(blob(2 * size))])
        #expect(try !statement.step())
        #expect(try connection.scalarInt("SELECT count(*) FROM t WHERE s IS NULL AND b IS NULL") == 1)

        // A failed run (the key is taken) is an error like any other and leaves nothing bound.
        #expect(throws: SQLiteError.self) {
            try connection.execute(insert, [.integer(1), .text(text(size)), .blob(blob(size))])
        }
        let again = try connection.prepare("INSERT INTO t (s, b) VALUES (?, ?)")
        try again.run(binding: [.text(text(size)), .blob(blob(size))])
        #expect(try !again.step())
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 7)
        #expect(try connection.scalarInt("SELECT count(*) FROM t WHERE s IS NULL AND b IS NULL") == 2)
        #expect(try connection.scalarText("PRAGMA integrity_check") == "ok")
    }

    @Test func namedParametersBind() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        let statement = try connection.prepare("SELECT :a || :b")
        try statement.bind([":a": "x", ":b": "y"])
        #expect(try statement.step())
        #expect(statement.text(0) == "xy")
        #expect(throws: SQLiteError.self) { try statement.bind([":missing": 1]) }
    }

    @Test func statementsAreCachedAndAFailedOneIsDropped() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x INTEGER UNIQUE)")
        let first = try connection.prepare("INSERT INTO t VALUES (?)")
        #expect(try connection.prepare("INSERT INTO t VALUES (?)") === first)
        try connection.execute("INSERT INTO t VALUES (?)", [1])
        #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO t VALUES (?)", [1]) }
        #expect(try connection.prepare("INSERT INTO t VALUES (?)") !== first)
    }

    /// The cache first looks a statement up by where its text lies in memory: another text at
    /// the same place, as a text built anew often is, or two short texts (held inside the
    /// `String`, copied to the same place on the stack), must not be taken for it.
    @Test func aTextWhereAnotherLayIsNotTakenForIt() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        for number in 0..<300 {
            let short = "SELECT \(number)"
            let long = "SELECT \(number) AS a_name_long_enough_to_be_allocated"
            #expect(try connection.scalarInt(short) == Int64(number))
            #expect(try connection.scalarInt(long) == Int64(number))
            #expect(try connection.scalarInt("SELECT 1") == 1)
            #expect(try connection.scalarInt("SELECT 2") == 2)
        }
    }

    @Test func transactionsCommitOnReturnAndRollBackOnThrow() throws {
        struct Abort: Error {}
        let connection = try SQLiteConnection(path: directory.path("t.db"))
        try connection.enableWAL(synchronous: .normal)
        try connection.execute("CREATE TABLE t (x INTEGER)")
        try connection.transaction { try connection.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: Abort.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (2)")
                throw Abort()
            }
        }
        #expect(connection.isAutocommit)
        #expect(try connection.scalarInt("SELECT group_concat(x) FROM t") == 1)
        #expect(try connection.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try connection.scalarInt("PRAGMA synchronous") == 1)
        #expect(try connection.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try connection.scalarInt("PRAGMA trusted_schema") == 0)
    }

    /// And on Apple's systems, where only `F_FULLFSYNC` reaches the disk, every sync of `.full`
    /// and a checkpoint's of `.normal` use it (set everywhere; other systems ignore it).
    @Test(arguments: [SQLiteConnection.Synchronous.normal, .full])
    func eachDurabilityIsSelectableWithTheSyncsItNeeds(synchronous: SQLiteConnection.Synchronous) throws {
        let connection = try SQLiteConnection(path: directory.path("\(synchronous).db"))
        try connection.enableWAL(synchronous: synchronous)
        #expect(try connection.scalarInt("PRAGMA synchronous") == (synchronous == .full ? 2 : 1))
        #expect(try connection.scalarInt("PRAGMA fullfsync") == (synchronous == .full ? 1 : 0))
        #expect(try connection.scalarInt("PRAGMA checkpoint_fullfsync") == 1)
    }

    @Test func aConstraintErrorIsTypedAndTheConnectionKeepsWorking() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        try connection.execute("INSERT INTO t VALUES (1)")
        do {
            try connection.transaction { try connection.execute("INSERT INTO t VALUES (1)") }
            Issue.record("expected a constraint error")
        } catch let error as SQLiteError {
            #expect(error.code == .constraint)
            #expect(error.code.extended == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(error.message == "UNIQUE constraint failed: t.x")
            #expect(error.sql == "INSERT INTO t VALUES (1)")
        }
        try connection.execute("INSERT INTO t VALUES (2)")
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 2)
    }

    @Test func aHeldWriteLockMakesAWriteWaitThenFailWithBusy() throws {
        let path = directory.path("busy.db")
        let holder = try SQLiteConnection(path: path)
        try holder.enableWAL(synchronous: .normal)
        try holder.execute("CREATE TABLE t (x)")
        let waiter = try SQLiteConnection(path: path, busyTimeout: .milliseconds(200))
        try holder.execute("BEGIN IMMEDIATE")
        let start = ContinuousClock.now
        #expect {
            try waiter.transaction { try waiter.execute("INSERT INTO t VALUES (1)") }
        } throws: { error in
            (error as? SQLiteError)?.code == .busy
        }
        #expect(ContinuousClock.now - start >= .milliseconds(150))
        try holder.execute("COMMIT")
        try waiter.transaction { try waiter.execute("INSERT INTO t VALUES (1)") }
    }

    @Test func aClosedConnectionRefusesWork() throws {
        let database = SQLiteDatabase(try SQLiteConnection(path: ":memory:"))
        database.close()
        #expect(throws: SQLiteError.self) { try database.read { try $0.execute("SELECT 1") } }
    }

    @Test func theDatabaseFacadeSerializesConcurrentWriters() async throws {
        let database = SQLiteDatabase(try SQLiteConnection(path: directory.path("c.db")))
        try database.write { try $0.execute("CREATE TABLE t (x INTEGER)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        try database.write {
                            try $0.execute("INSERT INTO t VALUES (?)", [.integer(Int64(task * 100 + index))])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try database.read { try $0.scalarInt("SELECT count(DISTINCT x) FROM t") } == 400)
    }
}
