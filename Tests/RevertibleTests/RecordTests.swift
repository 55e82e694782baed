import Foundation
import Revertible
import TestSupport
import Testing

/// Reversions as records, and every way reading them back can fail.
@Suite struct RecordTests {
    @Test func recordsResolveThroughTheTypesOwnRegistrations() throws {
        var activity = Activity.mock(0)
        activity.childActivities = [.mock(1)]
        let original = activity
        activity.childActivities[0].priority = .medium(dueDate: Date(timeIntervalSince1970: 5))
        activity.title = "Renamed"
        let records = try #require(activity.reversion(to: original)).records()
        #expect(
            records.map(\.path.description) == [
                "title", #"childActivities[id: "00000000-0000-0000-0000-000000000001"].priority"#,
            ])
        let decoded = try JSONDecoder().decode([ChangeRecord].self, from: JSONEncoder().encode(records))
        try Reversion(records: decoded, resolvingAgainst: activity).revert(&activity)
        #expect(activity == original)
    }

    @Test func aChangeToAPropertyTheTypeNoLongerHasIsSkipped() throws {
        let record = ChangeRecord(path: [.property("fullName")], kind: "text", payload: Data("{}".utf8))
        let reversion = try Reversion<User>(
            records: [record], resolvingAgainst: User(name: "", imageData: Data()))
        #expect(reversion.paths == [])
    }

    @Test func aPathToAMissingElementIsNotFound() {
        let path: PathDescriptor = [
            .property("childActivities"), .id(#""00000000-0000-0000-0000-000000000009""#), .property("title"),
        ]
        let record = ChangeRecord(path: path, kind: "text", payload: Data("{}".utf8))
        #expect(throws: ReversionError.pathNotFound(path: path, type: "Activity")) {
            try Reversion<Activity>(records: [record], resolvingAgainst: Activity.mock(0))
        }
    }

    @Test func aValueOfAnotherTypeDoesNotDecode() {
        let record = ChangeRecord(
            path: [.property("value")], kind: "replace", payload: Data(#"{"old":"a","new":"b"}"#.utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("value")], type: "Int",
                reason: "Expected to decode Int but found a string instead. (at old)")
        ) {
            try Reversion<LeafTests.Box<Int>>(records: [record], resolvingAgainst: .init(value: 1))
        }
    }

    @Test func aRecordOfAnotherKindIsRefused() {
        let record = ChangeRecord(path: [.property("name")], kind: "bytes", payload: Data("{}".utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("name")], type: "String",
                reason: #"stored as a "bytes" change, expected "text""#)
        ) {
            try Reversion<User>(records: [record], resolvingAgainst: User(name: "", imageData: Data()))
        }
    }

    @Test func aNonCodableValueWorksInMemoryAndNamesItselfWhenStored() throws {
        var value = HoldsOpaque(opaque: Opaque(token: 1))
        let original = value
        value.opaque.token = 2
        let reversion = try #require(value.reversion(to: original))
        #expect(throws: ReversionError.notEncodable(path: [.property("opaque")], type: "Opaque")) {
            try reversion.records()
        }
        try reversion.revert(&value)
        #expect(value.opaque == original.opaque)
    }

    @Test func errorsSayWhatAndWhere() {
        #expect(
            ReversionError.pathNotFound(path: [.property("fullName")], type: "User").description
                == "The stored path `fullName` does not name a tracked location of User.")
        #expect(
            ReversionError.wrongVersion(path: [], reason: "x").description
                == "The value at (root) is not the version this reversion was made from: x.")
    }
}
