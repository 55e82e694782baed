import Foundation
import Keepsake
import TestSupport
import Testing

/// The `keepsake` executable, run as a subprocess against real store files.
@Suite struct CommandLineTests {
    struct Run {
        let status: Int32
        let output: String
        let error: String
    }

    /// A fresh folder per test, removed afterwards.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keepsake-cli-\(UUID().uuidString)")
        init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    let folder = Folder()
    var directory: URL { folder.url }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The built executable: beside the test bundle in SwiftPM's build folder.
    static let executable: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        for folder in candidates {
            let url = folder.appendingPathComponent("keepsake")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return candidates[0].appendingPathComponent("keepsake")
    }()

    func run(_ arguments: String...) throws -> Run {
        try run(arguments)
    }

    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let outcome = try ChildProcess.run(
            Self.executable, arguments, in: directory, environment: environment)
        return Run(
            status: outcome.status, output: String(decoding: outcome.output, as: UTF8.self),
            error: String(decoding: outcome.error, as: UTF8.self))
    }

    func demoStore() throws -> String {
        let store = path("demo.keepsake")
        let result = try run("demo", "--store", store)
        #expect(result.status == 0, "\(result.error)")
        return store
    }

    @Test func theDemoUndoesTheFirstProcesssChangeFromASecondProcess() throws {
        let store = path("demo.keepsake")
        let result = try run("demo", "--store", store)
        #expect(result.status == 0, "\(result.error)")
        let pids = result.output.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "(pid ") else { return nil }
            return String(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(pids.count == 2 && pids[0] != pids[1], "two processes: \(pids)")
        let firstHalf = result.output.components(separatedBy: "Process 2 (pid")[0]
        #expect(firstHalf.contains("this process's last change"))
        #expect(result.output.contains("sqlite3 \(store)"))
        // Read the store: the first process's last change (version 7, the title) is undone.
        let timeline = try KeepsakeStore(path: store, options: .init(readOnly: true)).timeline(
            of: "demo-note")!
        // Version 0, the base, first.
        #expect(timeline.map(\.undone) == [false, false, false, false, false, false, false, true])
        #expect(timeline.last?.paths == ["title"])
        // Running it again replaces the earlier demo's history.
        #expect(try run("demo", "--store", store).status == 0)
        #expect(
            try KeepsakeStore(path: store, options: .init(readOnly: true)).timeline(of: "demo-note")?.count
                == 8)
    }

    @Test func theDemoWritesToTheCurrentDirectoryByDefault() throws {
        let result = try run("demo")
        #expect(result.status == 0)
        #expect(FileManager.default.fileExists(atPath: path("keepsake-demo.keepsake")))
        #expect(result.output.contains("Store: "))
    }

    /// A demo run while another process holds the store's write lock (another demo, an app)
    /// waits the busy timeout (5 s), then stops with `EX_TEMPFAIL`: a script may run it again.
    @Test func aDemoOnAStoreAnotherProcessHoldsSaysTryAgainAndWritesNothing() throws {
        let store = try demoStore()
        let before = try KeepsakeStore(path: store, options: .init(readOnly: true)).timeline(of: "demo-note")
        let blocker = try SQLiteConnection(path: store)
        try blocker.execute("BEGIN IMMEDIATE")
        let result = try run("demo", "--store", store)
        try blocker.execute("ROLLBACK")
        #expect(result.status == 75)
        #expect(result.output.isEmpty)
        #expect(
            result.error
                == "keepsake: SQLite error 5: database is locked: another connection kept \(store) locked for "
                + "longer than the busy timeout; nothing was written — while executing `BEGIN IMMEDIATE`.\n")
        let after = try KeepsakeStore(path: store, options: .init(readOnly: true))
        #expect(try after.timeline(of: "demo-note") == before)
        #expect(try after.verify().isOK)
    }
    @Test func inspectLogShowAndSnapshotsDescribeTheStore() throws {
        let store = try demoStore()
        let inspect = try run("inspect", store)
        #expect(inspect.status == 0)
        #expect(
            inspect.output.contains(
                "demo-note  keepsake.DemoNote  versions 7 · undo 6 · redo 1 · scope 0 · tags: start, checked")
        )
        #expect(inspect.output.contains("approved  keepsake.DemoNote  4 properties"))
        let log = try run("log", store, "demo-note")
        let lines = log.output.split(separator: "\n")
        #expect(lines.count == 9)
        #expect(lines[0].hasPrefix("version  date"))
        // Version 0, the base, with the tag the demo's first process set on it.
        #expect(lines[1].hasPrefix("      0  "))
        #expect(lines[1].hasSuffix("0      base     start        (the value before every version kept)"))
        #expect(lines[7].hasSuffix("0      applied  checked      items[id: 1].done, items[id: 3].done"))
        #expect(lines[8].hasSuffix("0      undone                title"))
        let show = try run("show", store, "demo-note", "4")
        #expect(
            show.output
                == "Version 4 of demo-note: 1 change\nstatus  [replace]\n  {\"new\":\"review\",\"old\":\"draft\"}\n"
        )
        let snapshots = try run("snapshots", store)
        #expect(snapshots.output.hasPrefix("demo/keepsake.DemoNote  approved  4 properties"))
    }

    struct Memo: Versionable, Codable, Equatable {
        var title = ""
        var body = ""
    }

    /// A change held back (debouncing, here; or a controller let go of in the turn of an edit)
    /// is no version yet, but it is in the store: inspect and log say so, and what it changed.
    @MainActor @Test func inspectAndLogListAHeldChange() throws {
        let store = path("held.keepsake")
        do {
            let history = try KeepsakeStore(path: store).history("memo", initialValue: Memo())
            var memo = history.value
            memo.title = "Kept"
            try history.append(memo)
            history.withDebouncing(interval: .seconds(3_600))
            memo.body = "typed, held"
            try history.append(memo)
        }
        let inspect = try run("inspect", store)
        #expect(
            inspect.output.contains(
                "  memo  CommandLineTests.CommandLineTests.Memo  versions 1 · undo 1 · redo 0 · scope 0\n"
                    + "    held change: body (a version when the history is next opened)\n"))
        let log = try run("log", store, "memo").output.split(separator: "\n")
        #expect(log.count == 4)
        #expect(
            log.last
                == "   held                              held                  body (a version when the history is next opened)"
        )
        let json = try JSONSerialization.jsonObject(
            with: Data(try run("inspect", store, "--json").output.utf8))
        let histories = (json as? [String: Any])?["histories"] as? [[String: Any]]
        #expect(histories?.first?["heldPaths"] as? [String] == ["body"])
        // The current value leaves the held change out, and says so on standard error only.
        let value = try run("value", store, "memo")
        #expect(
            value.status == 0 && value.output.contains(#""title" : "Kept""#)
                && !value.output.contains("typed"))
        #expect(
            value.error
                == "keepsake: note: a change to body is held, not in this value (a version when the history is next opened).\n"
        )
        #expect(try run("value", store, "memo", "1").error == "")
        // The next open records it: nothing is held then.
        #expect(try KeepsakeStore(path: store).history("memo", initialValue: Memo()).versionCount == 2)
        #expect(!(try run("inspect", store).output.contains("held change")))
        #expect(try run("log", store, "memo").output.split(separator: "\n").count == 4)
        #expect(try run("value", store, "memo").error == "")
    }

    /// A store whose name begins with `file:`: Debian's SQLite reads such a name as a URI
    /// everywhere, so `file:demo.keepsake` was created empty, checked, and then SQLite wrote
    /// `demo.keepsake` beside it (readers read the empty one), and
    /// `file:memo.keepsake?mode=memory` was a database in memory ("journal_mode is memory,
    /// expected wal", exit 70). A URL's text where its path was meant says so.
    @Test func aStoreNamedLikeAURIIsTheFileOfThatName() throws {
        for name in ["file:demo.keepsake", "file:memo.keepsake?mode=memory"] {
            let demo = try run("demo", "--store", name)
            #expect(demo.status == 0, "\(name): \(demo.error)")
            let log = try run("log", name, "demo-note")
            #expect(log.output.split(separator: "\n").count == 9, "\(name): \(log.output)")
        }
        // A copy is built beside its path, under a temporary name that begins with `file:` too.
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("file:copies"), withIntermediateDirectories: false)
        let copy = try run("copy", "file:demo.keepsake", "file:copies/demo.keepsake")
        #expect(copy.status == 0, "\(copy.error)")
        #expect(
            try run("log", "file:copies/demo.keepsake", "demo-note").output.split(separator: "\n").count == 9)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "file:copies", "file:demo.keepsake", "file:memo.keepsake?mode=memory",
            ])
        let url = directory.appendingPathComponent("file:demo.keepsake")
        let inspect = try run("inspect", url.absoluteString)
        #expect(inspect.status == 66)
        #expect(
            inspect.error
                == "keepsake: Cannot open \(url.absoluteString): it is a URL, not a path: give the URL's path "
                + "(\(url.path)).\n")
        #expect(try run("inspect", url.path).status == 0)
    }

    /// `Scripts/inspect PATH SQL`, the README's way into a store with the `sqlite3` shell: it
    /// runs the query read-only, with headers and aligned columns, on a store named like a URI
    /// too (the shell read `file:…` as one, another file), and refuses what it cannot open.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 shell"))
    func scriptsInspectRunsAQueryOnTheStore() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/inspect")
        let store = try demoStore()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        try FileManager.default.copyItem(atPath: store, toPath: path("file:notes.keepsake"))
        for name in [store, "file:notes.keepsake"] {
            let run = try ChildProcess.run(script, [name, "SELECT name FROM history"], in: directory)
            #expect(run.status == 0, "\(String(decoding: run.error, as: UTF8.self))")
            #expect(String(decoding: run.output, as: UTF8.self) == "name     \n---------\ndemo-note\n")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == bytes)
        #expect(try ChildProcess.run(script, [path("missing.keepsake")]).status == 66)
        #expect(try ChildProcess.run(script, []).status == 64)
    }

    /// Output that cannot be written — `keepsake value STORE HISTORY > value.json` on a full
    /// disk (here `/dev/full`, which refuses every write) — exits 74 saying so: every command
    /// exited 0, and a script kept an empty or cut file as the value.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"))
    func outputThatCannotBeWrittenIsAFailure() throws {
        let store = try demoStore()
        let commands = [
            ["inspect", store], ["log", store, "demo-note"], ["value", store, "demo-note"],
            ["show", store, "demo-note", "2"], ["verify", store, "--json"], ["--version"], ["log", "--help"],
        ]
        for command in commands {
            let outcome = try ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", "exec \"$0\" \"$@\" > /dev/full", Self.executable.path] + command)
            #expect(outcome.status == 74, "\(command)")
            #expect(
                String(decoding: outcome.error, as: UTF8.self)
                    == "keepsake: the output could not be written (No space left on device); what was written is cut short.\n"
            )
            #expect(try run(command).status == 0)
        }
    }

    /// `:memory:`, SQLite's name for a database in memory, is no file: the demo's second
    /// process found an empty store there and said it undid the first one's change (exit 0),
    /// and a copy or a salvage to it wrote a file named `:memory:` that no open reads.
    @Test func memoryIsNoPlaceForTheDemoOrACopy() throws {
        let demo = try run("demo", "--store", ":memory:")
        #expect(demo.status == 64)
        #expect(
            demo.error.hasPrefix(
                "keepsake: --store :memory: is a store in memory, which a second process cannot open: give a "
                    + "file's path.\nusage: keepsake demo"))
        let store = try demoStore()
        for command in ["copy", "salvage"] {
            let result = try run(command, store, ":memory:")
            #expect(result.status == 66)
            #expect(
                result.error
                    == "keepsake: Cannot open :memory:: it is SQLite's name for a database in memory: give a "
                    + "file's path.\n")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["demo.keepsake"])
    }

    /// The readable output gives dates in local time, as the store's views give them to the
    /// `sqlite3` shell, to the second `--json`'s UTC dates give: a fraction is left out, not
    /// rounded up (an `ISO8601DateFormatter` rounded 04:34:30.9996 to 04:34:31).
    @Test func datesReadAsTheViewsGiveThemInLocalTime() throws {
        let store = path("dates.keepsake")
        let history = try KeepsakeStore(path: store).history("memo", initialValue: Memo())
        try history.append(Memo(title: "one"))
        try history.close()
        try Caretaker(store: try KeepsakeStore(path: store)).save(Memo(title: "kept"), as: "kept")
        // 2025-12-06 05:46:40.9996 UTC; in Kathmandu (+05:45) 11:31:40.
        let connection = try SQLiteConnection(path: store)
        for table in ["history", "version", "snapshot"] {
            try connection.execute("UPDATE \(table) SET created_at = 1765000000.9996")
        }
        connection.close()
        let nepal = ["TZ": "Asia/Kathmandu"]
        let log = try run(["log", store, "memo"], environment: nepal).output.split(separator: "\n")
        #expect(log.count == 3)
        #expect(log.dropFirst().allSatisfy { $0.dropFirst(9).hasPrefix("2025-12-06 11:31:40  0  ") })
        let snapshots = try run(["snapshots", store], environment: nepal).output
        #expect(
            snapshots == "CommandLineTests.CommandLineTests.Memo  kept  2 properties · 2025-12-06 11:31:40\n")
        let json = try run(["log", store, "memo", "--json"], environment: nepal).output
        #expect(json.components(separatedBy: "\"2025-12-06T05:46:40Z\"").count == 3)
        let utc = try run(["log", store, "memo"], environment: ["TZ": "UTC"]).output
        #expect(utc.split(separator: "\n").last?.dropFirst(9).hasPrefix("2025-12-06 05:46:40") == true)
    }

    @Test func jsonOutputParsesBack() throws {
        let store = try demoStore()
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let summary = try decoder.decode(
            KeepsakeStore.Summary.self, from: Data(try run("inspect", store, "--json").output.utf8))
        #expect(summary.histories.map(\.name) == ["demo-note"])
        #expect(summary.histories[0].undoDepth == 6 && summary.histories[0].redoDepth == 1)
        #expect(summary.schemaVersion == KeepsakeStore.schemaVersion)
        #expect(summary.histories[0].heldPaths == [])
        // What an earlier release printed, without `heldPaths`, still decodes.
        var earlier = try #require(
            try JSONSerialization.jsonObject(with: Data(try run("inspect", store, "--json").output.utf8))
                as? [String: Any])
        earlier["histories"] = (earlier["histories"] as? [[String: Any]])?.map {
            $0.filter { $0.key != "heldPaths" }
        }
        let decodedEarlier = try decoder.decode(
            KeepsakeStore.Summary.self, from: try JSONSerialization.data(withJSONObject: earlier))
        #expect(decodedEarlier == summary)
        let timeline = try decoder.decode(
            [KeepsakeStore.VersionSummary].self,
            from: Data(try run("log", store, "demo-note", "--json").output.utf8))
        #expect(timeline.map(\.version) == Array(0...7))
        #expect(timeline[0].tag == "start")
        // Patches are JSON objects in the output, not strings holding JSON.
        let changes =
            try JSONSerialization.jsonObject(
                with: Data(try run("show", store, "demo-note", "1", "--json").output.utf8))
            as? [[String: Any]]
        #expect(changes?.map { $0["path"] as? String } == ["title"])
        let patch = try #require(changes?.first?["patch"] as? [String: Any])
        #expect(patch["old"] as? String == "Groceries" && patch["new"] as? String == "Groceries for Sunday")
        let snapshots = try decoder.decode(
            [SnapshotInfo].self, from: Data(try run("snapshots", store, "--json").output.utf8))
        #expect(snapshots.map(\.name) == ["approved"])
        let verification = try decoder.decode(
            KeepsakeStore.Verification.self, from: Data(try run("verify", store, "--json").output.utf8))
        #expect(verification.isOK)
    }

    @Test func inspectingNeverWritesToTheStore() throws {
        let store = try demoStore()
        _ = try KeepsakeStore(path: store).compact()  // fold the log into the file first
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for arguments in [
            ["inspect", store], ["log", store, "demo-note"], ["show", store, "demo-note", "2"],
            ["snapshots", store], ["verify", store],
        ] {
            #expect(try run(arguments).status == 0, "\(arguments)")
            #expect(try run(arguments + ["--json"]).status == 0, "\(arguments) --json")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    /// Rewrites the `CREATE` statement of `name` in `store` as the `sqlite3` shell would with
    /// `PRAGMA writable_schema`: to `expression`, SQL in which `sql` is the statement as it is.
    func rewriteStatement(of name: String, in store: String, to expression: String) throws {
        let connection = try SQLiteConnection(path: store)
        defer { connection.close() }
        try connection.execute("PRAGMA writable_schema = ON")
        try connection.transaction {
            try connection.execute(
                "UPDATE sqlite_schema SET sql = \(expression) WHERE name = ?", [.text(name)])
            let version = try connection.scalarInt("PRAGMA schema_version")!
            try connection.execute("PRAGMA schema_version = \(version + 1)")
        }
    }

    @Test func verifyReportsABrokenHistoryWithExitStatusOne() throws {
        let store = try demoStore()
        let connection = try SQLiteConnection(path: store)
        try connection.execute("UPDATE version SET scope_level = 5 WHERE position = 3")
        connection.close()
        let result = try run("verify", store)
        #expect(result.status == 1)
        #expect(result.output.contains("history demo-note: a version belongs to a scope that does not exist"))
        #expect(
            result.output.hasSuffix(
                "'keepsake salvage \(store) NEW-PATH' copies what the store still proves into a new store.\nFAILED\n"
            ))
    }

    /// A view this SQLite cannot parse (as Ubuntu 22.04's 3.37 cannot parse the first release's,
    /// written with `->>`) is no damage: the store reads, and verify says what to do, not salvage.
    @Test func verifySaysViewsThisSQLiteCannotReadAreRewrittenByAWriter() throws {
        let store = try demoStore()
        try rewriteStatement(of: "timeline", in: store, to: "'CREATE VIEW timeline AS SELECT 1 ->>> 2'")
        let result = try run("verify", store)
        #expect(result.status == 1)
        #expect(result.output.contains("  - the views timeline do not parse in this SQLite ("))
        #expect(
            result.output.hasSuffix(
                "Nothing else is wrong: the first open for writing (your app's) rewrites the views.\nFAILED\n"
            ))
        #expect(try run("log", store, "demo-note").status == 0)
    }

    /// A table's CREATE statement damaged so that it still parses: verify says which column,
    /// not the SQL errors its checks would meet, and suggests salvage; the commands that read
    /// the store go on reading it; the demo, which writes, is refused as on corrupt files.
    @Test func verifyNamesADamagedStatementAndReadersGoOn() throws {
        let store = try demoStore()
        try rewriteStatement(
            of: "version", in: store, to: "replace(sql, 'undo_count INTEGER,', 'undo_cofnt INTEGER,')")
        let result = try run("verify", store)
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "  - the schema is not Keepsake's: no column version.undo_count INTEGER\n"
                    + "  - the history checks were skipped: they read the tables above\n"))
        #expect(!result.output.contains("could not be checked"))
        #expect(
            result.output.hasSuffix(
                "'keepsake salvage \(store) NEW-PATH' copies what the store still proves into a new store.\nFAILED\n"
            ))
        #expect(try run("inspect", store).status == 0)
        let demo = try run("demo", "--store", store)
        #expect(demo.status == 65)
        #expect(demo.error.contains("its schema is not Keepsake's: no column version.undo_count INTEGER"))
    }

    @Test func verifyReportsMalformedJSONAndDamagedBlobsWithExitStatusOne() throws {
        let store = try demoStore()
        let connection = try SQLiteConnection(path: store)
        // The first version's patches made invalid JSON, as a hand edit in the shell could leave
        // them: brackets and strings still balanced, so each change is read and checked.
        try connection.execute(
            #"UPDATE version SET changes = replace(changes, '{"', '{"old":,"') WHERE position = 1"#)
        try connection.execute("UPDATE blob SET bytes = zeroblob(length(bytes))")
        connection.close()
        let result = try run("verify", store)
        #expect(result.status == 1, "\(result.error)")
        #expect(result.output.contains("a change holds invalid JSON"))
        #expect(result.output.contains("does not match its digest"))
        #expect(result.output.contains("its bytes do not match their stored size and digest"))
        #expect(result.output.hasSuffix("FAILED\n"))
    }

    @Test(arguments: [
        (["log"], Int32(64), "keepsake: missing PATH and HISTORY.\nusage: keepsake log"),
        (["log", "demo.keepsake"], 64, "keepsake: missing HISTORY.\n"),
        ([], 64, "keepsake: missing a command.\n"),
        (["show", "x", "y", "z"], 64, "VERSION must be a number, not z"),
        (["inspect", "a", "b"], 64, "unexpected argument b"),
        (["inspect", "--color"], 64, "unknown option --color"),
        (["frobnicate"], 64, "unknown command 'frobnicate'"),
        (["inspect", "missing.keepsake"], 66, "no such file"),
        (["inspect", "."], 66, "it is a directory"),
        (["inspect", "notes.txt"], 65, "is not a Keepsake store: it is not a SQLite database"),
        (["inspect", "other.db"], 65, "it is a SQLite database of another application"),
        (["inspect", "newer.keepsake"], 65, "was written by a newer Keepsake"),
        (
            ["log", "demo.keepsake", "nope"], 2,
            "no history named \"nope\" in demo.keepsake; it has \"demo-note\".\n"
        ),
        (
            ["show", "demo.keepsake", "demo-note", "99"], 2,
            "no version 99 in history \"demo-note\" of demo.keepsake; it has versions 1…7.\n"
        ),
    ])
    func errorsHaveAClearMessageAndExitStatus(arguments: [String], status: Int32, message: String) throws {
        _ = try demoStore()
        try Data("just text\n".utf8).write(to: URL(fileURLWithPath: path("notes.txt")))
        let other = try SQLiteConnection(path: path("other.db"))
        try other.execute("CREATE TABLE t (x)")
        other.close()
        try KeepsakeStore(path: path("newer.keepsake")).close()
        let newer = try SQLiteConnection(path: path("newer.keepsake"))
        try newer.execute("PRAGMA user_version = 99")
        newer.close()
        let result = try run(arguments)
        #expect(result.status == status, "\(result.error)")
        #expect(result.error.contains(message), "\(result.error)")
        #expect(!result.error.contains("Fatal error") && result.output.isEmpty)
        // One sentence, ending in one period.
        #expect(result.error.hasPrefix("keepsake: ") && !result.error.contains(".."), "\(result.error)")
    }

    @Test func valuePrintsAVersionsValueAsJSON() throws {
        let store = try demoStore()
        let first = try run("value", store, "demo-note", "1")
        #expect(first.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(first.output.utf8)) as? [String: Any]
        #expect(
            object?["title"] as? String == "Groceries for Sunday" && object?["status"] as? String == "draft")
        let base = try JSONSerialization.jsonObject(
            with: Data(try run("value", store, "demo-note", "0").output.utf8))
        #expect((base as? [String: Any])?["title"] as? String == "Groceries")
        let missing = try run("value", store, "demo-note", "42")
        #expect(missing.status == 2 && missing.error.contains("no version 42") && missing.output.isEmpty)
    }

    /// `inspect` lists a damaged history with why, as `log` refuses it, and still lists the
    /// rest of the store (exit status 0: verify is the command whose status says damage).
    @Test func inspectSaysWhyAHistoryIsDamaged() throws {
        let store = try demoStore()
        let connection = try SQLiteConnection(path: store)
        let newest = try #require(try connection.scalarInt("SELECT max(position) FROM version"))
        try connection.execute("PRAGMA ignore_check_constraints = ON")
        try connection.execute("UPDATE version SET redo_count = NULL WHERE position = ?", [.integer(newest)])
        connection.close()
        let reason = "its newest stored version (\(newest)) holds a stack size of NULL"
        let inspect = try run("inspect", store)
        #expect(inspect.status == 0, "\(inspect.error)")
        #expect(inspect.output.contains("\n    damaged: \(reason) ('keepsake verify' lists every problem)\n"))
        #expect(inspect.output.contains("Snapshots (1):\n  approved"))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let summary = try decoder.decode(
            KeepsakeStore.Summary.self, from: Data(try run("inspect", store, "--json").output.utf8))
        #expect(summary.histories.map(\.damage) == [reason])
        let log = try run("log", store, "demo-note")
        #expect(log.status == 65 && log.error.contains(reason), "\(log.error)")
        #expect(try run("verify", store).status == 1)
    }

    @Test func salvageCopiesWhatADamagedStoreProvesIntoANewStore() throws {
        let store = try demoStore()
        let connection = try SQLiteConnection(path: store)
        let newest = try #require(
            try connection.scalarInt("SELECT max(position) FROM version WHERE is_undone = 0"))
        // The digest of the newest applied version's first change edited in the shell.
        try connection.execute(
            "UPDATE version SET changes = json_set(changes, '$[0][3]', 7) WHERE position = \(newest)")
        connection.close()
        #expect(try run("verify", store).status == 1)

        let output = path("salvaged.keepsake")
        let result = try run("salvage", store, output)
        #expect(result.status == 1, "\(result.error)")
        #expect(result.output.hasPrefix("Salvaged \(store) into \(output):\n"))
        #expect(result.output.contains("  history \"demo-note\": version \(newest - 1) of \(newest)\n"))
        #expect(result.output.contains("    damaged: version \(newest): "))
        #expect(result.output.contains("  snapshot \"approved\" of "))
        #expect(result.output.hasSuffix("INCOMPLETE: see above.\n"))
        // The value salvaged is the damaged store's value at the version before the damage.
        #expect(try run("verify", output).status == 0)
        let salvaged = try run("value", output, "demo-note")
        let before = try run("value", store, "demo-note", "\(newest - 1)")
        #expect(salvaged.status == 0 && before.status == 0)
        #expect(salvaged.output == before.output)
        #expect(try run("log", output, "demo-note").output.contains("(the value before every version kept)"))

        // Never over a file; --json decodes as the report.
        let again = try run("salvage", store, output)
        #expect(again.status == 66)
        #expect(again.error.hasPrefix("keepsake: Cannot open \(output): a file is already there"))
        let json = try run("salvage", store, path("again.keepsake"), "--json")
        #expect(json.status == 1)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let report = try decoder.decode(SalvageReport.self, from: Data(json.output.utf8))
        #expect(report.histories.map(\.version) == [Int(newest) - 1])
        #expect(report.snapshots.map(\.name) == ["approved"] && report.lost == [])
    }

    /// What `copy` is for: an app has the store open, and its newest commits are in the log.
    struct Bookmark: Codable {
        var title: String
    }

    @Test func copyWritesTheStoreWithTheCommitsStillInItsLog() throws {
        let store = try demoStore()
        let open = try KeepsakeStore(path: store)
        defer { open.close() }
        try Caretaker(store: open).save(Bookmark(title: "saved while open"), as: "open")
        #expect(FileManager.default.fileExists(atPath: store + "-wal"))

        let output = path("copy.keepsake")
        let result = try run("copy", store, output)
        #expect(result.status == 0, "\(result.error)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        #expect(result.output == "Copied \(store) to \(output): 1 history, 2 snapshots, \(size) bytes.\n")
        #expect(!FileManager.default.fileExists(atPath: output + "-wal"))
        for command in [["snapshots"], ["log", "demo-note"], ["value", "demo-note"]] {
            let copied = try run([command[0], output] + command.dropFirst())
            let original = try run([command[0], store] + command.dropFirst())
            #expect(copied.status == 0 && copied.output == original.output)
        }
        #expect(try run("snapshots", output).output.contains("open"))
        #expect(try run("verify", output).status == 0)

        let again = try run("copy", store, output)
        #expect(again.status == 66)
        #expect(
            again.error
                == "keepsake: Cannot open \(output): a file is already there; copy writes a new file.\n")
    }

    /// A store whose write-ahead log is damaged — the file and log as a writer left them (copied
    /// while it had them open, as a crash leaves them), a byte of an early commit's page flipped
    /// — is refused, and the refusal names the flag that reads it. With the flag, every command
    /// that reads a store reads it as of the damage, as the library does, and writes nothing to
    /// it.
    @Test func aStoreWithADamagedLogIsReadAsOfTheDamageWithTheFlag() throws {
        let original = path("open.keepsake")
        let writer = try KeepsakeStore(path: original)
        let history = try writer.history("doc", initialValue: RaceDocument())
        var document = history.value
        for counter in 1...10 {
            document.counter = counter
            try history.append(document)
        }
        let damaged = path("damaged.keepsake")
        try FileManager.default.copyItem(atPath: original, toPath: damaged)
        var log = try Data(contentsOf: URL(fileURLWithPath: original + "-wal"))
        writer.close()
        let pageSize = log[8..<12].reduce(0) { $0 << 8 | Int($1) }
        let middle = (log.count - 32) / (24 + pageSize) / 2
        log[32 + middle * (24 + pageSize) + 24 + 100] ^= 0x04  // the page of the log's middle frame
        try log.write(to: URL(fileURLWithPath: damaged + "-wal"))
        let file = try Data(contentsOf: URL(fileURLWithPath: damaged))

        for arguments in [["inspect", damaged], ["value", damaged, "doc"], ["copy", damaged, path("x")]] {
            let refused = try run(arguments)
            #expect(refused.status == 65, "\(arguments)")
            #expect(
                refused.error.hasSuffix(
                    "To read it as of the damage, add --read-damaged-log; to keep what it still proves, "
                        + "'keepsake salvage'.\n"), "\(arguments)")
        }

        let library = try KeepsakeStore(path: damaged, options: .init(readOnly: true, readsDamagedLog: true))
        let expected = try #require(try library.valueJSON(ofHistory: "doc"))
        let versions = try #require(try library.timeline(of: "doc")).count - 1
        library.close()
        #expect((1..<10).contains(versions))  // the commits after the damage are not read
        let value = try run("value", damaged, "doc", "--read-damaged-log")
        #expect(value.status == 0 && value.output == expected + "\n", "\(value.error)")
        let timeline = try run("log", damaged, "doc", "--read-damaged-log")
        #expect(timeline.status == 0 && timeline.output.split(separator: "\n").count == versions + 2)
        for arguments in [["inspect", damaged], ["snapshots", damaged], ["verify", damaged, "--json"]] {
            #expect(try run(arguments + ["--read-damaged-log"]).status == 0, "\(arguments)")
        }
        let copy = path("copy.keepsake")
        #expect(try run("copy", damaged, copy, "--read-damaged-log").status == 0)
        #expect(try run("value", copy, "doc").output == value.output)
        #expect(try run("verify", copy).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == file)
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged + "-wal")) == log)
    }

    @Test func versionIsPrinted() throws {
        let result = try run("--version")
        #expect(result.status == 0 && result.error.isEmpty)
        #expect(result.output == "keepsake 0.2.0 (store schema \(KeepsakeStore.schemaVersion))\n")
    }

    @Test func everyCommandHasHelp() throws {
        let top = try run("--help")
        #expect(top.status == 0 && top.output.contains("exit status"))
        #expect(top.output.contains("inspect, log, show, snapshots, verify and salvage take --json"))
        for command in ["demo", "inspect", "log", "show", "snapshots", "value", "verify", "salvage", "copy"] {
            let result = try run(command, "--help")
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("usage: keepsake \(command)"))
        }
    }
}
