import Foundation
import Revertible
import TestSupport
import Testing

/// An array or dictionary whose elements are `Equatable` but not `Versionable` — a plain
/// `Codable` struct, as a new user writes one — is tracked element by element with no code,
/// each changed element recorded whole, and insertions, removals and moves as one patch. (It
/// was replaced whole: an edit to one of a thousand items stored both thousand-item arrays.)
@Suite struct WholeElementsTests {
    struct Item: Codable, Equatable, Identifiable {
        var id: Int
        var title: String
    }

    struct Point: Codable, Equatable {
        var x: Double
        var y: Double
    }

    struct Board: Versionable, Equatable, Codable {
        var name = "board"
        var items: [Item] = (0..<1_000).map { Item(id: $0, title: "item \($0)") }
        var points: [Point] = [Point(x: 0, y: 0), Point(x: 1, y: 1)]
        var marks: [String: Point] = ["a": Point(x: 0, y: 0), "b": Point(x: 1, y: 1)]
        var pinned: [Item]? = [Item(id: 1, title: "one")]
        var labels: [Int: String]?
    }

    func payloads(_ records: [ChangeRecord]) -> [String] {
        records.map { "\($0.path) \($0.kind) " + String(decoding: $0.payload, as: UTF8.self) }
    }

    /// Reverts `edited` to `original` and back, directly and from its stored records.
    func expectRoundTrip(_ original: Board, _ edited: Board) throws -> [ChangeRecord] {
        let reversion = try #require(edited.reversion(to: original))
        var board = edited
        try reversion.revert(&board)
        #expect(board == original)
        try reversion.inverse.revert(&board)
        #expect(board == edited)
        let records = try reversion.records()
        let stored = try Reversion(records: records, resolvingAgainst: board)
        try stored.revert(&board)
        #expect(board == original)
        try stored.inverse.revert(&board)
        #expect(board == edited)
        return records
    }

    @Test func aChangedElementIsRecordedWholeBelowItsID() throws {
        let original = Board()
        var edited = original
        edited.items[7].title = "seven"
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"items[id: 7] replace {"new":{"id":7,"title":"seven"},"old":{"id":7,"title":"item 7"}}"#
            ])
    }

    @Test func insertionsRemovalsAndMovesAreOnePatchAtTheArray() throws {
        let original = Board()
        var edited = original
        edited.items.remove(at: 2)
        edited.items.insert(Item(id: 5_000, title: "new"), at: 0)
        edited.items[10].title = "changed"
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"items[id: 10] replace {"new":{"id":10,"title":"changed"},"old":{"id":10,"title":"item 10"}}"#,
                #"items elements {"insertions":[{"element":{"id":5000,"title":"new"},"offset":0}],"newCount":1000,"oldCount":1000,"removals":[{"element":{"id":2,"title":"item 2"},"offset":2}]}"#,
            ])
    }

    @Test func elementsWithoutIDsAreRecordedByPosition() throws {
        let original = Board()
        var edited = original
        edited.points[1].y = 5
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"points[1] replace {"new":{"x":1,"y":5},"old":{"x":1,"y":1}}"#
            ])
        edited.points.append(Point(x: 2, y: 2))
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"points elements {"insertions":[{"element":{"x":1,"y":5},"offset":1},{"element":{"x":2,"y":2},"offset":2}],"newCount":3,"oldCount":2,"removals":[{"element":{"x":1,"y":1},"offset":1}]}"#
            ])
    }

    @Test func aDictionarysValuesAreRecordedWholeBelowTheirKeys() throws {
        let original = Board()
        var edited = original
        edited.marks["b"]?.x = 7
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"marks[key: "b"] replace {"new":{"x":7,"y":1},"old":{"x":1,"y":1}}"#
            ])
        edited.marks["a"] = nil
        edited.marks["c"] = Point(x: 2, y: 2)
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"marks[key: "b"] replace {"new":{"x":7,"y":1},"old":{"x":1,"y":1}}"#,
                #"marks entries {"inserted":{"c":{"x":2,"y":2}},"newCount":2,"oldCount":2,"removed":{"a":{"x":0,"y":0}}}"#,
            ])
    }

    @Test func anOptionalArrayIsTrackedElementByElementWhileItHoldsOne() throws {
        let original = Board()
        var edited = original
        edited.pinned?[0].title = "first"
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"pinned[id: 1] replace {"new":{"id":1,"title":"first"},"old":{"id":1,"title":"one"}}"#
            ])
        edited.pinned = nil
        edited.labels = [1: "a"]
        #expect(
            payloads(try expectRoundTrip(original, edited)) == [
                #"pinned replace {"new":null,"old":[{"id":1,"title":"one"}]}"#,
                #"labels replace {"new":{"1":"a"},"old":null}"#,
            ])
    }

    /// A change an earlier release stored whole (`items`, `replace`) still reverts.
    @Test func aWholeArrayChangeStoredEarlierStillReverts() throws {
        let original = Board()
        var edited = original
        edited.items[3].title = "three"
        let encoder = ChangeRecord.makeEncoder()
        let payload = try encoder.encode(["old": original.items, "new": edited.items])
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "items"), kind: "replace", payload: payload)
        edited.marks["a"] = nil
        let marks = ChangeRecord(
            path: try PathDescriptor(parsing: "marks"), kind: "replace",
            payload: try encoder.encode(["old": original.marks, "new": edited.marks]))
        var board = edited
        let stored = try Reversion(records: [record, marks], resolvingAgainst: board)
        try stored.revert(&board)
        #expect(board == original)
        try stored.inverse.revert(&board)
        #expect(board == edited)
    }

    /// Random edits of every kind, against the full copies they were made from.
    @Test(arguments: Soak.batches(usually: 2))
    func randomEditsRevertExactly(batch: UInt64) throws {
        var generator = SeededGenerator(seed: 0x3E1E_0000 + batch)
        var board = Board()
        board.items = (0..<20).map { Item(id: $0, title: "item \($0)") }
        var nextID = 20
        for _ in 0..<500 {
            let original = board
            for _ in 0...Int.random(in: 0..<3, using: &generator) {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0 where !board.items.isEmpty:
                    board.items[Int.random(in: board.items.indices, using: &generator)].title += "!"
                case 1:
                    board.items.insert(
                        Item(id: nextID, title: "new"),
                        at: Int.random(in: 0...board.items.count, using: &generator))
                    nextID += 1
                case 2 where !board.items.isEmpty:
                    board.items.remove(at: Int.random(in: board.items.indices, using: &generator))
                case 3 where board.items.count > 1:
                    let moved = board.items.remove(at: Int.random(in: board.items.indices, using: &generator))
                    board.items.insert(moved, at: Int.random(in: 0...board.items.count, using: &generator))
                case 4:
                    board.points.append(Point(x: .random(in: 0..<9, using: &generator), y: 0))
                case 5 where !board.points.isEmpty:
                    board.points[Int.random(in: board.points.indices, using: &generator)].y += 1
                case 6:
                    board.marks["\(Int.random(in: 0..<6, using: &generator))", default: Point(x: 0, y: 0)]
                        .x += 1
                case 7:
                    board.marks["\(Int.random(in: 0..<6, using: &generator))"] = nil
                case 8:
                    board.pinned = board.pinned == nil ? [Item(id: 1, title: "one")] : nil
                case 9 where board.pinned != nil:
                    board.pinned?.append(Item(id: nextID, title: "pinned"))
                    nextID += 1
                default:
                    board.name += "."
                }
            }
            if board != original { _ = try expectRoundTrip(original, board) }
        }
    }
}
