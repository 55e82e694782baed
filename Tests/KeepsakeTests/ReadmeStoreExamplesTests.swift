import Foundation
import Keepsake
import Observation
import TestSupport
import Testing

// The README's store examples, compiled; RevertibleTests/ReadmeExamplesTests checks that every
// line of the README's Swift blocks is here or there. The README's sqlite3 queries are run on
// the store they write, and their output compared with the README's.

enum Readme {
    struct Note: Versionable, Equatable, Codable {
        var title: String
        var body: String
        var tags: Set<String>
    }

    struct Stroke: Versionable, Equatable, Codable {
        var points: [Double]
    }

    struct Drawing: Versionable, Equatable, Codable {
        var strokes: [Stroke] = []
    }

    struct Memo: Versionable, Equatable, Codable {
        var name: String  // stored as "title" by the first release
        var words: String  // stored as an Int
        var pinned = false  // new: no code

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("title", to: "name"),
            .converted("words", from: Int.self) { "\($0) words" },
        ]
    }

    /// A model whose `legacyColor` is gone for good (ChangingYourModel's example).
    struct Swatch: Versionable, Equatable, Codable {
        var name = ""

        static let propertyEvolution: [PropertyEvolution] = [.removed("legacyColor")]
    }

    struct Line: Versionable, Equatable, Codable {
        var dollars: Double  // stored as "cents", an Int

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("cents", to: "dollars"),
            .converted("dollars", from: Int.self) { Double($0) / 100 },
        ]
    }

    /// The first release's status, and today's: `archived` removed.
    enum OldStatus: String, Codable, VersionableLeaf {
        case todo
        case archived
    }

    enum Status: String, Codable, VersionableLeaf {
        case todo
        case done
    }

    struct OldTask: Versionable, Equatable, Codable {
        var status: OldStatus
    }

    struct Task: Versionable, Equatable, Codable {
        var status: Status

        static let propertyEvolution: [PropertyEvolution] = [
            .converted("status", from: String.self) { Status(rawValue: $0) ?? Status.done }
        ]
    }

    /// The first release's line.
    struct OldLine: Versionable, Equatable, Codable {
        var cents: Int
    }

    /// The first release's memo.
    struct OldMemo: Versionable, Equatable, Codable {
        var title: String
        var words: Int
    }

    /// ChangingYourModel's page: the first release's `title` and `note` moved into `meta`.
    struct Page: Versionable, Equatable, Codable {
        struct Meta: Versionable, Equatable, Codable {
            var title: String
            var note: String
        }

        var meta: Meta
        var count: Int

        enum CodingKeys: String, CodingKey { case meta, count }
        enum FirstRelease: String, CodingKey { case title, note }

        init(meta: Meta, count: Int) { (self.meta, self.count) = (meta, count) }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let meta = try container.decodeIfPresent(Meta.self, forKey: .meta) {
                self.meta = meta
            } else {
                let old = try decoder.container(keyedBy: FirstRelease.self)  // title, note
                meta = Meta(
                    title: try old.decode(String.self, forKey: .title),
                    note: try old.decode(String.self, forKey: .note))
            }
            count = try container.decode(Int.self, forKey: .count)
        }
    }

    /// The first release's page.
    struct OldPage: Versionable, Equatable, Codable {
        var title: String
        var note: String
        var count: Int
    }

    /// The first release's todo, and a board of either.
    struct OldTodo: Codable, Equatable, Identifiable {
        var id: Int
        var title: String
    }

    struct Board<Element: Codable & Equatable & Identifiable>: Versionable, Equatable, Codable {
        var todos: [Element] = []
    }

    @Observable final class DrawingModel {
        var drawing = Drawing()
    }

    @Observable final class EditorModel {
        @ObservationIgnored @Versioned var note: Note

        init(path: String) {
            let storage = HistoryStorage<Note>.keepsake(path: path, history: "note")
            _note = Versioned(wrappedValue: Note(title: "", body: "", tags: []), storage: storage)
        }
    }
}

struct Todo: Codable, Equatable, Identifiable {
    var id: Int
    var title: String
    var priority = 0  // new in 1.1: stored todos have none
}

extension Todo: DecodingDefaults {
    static var decodingDefaults: Todo { Todo(id: 0, title: "") }
}

@MainActor @Suite struct ReadmeStoreExamplesTests {
    let directory = TemporaryDirectory()

