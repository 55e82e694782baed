import Foundation
import Keepsake

/// The note the demo edits: a title, an enum, nested identified items and a 256 KiB blob.
struct DemoNote: Versionable, Equatable, Codable {
    enum Status: String, Codable, VersionableLeaf { case draft, review, published }

    struct Item: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var text: String
        var done: Bool
    }

    var title: String
    var status: Status
    var items: [Item]
    var attachment: Data

    static let first = DemoNote(
        title: "Groceries", status: .draft,
        items: [.init(id: 1, text: "Milk", done: false), .init(id: 2, text: "Bread", done: false)],
        attachment: Data((0..<(256 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))

    var line: String {
        let items = self.items.map { "\($0.done ? "☑" : "☐") \($0.text)" }.joined(separator: ", ")
        return "\"\(title)\" · \(status.rawValue) · \(items)"
    }
}

/// `keepsake demo`: edits a note durably, then starts itself again as a new process that
/// reopens the store and undoes the first process's last change.
enum Demo {
    static let history = "demo-note"

    static let command = Command(
        usage: """
            usage: keepsake demo [--store PATH]
              Edits a small document in a store file (default ./keepsake-demo.keepsake), shows undo,
              redo, a scope, a tag and a snapshot, then starts a second process that reopens the
              store and undoes the first process's last change. An earlier demo's history in that
              file is replaced; a file that is not a Keepsake store is refused, never overwritten.
            """,
        options: ["--store", "--second-process"]
    ) { arguments in
        _ = try arguments.expect()
        let path =
            arguments.options["--store"] ?? FileManager.default.currentDirectoryPath
            + "/keepsake-demo.keepsake"
        // SQLite's name for a database in memory: the second process found an empty store and
        // said it undid the first one's change.
        if path == ":memory:" {
            throw UsageError(
                "--store :memory: is a store in memory, which a second process cannot open: give a file's path"
            )
        }
        if arguments.options["--second-process"] != nil {
            try secondProcess(path: path)
        } else {
            try firstProcess(path: path)
        }
        return ExitStatus.success
    }

    static func bytes(of version: Int, _ store: KeepsakeStore) throws -> String {
        let changes = try store.changes(ofVersion: version, in: history) ?? []
        let size = changes.reduce(0) { $0 + $1.path.utf8.count + $1.kind.utf8.count + $1.patch.utf8.count }
        return "version \(version) · \(changes.map(\.path).joined(separator: ", ")) · \(size) bytes stored"
    }

    static func firstProcess(path: String) throws {
        let existed = FileManager.default.fileExists(atPath: path)
        let store = try KeepsakeStore(path: path)
        try store.deleteHistory(history)
        let caretaker = Caretaker(store: store, scope: "demo")
        try caretaker.delete("approved", of: DemoNote.self)
        print("Keepsake demo: durable undo for Swift values")
        print("Store: \(path)\(existed ? " (the earlier demo's history was replaced)" : " (created)")")
        print()
        let note = try store.history(history, initialValue: DemoNote.first)
        var value = note.value
        print("Process 1 (pid \(getpid())) edits a note that carries a 256 KiB attachment:")
        try note.tag("start")
        print("  tag(\"start\"): \(value.line)")
        func step(_ label: String, tag: String? = nil, _ edit: (inout DemoNote) -> Void) throws {
            edit(&value)
            try note.append(value, tag: tag)
            guard let version = try store.timeline(of: history)?.last?.version else {
                throw ToolFailure(
                    message: "the demo history has no versions after an append", status: ExitStatus.failure)
            }
            print("  \(label)\n      \(try bytes(of: version, store))")
        }
        try step("title → \"Groceries for Sunday\"") { $0.title = "Groceries for Sunday" }
        try step("bread checked") { $0.items[1].done = true }
        try step("eggs added") { $0.items.append(.init(id: 3, text: "Eggs", done: false)) }
        try step("status → review") { $0.status = .review }
        try step("one byte of the attachment changed") { $0.attachment[100_000] ^= 0xFF }
        print(
            "  undo → \(try note.undo().line) (attachment restored: \(note.value.attachment == DemoNote.first.attachment))"
        )
        print("  redo → attachment changed again: \(try note.redo().attachment != DemoNote.first.attachment)")
        try note.pushNewScope()
        value.items[0].done = true
        try note.append(value)
        value.items[2].done = true
        try note.append(value)
        print(
            "  scope 1: two items checked as two versions (undo depth in the scope: \(try note.tags().undo.count - 1))"
        )
        try note.popCurrentScope()
        print("  scope popped: both checks squashed into one version of scope 0")
        try note.tag("checked")
        print("  tagged the current version \"checked\"")
        try caretaker.save(note, as: "approved")
        print("  saved the current value as snapshot \"approved\"")
        try step("title → \"Groceries for Monday\" (this process's last change)") {
            $0.title = "Groceries for Monday"
        }
        print("  now: \(note.value.line)")
        print()
        print("Process 1 starts process 2, which has nothing but the store file to go on.")
        print()
        fflush(nil)  // flush this process's output before the next one writes
        try runSecondProcess(path: path)
    }

    static func runSecondProcess(path: String) throws {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["demo", "--store", path, "--second-process", "1"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            // Its own message is on standard error already; its status says what kind of
            // failure (75: another process held the store) to a script that runs the demo.
            throw ToolFailure(
                message: "the second process failed (status \(process.terminationStatus))",
                status: process.terminationReason == .exit ? process.terminationStatus : ExitStatus.failure)
        }
    }

    static func secondProcess(path: String) throws {
        let store = try KeepsakeStore(path: path)
        let note = try store.history(history, initialValue: DemoNote.first)
        print("Process 2 (pid \(getpid())) reopened the store:")
        print("  value:  \(note.value.line)")
        print("  undo → \(try note.undo().line)")
        print("         (process 2 undid the change process 1 made last)")
        print("  undo(to: \"start\") → \(try note.undo(to: "start").line)")
        print("  redo(to: \"checked\") → \(try note.redo(to: "checked").line)")
        let caretaker = Caretaker(store: store, scope: "demo")
        let approved: DemoNote? = try caretaker.restore("approved")
        print("  snapshot \"approved\", saved by process 1: \(approved?.line ?? "missing")")
        let tags = try note.tags()
        print(
            "  \(note.versionCount) versions stored: \(tags.undo.count - 1) to undo, \(tags.redo.count) to redo"
        )
        try note.checkInvariants()
        print()
        print("Look inside the store with the sqlite3 shell:")
        print("  sqlite3 \(path) \\")
        print(
            "    \"SELECT version, state, tag, paths FROM timeline WHERE history = '\(history)' ORDER BY version;\""
        )
        print("Or with this tool: swift run keepsake log \(path) \(history)")
    }
}
