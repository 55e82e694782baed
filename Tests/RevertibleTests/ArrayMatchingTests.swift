import Foundation
import Revertible
import TestSupport
import Testing

/// How an array of `Identifiable` elements is matched by id: only the middle between the ends
/// that are the same values, and with as few elements taken out and put in as can be (a
/// longest common subsequence, found in O(n log n)). Before, every element was matched through
/// generic code: an item inserted among 10,000 took 6 ms to find, and the array reversed two
/// seconds.
@Suite struct ArrayMatchingTests {
    typealias Row = IDRow
    typealias Table = IDTable

    /// An id of no type the diff reads by its bytes or as a string: matched through its own
    /// `Hashable`.
    struct Code: Hashable, Codable, Sendable {
        var letter: String
        var number: Int
    }

    /// The offsets the `rows` patch takes out and puts in, after checking that the change
    /// reverts exactly (directly and through stored records) and that its paths are `paths`.
    func offsets<ID: Hashable & Codable & Sendable>(
        _ original: Table<ID>, _ edited: Table<ID>, paths: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (removed: [Int], inserted: [Int]) {
        #expect(try pathsRevertingExactly(original, edited) == paths, sourceLocation: sourceLocation)
        let reversion = try #require(edited.reversion(to: original))
        let record = try #require(try reversion.records().first { $0.path.description == "rows" })
        #expect(record.kind == "elements", sourceLocation: sourceLocation)
        let patch = try JSONDecoder().decode(ArrayPatch<Row<ID>>.self, from: record.payload)
        return (patch.removals.map(\.offset), patch.insertions.map(\.offset))
    }

    func expectEachCase<ID: Hashable & Codable & Sendable>(_ id: (Int) -> ID, _ pathID: (ID) -> String) throws
    {
        let original = Table(rows: (0..<1000).map { Row(id: id($0), title: "row \($0)") })

        var inserted = original
        inserted.rows.insert(Row(id: id(5000), title: "new"), at: 500)
        #expect(try offsets(original, inserted, paths: ["rows"]) == ([], [500]))

        var removed = original
        removed.rows.remove(at: 500)
        #expect(try offsets(original, removed, paths: ["rows"]) == ([500], []))

        var appended = original
        appended.rows.append(Row(id: id(5000), title: "new"))
        #expect(try offsets(original, appended, paths: ["rows"]) == ([], [1000]))

        // A row moved far, and one it passed edited: the moved row is taken out and put back;
        // the edited one keeps its place and records its field.
        var moved = original
        moved.rows.insert(moved.rows.remove(at: 100), at: 900)
        moved.rows[400].title = "edited"
        #expect(
            try offsets(original, moved, paths: ["rows[id: \(pathID(id(401)))].title", "rows"])
                == ([100], [900]))

        // The ends swapped: the rows between keep their places.
        var swapped = original
        swapped.rows.swapAt(10, 990)
        #expect(try offsets(original, swapped, paths: ["rows"]) == ([10, 990], [10, 990]))

        // Reversed: all but one taken out and put back, the fewest there can be.
        let short = Table(rows: Array(original.rows.prefix(6)))
        var reversed = short
        reversed.rows.reverse()
        let (out, back) = try offsets(short, reversed, paths: ["rows"])
        #expect(out.count == 5 && back.count == 5)

        // A row at the start shares its id with one in the middle, which is edited while a row
        // is inserted before it: `[id: …]` would name the first, so the middle is replaced whole.
        var twins = Table(rows: [
            Row(id: id(1), title: "a"), Row(id: id(2), title: "b"), Row(id: id(1), title: "c"),
        ])
        let untwinned = twins
        twins.rows.insert(Row(id: id(5), title: "x"), at: 1)
        twins.rows[3].title = "c!"
        #expect(try offsets(untwinned, twins, paths: ["rows"]) == ([1, 2], [1, 2, 3]))
        // The same with the twin at the end: a position remembered for one version named the
        // other twin in the other version, and an undo was refused, or gave a wrong value.
        var later = Table(rows: [
            Row(id: id(3), title: "c"), Row(id: id(1), title: "a"), Row(id: id(1), title: "b"),
        ])
        let unlater = later
        later.rows.insert(Row(id: id(8), title: "x"), at: 1)
        later.rows[2].title = "a!"
        #expect(try offsets(unlater, later, paths: ["rows"]) == ([1], [1, 2]))
        // Many rows edited, one of them the twin of a row at the start, beside an insertion:
        // the ends' ids are hashed once rather than read again for every edited row.
        var many = Table(rows: (0..<900).map { Row(id: id($0 == 899 ? 5 : $0), title: "row \($0)") })
        let unedited = many
        many.rows.insert(Row(id: id(5000), title: "new"), at: 300)
        for index in 301..<901 { many.rows[index].title += "!" }
        #expect(try offsets(unedited, many, paths: ["rows"]) == (Array(300..<900), Array(300..<901)))
    }

    @Test func integerIDs() throws { try expectEachCase({ $0 }, { "\($0)" }) }

    @Test func uuidIDs() throws {
        let uuids = (0..<6000).map { _ in UUID() }
        try expectEachCase({ uuids[$0] }, { "\"\($0.uuidString)\"" })
    }

    @Test func stringIDs() throws { try expectEachCase({ "row-\($0)" }, { "\"\($0)\"" }) }

    @Test func otherHashableIDs() throws {
        try expectEachCase({ Code(letter: "c", number: $0) }, { #"{"letter":"c","number":\#($0.number)}"# })
    }

    /// Random reorderings, insertions, removals and edits of rows with unique ids revert exactly,
    /// directly and through stored records, and take out and put in as few rows as
    /// `CollectionDifference` (a minimal edit script) does.
    @Test(arguments: Soak.batches(usually: 4))
    func randomReorderingsAreMinimalAndRevertExactly(batch: UInt64) throws {
        var generator = SeededGenerator(seed: batch &* 7919 &+ 11)
        var nextID = 100
        for _ in 0..<150 {
            let original = Table(
                rows: (0..<Int.random(in: 0..<30, using: &generator)).map { Row(id: $0, title: "row \($0)") })
            var edited = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let count = edited.rows.count
                switch Int.random(in: 0..<6, using: &generator) {
                case 0:
                    edited.rows.insert(
                        Row(id: nextID, title: "new"), at: Int.random(in: 0...count, using: &generator))
                    nextID += 1
                case 1 where count > 0: edited.rows.remove(at: Int.random(in: 0..<count, using: &generator))
                case 2 where count > 1:
                    let row = edited.rows.remove(at: Int.random(in: 0..<count, using: &generator))
                    edited.rows.insert(row, at: Int.random(in: 0..<count, using: &generator))
                case 3 where count > 1:
                    let (a, b) = (
                        Int.random(in: 0..<count, using: &generator),
                        Int.random(in: 0..<count, using: &generator)
                    )
                    edited.rows[min(a, b)...max(a, b)].reverse()
                case 4: edited.rows.shuffle(using: &generator)
                case 5 where count > 0: edited.rows[Int.random(in: 0..<count, using: &generator)].title += "!"
                default: break
                }
            }
            guard edited != original else { continue }
            _ = try pathsRevertingExactly(original, edited)
            guard edited.rows.map(\.id) != original.rows.map(\.id) else { continue }
            let (removed, inserted) = try offsets(
                original, edited, paths: try pathsRevertingExactly(original, edited))
            let minimal = edited.rows.map(\.id).difference(from: original.rows.map(\.id))
            #expect(removed.count == minimal.removals.count && inserted.count == minimal.insertions.count)
        }
    }
}
