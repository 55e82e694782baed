import Foundation
import Revertible
import TestSupport
import Testing

/// A leaf type of the user's, made diffable in one line.
enum Color: String, Codable, VersionableLeaf {
    case red, green, blue
}

/// A struct holding every kind of tracked property, for the randomized tests.
struct Document: Versionable, Equatable, Codable {
    struct Item: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var name: String
        var done: Bool
        var tags: Set<String>
        /// An enum with payloads, diffed by payload with no code.
        var shape: Shape = .dot
    }

    var title: String
    var count: Int
    var ratio: Double
    var color: Color
    var note: String?
    var blob: Data
    var items: [Item]
    var numbers: [Int]
    var scores: [String: Int]
    var nested: [String: Item]
    /// An enum that is only `Codable`, diffed by payload too.
    var tint: Tint = .none
    @VersionableIgnored var lastOpened: Date

    static let empty = Document(
        title: "", count: 0, ratio: 0, color: .red, note: nil, blob: Data(), items: [], numbers: [],
        scores: [:],
        nested: [:], lastOpened: Date(timeIntervalSince1970: 0))
}

/// A value type that is neither Codable nor Equatable, tracked in memory only.
struct Opaque: VersionableLeaf {
    var token: Int
    static func == (a: Opaque, b: Opaque) -> Bool { a.token == b.token }
}

struct HoldsOpaque: Versionable {
    var opaque: Opaque
}

/// The records as `path kind payload` lines, to compare with exact expectations.
func payloads(_ records: [ChangeRecord]) -> [String] {
    records.map { "\($0.path) \($0.kind) " + String(decoding: $0.payload, as: UTF8.self) }
}

/// Reverts `edited` to `original` and back, directly and from its stored records, expecting
/// each exactly.
///
/// - Returns: The records.
func expectRoundTrip<Value: Versionable & Equatable>(_ original: Value, _ edited: Value) throws
    -> [ChangeRecord]
{
    let reversion = try #require(edited.reversion(to: original))
    var value = edited
    try reversion.revert(&value)
    #expect(value == original)
    try reversion.inverse.revert(&value)
    #expect(value == edited)
    let records = try reversion.records()
    let stored = try Reversion(records: records, resolvingAgainst: value)
    try stored.revert(&value)
    #expect(value == original)
    try stored.inverse.revert(&value)
    #expect(value == edited)
    return records
}

/// A row of a table whose ids are of any type: what the tests of matching by id share.
struct IDRow<ID: Hashable & Codable & Sendable>: Identifiable, Versionable, Equatable, Codable {
    let id: ID
    var title: String
}

/// Rows matched by id.
struct IDTable<ID: Hashable & Codable & Sendable>: Versionable, Equatable, Codable {
    var rows: [IDRow<ID>]
}
