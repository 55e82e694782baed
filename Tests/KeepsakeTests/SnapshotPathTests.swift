import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// Reading one value anywhere inside a snapshot: exact values, and a typed error for a path
/// that names nothing.
@MainActor @Suite struct SnapshotPathTests {
    struct Board: Codable, Equatable {
        struct Card: Identifiable, Codable, Equatable {
            let id: Int
            var title: String
            var shape: Shape
            var due: Date?
        }
        var name: String
        var cards: [Card]
        var scores: [String: Int]
        var byNumber: [Int: String]
        var grid: [[Int]]
        var owner: String?
    }

    let directory = TemporaryDirectory()

    func caretakerWithBoard() throws -> Caretaker {
        let caretaker = Caretaker(store: try KeepsakeStore(path: directory.path("board.keepsake")))
        let board = Board(
            name: "Plan",
            cards: [
                .init(id: 7, title: "Seven", shape: .circle(radius: 2.5), due: nil),
                .init(
                    id: 9, title: "Nine", shape: .styled(.init(stroke: 3, fill: "red")),
                    due: Date(timeIntervalSince1970: 60)),
            ],
            scores: ["alice": 3, "bob": 5], byNumber: [1: "one", 2: "two"], grid: [[1, 2], [3, 4]], owner: nil
        )
        try caretaker.save(board, as: "v1")
        return caretaker
    }

    @Test func anyPathReadsTheValueThere() throws {
        let caretaker = try caretakerWithBoard()
        #expect(try caretaker.value(at: "name", in: "v1", of: Board.self, as: String.self) == "Plan")
        #expect(
            try caretaker.value(at: "cards[id: 7].title", in: "v1", of: Board.self, as: String.self)
                == "Seven")
        #expect(
            try caretaker.value(at: "cards[1].title", in: "v1", of: Board.self, as: String.self) == "Nine")
        #expect(
            try caretaker.value(
                at: "cards[id: 7].shape.circle.radius", in: "v1", of: Board.self, as: Double.self)
                == 2.5)
        #expect(
            try caretaker.value(at: "cards[id: 9].shape", in: "v1", of: Board.self, as: Shape.self)
                == .styled(.init(stroke: 3, fill: "red")))
        #expect(
            try caretaker.value(at: "cards[id: 9].due", in: "v1", of: Board.self, as: Date.self)
                == Date(timeIntervalSince1970: 60))
        #expect(try caretaker.value(at: #"scores[key: "bob"]"#, in: "v1", of: Board.self, as: Int.self) == 5)
        #expect(
            try caretaker.value(at: "byNumber[key: 2]", in: "v1", of: Board.self, as: String.self) == "two")
        #expect(try caretaker.value(at: "grid[1][0]", in: "v1", of: Board.self, as: Int.self) == 3)
        #expect(
            try caretaker.value(at: "", in: "v1", of: Board.self, as: Board.self)
                == caretaker.restore("v1", as: Board.self))
    }

    @Test func aNilOptionalReadsAsNilAndAMissingSnapshotToo() throws {
        let caretaker = try caretakerWithBoard()
        #expect(try caretaker.value(at: "owner", in: "v1", of: Board.self, as: String.self) == nil)
        #expect(try caretaker.value(at: "cards[id: 7].due", in: "v1", of: Board.self, as: Date.self) == nil)
        #expect(try caretaker.value(at: "name", in: "v2", of: Board.self, as: String.self) == nil)
    }

    @Test(arguments: [
        ("titel", "Board has no property there"),
        ("cards[id: 8].title", "the array has no element with id 8"),
        ("cards[5]", "the array has no element 5"),
        ("cards[id: 7].titel", "Board has no property there"),
        ("cards[id: 7].title.first", ".first does not name a place in the stored value"),
        (#"scores[key: "carol"]"#, #"the dictionary has no key "carol""#),
        ("name[0]", "[0] does not name a place in the stored value"),
        ("nothing.deeper", "no nothing in the snapshot"),
    ])
    func aPathThatNamesNothingIsATypedError(path: String, reason: String) throws {
        let caretaker = try caretakerWithBoard()
        let descriptor = try PathDescriptor(parsing: path)
        #expect(throws: KeepsakeError.snapshotPathNotFound(name: "v1", path: descriptor, reason: reason)) {
            try caretaker.value(at: descriptor, in: "v1", of: Board.self, as: String.self)
        }
    }

    struct Renamed: Versionable, Equatable, Codable {
        var fullName: String
        var nickname: String?
        static var propertyEvolution: [PropertyEvolution] { [.renamed("name", to: "fullName")] }
    }

    @Test func aPropertyStoredUnderItsOldNameIsFoundByItsNewOne() throws {
        let path = directory.path("renamed.keepsake")
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Renamed(fullName: "Ada", nickname: nil), as: "v1")
        // As an earlier model stored it: the row under the old name, with its digest.
        let connection = try SQLiteConnection(path: path)
        let namespace = caretaker.namespace(for: Renamed.self)
        let digest = Caretaker.digest(namespace, "v1", "name", #""Ada""#)
        try connection.execute(
            "UPDATE snapshot_property SET path = 'name', digest = ? WHERE path = 'fullName'",
            [.integer(digest)])
        connection.close()
        #expect(try caretaker.value(at: "fullName", in: "v1", of: Renamed.self, as: String.self) == "Ada")
        #expect(try caretaker.value(at: "nickname", in: "v1", of: Renamed.self, as: String.self) == nil)
        #expect(try caretaker.restore("v1", as: Renamed.self) == Renamed(fullName: "Ada", nickname: nil))
    }

    @Test func aValueOfAnotherTypeIsUndecodable() throws {
        let caretaker = try caretakerWithBoard()
        #expect(
            throws: KeepsakeError.undecodableSnapshot(
                name: "v1", path: "cards[id: 7].title",
                reason: "Expected to decode Int but found a string instead")
        ) { try caretaker.value(at: "cards[id: 7].title", in: "v1", of: Board.self, as: Int.self) }
    }

    @Test func theErrorSaysWhereAndWhy() {
        #expect(
            KeepsakeError.snapshotPathNotFound(
                name: "v1", path: "cards[id: 8]", reason: "the array has no element with id 8"
            )
            .description
                == "The snapshot \"v1\" has no value at `cards[id: 8]`: the array has no element with id 8.")
    }
}

