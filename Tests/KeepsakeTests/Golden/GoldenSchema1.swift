import Foundation
import Keepsake

// The golden store of schema 1: `schema-1.keepsake`, written once by the first release with
// `GoldenSchema1.write(to:)` and committed. It is never regenerated and nothing here is ever
// edited: the model, the edit script and the random generator are frozen, so that every later
// release can check that it still opens, reads and undoes what the first release wrote.

/// The model the first release wrote. Frozen.
struct GoldenDocument: Versionable, Equatable, Codable {
    struct Item: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var title: String
        var done: Bool
    }

    /// An enum with payloads, tracked as a whole by the first release.
    enum Shape: Versionable, Equatable, Codable {
        case none
        case circle(radius: Int)
        case rect(w: Int, h: Int)
    }

    var title: String
    var body: String
    var items: [Item]
    var shape: Shape
    var attachment: Data
    var count: Int
    var labels: [String: Int]
    var note: String?

    static let initial = GoldenDocument(
        title: "Untitled", body: "", items: [], shape: .none, attachment: Data(), count: 0, labels: [:],
        note: nil)
}

/// SplitMix64, written out here so that the script never depends on anything that may change
/// (the standard library's `random(in:using:)` is allowed to change between releases).
struct GoldenRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

enum GoldenSchema1 {
    /// The committed store.
    static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-1.keepsake")
    }

    /// Versions appended to history "golden".
    static let goldenAppends = 400
    /// Versions undone at the end of history "golden" (its redo stack).
    static let goldenUndone = 7
    /// Versions appended to history "limited" (kept: at most 40 plus the pruning slack).
    static let limitedAppends = 120
    static let limitedMaximum = 40

    /// One frozen edit.
    static func edit(_ doc: inout GoldenDocument, _ random: inout GoldenRandom) {
        switch random.below(9) {
        case 0:
            let words = ["Sketch", "Plan", "Ünïcode ✓", "", String(repeating: "long title ", count: 12)]
            doc.title = words[random.below(words.count)]
        case 1:
            doc.body += "Line \(random.below(1000)).\n"
        case 2:
            let id = random.below(12)
            if let index = doc.items.firstIndex(where: { $0.id == id }) {
                doc.items.remove(at: index)
            } else {
                doc.items.insert(
                    .init(id: id, title: "Item \(id)", done: false), at: random.below(doc.items.count + 1))
            }
        case 3:
            if !doc.items.isEmpty {
                let index = random.below(doc.items.count)
                doc.items[index].done.toggle()
                doc.items[index].title += "+"
            }
        case 4:
            switch random.below(3) {
            case 0: doc.shape = .none
            case 1: doc.shape = .circle(radius: random.below(50))
            default: doc.shape = .rect(w: random.below(50), h: random.below(50))
            }
        case 5:
            // Large enough for the blob table (1 KiB and more), edited in place afterwards.
            if doc.attachment.count < 3000 {
                doc.attachment.append(
                    contentsOf: (0..<(1100 + random.below(900))).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            } else {
                doc.attachment[random.below(doc.attachment.count)] &+= 1
            }
        case 6:
            doc.count += 1 + random.below(5)
        case 7:
            let key = ["a", "b", "c"][random.below(3)]
            doc.labels[key] = random.below(2) == 0 ? nil : random.below(100)
        default:
            doc.note = random.below(2) == 0 ? nil : "Note \(random.below(10))"
        }
    }

    /// The values of a history: `values[0]` is the initial value, `values[n]` the one after the
    /// `n`-th edit.
    static func values(count: Int, seed: UInt64) -> [GoldenDocument] {
        var random = GoldenRandom(state: seed)
        var doc = GoldenDocument.initial
        var values = [doc]
        while values.count <= count {
            let before = doc
            edit(&doc, &random)
            if doc != before { values.append(doc) }
        }
        return values
    }

    static var golden: [GoldenDocument] { values(count: goldenAppends, seed: 1) }
    static var limited: [GoldenDocument] { values(count: limitedAppends, seed: 2) }
    static var scoped: [GoldenDocument] { values(count: 6, seed: 3) }

    /// The tag of version `n` of history "golden", if any.
    static func goldenTag(_ n: Int) -> String? { n % 50 == 0 ? "v\(n)" : nil }
}

/// A restorable object of the first release. Frozen.
final class GoldenSettings: RestorableObject {
    @Restorable var theme = "dark"
    @Restorable var fontSize = 12
}

extension GoldenSchema1 {
    /// Writes the golden store. Run once, by the first release, to make `schema-1.keepsake`:
    /// `KEEPSAKE_WRITE_GOLDEN=/tmp/schema-1.keepsake swift test --filter writeGoldenStore`.
    /// Kept to show how the committed file was made; never run again to replace it.
    @MainActor static func write(to path: String) throws {
        let store = try KeepsakeStore(path: path)
        let golden = golden
        let history = try store.history("golden", initialValue: golden[0], maximumVersions: nil)
        try history.tag("start")
        for n in 1...goldenAppends {
            try history.append(golden[n], tag: goldenTag(n))
            if n == 250 { try history.writeCheckpoint() }
        }
        for _ in 0..<goldenUndone { try history.undo() }

        let limited = limited
        let pruned = try store.history("limited", initialValue: limited[0], maximumVersions: limitedMaximum)
        for n in 1...limitedAppends { try pruned.append(limited[n]) }

        let scoped = scoped
        let inScopes = try store.history("scoped", initialValue: scoped[0])
        try inScopes.append(scoped[1])
        try inScopes.append(scoped[2], tag: "before-scope")
        try inScopes.pushNewScope()
        try inScopes.append(scoped[3])
        try inScopes.append(scoped[4], tag: "in-scope")
        try inScopes.popCurrentScope()
        try inScopes.pushNewScope()
        try inScopes.append(scoped[5])
        try inScopes.append(scoped[6])
        try inScopes.undo()

        try Caretaker(store: store).save(golden[100], as: "v100")
        try Caretaker(store: store, scope: "doc-1").save(golden[goldenAppends], as: "final")
        let settings = GoldenSettings()
        settings.theme = "light"
        settings.fontSize = 14
        try settings.takeSnapshot(withKey: "saved", in: Caretaker(store: store))
        store.close()
    }
}
