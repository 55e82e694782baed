import Foundation
import Testing

@testable import Revertible

/// A stored value of another type than its property today says which property to declare a
/// conversion for.
@Suite struct ChangedTypeHintTests {
    struct Task: Codable, Equatable {
        var title = ""
        var priority = ""
        enum CodingKeys: String, CodingKey {
            case title
            case priority = "prio"
        }
    }

    struct Doc: Versionable, Codable, Equatable {
        var tasks: [Task] = []
        var scores: [String: String] = [:]
        var labels: [String] = []
    }

    static func hint(_ property: String) -> String {
        """
        if the app changed the type of "\(property)" since, declare .converted("\(property)", from: \
        TheOldType.self) { … } in the propertyEvolution of the type that declares it (adopting Versionable)
        """
    }

    /// The description of the error decoding `json` as `type`, hint included.
    static func reason<Value: Decodable>(decoding json: String, as type: Value.Type = Doc.self) throws
        -> String
    {
        do {
            _ = try JSONDecoder().decode(Value.self, from: Data(json.utf8))
        } catch {
            return RecordCoding.describe(error, decodingModelAt: nil)
        }
        Issue.record("\(json) decoded")
        return ""
    }

    /// The property is named as the model names it, not by its coding key.
    @Test func anElementsPropertyIsNamedAsTheModelNamesIt() throws {
        #expect(
            try Self.reason(decoding: #"{"tasks":[{"title":"a","prio":1}],"scores":{}}"#)
                == "Expected to decode String but found number instead (at tasks[0].prio); "
                + Self.hint("priority"))
    }

    /// A dictionary's key is no property: the dictionary is.
    @Test func aDictionarysValuesNameTheDictionary() throws {
        #expect(
            try Self.reason(decoding: #"{"tasks":[],"scores":{"ada":1}}"#)
                == "Expected to decode String but found number instead (at scores.ada); "
                + Self.hint("scores"))
    }

    /// A stored change's payload: the keys of the library's own patch are no property of the
    /// app's, so the element's property is named.
    @Test func aStoredChangeNamesTheAppsPropertyNotThePatchs() throws {
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "tasks"), kind: "elements",
            payload: Data(
                #"{"insertions":[{"element":{"title":"a","prio":1},"offset":0}],"newCount":1,"oldCount":0,"removals":[]}"#
                    .utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("tasks")], type: "WholeElements<Task>",
                reason: "Expected to decode String but found number instead (at insertions[0].element.prio); "
                    + Self.hint("priority"))
        ) {
            try Reversion(records: [record], resolvingAgainst: Doc(tasks: [Task(title: "a", priority: "1")]))
        }
    }

    /// An element of another type is named by the change's path: the patch's own keys are
    /// enum cases too, yet no property of the app's.
    @Test func anElementOfAnotherTypeIsNamedByItsCollection() throws {
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "labels"), kind: "elements",
            payload: Data(
                #"{"insertions":[{"element":7,"offset":0}],"newCount":1,"oldCount":0,"removals":[]}"#.utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("labels")], type: "Array<String>",
                reason: "Expected to decode String but found number instead (at insertions[0].element); "
                    + Self.hint("labels"))
        ) {
            try Reversion(records: [record], resolvingAgainst: Doc(labels: ["7"]))
        }
    }

    /// A change of another kind than today's type makes (a number replaced, where a text
    /// changes by its edited range) names the property its path ends in.
    @Test func aChangeOfAnotherKindIsNamedByItsPath() throws {
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "tasks[0].priority"), kind: "replace",
            payload: Data(#"{"old":1,"new":2}"#.utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("tasks"), .index(0), .property("priority")], type: "String",
                reason: #"stored as a "replace" change, expected "text"; "# + Self.hint("priority"))
        ) {
            try Reversion(records: [record], resolvingAgainst: Doc(tasks: [Task(title: "a", priority: "2")]))
        }
    }

    enum Status: String, Codable { case todo, done }
    enum Level: Int, Codable {
        case low = 1
        case high = 2
    }

    struct Board: Versionable, Codable, Equatable {
        struct Column: Codable, Equatable { var level = Level.low }

        var status = Status.todo
        var column: Column? = Column()
        var levels: [Level] = []
    }

    /// A raw value no case has today (a case removed or renamed since) says to convert the
    /// property from its raw type, which reads every stored value.
    @Test func aRawValueNoCaseHasSaysToConvertFromTheRawType() throws {
        #expect(
            try Self.reason(decoding: #"{"status":"archived","levels":[]}"#, as: Board.self)
                == "Cannot initialize Status from invalid String value archived (at status); if the app "
                + #"removed or renamed a case of Status since, declare .converted("status", from: String.self) "#
                + "{ … } in the propertyEvolution of the type that declares it (adopting Versionable)")
        #expect(
            try Self.reason(decoding: #"{"status":"todo","column":{"level":3},"levels":[]}"#, as: Board.self)
                == "Cannot initialize Level from invalid Int value 3 (at column.level); if the app "
                + #"removed or renamed a case of Level since, declare .converted("level", from: Int.self) "#
                + "{ … } in the propertyEvolution of the type that declares it (adopting Versionable)")
        // An element's: converting the array from `Int` would not read it.
        #expect(
            try Self.reason(decoding: #"{"status":"todo","levels":[1,3]}"#, as: Board.self)
                == "Cannot initialize Level from invalid Int value 3 (at levels[1])")
    }

    /// A stored change's own value: its path names the property.
    @Test func aStoredChangesRawValueNoCaseHasNamesItsProperty() throws {
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "status"), kind: "replace",
            payload: Data(#"{"old":"todo","new":"archived"}"#.utf8))
        #expect(
            throws: ReversionError.undecodable(
                path: [.property("status")], type: "Status",
                reason: "Cannot initialize Status from invalid String value archived (at new); if the app "
                    + #"removed or renamed a case of Status since, declare .converted("status", from: "#
                    + "String.self) { … } in the propertyEvolution of the type that declares it (adopting Versionable)"
            )
        ) {
            try Reversion(records: [record], resolvingAgainst: Board())
        }
    }

    /// Other errors, and a mismatch with no property to name, say nothing of conversions.
    @Test func otherErrorsSayNothingOfConversions() throws {
        #expect(
            try Self.reason(decoding: #"{"tasks":[{"title":"a"}],"scores":{}}"#).contains(".converted")
                == false)
        #expect(
            try Self.reason(decoding: #"[1]"#)
                == "Expected to decode Dictionary<String, Any> but found an array instead")
    }
}
