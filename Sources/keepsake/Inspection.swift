import Foundation
import Keepsake

/// The read-only commands, and `salvage` and `copy`, which write a new file. Each opens the store with `readOnly: true`.
enum Inspection {
    /// The flag that reads a store whose write-ahead log is damaged as of the damage
    /// (``KeepsakeStore/Options/readsDamagedLog``), which every command that reads a store takes.
    static let readDamagedLog = "--read-damaged-log"

    /// Opens the store at `path` read-only, as of the damage of its log with ``readDamagedLog``.
    static func open(_ path: String, _ arguments: Arguments) throws -> KeepsakeStore {
        try KeepsakeStore(
            path: path,
            options: .init(readOnly: true, readsDamagedLog: arguments.flags.contains(readDamagedLog)))
    }

    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// `date` in local time to the second, as `2026-12-07 03:55:19`: as the store's views
    /// (`timeline`, `snapshots`) give it to the `sqlite3` shell, and at the second `--json`'s
    /// UTC dates give (each leaves out the fraction rather than round it).
    static func date(_ date: Date) -> String { date.formatted(dateStyle) }

    /// How ``date(_:)`` writes a date: a value made once, where an `ISO8601DateFormatter`
    /// made for each date built ICU's formatter anew each time (`log` of 100,000 versions took
    /// 15 s, 78% of it there).
    private static let dateStyle = Date.ISO8601FormatStyle(
        dateSeparator: .dash, dateTimeSeparator: .space, timeSeparator: .colon, timeZone: .current
    ).year().month().day().time(includingFractionalSeconds: false)

    /// "No history named …", listing the ones the store has.
    static func unknownHistory(_ name: String, in store: KeepsakeStore) throws -> ToolFailure {
        let names = try store.historyNames()
        let known =
            names.isEmpty ? "it has none" : "it has " + names.map { "\"\($0)\"" }.joined(separator: ", ")
        return ToolFailure(
            message: "no history named \"\(name)\" in \(store.path); \(known)", status: ExitStatus.notFound)
    }

    static func size(_ bytes: Int) -> String {
        bytes < 1024
            ? "\(bytes) bytes"
            : bytes < 1 << 20 ? "\(bytes / 1024) KiB" : String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }

    /// `text` as ``printable(_:)`` writes it, padded with spaces to `width` characters: a
    /// column keeps its width whatever escapes a field from the store needs.
    static func pad(_ text: String, _ width: Int) -> String {
        let shown = printable(text)
        return shown.count >= width ? shown : shown + String(repeating: " ", count: width - shown.count)
    }

    static let inspect = Command(
        usage:
            "usage: keepsake inspect PATH [--json] [--read-damaged-log]\n  Lists histories (versions, undo/redo depth, scope, tags, a held change, damage), snapshots, schema version, file size.",
        flags: ["--json", readDamagedLog]
    ) { arguments in
        let path = try arguments.expect("PATH")[0]
        let summary = try open(path, arguments).summary()
        if arguments.flags.contains("--json") {
            try printJSON(summary)
            return ExitStatus.success
        }
        say("Store: \(path)")
        say("Schema version \(summary.schemaVersion) · \(size(summary.fileSize))")
        say("Histories (\(summary.histories.count)):")
        for history in summary.histories {
            let tags = history.tags.isEmpty ? "" : " · tags: " + history.tags.joined(separator: ", ")
            say(
                "  \(history.name)  \(history.valueType)  versions \(history.versions) · undo \(history.undoDepth) · "
                    + "redo \(history.redoDepth) · scope \(history.scopeLevel)\(tags)")
            if !history.heldPaths.isEmpty {
                say("    held change: \(pathList(history.heldPaths)) \(heldNote)")
            }
            if let damage = history.damage {
                say("    damaged: \(damage) ('keepsake verify' lists every problem)")
            }
        }
        say("Snapshots (\(summary.snapshots.count)):")
        for snapshot in summary.snapshots {
            say(
                "  \(snapshot.name)  \(snapshot.valueType)  \(snapshot.propertyCount) properties · \(date(snapshot.date))"
            )
        }
        return ExitStatus.success
    }

    /// What inspect and log say of a held change.
    static let heldNote = "(a version when the history is next opened)"

    /// Changed paths as the log and inspect list them; the root's empty path as "(root)".
    static func pathList(_ paths: [String]) -> String {
        paths.map { $0.isEmpty ? "(root)" : $0 }.joined(separator: ", ")
    }

