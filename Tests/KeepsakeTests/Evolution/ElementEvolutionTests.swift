import Foundation
import TestSupport
import Testing

@testable import Keepsake

/// The first release of a task board: its tasks are plain `Codable` structs.
enum OldBoardApp {
    struct Task: Codable, Equatable, Identifiable {
        var id: Int
        var title: String
    }

    struct Board: Versionable, Equatable, Codable {
        var tasks: [Task] = []
        var byName: [String: Task] = [:]
    }

    /// The versions the old app recorded, oldest first: tasks inserted, edited, removed, and
    /// added under names.
    static let versions: [Board] = (0..<12).reduce(into: [Board()]) { versions, step in
        var board = versions.last!
        switch step % 4 {
        case 0: board.tasks.append(Task(id: step, title: "task \(step)"))
        case 1: board.tasks[board.tasks.count - 1].title += "!"
        case 2: board.byName["n\(step % 3)"] = Task(id: 100 + step, title: "named \(step)")
        default: board.tasks.remove(at: 0)
        }
        versions.append(board)
    }

    static func write(path: String, closing: Bool) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: versions[0])
        for version in versions.dropFirst() { try history.append(version) }
        if closing { try history.close() }
    }
}

/// The first release of a checklist: each item is done or not.
enum OldChecklistApp {
    struct Item: Codable, Equatable, Identifiable {
        var id: Int
        var title: String
        var done: Bool
    }

    struct Checklist: Versionable, Equatable, Codable {
        var items: [Item] = []
    }

    /// Items inserted, then ticked and one unticked.
    static let versions: [Checklist] = (0..<6).reduce(into: [Checklist()]) { versions, step in
        var checklist = versions.last!
        if step < 3 {
            checklist.items.append(Item(id: step, title: "item \(step)", done: false))
        } else {
            checklist.items[(step - 3) % 2].done.toggle()
        }
        versions.append(checklist)
    }

    static func write(path: String, closing: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: versions[0])
        for version in versions.dropFirst() { try history.append(version) }
        try Caretaker(store: store).save(versions.last!, as: "ticked")
        if closing { try history.close() }
    }
}

/// An app update that adds a property to the tasks: every store the old app wrote opens, each
/// stored task reading the added property from the type's `DecodingDefaults` (in a checkpoint
/// and in a stored change alike); without them the open fails saying what to do, and the store
/// is left as it was.
@MainActor @Suite struct ElementEvolutionTests {
    let directory = TemporaryDirectory()

    struct Task: Codable, Equatable, Identifiable, DecodingDefaults {
        var id: Int
        var title: String
        var priority = 0
        var due: Date?

        static var decodingDefaults: Task { Task(id: 0, title: "", priority: 2) }
    }

    struct Board: Versionable, Equatable, Codable {
        var tasks: [Task] = []
        var byName: [String: Task] = [:]
    }

    /// The old version as today's model reads it.
    static func updated(_ board: OldBoardApp.Board) -> Board {
        Board(
            tasks: board.tasks.map { Task(id: $0.id, title: $0.title, priority: 2) },
            byName: board.byName.mapValues { Task(id: $0.id, title: $0.title, priority: 2) })
    }

    func oldStore(closing: Bool) async throws -> String {
        let path = directory.path("board-\(closing).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, closing = closing as Bool] in
            try OldBoardApp.write(path: path, closing: closing)
        }
        return path
    }

