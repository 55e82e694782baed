import Foundation
import Keepsake

/// The big document: 1 MiB of `Data` and 10,000 identified items.
struct BigDocument: Versionable, Equatable, Codable {
    struct Item: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var title: String
        var done: Bool
        var priority: Int
    }

    var title: String
    var attachment: Data
    var items: [Item]

    static func make(items: Int = 10_000, bytes: Int = 1 << 20) -> BigDocument {
        BigDocument(
            title: "Big document",
            attachment: Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }),
            items: (0..<items).map { Item(id: $0, title: "Item \($0)", done: false, priority: $0 % 5) })
    }
}

/// The small document: twenty fields.
struct SmallDocument: Versionable, Equatable, Codable {
    var f0 = 0, f1 = 0, f2 = 0, f3 = 0, f4 = 0
    var s0 = "", s1 = "", s2 = "", s3 = "", s4 = ""
    var d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, d4 = 0.0
    var b0 = false, b1 = false, b2 = false, b3 = false, b4 = false

    /// Changes one field, chosen by `step`.
    mutating func edit(_ step: Int) {
        switch step % 4 {
        case 0: f2 = step
        case 1: s3 = "edit \(step)"
        case 2: d1 = Double(step) / 3
        default: b4.toggle()
        }
    }
}

/// Successive single-field edits of a small document: each ``next()`` edits one more field.
struct SmallEdits {
    private(set) var value: SmallDocument
    /// How many edits were made.
    private(set) var step = 0

    init(from value: SmallDocument = SmallDocument()) { self.value = value }

    /// The document with one more field edited.
    mutating func next() -> SmallDocument {
        step += 1
        value.edit(step)
        return value
    }
}
