import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// Elements whose `id` is optional — a database row's, `nil` until the row is inserted — are
/// `Identifiable` too: a change inside one whose id is `nil` is stored at `rows[id: null]`,
/// and synthesized `Codable` leaves that `nil` out of the element's JSON.
@MainActor @Suite struct OptionalIDTests {
    let directory = TemporaryDirectory()

    struct Row: Identifiable, Equatable, Codable {
        var id: Int64?
        var title: String
    }

    struct Table: Versionable, Equatable, Codable {
        var rows: [Row] = []
        var tags: [String] = []
    }

    /// The same table after an app update: its tags are a set, so the array's insertions
    /// stored before do not read, and the versions are redone on the stored JSON.
    struct UpdatedTable: Versionable, Equatable, Codable {
        var rows: [Row] = []
        var tags: Set<String> = []

        init(_ table: Table) { (rows, tags) = (table.rows, Set(table.tags)) }
    }

    static let versions: [Table] = {
        var table = Table()
        var versions = [table]
        func edit(_ change: (inout Table) -> Void) {
            change(&table)
            versions.append(table)
        }
        edit { $0.rows = [Row(id: nil, title: "a"), Row(id: 1, title: "b"), Row(id: nil, title: "c")] }
        edit { $0.rows[0].title = "a2" }
        edit {
            $0.rows[1].title = "b2"
            $0.rows[2].title = "c2"
        }
        edit { $0.rows[0].id = 7 }
        edit { $0.rows[1].title = "a3" }
        edit { $0.rows.remove(at: 2) }
        edit { $0.tags.append("draft") }
        return versions
    }()

    /// Until 2026-11 the stored JSON's element for `rows[id: null]` was looked for by an `id`
    /// member, which the JSON leaves out: the store did not open after the update, nor did
    /// `keepsake value` read it.
    @Test(arguments: [false, true])
    func aChangeInsideAnElementWhoseIDIsNilIsRedoneOnTheStoredJSON(closing: Bool) throws {
        let path = directory.path("table-\(closing).keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("table", initialValue: Self.versions[0])
            for version in Self.versions.dropFirst() { try history.append(version) }
            #expect(
                try KeepsakeStore(path: path).changes(ofVersion: 2, in: "table")?.map(\.path.description)
                    == ["rows[id: null].title"])
            if closing { try history.close() }
        }
        let expected = Self.versions.map(UpdatedTable.init)
        try ModelEvolutionTests.expectHistory(
            at: path, named: "table", initialValue: expected[0], expected: expected)
        let store = try KeepsakeStore(path: path)
        // Without the app's types too.
        let json = try #require(try store.valueJSON(ofHistory: "table", atVersion: 3))
        #expect(json.contains("\"a2\"") && json.contains("\"b2\"") && json.contains("\"c2\""))
        #expect(try store.integrityCheck() == ["ok"])
    }
}
