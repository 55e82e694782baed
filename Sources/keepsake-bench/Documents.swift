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

/// ``BigDocument`` after an app update that dropped `Identifiable` from its items: the stored
/// changes inside an item name it by id, which this model's array, tracked by position, cannot
/// resolve, so opening replays them on the stored JSON.
struct UpdatedBigDocument: Versionable, Equatable, Codable {
    struct Item: Versionable, Equatable, Codable {
        var id: Int
        var title: String
        var done: Bool
        var priority: Int
    }

    var title = ""
    var attachment = Data()
    var items: [Item] = []
}

/// What the small documents' edits change, and the edits themselves.
protocol SmallFields: Versionable, Equatable, Codable {
    init()
    var f2: Int { get set }
    var s3: String { get set }
    var d1: Double { get set }
    var b4: Bool { get set }
}

extension SmallFields {
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

/// The small document: twenty fields, tracked with no code.
struct SmallDocument: SmallFields {
    var f0 = 0, f1 = 0, f2 = 0, f3 = 0, f4 = 0
    var s0 = "", s1 = "", s2 = "", s3 = "", s4 = ""
    var d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, d4 = 0.0
    var b0 = false, b1 = false, b2 = false, b3 = false, b4 = false
}

/// The small document with its twenty fields registered by hand, as the README's first
/// example registers a type's properties.
struct RegisteredSmallDocument: SmallFields {
    var f0 = 0, f1 = 0, f2 = 0, f3 = 0, f4 = 0
    var s0 = "", s1 = "", s2 = "", s3 = "", s4 = ""
    var d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, d4 = 0.0
    var b0 = false, b1 = false, b2 = false, b3 = false, b4 = false

    func addReversions(into reverter: inout some Reverter<RegisteredSmallDocument>) {
        reverter.appendReversion(at: \.f0)
        reverter.appendReversion(at: \.f1)
        reverter.appendReversion(at: \.f2)
        reverter.appendReversion(at: \.f3)
        reverter.appendReversion(at: \.f4)
        reverter.appendReversion(at: \.s0)
        reverter.appendReversion(at: \.s1)
        reverter.appendReversion(at: \.s2)
        reverter.appendReversion(at: \.s3)
        reverter.appendReversion(at: \.s4)
        reverter.appendReversion(at: \.d0)
        reverter.appendReversion(at: \.d1)
        reverter.appendReversion(at: \.d2)
        reverter.appendReversion(at: \.d3)
        reverter.appendReversion(at: \.d4)
        reverter.appendReversion(at: \.b0)
        reverter.appendReversion(at: \.b1)
        reverter.appendReversion(at: \.b2)
        reverter.appendReversion(at: \.b3)
        reverter.appendReversion(at: \.b4)
    }
}

/// Successive single-field edits of a small document: each ``next()`` edits one more field.
struct SmallEdits<Document: SmallFields> {
    private(set) var value: Document
    /// How many edits were made.
    private(set) var step = 0

    init(from value: Document = Document()) { self.value = value }

    /// The document with one more field edited.
    mutating func next() -> Document {
        step += 1
        value.edit(step)
        return value
    }
}
