import Foundation
import Keepsake

/// The `keepsake` command. Until the durable store lands, `demo` shows the in-memory core:
/// a document is edited, the reversion lists only the changed leaves, and reverting restores
/// it exactly.
struct Note: Versionable, Equatable, Codable {
    struct Item: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var text: String
        var done: Bool
    }

    var title: String
    var items: [Item]
    var attachment: Data
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "demo":
    var note = Note(
        title: "Groceries",
        items: [.init(id: 1, text: "Milk", done: false), .init(id: 2, text: "Bread", done: false)],
        attachment: Data(repeating: 0xAB, count: 1 << 20))
    let original = note
    note.title = "Groceries for Sunday"
    note.items[1].done = true
    note.items.append(.init(id: 3, text: "Eggs", done: false))
    note.attachment[12_345] = 0

    guard let reversion = note.reversion(to: original) else {
        print("error: the edit made no reversion")
        exit(1)
    }
    print("Edited a note holding 1 MiB of data. The reversion keeps only the changed leaves:")
    let records = try reversion.records()
    for record in records {
        print(
            "  \(record.path.description.isEmpty ? "(root)" : record.path.description)  [\(record.kind), \(record.payload.count) bytes]"
        )
    }
    print("Stored size of the whole reversion: \(records.reduce(0) { $0 + $1.payload.count }) bytes.")
    try reversion.revert(&note)
    print("Reverted: the note equals the original again: \(note == original).")
    print("(Durable history in SQLite, snapshots and store inspection are not built yet.)")
case "--help", "-h", "help", nil:
    print(
        """
        usage: keepsake <command>

        commands:
          demo    edit a document and revert it, showing the changes a reversion keeps
        """)
default:
    FileHandle.standardError.write(
        Data("keepsake: unknown command '\(arguments[0])'; see 'keepsake --help'\n".utf8))
    exit(64)
}
