import Foundation
import Keepsake
import Testing

/// A store's history of an array of plain `Codable` elements: each edit stores the changed
/// fields of the changed element, not the array, and a history an earlier release stored with the array replaced
/// whole opens, undoes and redoes with today's model, then goes on element by element.
@MainActor @Suite struct WholeElementsStoreTests {
    let directory = TemporaryDirectory()

    struct Item: Codable, Equatable, Identifiable {
        var id: Int
        var title: String
    }

    /// The board as the earlier release tracked it with no code: its items replaced whole.
    struct EarlierBoard: Versionable, Equatable, Codable {
        var items: [Item]

        func addReversions(into reverter: inout some Reverter<EarlierBoard>) {
            reverter.appendOverwriteReversion(at: \.items, named: "items")
        }
    }

    struct Board: Versionable, Equatable, Codable {
        var items: [Item]
    }

    static let start = (0..<200).map { Item(id: $0, title: "item \($0)") }

    /// Each version's items, from `start`: one edit each.
    static func versions(from start: [Item], count: Int, seed: Int) -> [[Item]] {
        (0..<count).reduce(into: [start]) { versions, step in
            var items = versions.last!
            switch step % 3 {
            case 0: items[(seed + step * 7) % items.count].title += " \(seed)"
            case 1: items.insert(Item(id: 1_000 * seed + step, title: "new"), at: step % items.count)
            default: items.remove(at: (seed + step) % items.count)
            }
            versions.append(items)
        }
    }

    @Test func anEarlierWholeArrayHistoryOpensUndoesAndGoesOnElementByElement() throws {
        let path = directory.path("board.keepsake")
        let earlier = Self.versions(from: Self.start, count: 6, seed: 1)
        do {
            // Not closed: the next open replays the stored changes.
            let history = try KeepsakeStore(path: path).history(
                "board", initialValue: EarlierBoard(items: Self.start))
            for items in earlier.dropFirst() { try history.append(EarlierBoard(items: items)) }
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.changes(ofVersion: 1, in: "board")?.map(\.path) == ["items"])
        let history = try store.history("board", initialValue: Board(items: []))
        #expect(history.value.items == earlier.last)
        for index in earlier.indices.reversed().dropFirst() {
            #expect(try history.undo().items == earlier[index], "undo to \(index)")
        }
        for index in earlier.indices.dropFirst() {
            #expect(try history.redo().items == earlier[index], "redo to \(index)")
        }

        let today = Self.versions(from: earlier.last!, count: 6, seed: 2)
        for items in today.dropFirst() { try history.append(Board(items: items)) }
        let edit = try #require(try store.changes(ofVersion: earlier.count, in: "board"))
        let edited = earlier.last![2]
        #expect(edit.map(\.path) == ["items[id: \(edited.id)].title"])
        #expect(edit.map(\.kind) == ["text"])
        let count = edited.title.utf16.count
        #expect(
            edit.map(\.patch) == [
                #"{"new":"\#(edited.title) 2","newCount":\#(count + 2),"offset":0,"old":"\#(edited.title)","oldCount":\#(count)}"#
            ])
        try history.checkInvariants()

        let reopened = try store.history("board", initialValue: Board(items: []))
        let all = earlier + today.dropFirst()
        #expect(reopened.value.items == all.last)
        for index in all.indices.reversed().dropFirst() {
            #expect(try reopened.undo().items == all[index], "undo to \(index) after reopening")
        }
        try reopened.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }
}
