import Foundation
import Keepsake
import Observation
import TestSupport
import Testing

/// The VersioningController examples of the seed README, with exact values, against both
/// storages: in memory, and a history in a store file.
@MainActor @Suite struct ControllerSeedTests {
    static let dueDate = Date(timeIntervalSince1970: 1_700_000_000)
    let directory = TemporaryDirectory()

    struct Model {
        @Versioned var activity: Activity

        init(_ storage: HistoryStorage<Activity>) {
            _activity = Versioned(
                wrappedValue: Activity(
                    id: UUID(uuid: Activity.uuid(0)), title: "Title", priority: .low, childActivities: []),
                storage: storage)
        }
    }

    /// The storage of one test case.
    func storage<Value: Versionable & Codable & SendableMetatype>(_ kind: StorageKind) throws
        -> HistoryStorage<Value>
    {
        try kind.storage(path: directory.path("seed.keepsake"), history: "seed")
    }

    @Test(arguments: StorageKind.allCases)
    func undoAndRedoWalkTheVersionsInOrder(kind: StorageKind) throws {
        let model = Model(try storage(kind))
        model.activity.title = "New title"
        model.activity.priority = .high(dueDate: Self.dueDate, reason: "Important reason")
        model.activity.childActivities.append(.mock(1))
        model.$activity.undo()
        #expect(model.activity.childActivities == [])
        model.$activity.undo()
        #expect(model.activity.priority == .low)
        model.$activity.undo()
        #expect(model.activity.title == "Title")
        model.$activity.redo()
        #expect(model.activity.title == "New title")
        #expect(model.activity.priority == .low)
        #expect(model.$activity.hasUndo && model.$activity.hasRedo)
        #expect(model.$activity.error == nil)
        #expect(throws: Never.self) { try model.$activity.checkInvariants() }
    }

    @Test(arguments: StorageKind.allCases)
    func aTransactionIsUndoneByOneUndo(kind: StorageKind) throws {
        let model = Model(try storage(kind))
        model.$activity.setWithTransaction { activity in
            activity.title = "New title"
            activity.priority = .medium(dueDate: nil)
        }
        #expect(model.activity.title == "New title")
        model.$activity.undo()
        #expect(model.activity.title == "Title")
        #expect(model.activity.priority == .low)
        #expect(!model.$activity.hasUndo)
    }

    @Test(arguments: StorageKind.allCases)
    func aPoppedScopeIsOneVersionOfItsParent(kind: StorageKind) throws {
        let model = Model(try storage(kind))
        model.activity.title = "New title"
        model.$activity.pushNewScope()
        #expect(model.$activity.scopeLevel == 1)
        #expect(!model.$activity.hasUndo)
        model.activity.priority = .medium(dueDate: nil)
        model.activity.childActivities.append(.mock(1))
        model.$activity.undo()
        #expect(model.activity.childActivities == [])
        model.$activity.undo()
        model.$activity.undo()  // never leaves the scope
        #expect(model.activity.priority == .low)
        #expect(model.activity.title == "New title")
        model.$activity.redo()
        model.$activity.redo()
        model.$activity.popCurrentScope()
        #expect(model.$activity.scopeLevel == 0)
        #expect(model.$activity.hasUndo)
        model.$activity.undo()
        #expect(model.activity.childActivities == [])
        #expect(model.activity.priority == .low)
        #expect(model.activity.title == "New title")
        model.$activity.undo()
        #expect(model.activity.title == "Title")
    }

    @Test(arguments: StorageKind.allCases)
    func undoAndPopDiscardsTheScope(kind: StorageKind) throws {
        let model = Model(try storage(kind))
        model.$activity.pushNewScope()
        model.activity.title = "Scratch"
        model.activity.title = "Scratch 2"
        #expect(model.$activity.undoAndPopCurrentScope().title == "Title")
        #expect(model.activity.title == "Title")
        #expect(model.$activity.scopeLevel == 0)
        #expect(!model.$activity.hasUndo && !model.$activity.hasRedo)
    }