    static let log = Command(
        usage:
            "usage: keepsake log PATH HISTORY [--json] [--read-damaged-log]\n  The history's versions, oldest first: version, date, scope, state, tag, changed paths.\n  Version 0 is the base value, the one before every version kept, with its tag.",
        flags: ["--json", readDamagedLog]
    ) { arguments in
        let positionals = try arguments.expect("PATH", "HISTORY")
        let store = try open(positionals[0], arguments)
        guard let timeline = try store.timeline(of: positionals[1]) else {
            throw try unknownHistory(positionals[1], in: store)
        }
        if arguments.flags.contains("--json") {
            try printJSON(timeline)
            return ExitStatus.success
        }
        say("version  date                 scope  state    tag          changed paths")
        for version in timeline {
            guard version.version > 0 else {
                say(
                    pad("      0", 9) + pad(date(version.date), 21) + pad("0", 7) + pad("base", 9)
                        + pad(version.tag ?? "", 13) + "(the value before every version kept)")
                continue
            }
            say(
                pad(
                    String(repeating: " ", count: max(0, 7 - String(version.version).count))
                        + "\(version.version)", 9)
                    + pad(date(version.date), 21) + pad(String(version.scopeLevel), 7)
                    + pad(version.undone ? "undone" : "applied", 9) + pad(version.tag ?? "", 13)
                    + pathList(version.paths))
        }
        if let held = try store.heldPaths(of: positionals[1]), !held.isEmpty {
            say(
                pad("   held", 9) + pad("", 21) + pad("", 7) + pad("held", 9) + pad("", 13) + pathList(held)
                    + " " + heldNote)
        }
        return ExitStatus.success
    }

