import Foundation
import TestSupport

@testable import Keepsake

/// A document with every kind of tracked value.
struct Doc: Versionable, Equatable, Codable {
    struct Item: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var title: String
        var done: Bool
        /// An enum with payloads, diffed by payload with no code.
        var shape: Shape = .dot
    }

    enum Status: String, Codable, VersionableLeaf { case draft, review, final }

    var title: String
    var status: Status
    var items: [Item]
    var blob: Data
    var scores: [String: Int]
    var note: String?

    static let empty = Doc(title: "", status: .draft, items: [], blob: Data(), scores: [:], note: nil)

    /// 1 MiB of data and 10,000 items: the benchmark's big document.
    static func big() -> Doc {
        Doc(
            title: "Big", status: .draft,
            items: (0..<10_000).map { Item(id: $0, title: "Item \($0)", done: false) },
            blob: Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }), scores: [:], note: nil)
    }
}

enum DocEdits {
    static func edit(_ doc: inout Doc, using generator: inout SeededGenerator) {
        switch Int.random(in: 0..<9, using: &generator) {
        case 0:
            doc.title = ["", "a", "héllo", "Final", String(repeating: "long ", count: 80)].randomElement(
                using: &generator)!
        case 1: doc.status = [.draft, .review, .final].randomElement(using: &generator)!
        case 2:
            let id = Int.random(in: 0..<8, using: &generator)
            if !doc.items.contains(where: { $0.id == id }) {
                doc.items.insert(
                    .init(id: id, title: "item \(id)", done: false),
                    at: Int.random(in: 0...doc.items.count, using: &generator))
            } else {
                doc.items.removeAll { $0.id == id }
            }
        case 3:
            if !doc.items.isEmpty {
                let index = Int.random(in: 0..<doc.items.count, using: &generator)
                doc.items[index].done.toggle()
                doc.items[index].title += "!"
            }
        case 4:
            if doc.blob.count < 4096 || Bool.random(using: &generator) {
                doc.blob.append(
                    contentsOf: (0..<Int.random(in: 1...2000, using: &generator)).map { UInt8($0 % 256) })
            } else {
                doc.blob[doc.blob.startIndex + Int.random(in: 0..<doc.blob.count, using: &generator)] &+= 1
            }
        case 5:
            doc.scores[["a", "b"].randomElement(using: &generator)!] =
                Bool.random(using: &generator) ? nil : Int.random(in: 0..<3, using: &generator)
        case 6:
            doc.note =
                Bool.random(using: &generator) ? nil : "note \(Int.random(in: 0..<3, using: &generator))"
        case 7:
            if !doc.items.isEmpty {
                doc.items[Int.random(in: 0..<doc.items.count, using: &generator)].shape.edit(
                    using: &generator)
            }
        default: doc.items.reverse()
        }
    }
}

extension Array where Element == VersionTag? {
    /// String tags as strings, for comparing with the full-copy model's.
    var strings: [String?] { map { $0?.value(as: String.self) } }
}

/// Rewrites the stored changes of every version (`version.changes`), as damage, a hand edit in
/// the `sqlite3` shell or an older release would have left them; `edit` gets each version's
/// position and its entries. Nothing else is touched: a changed entry keeps its digest unless
/// `edit` changes that too.
func editStoredChanges(
    _ connection: SQLiteConnection, _ edit: (_ position: Int, inout [StoredChanges.Entry]) throws -> Void
) throws {
    let versions = try connection.query("SELECT history_id, position, changes FROM version") {
        ($0.int64(0)!, Int($0.int64(1)!), $0.text(2)!)
    }
    for (history, position, text) in versions {
        var entries = try StoredChanges.entries(text)
        let original = entries
        try edit(position, &entries)
        guard entries != original else { continue }
        try connection.execute(
            "UPDATE version SET changes = ? WHERE history_id = ? AND position = ?",
            [.text(StoredChanges.text(of: entries)), .integer(history), .integer(Int64(position))])
    }
}

/// Every stored change as `(position, entry)`, in version order.
func storedChanges(_ connection: SQLiteConnection) throws -> [(position: Int, entry: StoredChanges.Entry)] {
    try connection.query("SELECT position, changes FROM version ORDER BY history_id, position") {
        (Int($0.int64(0)!), $0.text(1)!)
    }.flatMap { position, text in try StoredChanges.entries(text).map { (position, $0) } }
}

/// Moves every stored change at `path` to `newPath`, its digest cleared as in a store written
/// before digests (an edited entry that keeps its digest is damage).
func moveStoredChanges(_ connection: SQLiteConnection, at path: String, to newPath: String) throws {
    try editStoredChanges(connection) { _, entries in
        for index in entries.indices where entries[index].path == path {
            (entries[index].path, entries[index].digest) = (newPath, nil)
        }
    }
}