    @Test func theDecodingDefaultsExample() throws {
        let path = directory.path("board.keepsake")
        let old = try KeepsakeStore(path: path).history("board", initialValue: Readme.Board<Readme.OldTodo>())
        try old.append(Readme.Board(todos: [Readme.OldTodo(id: 1, title: "Milk")]))
        try old.close()
        let board = try KeepsakeStore(path: path).history("board", initialValue: Readme.Board<Todo>())
        #expect(board.value.todos == [Todo(id: 1, title: "Milk", priority: 0)])
        #expect(try board.undo().todos == [])
    }

    @Test func theChangingYourModelExample() throws {
        let path = directory.path("memo.keepsake")
        let old = try KeepsakeStore(path: path).history(
            "memo", initialValue: Readme.OldMemo(title: "", words: 0))
        try old.append(Readme.OldMemo(title: "Draft", words: 120))
        let memo = try KeepsakeStore(path: path).history(
            "memo", initialValue: Readme.Memo(name: "", words: "", pinned: true))
        #expect(memo.value == Readme.Memo(name: "Draft", words: "120 words", pinned: true))
        #expect(try memo.undo() == Readme.Memo(name: "", words: "0 words", pinned: true))
    }

    @Test func theMovedPropertyExample() throws {
        let path = directory.path("pages.keepsake")
        let old = try KeepsakeStore(path: path).history(
            "page", initialValue: Readme.OldPage(title: "", note: "", count: 0))
        try old.append(Readme.OldPage(title: "Draft", note: "", count: 0))
        try old.append(Readme.OldPage(title: "Draft", note: "n", count: 1))
        let page = try KeepsakeStore(path: path).history(
            "page", initialValue: Readme.Page(meta: .init(title: "", note: ""), count: 0))
        #expect(page.value == Readme.Page(meta: .init(title: "Draft", note: "n"), count: 1))
        #expect(try page.undo() == Readme.Page(meta: .init(title: "Draft", note: ""), count: 0))
        #expect(try page.undo() == Readme.Page(meta: .init(title: "", note: ""), count: 0))
        #expect(try page.redo() == Readme.Page(meta: .init(title: "Draft", note: ""), count: 0))
        try page.checkInvariants()
    }

    @Test func theConvertedMeaningExample() throws {
        let path = directory.path("lines.keepsake")
        let old = try KeepsakeStore(path: path).history("line", initialValue: Readme.OldLine(cents: 0))
        try old.append(Readme.OldLine(cents: 150))
        let line = try KeepsakeStore(path: path).history("line", initialValue: Readme.Line(dollars: 0))
        #expect(line.value == Readme.Line(dollars: 1.5))
        #expect(try line.undo() == Readme.Line(dollars: 0))
        #expect(try line.redo() == Readme.Line(dollars: 1.5))
    }

    @Test func theRemovedCaseExample() throws {
        let path = directory.path("tasks.keepsake")
        let old = try KeepsakeStore(path: path).history("task", initialValue: Readme.OldTask(status: .todo))
        try old.append(Readme.OldTask(status: .archived))
        let task = try KeepsakeStore(path: path).history("task", initialValue: Readme.Task(status: .todo))
        #expect(task.value == Readme.Task(status: .done))
        #expect(try task.undo() == Readme.Task(status: .todo))
        #expect(try task.redo() == Readme.Task(status: .done))
        try task.checkInvariants()
    }

    @Test func theObservableModelExample() async throws {
        typealias DrawingModel = Readme.DrawingModel
        let path = directory.path("drawings.keepsake")
        let stroke = Readme.Stroke(points: [0, 1])
        let model = DrawingModel()
        let store = try KeepsakeStore(path: path)
        let undo = try VersioningController(
            observing: model, at: \.drawing, storage: .keepsake(store, history: "drawing-1"))
        model.drawing.strokes.append(stroke)  // recorded on the next turn of the main actor, durably
        #expect(await settle { undo.hasUndo && undo.versionCount == 1 })
        try undo.undo()  // the stroke is gone: in the model, and in the store
        #expect(model.drawing.strokes.isEmpty)
        #expect(try KeepsakeStore(path: path).history("drawing-1", initialValue: Readme.Drawing()).hasRedo)

        let editor = Readme.EditorModel(path: directory.path("editor.keepsake"))
        editor.note.title = "Kept"
        #expect(Readme.EditorModel(path: directory.path("editor.keepsake")).note.title == "Kept")
    }

