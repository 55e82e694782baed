import Foundation
import Revertible
import TestSupport
import Testing

/// The reversion examples of the seed documents, with exact values.
@Suite struct SeedReversionTests {
    @Test func aReversionRevertsTheChangedName() throws {
        var user = User(name: "", imageData: Data())
        let original = user
        user.name = "Johnny"
        let reversion = try #require(user.reversion(to: original))
        #expect(reversion.paths == [[.property("name")]])
        #expect(user.name == "Johnny")
        try reversion.revert(&user)
        #expect(user == original)
    }

    @Test func noChangeMakesNoReversion() {
        let user = User(name: "", imageData: Data())
        #expect(user.reversion(to: user) == nil)
    }

    @Test func theWrongVersionIsRefusedAndLeftUntouched() throws {
        var user = User(name: "", imageData: Data())
        let original = user
        user.name = "Johnny"
        let reversion = try #require(user.reversion(to: original))
        user.name = "Johnny Appleseed"
        #expect(
            throws: ReversionError.wrongVersion(
                path: [.property("name")], reason: #"expected "Johnny", found "Johnny Appleseed""#)
        ) {
            try reversion.revert(&user)
        }
        #expect(user.name == "Johnny Appleseed")
    }

    @Test func aReversionToTheOriginalSkipsTheMiddleVersion() throws {
        var user = User(name: "", imageData: Data())
        let original = user
        user.name = "Johnny"
        user.name = "Johnny Appleseed"
        let reversion = try #require(user.reversion(to: original))
        try reversion.revert(&user)
        #expect(user.name == "")
    }

    @Test func twoReversionsAppliedNewestToOldest() throws {
        var user = User(name: "", imageData: Data())
        let original = user
        user.name = "Johnny"
        let reversion1 = try #require(user.reversion(to: original))
        let middle = user
        user.name = "Johnny Appleseed"
        let reversion2 = try #require(user.reversion(to: middle))

        #expect(throws: ReversionError.self) { try reversion1.revert(&user) }
        try reversion2.revert(&user)
        #expect(user.name == "Johnny")
        try reversion1.revert(&user)
        #expect(user.name == "")
    }

    @Test func activityChangesAreRecordedAtTheirPaths() throws {
        let dueDate = Date(timeIntervalSince1970: 1_700_000_000)
        let original = Activity(
            id: UUID(uuid: Activity.uuid(0)), title: "Title", priority: .low, childActivities: [.mock(1)])
        var activity = original
        activity.title = "New title"
        activity.priority = .high(dueDate: dueDate, reason: "Important reason")
        activity.childActivities[0].title = "Renamed"
        activity.childActivities.append(.mock(2))

        let reversion = try #require(activity.reversion(to: original))
        #expect(
            reversion.paths.map(\.description) == [
                "title", "priority", #"childActivities[id: "00000000-0000-0000-0000-000000000001"].title"#,
                "childActivities",
            ])
        try reversion.revert(&activity)
        #expect(activity == original)
    }

    @Test func theSameEnumCaseRecordsOnlyThePayloadChange() throws {
        let dueDate = Date(timeIntervalSince1970: 1_700_000_000)
        let original = Activity(
            id: UUID(uuid: Activity.uuid(0)), title: "T", priority: .high(dueDate: dueDate, reason: "Reason"),
            childActivities: [])
        var activity = original
        activity.priority = .high(dueDate: dueDate, reason: "Reason - updated")
        let reversion = try #require(activity.reversion(to: original))
        #expect(reversion.paths == [[.property("priority"), .property("high_reason")]])
        try reversion.revert(&activity)
        #expect(activity == original)
    }

    @Test func nestedChildrenDeepInTheTreeAreAddressedById() throws {
        var root = Activity.mock(0)
        root.childActivities = [.mock(1), .mock(2)]
        root.childActivities[1].childActivities = [.mock(3), .mock(4)]
        let original = root
        root.childActivities[1].childActivities[0].priority = .medium(dueDate: nil)
        let reversion = try #require(root.reversion(to: original))
        #expect(
            reversion.paths.map(\.description) == [
                #"childActivities[id: "00000000-0000-0000-0000-000000000002"].childActivities[id: "00000000-0000-0000-0000-000000000003"].priority"#
            ])
        try reversion.revert(&root)
        #expect(root == original)
    }

    @Test func theInverseRedoesTheChange() throws {
        var user = User(name: "a", imageData: Data([1, 2, 3]))
        let original = user
        user.name = "b"
        user.imageData.append(4)
        let changed = user
        let reversion = try #require(user.reversion(to: original))
        try reversion.revert(&user)
        #expect(user == original)
        #expect(throws: ReversionError.self) { try reversion.revert(&user) }
        try reversion.inverse.revert(&user)
        #expect(user == changed)
        #expect(reversion.inverse.inverse.paths == reversion.paths)
    }

    @Test func aNestedReversionLiftsOntoItsParent() throws {
        struct Model: Versionable, Equatable { var activity: Activity }
        var model = Model(activity: .mock(1))
        let before = model.activity
        model.activity.title = "Lifted"
        let nested = try #require(model.activity.reversion(to: before))
        let lifted = nested.lifted(into: \Model.activity, at: [.property("activity")])
        #expect(lifted.paths.map(\.description) == ["activity.title"])
        try lifted.revert(&model)
        #expect(model.activity == before)
    }

    @Test func ignoredAndLetPropertiesAreNotTracked() {
        var document = Document.empty
        let original = document
        document.lastOpened = Date(timeIntervalSince1970: 99)
        #expect(document.reversion(to: original) == nil)
    }
}
