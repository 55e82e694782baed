import Foundation
import TestSupport
import Testing

@testable import Keepsake

/// A store whose items share ids, as an app writes one that counts its ids from zero again in
/// each process: every version reads back exactly after the store is reopened, when undo and
/// redo resolve stored paths, which keep no positions. (Before, an undo after a reopen gave
/// another value than the version's, or failed with `.wrongVersion` on the app's own history.)
@MainActor @Suite struct SharedIDStoreTests {
    let directory = TemporaryDirectory()

    struct Item: Identifiable, Equatable, Codable {
        let id: Int
        var title: String
    }

    struct Board: Versionable, Equatable, Codable {
        var items: [Item] = []
    }

    /// Each process adds items numbered from zero, edits one, moves one, or removes one.
    static func edit(_ board: inout Board, counter: inout Int, using generator: inout SeededGenerator) {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            board.items.insert(
                Item(id: counter, title: "item \(counter)"),
                at: Int.random(in: 0...board.items.count, using: &generator))
            counter += 1
        case 1 where !board.items.isEmpty:
            board.items[Int.random(in: 0..<board.items.count, using: &generator)].title += "!"
        case 2 where board.items.count > 1:
            board.items.swapAt(0, Int.random(in: 1..<board.items.count, using: &generator))
        case 3 where !board.items.isEmpty:
            board.items.remove(at: Int.random(in: 0..<board.items.count, using: &generator))
        default:
            board.items.append(Item(id: counter, title: "item \(counter)"))
            counter += 1
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func everyVersionReadsBackAfterReopening(seed: UInt64) throws {
        let path = directory.path("board-\(seed).keepsake")
        var generator = SeededGenerator(seed: seed)
        var versions = [Board()]
        // Three "processes", each counting its ids from zero.
        for _ in 0..<3 {
            let history = try KeepsakeStore(path: path).history(
                "board", initialValue: Board(), maximumVersions: nil)
            #expect(history.value == versions.last)
            var board = history.value
            var counter = 0
            for _ in 0..<60 {
                Self.edit(&board, counter: &counter, using: &generator)
                if board != versions.last {
                    try history.append(board)
                    versions.append(board)
                }
            }
            try history.close()
        }
        #expect(versions.last!.items.count != Set(versions.last!.items.map(\.id)).count, "no id is shared")

        let store = try KeepsakeStore(path: path)
        let history = try store.history("board", initialValue: Board(), maximumVersions: nil)
        for version in versions.indices.reversed().dropFirst() {
            #expect(try history.undo() == versions[version], "undo to version \(version)")
        }
        try history.close()
        let reopened = try KeepsakeStore(path: path).history(
            "board", initialValue: Board(), maximumVersions: nil)
        for version in versions.indices.dropFirst() {
            #expect(try reopened.redo() == versions[version], "redo to version \(version)")
        }
        try reopened.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }
}
