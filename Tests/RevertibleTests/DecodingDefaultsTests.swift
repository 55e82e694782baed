import Foundation
import Revertible
import Testing

/// A property added to a type whose stored values the app has no value beside (an array
/// element, a dictionary value, an element inserted by a stored change) is read from the type's
/// `DecodingDefaults`: synthesized `Codable` ignores the property's default, so without them the
/// stored data no longer decodes.
@Suite struct DecodingDefaultsTests {
    struct Style: Codable, Equatable, DecodingDefaults {
        var color: String
        static var decodingDefaults: Style { Style(color: "red") }
    }

    /// A task as an app update left it: `priority`, `note` and `style` added since the data
    /// was stored.
    struct Task: Codable, Equatable, Identifiable, DecodingDefaults {
        var id: Int
        var title: String
        var priority = 0
        var note: String?
        var style = Style(color: "black")

        static var decodingDefaults: Task { Task(id: 0, title: "", priority: 2) }
    }

    /// A task without defaults: only `style`, whose type has its own.
    struct PlainTask: Codable, Equatable {
        var title: String
        var style = Style(color: "black")
    }

    struct Board: Versionable, Codable, Equatable {
        var tasks: [Task] = []
        var byName: [String: Task] = [:]
        var plain: [PlainTask] = []
    }

    let decoder = ChangeRecord.makeDecoder()

    func decode<T: Decodable>(_: T.Type, _ json: String, template: (some Encodable)? = Optional<Int>.none)
        throws
        -> T
    {
        try EvolvingDecoding.decode(
            T.self, from: Data(json.utf8),
            template: { template.flatMap { try? ChangeRecord.makeEncoder().encode($0) } }, decoder: decoder)
    }

    @Test func storedElementsLackingAPropertyTakeTheTypesDefaults() throws {
        let board = try decode(
            Board.self,
            #"{"tasks":[{"id":1,"title":"a"},{"id":2,"title":"b","priority":7,"note":"n","style":{"color":"blue"}}],"byName":{"x":{"id":3,"title":"c"}},"plain":[{"title":"p"}]}"#
        )
        #expect(
            board.tasks == [
                Task(id: 1, title: "a", priority: 2, note: nil, style: Style(color: "black")),
                Task(id: 2, title: "b", priority: 7, note: "n", style: Style(color: "blue")),
            ])
        #expect(board.byName == ["x": Task(id: 3, title: "c", priority: 2, style: Style(color: "black"))])
        // A type without defaults takes a missing property's from that property's type.
        #expect(board.plain == [PlainTask(title: "p", style: Style(color: "red"))])
    }

    /// The app's first element is another element: only the type's defaults fill a stored
    /// element. A property of the app's value at the same place (a dictionary value under the
    /// same key) still comes before them.
    @Test func theAppsFirstElementFillsNoStoredElementButTheAppsOwnPlaceDoes() throws {
        var app = Board()
        app.tasks = [Task(id: 9, title: "app", priority: 9)]
        app.byName = ["x": Task(id: 9, title: "app", priority: 8)]
        let board = try decode(
            Board.self, #"{"tasks":[{"id":1,"title":"a"}],"byName":{"x":{"id":3,"title":"c"}},"plain":[]}"#,
            template: app)
        #expect(board.tasks.map(\.priority) == [2])
        #expect(board.byName["x"]?.priority == 8)

        // Without defaults, the app's first element does not stand in: the read fails.
        struct Doc: Codable, Equatable { var tasks: [NoDefaultsTask] }
        #expect {
            try decode(
                Doc.self, #"{"tasks":[{"title":"a"}]}"#,
                template: Doc(tasks: [NoDefaultsTask(title: "app", priority: 9)]))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, let context) = error else { return false }
            return key.stringValue == "priority"
                && context.codingPath.map(\.stringValue) == ["tasks", "Index 0"]
        }
    }

    /// A stored change holding a whole element from before (an insertion) decodes with the
    /// defaults, so that it reverts as it is.
    @Test func aStoredChangeHoldingAnEarlierElementReverts() throws {
        let old = Board()
        var new = old
        new.tasks.append(Task(id: 1, title: "a", priority: 2))
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "tasks"), kind: "elements",
            payload: Data(
                #"{"insertions":[{"element":{"id":1,"title":"a"},"offset":0}],"newCount":1,"oldCount":0,"removals":[]}"#
                    .utf8))
        var board = new
        let reversion = try Reversion(records: [record], resolvingAgainst: board)
        try reversion.revert(&board)
        #expect(board == old)
        try reversion.inverse.revert(&board)
        #expect(board == new)
    }

    struct NoDefaultsTask: Codable, Equatable {
        var title: String
        var priority = 0
    }

    /// Without defaults the standard decoder's error is reported, saying what to do.
    @Test func withoutDefaultsTheErrorSaysWhatToDo() throws {
        struct Doc: Versionable, Codable, Equatable { var tasks: [NoDefaultsTask] = [] }
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "tasks"), kind: "elements",
            payload: Data(
                #"{"insertions":[{"element":{"title":"a"},"offset":0}],"newCount":1,"oldCount":0,"removals":[]}"#
                    .utf8))
        let error = #expect(throws: ReversionError.self) {
            try Reversion(records: [record], resolvingAgainst: Doc(tasks: [NoDefaultsTask(title: "a")]))
        }
        #expect(
            "\(error.map { "\($0)" } ?? "")".contains(
                #"(at insertions[0].element.priority); if "priority" was added since the data was stored, conform the type that declares it to DecodingDefaults (or make it optional), so that stored values lacking it can be read."#
            ))
    }
}
