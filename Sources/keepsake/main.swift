import Foundation
import Keepsake

let help = """
    keepsake — durable undo/redo and snapshots for Swift values, stored in SQLite

    usage: keepsake <command> [arguments] [--json]

    commands:
      demo [--store PATH]              edit a document, then undo it from a second process
      inspect PATH                     histories, snapshots, schema version, file size
      log PATH HISTORY                 a history's timeline: version, date, scope, tag, paths
      show PATH HISTORY VERSION        one version's changes, with their values as JSON
      value PATH HISTORY [VERSION]     the history's value at a version, as JSON
      snapshots PATH                   the named snapshots
      verify PATH                      integrity, schema, application id, history invariants
      salvage DAMAGED OUTPUT           copy what a damaged store still proves into a new store
      copy STORE OUTPUT                a copy of a store, open or not, complete in one new file

    Every command takes --help; inspect, log, show, snapshots, verify and salvage take --json.
    keepsake --version prints the version. Only demo, salvage and copy write (salvage and copy
    a new file); the others open the store read-only. A store whose write-ahead log is damaged
    is refused (SQLite would drop the commits after the damage); the commands that read a store,
    copy too, read it as of the damage with --read-damaged-log, and salvage always does.

    exit status: 0 success · 1 verify found problems, or salvage left something out · 2 unknown
    history, version or snapshot · 64 usage error · 65 not a Keepsake store (or a newer schema,
    or corrupt) · 66 cannot open the file · 70 other failure · 74 the output could not be
    written (a full disk) · 75 another process held the store or changed its history: nothing
    was written; try again
    """

let commands: [String: Command] = [
    "demo": Demo.command,
    "inspect": Inspection.inspect,
    "log": Inspection.log,
    "show": Inspection.show,
    "snapshots": Inspection.snapshots,
    "value": Inspection.value,
    "verify": Inspection.verify,
    "salvage": Inspection.salvage,
    "copy": Inspection.copy,
]

/// The tool's version, and the store schema it writes.
let version = "keepsake 0.2.0 (store schema \(KeepsakeStore.schemaVersion))"

/// `keepsake: <message>.` — one sentence, ending in one period — as a line of standard error,
/// ``printable(_:)``.
func messageLine(_ message: String) -> String {
    var sentence = message
    while sentence.hasSuffix(".") { sentence.removeLast() }
    return "keepsake: \(printable(sentence)).\n"
}

/// `text` with what a terminal would act on rather than show written as an escape, Swift's
/// way: control characters (`\n`, `\t`, `\u{1B}`) and the bidirectional controls that reorder
/// the text after them (`\u{202E}`). A store is not trusted: a history named
/// `"\u{1B}]0;…\u{07}"` would retitle the terminal of whoever inspects it, and one holding
/// `"\n"` would forge a line.
func printable(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\n": result += "\\n"
        case "\t": result += "\\t"
        case "\r": result += "\\r"
        case "\0": result += "\\0"
        case _ where needsEscape(scalar):
            result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}

/// Whether ``printable(_:)`` writes `scalar` as an escape: a control character (C0, DEL, C1)
/// or a bidirectional embedding, override or isolate. The control characters are the ranges
/// Unicode's stability policy fixes for category `Cc`, compared as numbers: asking each
/// scalar's category took a third of `log`'s time.
private func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value)
        || (0x2066...0x2069).contains(scalar.value)
}

/// Writes a line of the commands' human-readable output, ``printable(_:)``: names, tags, paths
/// and patches come from the store. (JSON output escapes them as JSON does.)
func say(_ line: String) {
    print(printable(line))
}

/// Writes ``messageLine(_:)`` and what follows it (a usage text) to standard error, and exits
/// with `status`.
func fail(_ message: String, then details: String? = nil, status: Int32) -> Never {
    var text = messageLine(message)
    if let details { text += details + "\n" }
    FileHandle.standardError.write(Data(text.utf8))
    exit(status)
}

/// Exits with `status` once standard output is written out. Output that could not be written
/// (`keepsake value … > out.json` on a full disk) exits with ``ExitStatus/outputFailed``,
/// saying so: it exited 0, and a script kept an empty or cut file as the value.
func finish(_ status: Int32) -> Never {
    // Every stream: standard output is the one written through C's buffers (`print`), and
    // writing it out again after a failed write fails again.
    if fflush(nil) != 0 {
        fail(
            "the output could not be written (\(String(cString: strerror(errno)))); what was written is cut short",
            status: ExitStatus.outputFailed)
    }
    exit(status)
}

/// Writes `keepsake: note: <message>.` to standard error, where a script reading standard
/// output does not see it, and goes on.
func note(_ message: String) {
    FileHandle.standardError.write(Data(messageLine("note: " + message).utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first else {
    // Usage errors, this one included, go to standard error.
    fail("missing a command", then: help, status: ExitStatus.usage)
}
if ["--help", "-h", "help"].contains(name) {
    print(help)
    finish(ExitStatus.success)
}
if name == "--version" {
    print(version)
    finish(ExitStatus.success)
}
guard let command = commands[name] else {
    fail("unknown command '\(name)'; see 'keepsake --help'", status: ExitStatus.usage)
}
let rest = arguments.dropFirst()
if rest.contains("--help") || rest.contains("-h") {
    print(command.usage)
    finish(ExitStatus.success)
}
do {
    let parsed = try Arguments(rest, flags: command.flags, options: command.options)
    finish(try command.run(parsed))
} catch let error as UsageError {
    fail(error.message, then: command.usage, status: ExitStatus.usage)
} catch let error as ToolFailure {
    fail(error.message, status: error.status)
} catch let error as KeepsakeError {
    switch error {
    case .notAStore
    where error.remedy == .readDamagedLog && command.flags.contains(Inspection.readDamagedLog):
        fail(
            error.description,
            then: "To read it as of the damage, add \(Inspection.readDamagedLog); to keep what it still "
                + "proves, 'keepsake salvage'.",
            status: ExitStatus.notAStore)
    case .cannotOpen: fail(error.description, status: ExitStatus.cannotOpen)
    case .notAStore, .newerSchema, .damaged: fail(error.description, status: ExitStatus.notAStore)
    case .snapshotNotFound: fail(error.description, status: ExitStatus.notFound)
    case .historyConflict: fail(error.description, status: ExitStatus.tryAgain)
    case .sqlite(let failure) where failure.code == .busy || failure.code == .locked:
        fail(error.description, status: ExitStatus.tryAgain)
    default: fail(error.description, status: ExitStatus.failure)
    }
} catch {
    fail("\(error)", status: ExitStatus.failure)
}

/// One subcommand: what it accepts and what it does.
struct Command: Sendable {
    let usage: String
    var flags: Set<String> = []
    var options: Set<String> = []
    let run: @Sendable (Arguments) throws -> Int32
}