/// Snapshot rows are cut out of the encoder's bytes: every JSON form a value can take.
@Suite struct JSONMembersTests {
    @Test func membersAreCutExactly() throws {
        let json = #"{"a":1,"b\"q":{"x":[1,{"y":"},]"}]},"c":"s\\\"},","d":null,"e":[],"f":-1.5e+3,"g":true}"#
        let members = try #require(JSONMembers.split(Data(json.utf8)))
        #expect(members.map(\.key) == ["a", "b\"q", "c", "d", "e", "f", "g"])
        #expect(
            members.map(\.json) == [
                "1", #"{"x":[1,{"y":"},]"}]}"#, #""s\\\"},""#, "null", "[]", "-1.5e+3", "true",
            ])
        #expect(JSONMembers.split(Data(" { } ".utf8))?.isEmpty == true)
        #expect(
            JSONMembers.split(Data(#"{ "k" : [ 1 , 2 ] , "z" : 3 }"#.utf8))?.map(\.json) == [
                "[ 1 , 2 ]", "3",
            ])
    }

    @Test func anythingElseIsNotAnObject() {
        for json in [#""text""#, "[1,2]", "42", #"{"a":1"#, #"{"a" 1}"#, #"{"a":[1}"#, ""] {
            #expect(JSONMembers.split(Data(json.utf8)) == nil, "\(json)")
        }
    }

    @Test func aSavedSnapshotReadsBackWithTrickyKeysAndText() throws {
        let directory = TemporaryDirectory()
        let caretaker = Caretaker(store: try KeepsakeStore(path: directory.path("s.keepsake")))
        let value = ["plain": "}", "quote\"d": "a,\"b\"", "nested": "{[\\]}"]
        try caretaker.save(value, as: "v")
        #expect(try caretaker.restore("v", as: [String: String].self) == value)
    }
}

extension SnapshotPathTests {
    /// A model whose `CodingKeys` store properties under other keys: a path names properties,
    /// as everywhere else, and finds them under their keys.
    @Test func aPathNamesPropertiesWhateverTheirKeys() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: directory.path("keyed.keepsake")))
        var doc = KeyedApp.versions.last!
        doc.items[0].done = true
        try caretaker.save(doc, as: "v")
        #expect(try caretaker.value(at: "subtitle", in: "v", of: KeyedApp.Doc.self) == "second")
        #expect(try caretaker.value(at: "items[id: 2].label", in: "v", of: KeyedApp.Doc.self) == "deux")
        #expect(try caretaker.value(at: "items[id: 2].done", in: "v", of: KeyedApp.Doc.self) == true)
        #expect(try caretaker.value(at: "items[0].id", in: "v", of: KeyedApp.Doc.self) == 2)
        #expect(try caretaker.value(at: "count", in: "v", of: KeyedApp.Doc.self) == 2)
        #expect(try caretaker.value(at: "items", in: "v", of: KeyedApp.Doc.self) == doc.items)
    }
}

/// A model whose `init(from:)` traps on a value it does not expect, as force-unwrapping code
/// does: reading a snapshot's property never decodes it from placeholders.
struct StrictDoc: Codable, Equatable {
    var title: String
    var note: String

    init(title: String, note: String) { (self.title, self.note) = (title, note) }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decode(String.self, forKey: .title)
        precondition(!title.isEmpty, "a title is never empty")
        note = try container.decode(String.self, forKey: .note)
    }
}

extension SnapshotPathTests {
    @Test func readingAPropertyNeverDecodesTheModelFromPlaceholders() async throws {
        let path = directory.path("strict.keepsake")
        try Caretaker(store: KeepsakeStore(path: path)).save(StrictDoc(title: "T", note: "n"), as: "v")
        await #expect(processExitsWith: .success) { [path = path as String] in
            let caretaker = Caretaker(store: try KeepsakeStore(path: path))
            #expect(try caretaker.value(at: "note", in: "v", of: StrictDoc.self) == "n")
            #expect(throws: KeepsakeError.self) {
                try caretaker.value(at: "missing.deeper", in: "v", of: StrictDoc.self, as: String.self)
            }
        }
    }
}
