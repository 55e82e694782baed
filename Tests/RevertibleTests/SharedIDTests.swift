import Foundation
import Revertible
import Testing

/// Elements that share an id (an app's bug: ids counted from zero again in a new process, a
/// pasted copy that kept its id). Matching them by id paired one with the other: an undo gave
/// another value than the version's, silently, in memory and from a store alike. Now every
/// change reverts exactly, directly and through stored records (where no position is kept),
/// whatever the id's type: an integer, a `UUID` (compared by their bytes) or a `String`.
@Suite struct SharedIDTests {
    typealias Row = IDRow
    typealias Table = IDTable

    func expectEachCase<ID: Hashable & Codable & Sendable>(_ a: ID, _ b: ID) throws {
        let twins = Table(rows: [Row(id: a, title: "x"), Row(id: a, title: "y")])
        // Inserted in front of two rows sharing an id: the first was paired with the second.
        var inserted = twins
        inserted.rows.insert(Row(id: b, title: "new"), at: 0)
        #expect(try pathsRevertingExactly(twins, inserted) == ["rows"])

        // The second of the two edited: by its position, which the stored path keeps (a stored
        // id names the first element that has it, which the first of the two still is).
        var second = twins
        second.rows[1].title = "y!"
        #expect(try pathsRevertingExactly(twins, second) == ["rows[1].title"])
        var first = twins
        first.rows[0].title = "x!"
        #expect(try pathsRevertingExactly(twins, first) == [#"rows[id: \#(pathID(a))].title"#])
        var both = twins
        both.rows[0].title = "x!"
        both.rows[1].title = "y!"
        #expect(
            try pathsRevertingExactly(twins, both) == [#"rows[id: \#(pathID(a))].title"#, "rows[1].title"])
        // An id no other row has is still the path.
        var other = inserted
        other.rows[0].title = "new!"
        #expect(try pathsRevertingExactly(inserted, other) == [#"rows[id: \#(pathID(b))].title"#])

        // A row that kept its place beside an inserted one of its id, edited in the same
        // version: its change was not compared at all.
        var beside = Table(rows: [Row(id: a, title: "x")])
        let original = beside
        beside.rows[0].title = "x!"
        beside.rows.append(Row(id: a, title: "copy"))
        #expect(try pathsRevertingExactly(original, beside) == ["rows"])

        // The ends swapped while two rows share an id: positions do not keep their ids.
        var swapped = Table(rows: [Row(id: a, title: "x"), Row(id: b, title: "b"), Row(id: a, title: "y")])
        let unswapped = swapped
        swapped.rows.swapAt(0, 1)
        swapped.rows[2].title = "y!"
        #expect(try pathsRevertingExactly(unswapped, swapped) == ["rows"])
    }

    func pathID<ID>(_ id: ID) -> String {
        switch id {
        case let id as String: "\"\(id)\""
        case let id as UUID: "\"\(id.uuidString)\""
        default: "\(id)"
        }
    }

    @Test func integerIDs() throws { try expectEachCase(7, 8) }
    @Test func uuidIDs() throws { try expectEachCase(UUID(), UUID()) }
    @Test func stringIDs() throws { try expectEachCase("seven", "eight") }
}
