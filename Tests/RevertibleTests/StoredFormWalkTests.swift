import Foundation
import Revertible
import TestSupport
import Testing

/// A history walked down and up on one stored form, as opening a store, browsing its versions
/// and `keepsake value` do: the form keeps what it learned about its arrays (where each element
/// is, by id) from one version to the next, and changes its containers in place, so every kind
/// of change to a large collection — elements inserted, removed, moved, replaced whole, given
/// another id or one another element has, entries and members added and taken out — must
/// leave it exactly at the version reached.
@Suite struct StoredFormWalkTests {
    struct Cell: Versionable, Equatable, Codable, Identifiable {
        let id: Int
        var text: String
    }

    struct Row: Versionable, Equatable, Codable, Identifiable {
        var id: Int
        /// Compared, not tracked: a row whose `created` changed is recorded whole.
        let created: Int
        var name: String
        var cells: [Cell]
    }

    struct Point: Hashable, Codable {
        var x: Int
        var y: Int
    }

    struct Sheet: Versionable, Equatable, Codable {
        var rows: [Row]
        /// An object in the JSON.
        var byKey: [String: Cell]
        /// Keys and values in turn in the JSON: its keys are not text.
        var byPoint: [Point: String]
        var tags: Set<String>
        var title: String

        static let start = Sheet(
            rows: (0..<30).map { id in
                Row(
                    id: id, created: 0, name: "row \(id)", cells: (0..<3).map { Cell(id: $0, text: "c\($0)") }
                )
            },
            byKey: Dictionary(
                uniqueKeysWithValues: (0..<20).map { ("k\($0)", Cell(id: $0, text: "v\($0)")) }),
            byPoint: Dictionary(uniqueKeysWithValues: (0..<10).map { (Point(x: $0, y: -$0), "p\($0)") }),
            tags: Set((0..<15).map { "tag\($0)" }), title: "")

        mutating func edit(using generator: inout SeededGenerator, nextID: inout Int) {
            func anyRow() -> Int? { rows.indices.randomElement(using: &generator) }
            switch Int.random(in: 0..<16, using: &generator) {
            case 0, 1:
                // Now and then an id another row has (an app's bug): the first one is named.
                let id =
                    Int.random(in: 0..<10, using: &generator) == 0
                    ? rows.randomElement(using: &generator)?.id : nil
                let row = Row(id: id ?? nextID, created: 0, name: "new", cells: [Cell(id: 0, text: "")])
                if id == nil { nextID += 1 }
                rows.insert(row, at: Int.random(in: 0...rows.count, using: &generator))
            case 2: if let i = anyRow() { rows.remove(at: i) }
            case 3:
                if let i = anyRow() {
                    let row = rows.remove(at: i)
                    rows.insert(row, at: Int.random(in: 0...rows.count, using: &generator))
                }
            case 4: if let i = anyRow() { rows[i].name += "!" }
            case 5:
                // The first of two rows that share an id, edited: its path names it by id.
                var seen: Set<Int> = []
                if let shared = rows.first(where: { !seen.insert($0.id).inserted }),
                    let i = rows.firstIndex(where: { $0.id == shared.id })
                {
                    rows[i].name += "#"
                } else if let i = anyRow() {
                    rows[i].name += "!"
                }
            case 6:
                if let i = anyRow() {
                    rows[i].id = nextID
                    nextID += 1
                }
            case 7:
                if let i = anyRow() {
                    let row = rows[i]
                    rows[i] = Row(id: row.id, created: row.created + 1, name: row.name, cells: row.cells)
                }
            case 8:
                if let i = anyRow() {
                    if rows[i].cells.isEmpty || Bool.random(using: &generator) {
                        rows[i].cells.insert(
                            Cell(id: nextID, text: "n"),
                            at: Int.random(in: 0...rows[i].cells.count, using: &generator))
                        nextID += 1
                    } else {
                        rows[i].cells.remove(at: Int.random(in: 0..<rows[i].cells.count, using: &generator))
                    }
                }
            case 9:
                if let i = anyRow(), let j = rows[i].cells.indices.randomElement(using: &generator) {
                    rows[i].cells[j].text += "x"
                }
            case 10:
                // Several rows at once: the ends swapped, or two inserted and one removed.
                if rows.count > 2, Bool.random(using: &generator) {
                    rows.swapAt(0, rows.count - 1)
                } else {
                    for _ in 0..<2 {
                        rows.insert(
                            Row(id: nextID, created: 0, name: "pair", cells: []),
                            at: Int.random(in: 0...rows.count, using: &generator))
                        nextID += 1
                    }
                    if let i = anyRow() { rows.remove(at: i) }
                }
            case 11:
                let key = "k\(Int.random(in: 0..<30, using: &generator))"
                byKey[key] = Bool.random(using: &generator) ? nil : Cell(id: nextID, text: key)
                nextID += 1
            case 12:
                if let key = byKey.keys.randomElement(using: &generator) { byKey[key]!.text += "y" }
            case 13:
                let point = Point(x: Int.random(in: 0..<14, using: &generator), y: 0)
                byPoint[point] = Bool.random(using: &generator) ? nil : "q\(nextID)"
                nextID += 1
            case 14:
                let tag = "tag\(Int.random(in: 0..<20, using: &generator))"
                if tags.contains(tag) { tags.remove(tag) } else { tags.insert(tag) }
            default:
                title = "t\(nextID)"
                nextID += 1
            }
        }
    }