    static let show = Command(
        usage:
            "usage: keepsake show PATH HISTORY VERSION [--json] [--read-damaged-log]\n  Each change of the version: its path, kind and patch as JSON.",
        flags: ["--json", readDamagedLog]
    ) { arguments in
        let positionals = try arguments.expect("PATH", "HISTORY", "VERSION")
        guard let version = Int(positionals[2]) else {
            throw UsageError("VERSION must be a number, not \(positionals[2])")
        }
        let store = try open(positionals[0], arguments)
        guard let changes = try store.changes(ofVersion: version, in: positionals[1]) else {
            guard let timeline = try store.timeline(of: positionals[1]) else {
                throw try unknownHistory(positionals[1], in: store)
            }
            let versions = timeline.map(\.version).filter { $0 > 0 }
            throw ToolFailure(
                message: "no version \(version) in history \"\(positionals[1])\" of \(positionals[0]); "
                    + (versions.isEmpty
                        ? "it has none" : "it has versions \(versions.first!)…\(versions.last!)"),
                status: ExitStatus.notFound)
        }
        if arguments.flags.contains("--json") {
            // Each patch as the JSON object it is, not as a string holding JSON.
            let objects = changes.map { change -> [String: Any] in
                let patch = FoundationJSON.object(Data(change.patch.utf8)) ?? change.patch
                return ["path": change.path, "kind": change.kind, "patch": patch]
            }
            let data = try JSONSerialization.data(
                withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return ExitStatus.success
        }
        say(
            "Version \(version) of \(positionals[1]): \(changes.count) change\(changes.count == 1 ? "" : "s")"
        )
        for change in changes {
            say("\(change.path.isEmpty ? "(root)" : change.path)  [\(change.kind)]")
            say("  \(change.patch)")
        }
        return ExitStatus.success
    }

    static let value = Command(
        usage: """
            usage: keepsake value PATH HISTORY [VERSION] [--read-damaged-log]
              The history's value at VERSION (the current version when left out; 0 is the base),
              as JSON, computed from the stored base value and changes alone. Data is base64.
              A change held back (see log's "held" line) is not in it: standard error says so.
            """,
        flags: [readDamagedLog]
    ) { arguments in
        let positionals = arguments.positionals
        guard positionals.count == 2 || positionals.count == 3 else {
            _ = try arguments.expect("PATH", "HISTORY")
            throw UsageError("unexpected argument \(positionals[3])")
        }
        var version: Int?
        if positionals.count == 3 {
            guard let number = Int(positionals[2]), number >= 0 else {
                throw UsageError("VERSION must be a number, not \(positionals[2])")
            }
            version = number
        }
        let store = try open(positionals[0], arguments)
        guard let json = try store.valueJSON(ofHistory: positionals[1], atVersion: version) else {
            guard let timeline = try store.timeline(of: positionals[1]) else {
                throw try unknownHistory(positionals[1], in: store)
            }
            throw ToolFailure(
                message: "no version \(version ?? 0) in history \"\(positionals[1])\" of \(positionals[0]); "
                    + "it has versions 0…\(timeline.last?.version ?? 0)",
                status: ExitStatus.notFound)
        }
        print(json)
        // The current value is not what the app showed last when a change is held: say so
        // where a script reading the JSON does not see it.
        if version == nil, let held = try store.heldPaths(of: positionals[1]), !held.isEmpty {
            note("a change to \(pathList(held)) is held, not in this value \(heldNote)")
        }
        return ExitStatus.success
    }

    static let snapshots = Command(
        usage:
            "usage: keepsake snapshots PATH [--json] [--read-damaged-log]\n  The named snapshots: namespace, name, type, properties, date.",
        flags: ["--json", readDamagedLog]
    ) { arguments in
        let path = try arguments.expect("PATH")[0]
        let snapshots = try Caretaker(store: open(path, arguments)).snapshots()
        if arguments.flags.contains("--json") {
            try printJSON(snapshots)
            return ExitStatus.success
        }
        for snapshot in snapshots {
            say(
                "\(snapshot.namespace)  \(snapshot.name)  \(snapshot.propertyCount) properties · \(date(snapshot.date))"
            )
        }
        if snapshots.isEmpty { say("No snapshots.") }
        return ExitStatus.success
    }

    static let verify = Command(
        usage: """
            usage: keepsake verify PATH [--json] [--read-damaged-log]
              Checks SQLite's integrity, the application id, the schema version and every history's
              invariants. Exit status 0 when all is well, 1 when something is wrong.
            """,
        flags: ["--json", readDamagedLog]
    ) { arguments in
        let path = try arguments.expect("PATH")[0]
        let result = try open(path, arguments).verify()
        if arguments.flags.contains("--json") {
            try printJSON(result)
        } else {
            say("integrity_check: \(result.integrity.joined(separator: "; "))")
            say("application_id: \(result.applicationIDMatches ? "Keepsake" : "not Keepsake")")
            say("schema version: \(result.schemaVersion)")
            say(result.problems.isEmpty ? "histories: consistent" : "problems:")
            for problem in result.problems { say("  - \(problem)") }
            if result.integrity == ["ok"], !result.problems.isEmpty,
                result.problems.allSatisfy({ $0.hasPrefix("the views ") })
            {
                say("Nothing else is wrong: the first open for writing (your app's) rewrites the views.")
            } else if !result.isOK {
                say(
                    "'keepsake salvage \(path) NEW-PATH' copies what the store still proves into a new store."
                )
            }
            say(result.isOK ? "OK" : "FAILED")
        }
        return result.isOK ? ExitStatus.success : ExitStatus.verificationFailed
    }

    static let salvage = Command(
        usage: """
            usage: keepsake salvage DAMAGED OUTPUT [--json]
              Copies what a damaged store still proves into a new store at OUTPUT (no file may be
              there): each history at the newest value its rows prove, with no version to undo,
              and each snapshot whose rows are all intact. DAMAGED is only read. Exit status 0
              when everything was copied at its newest, 1 when something was left out or older.
            """,
        flags: ["--json"]
    ) { arguments in
        let positionals = try arguments.expect("DAMAGED", "OUTPUT")
        let report = try KeepsakeStore.salvage(from: positionals[0], to: positionals[1])
        if arguments.flags.contains("--json") {
            try printJSON(report)
        } else {
            say("Salvaged \(positionals[0]) into \(positionals[1]):")
            for history in report.histories {
                let at =
                    history.version == history.newestVersion
                    ? "its newest value (version \(history.version))"
                    : "version \(history.version) of \(history.newestVersion)"
                say("  history \"\(history.name)\": \(at)")
                if let damage = history.damage { say("    damaged: \(damage)") }
            }
            for snapshot in report.snapshots {
                say("  snapshot \"\(snapshot.name)\" of \(snapshot.namespace), whole")
            }
            if !report.lost.isEmpty { say("Left out:") }
            for loss in report.lost { say("  \(loss.what): \(loss.reason)") }
            say(report.isComplete ? "Everything was copied, at its newest." : "INCOMPLETE: see above.")
        }
        return report.isComplete ? ExitStatus.success : ExitStatus.verificationFailed
    }

    static let copy = Command(
        usage: """
            usage: keepsake copy STORE OUTPUT [--read-damaged-log]
              Writes a copy of STORE to a new file at OUTPUT (no file may be there), complete on
              its own: every history with its undo and redo stacks, and every snapshot, including
              the commits still in STORE's write-ahead log, which a copy of the file alone lacks.
              STORE is only read, and may be open in an app meanwhile. With --read-damaged-log, a
              STORE whose write-ahead log is damaged is copied as of the damage.
            """,
        flags: [readDamagedLog]
    ) { arguments in
        let positionals = try arguments.expect("STORE", "OUTPUT")
        let store = try open(positionals[0], arguments)
        defer { store.close() }
        try store.copy(to: positionals[1])
        let summary = try KeepsakeStore(path: positionals[1], options: .init(readOnly: true)).summary()
        let histories = summary.histories.count == 1 ? "1 history" : "\(summary.histories.count) histories"
        let snapshots = summary.snapshots.count == 1 ? "1 snapshot" : "\(summary.snapshots.count) snapshots"
        say(
            "Copied \(positionals[0]) to \(positionals[1]): \(histories), \(snapshots), \(summary.fileSize) bytes."
        )
        return ExitStatus.success
    }
}