    @Test func theSalvageExample() throws {
        let damagedPath = directory.path("notes.keepsake")
        let store = try KeepsakeStore(path: damagedPath)
        let notes = try store.history("note", initialValue: Readme.Note(title: "", body: "", tags: []))
        for title in ["a", "b", "c"] { try notes.append(Readme.Note(title: title, body: "", tags: [])) }
        store.close()
        let connection = try SQLiteConnection(path: damagedPath)
        try connection.execute(
            "UPDATE version SET changes = json_set(changes, '$[0][3]', 7) WHERE position = 3")
        connection.close()

        let report = try KeepsakeStore.salvage(from: damagedPath, to: damagedPath + ".salvaged")
        for history in report.histories where history.damage != nil {
            print("\(history.name): version \(history.version) of \(history.newestVersion)")
        }
        #expect(report.histories.map { "\($0.name) \($0.version)/\($0.newestVersion)" } == ["note 2/3"])
        let salvaged = try KeepsakeStore(path: damagedPath + ".salvaged")
        #expect(
            try salvaged.history("note", initialValue: Readme.Note(title: "", body: "", tags: [])).value.title
                == "b")
    }

    @Test func theCopyExample() throws {
        let path = directory.path("notes.keepsake")
        let backupPath = directory.path("notes backup.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("note", initialValue: Readme.Note(title: "", body: "", tags: []))
        try history.append(Readme.Note(title: "Kept open", body: "", tags: []))
        try store.copy(to: backupPath)  // every history, with both stacks, and every snapshot
        let backup = try KeepsakeStore(path: backupPath)
        let copied = try backup.history("note", initialValue: Readme.Note(title: "", body: "", tags: []))
        #expect(copied.value.title == "Kept open" && copied.hasUndo)
    }

    func writeExampleStore(at path: String) throws {
        typealias Note = Readme.Note
        let store = try KeepsakeStore(path: path)
        let history = try store.history("note-42", initialValue: Note(title: "", body: "", tags: []))
        var note = history.value
        note.title = "Groceries"
        try history.append(note)
        note.body = "Milk, bread"
        try history.append(note, tag: "listed")
        note = try history.undo()
        #expect(note.body == "")

        let reopened = try KeepsakeStore(path: path).history(
            "note-42", initialValue: Note(title: "", body: "", tags: []))
        print(reopened.value.title)  // Groceries
        print(reopened.hasRedo)  // true: the undone version survived too
        #expect(reopened.value.title == "Groceries")
        #expect(reopened.hasRedo)

        var bodies: [Int: String] = [:]
        for version in try store.timeline(of: "note-42") ?? [] {
            let note = try store.value(ofHistory: "note-42", atVersion: version.version, as: Note.self)
            print(version.version, note?.body ?? "")  // 0 "", 1 "", 2 "Milk, bread"
            bodies[version.version] = note?.body
        }
        #expect(bodies == [0: "", 1: "", 2: "Milk, bread"])

        note = reopened.value
        let caretaker = Caretaker(store: store)
        try caretaker.save(note, as: "beforeTrip")
        if let saved = caretaker.beforeTrip as Note? {
            print(saved.title)
        }
        let restored: Note? = try caretaker.restore("beforeTrip")
        #expect(restored == note)
        #expect(caretaker.beforeTrip as Note? == note)
        #expect(
            try caretaker.value(at: "title", in: "beforeTrip", of: Note.self, as: String.self) == "Groceries")

        // A second history, so that the README's queries must filter by name.
        let other = try store.history("note-7", initialValue: Note(title: "Other", body: "", tags: []))
        try other.append(Note(title: "Other", body: "", tags: ["x"]))
    }

    @Test func theReadmeQueriesPrintWhatTheReadmeSays() throws {
        let path = directory.path("readme.keepsake")
        try writeExampleStore(at: path)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let pairs = readme.components(separatedBy: "```sql\n").dropFirst().compactMap {
            chunk -> (String, String)? in
            let parts = chunk.components(separatedBy: "```")
            guard parts.count > 2, parts[1].hasPrefix("\n\n") || parts[1].hasPrefix("\n"),
                parts[2].hasPrefix("text\n")
            else { return nil }
            return (parts[0], String(parts[2].dropFirst("text\n".count)))
        }
        #expect(pairs.count >= 5)
        for (query, expected) in pairs {
            let output = try Self.sqlite3(path, query)
            #expect(output == expected, "query:\n\(query)")
        }
    }

    /// Runs the `sqlite3` shell read-only on `path`.
    static func sqlite3(_ path: String, _ sql: String) throws -> String {
        let run = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", "-readonly", path, sql])
        #expect(
            run.status == 0,
            "sqlite3 failed (is the sqlite3 shell installed?): \(String(decoding: run.error, as: UTF8.self))")
        return String(decoding: run.output, as: UTF8.self)
    }
}