    /// The same rows, seen as an app whose rows are not `Identifiable` sees them: its changes
    /// name rows by position, and may give a row another id (one another row has, too) — as
    /// an app update that changed the model mixes both kinds of path in one history.
    struct PlainRow: Versionable, Equatable, Codable {
        var id: Int
        let created: Int
        var name: String
        var cells: [Cell]

        static func edit(_ rows: inout [PlainRow], using generator: inout SeededGenerator, nextID: inout Int)
        {
            guard let i = rows.indices.randomElement(using: &generator) else { return }
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                rows[i].id =
                    Bool.random(using: &generator) ? rows.randomElement(using: &generator)!.id : nextID
                nextID += 1
            case 1:
                let row = rows[i]
                rows[i] = PlainRow(
                    id: Bool.random(using: &generator) ? row.id : nextID, created: row.created + 1,
                    name: row.name,
                    cells: row.cells)
                nextID += 1
            case 2: rows[i].name += "?"
            default:
                rows.insert(
                    PlainRow(id: nextID, created: 0, name: "plain", cells: []),
                    at: Int.random(in: 0...rows.count, using: &generator))
                nextID += 1
            }
        }
    }

    static func json(_ sheet: Sheet) throws -> String {
        String(decoding: try ChangeRecord.makeEncoder().encode(sheet), as: UTF8.self)
    }

    static func decoded(_ form: StoredForm) throws -> Sheet {
        try ChangeRecord.makeDecoder().decode(Sheet.self, from: Data(form.json.utf8))
    }

    @Test(arguments: Soak.batches(usually: 4))
    func aHistoryWalkedDownAndUpOnOneFormReachesEveryVersion(batch: UInt64) throws {
        let seed = 0x57A1_C000 + batch
        var generator = SeededGenerator(seed: seed)
        var nextID = 1_000
        var versions = [Sheet.start]
        var records: [[ChangeRecord]] = []  // records[i]: from version i to version i + 1
        while versions.count < 150 {
            var sheet = versions.last!
            if Int.random(in: 0..<4, using: &generator) == 0 {
                let (encoder, decoder) = (ChangeRecord.makeEncoder(), ChangeRecord.makeDecoder())
                let rows = try decoder.decode([PlainRow].self, from: encoder.encode(sheet.rows))
                var edited = rows
                PlainRow.edit(&edited, using: &generator, nextID: &nextID)
                guard let reversion = edited.reversion(to: rows) else { continue }
                records.append(
                    try reversion.records().map {
                        ChangeRecord(
                            path: PathDescriptor([.property("rows")] + $0.path.components), kind: $0.kind,
                            payload: $0.payload)
                    })
                sheet.rows = try decoder.decode([Row].self, from: encoder.encode(edited))
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    sheet.edit(using: &generator, nextID: &nextID)
                }
                guard let reversion = sheet.reversion(to: versions.last!) else { continue }
                records.append(try reversion.records())
            }
            versions.append(sheet)
        }
        var form = try StoredForm(json: Self.json(Sheet.start), decoder: ChangeRecord.makeDecoder())
        var at = 0
        var refused = 0
        for move in 0..<300 {
            // Mostly a few versions away, now and then across the whole history.
            let target =
                Int.random(in: 0..<8, using: &generator) == 0
                ? Int.random(in: 0..<versions.count, using: &generator)
                : min(max(at + Int.random(in: -6...6, using: &generator), 0), versions.count - 1)
            while at != target {
                if at < target {
                    try form.revert(records[at], inverted: true)
                    at += 1
                } else {
                    try form.revert(records[at - 1], inverted: false)
                    at -= 1
                }
                try #require(try Self.decoded(form) == versions[at], "seed \(seed) move \(move) at \(at)")
            }
            // A version that is not the next one, refused: the form as it was. (The stored form
            // checks an array's elements by id, not whole — after an app update an element's
            // JSON may have other keys — so one whose changes touch other places, or the same
            // elements' other parts, may be redone; the form is then made again.)
            if at + 2 < versions.count, Int.random(in: 0..<4, using: &generator) == 0 {
                do {
                    try form.revert(records[at + 1], inverted: true)
                    form = try StoredForm(json: Self.json(versions[at]), decoder: ChangeRecord.makeDecoder())
                } catch {
                    refused += 1
                    try #require(
                        try Self.decoded(form) == versions[at],
                        "seed \(seed) move \(move) at \(at): a wrong version refused")
                }
            }
        }
        #expect(refused > 0, "seed \(seed)")
    }
}