    @Test(arguments: [true, false])
    func aPropertyAddedToTheElementsTakesTheTypesDefaults(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let expected = OldBoardApp.versions.map(Self.updated)
        try ModelEvolutionTests.expectHistory(at: path, initialValue: Board(), expected: expected)
        // The next edit goes on field by field, and undoes.
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Board())
        var next = expected.last!
        next.byName["n0"]?.priority = 5
        try history.append(next)
        #expect(
            try store.changes(ofVersion: expected.count, in: "doc")?.map(\.path) == [
                #"byName[key: "n0"].priority"#
            ])
        #expect(try history.undo() == expected.last)
        try history.checkInvariants()
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func aSnapshotOfEarlierElementsRestoresWithTheDefaults() throws {
        let path = directory.path("snapshot.keepsake")
        let saved = OldBoardApp.versions[7]
        try Caretaker(store: KeepsakeStore(path: path)).save(saved, as: "before")
        try ModelEvolutionTests().moveSnapshots(at: path, to: Board.self)
        let restored = try #require(
            try Caretaker(store: KeepsakeStore(path: path)).restore("before", as: Board.self))
        #expect(restored == Self.updated(saved))
        #expect(restored.tasks.map(\.priority) == [2] && restored.byName.values.map(\.priority) == [2, 2])
    }

    struct GrownBoard: Versionable, Equatable, Codable {
        var tasks: [Task] = []
        var byName: [String: Task] = [:]
        var color = "red"
    }

    /// A snapshot of a board that has since gained a property of its own, besides its tasks'
    /// (which their defaults fill): a restore with nothing to take it from names that property,
    /// not a task's, and says to pass a template; with one, it restores. (The error used to name
    /// `tasks[0].priority`, which the defaults had filled: the standard decoder fails there first.)
    @Test func aSnapshotLackingATopLevelPropertyNamesItAndSaysToPassATemplate() throws {
        let path = directory.path("grown.keepsake")
        let saved = OldBoardApp.versions[7]
        try Caretaker(store: KeepsakeStore(path: path)).save(saved, as: "before")
        try ModelEvolutionTests().moveSnapshots(at: path, to: GrownBoard.self)
        let caretaker = try Caretaker(store: KeepsakeStore(path: path))

        let error = #expect(throws: KeepsakeError.self) {
            try caretaker.restore("before", as: GrownBoard.self)
        }
        #expect(
            error?.description == """
                The snapshot "before" does not decode at `color`: no value for "color"; if "color" was \
                added since the snapshot was saved, restore it with fillingMissingFrom: a value of \
                today's type to take it from (or conform the type that declares it to DecodingDefaults, \
                or make it optional).
                """)
        let restored = try caretaker.restore(
            "before", as: GrownBoard.self, fillingMissingFrom: GrownBoard(color: "blue"))
        let updated = Self.updated(saved)
        #expect(restored == GrownBoard(tasks: updated.tasks, byName: updated.byName, color: "blue"))
    }

    enum Status: String, Codable { case open, done }

    /// Today's item, as the update wrote it first: `done` became `status`, with no declaration.
    struct UndeclaredItem: Codable, Equatable, Identifiable {
        var id: Int
        var title: String
        var status: Status
    }

    struct UndeclaredChecklist: Versionable, Equatable, Codable {
        var items: [UndeclaredItem] = []
    }

    /// Today's item, with the rename declared as the error says.
    struct Item: Codable, Equatable, Identifiable, Versionable {
        var id: Int
        var title: String
        var status: Status

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("done", to: "status"),
            .converted("status", from: Bool.self) { $0 ? Status.done : Status.open },
        ]
    }

    struct Checklist: Versionable, Equatable, Codable {
        var items: [Item] = []
    }

    /// A property renamed (and retyped) with nothing declared reads as one added: the error
    /// used to say only to give the item type `DecodingDefaults`, which would have opened the
    /// store with every item's status the default's, the stored ones lost. It now names the
    /// stored key no property reads and the declaration a rename needs, which opens every
    /// version with each item's own status; nothing is lost in between.
    @Test(arguments: [true, false])
    func aRenamedElementPropertyIsNamedWithTheDeclarationItNeeds(closing: Bool) async throws {
        let path = directory.path("checklist-\(closing).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, closing = closing as Bool] in
            try OldChecklistApp.write(path: path, closing: closing)
        }
        // Closed, the history's value is stored whole; otherwise its first change inserts the items.
        let place = closing ? "items[0].status" : "insertions[0].element.status"
        let hint = """
            no value for "status" (at \(place)); the stored data has "done", which no property reads: if "status" \
            was stored as "done", declare .renamed("done", to: "status") in the propertyEvolution of the type \
            that declares it (adopting Versionable), and .converted if its type changed; if "status" was added \
            since the data was stored, conform the type that declares it to DecodingDefaults
            """
        let opening = #expect(throws: KeepsakeError.self) {
            try KeepsakeStore(path: path).history("doc", initialValue: UndeclaredChecklist())
        }
        #expect(opening?.description.contains(hint) == true, "\(String(describing: opening))")
        try ModelEvolutionTests().moveSnapshots(at: path, to: UndeclaredChecklist.self)
        let restoring = #expect(throws: KeepsakeError.self) {
            try Caretaker(store: KeepsakeStore(path: path)).restore("ticked", as: UndeclaredChecklist.self)
        }
        #expect(
            restoring?.description.contains(
                #"at `items[0].status`: no value for "status"; the stored data has "done", which no property reads: if "status" was stored as "done", declare .renamed("done", to: "status")"#
            ) == true, "\(String(describing: restoring))")

        let expected = OldChecklistApp.versions.map { checklist in
            Checklist(
                items: checklist.items.map {
                    Item(id: $0.id, title: $0.title, status: $0.done ? .done : .open)
                })
        }
        try ModelEvolutionTests.expectHistory(at: path, initialValue: Checklist(), expected: expected)
        try ModelEvolutionTests().moveSnapshots(at: path, to: Checklist.self)
        #expect(
            try Caretaker(store: KeepsakeStore(path: path)).restore("ticked", as: Checklist.self)
                == expected.last)
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    struct TaskWithoutDefaults: Codable, Equatable, Identifiable {
        var id: Int
        var title: String
        var priority = 0
    }

    struct BoardWithoutDefaults: Versionable, Equatable, Codable {
        var tasks: [TaskWithoutDefaults] = []
        var byName: [String: TaskWithoutDefaults] = [:]
    }

    @Test(arguments: [true, false])
    func withoutDefaultsTheOpenFailsSayingWhatToDoAndLosesNothing(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let error = #expect(throws: KeepsakeError.self) {
            try KeepsakeStore(path: path).history("doc", initialValue: BoardWithoutDefaults())
        }
        #expect(
            error?.description.contains(
                #"if "priority" was added since the data was stored, conform the type that declares it to DecodingDefaults (or make it optional)"#
            ) == true, "\(String(describing: error))")
        // The old model still reads every version, and today's with defaults too.
        try ModelEvolutionTests.expectHistory(
            at: path, initialValue: OldBoardApp.Board(), expected: OldBoardApp.versions)
        try ModelEvolutionTests.expectHistory(
            at: path, initialValue: Board(), expected: OldBoardApp.versions.map(Self.updated))
    }

    /// The app's own tasks are other tasks: the first one's `priority` fills no stored task (it
    /// would be a value no stored task had), in a history's initial value, a restore template
    /// or the controller a snapshot is restored into. Without defaults each read fails as above,
    /// where a task is stored whole (a checkpoint, a snapshot) as where a change inserts it.
    @Test func withoutDefaultsTheAppsOwnFirstTaskFillsNothing() throws {
        let path = directory.path("tasks.keepsake")
        let stored = OldBoardApp.Board(tasks: [.init(id: 1, title: "stored")])
        let writer = try KeepsakeStore(path: path)
        let written = try writer.history("doc", initialValue: OldBoardApp.Board())
        try written.append(stored)
        try written.writeCheckpoint()
        try written.close()
        try Caretaker(store: writer).save(stored, as: "before")
        writer.close()
        try ModelEvolutionTests().moveSnapshots(at: path, to: BoardWithoutDefaults.self)

        let app = BoardWithoutDefaults(tasks: [TaskWithoutDefaults(id: 50, title: "the app's", priority: 5)])
        let hint = #"if "priority" was added since the data was stored, conform the type that declares it"#
        let store = try KeepsakeStore(path: path)
        defer { store.close() }
        let opening = #expect(throws: KeepsakeError.self) { try store.history("doc", initialValue: app) }
        #expect(opening?.description.contains(hint) == true, "\(String(describing: opening))")
        let reading = #expect(throws: KeepsakeError.self) {
            try store.value(ofHistory: "doc", atVersion: 1, fillingMissingFrom: app)
        }
        #expect(reading?.description.contains(hint) == true, "\(String(describing: reading))")
        let caretaker = Caretaker(store: store)
        let restoring = #expect(throws: KeepsakeError.self) {
            try caretaker.restore("before", as: BoardWithoutDefaults.self, fillingMissingFrom: app)
        }
        #expect(restoring?.description.contains(hint) == true, "\(String(describing: restoring))")
        let controller = VersioningController(app)
        #expect(throws: KeepsakeError.self) { try caretaker.restore("before", into: controller) }
        #expect(controller.value == app && controller.versionCount == 0)
        // Nothing stored was lost: the old model reads it still, and today's with defaults.
        try ModelEvolutionTests.expectHistory(
            at: path, initialValue: OldBoardApp.Board(), expected: [OldBoardApp.Board(), stored])
        try ModelEvolutionTests.expectHistory(
            at: path, initialValue: Board(), expected: [Board(), Self.updated(stored)])
    }
}