    @Test(arguments: StorageKind.allCases)
    func tagsAreWaypointsWithinTheScope(kind: StorageKind) throws {
        let model = Model(try storage(kind))
        model.$activity.tag("original")
        model.activity.title = "New title"
        model.activity.priority = .medium(dueDate: nil)
        model.$activity.tag("without-child")
        model.activity.childActivities = [.mock(1), .mock(2), .mock(3)]
        model.$activity.tag("with-child")

        model.$activity.undo(to: "without-child")
        #expect(model.activity.childActivities == [])
        #expect(model.activity.priority == .medium(dueDate: nil))
        let tags = model.$activity.tags()
        #expect(tags.undo == ["original", nil, "without-child"])
        #expect(tags.redo == ["with-child"])

        model.$activity.undo(to: "original")
        #expect(model.activity.title == "Title")
        model.$activity.redo(to: "with-child")
        #expect(model.activity.childActivities.count == 3)
        #expect(model.$activity.tags().redo == [])
        model.$activity.undo(to: "missing")
        #expect(model.activity.childActivities.count == 3)
    }

    @Test(arguments: StorageKind.allCases)
    func directKeyPathAndReferenceTrackingAgree(kind: StorageKind) throws {
        var activity = Activity.mock(0)
        let direct = try VersioningController(activity, storage: try storage(kind))
        activity.title = "New title"
        try direct.append(activity)
        try direct.undo(&activity)
        #expect(activity.title == "Child 0")

        struct Holder { var activity = Activity.mock(0) }
        var holder = Holder()
        let byKeyPath = VersioningController(on: holder, at: \.activity)
        holder.activity.priority = .medium(dueDate: nil)
        try byKeyPath.append(root: holder)
        try byKeyPath.undo(root: &holder)
        #expect(holder.activity.priority == .low)

        final class ViewModel { var activity = Activity.mock(0) }
        let viewModel = ViewModel()
        let byReference = try VersioningController(
            on: viewModel, at: \.activity,
            storage: try kind.storage(path: directory.path("reference.keepsake"), history: "reference"))
        viewModel.activity.title = "New title"
        try byReference.appendCurrentVersion()
        try byReference.undo()
        #expect(viewModel.activity.title == "Child 0")
        try byReference.redo()
        #expect(viewModel.activity.title == "New title")
    }

    @Test(arguments: StorageKind.allCases)
    func debouncedTypingIsUndoneInOneStep(kind: StorageKind) async throws {
        let clock = ManualClock()
        let model = Model(try storage(kind))
        model.$activity.withDebouncing(clock: clock, interval: .milliseconds(500))
        model.activity.title = ""
        for character in "New title" {
            model.activity.title.append(character)
            clock.advance(by: .milliseconds(100))
        }
        clock.advance(by: .milliseconds(500))
        #expect(model.$activity.hasUndo)
        #expect(await settle { model.$activity.versionCount == 1 })
        model.$activity.undo()
        #expect(model.activity.title == "Title")
    }

    @Test(arguments: StorageKind.allCases)
    func observedRootsAreAppendedWithoutCallingAppend(kind: StorageKind) async throws {
        let model = ObservedActivity()
        let controller = try VersioningController(
            observing: model, at: \.activity, storage: try storage(kind))
        model.activity.title = "New title"
        #expect(await settle { controller.hasUndo })
        model.activity.priority = .medium(dueDate: nil)
        #expect(await settle { controller.versionCount == 2 })
        try controller.undo()
        #expect(model.activity.priority == .low)
        try controller.undo()
        #expect(model.activity.title == "Child 0")
        // The controller's own writes are not appended again.
        for _ in 0..<100 { await Task.yield() }
        #expect(controller.versionCount == 2)
        #expect(controller.hasRedo)
    }
}

@Observable final class ObservedActivity {
    var activity = Activity.mock(0)
}
