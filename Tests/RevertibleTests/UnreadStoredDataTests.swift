import Foundation
import Revertible
import Testing

/// Reading stored JSON says where it holds what the model does not read: a later release's
/// properties, which an earlier release must not drop when it stores the value again.
@Suite struct UnreadStoredDataTests {
    /// A tag as an earlier release has it: a later one added `color`.
    struct Tag: Codable, Equatable {
        var id: Int
        var name: String
    }

    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case square(side: Double)
    }

    struct Doc: Versionable, Codable, Equatable {
        var name: String
        var tags: [Tag]
        var byKey: [String: Tag]
        var note: String?
        var shape: Shape
        var stamp: Date
        var bytes: Data

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("title", to: "name"), .removed("legacy"),
        ]
    }

    /// Reads `Data` from an object, `{"base64": …}`, as a storage keeping large bytes apart
    /// may store them: the standard decoder reads that object whole.
    let decoder: JSONDecoder = {
        struct Wrapped: Decodable { var base64: String }
        let decoder = JSONDecoder()
        decoder.dataDecodingStrategy = .custom { Data(base64Encoded: try Wrapped(from: $0).base64) ?? Data() }
        return decoder
    }()

    struct AnyCodingKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { nil }
    }

    func read(_ json: String, template: Doc? = nil) throws -> (value: Doc, unread: [String]) {
        let stored = try FoundationJSON.object(decoding: Data(json.utf8))
        let encoder = JSONEncoder()
        encoder.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(data.base64EncodedString(), forKey: AnyCodingKey("base64"))
        }
        let templateJSON = try template.map { try FoundationJSON.object(decoding: encoder.encode($0)) }
        let read = try EvolvingDecoding.decodeNotingUnread(
            Doc.self, from: stored, template: templateJSON, decoder: decoder)
        // Asked of every place holding a value, the reads name the same places unread.
        let reads = try EvolvingDecoding.decodeNotingReads(
            Doc.self, from: stored, template: templateJSON, decoder: decoder
        ).reads
        #expect(Self.places(in: stored).filter(reads.isUnread).map(ReadPlaces.text) == read.unread)
        return read
    }

    /// Every place in `node` holding a value other than `null`, keys in order, each before
    /// those below it.
    static func places(in node: Any, at place: [String] = []) -> [[String]] {
        let members: [(String, Any)] =
            if let object = node as? [String: Any] {
                object.keys.sorted().map { ($0, object[$0]!) }
            } else if let array = node as? [Any] {
                array.enumerated().map { ("[\($0.offset)]", $0.element) }
            } else {
                []
            }
        return members.filter { !($0.1 is NSNull) }.flatMap { step, value in
            [place + [step]] + places(in: value, at: place + [step])
        }
    }

    @Test func whatTheModelDoesNotReadIsNamedWhereverItLies() throws {
        let (doc, unread) = try read(
            #"""
            {"name":"n","pinned":true,"tags":[{"id":1,"name":"a","color":"red"},{"id":2,"name":"b"}],
             "byKey":{"k":{"id":3,"name":"c","color":{"rgb":[1,2,3]}}},"note":"x",
             "shape":{"circle":{"radius":2,"unit":"cm"}},"stamp":0,"bytes":{"base64":"AAE="}}
            """#)
        #expect(
            doc
                == Doc(
                    name: "n", tags: [Tag(id: 1, name: "a"), Tag(id: 2, name: "b")],
                    byKey: ["k": Tag(id: 3, name: "c")], note: "x", shape: .circle(radius: 2),
                    stamp: Date(timeIntervalSinceReferenceDate: 0), bytes: Data([0, 1])))
        #expect(unread == ["byKey.k.color", "pinned", "shape.circle.unit", "tags[0].color"])
    }

    @Test func anOldNameReadThroughARenameAPropertyDeclaredRemovedAndANullAreRead() throws {
        let (doc, unread) = try read(
            #"{"title":"t","legacy":{"a":1},"tags":[],"byKey":{},"note":null,"gone":null,"shape":{"square":{"side":1}},"stamp":0,"bytes":{"base64":""}}"#
        )
        #expect(doc.name == "t")
        #expect(doc.note == nil)
        #expect(unread == [])
    }

    @Test func whatTheTemplateFillsIsNotStoredAndNotNamed() throws {
        let template = Doc(
            name: "", tags: [], byKey: [:], note: "from the app", shape: .square(side: 9),
            stamp: Date(timeIntervalSinceReferenceDate: 0), bytes: Data())
        let (doc, unread) = try read(#"{"name":"n","tags":[],"byKey":{},"extra":[1]}"#, template: template)
        #expect(doc.shape == .square(side: 9))
        #expect(doc.note == nil)
        #expect(unread == ["extra"])
    }

    /// The walk that rules most stored values out before that read: certain when it finds
    /// nothing more.
    @Test func aWalkOfBothFormsRulesOutWhatHoldsNothingMore() throws {
        func mayHoldMore(_ stored: String, than encoded: String) throws -> Bool {
            try StoredForm(json: stored).mayHoldMore(than: StoredForm(json: encoded))
        }
        let encoded = #"{"name":"n","tags":[{"id":1,"name":"a"}],"bytes":{"$blob":3}}"#
        #expect(try !mayHoldMore(encoded, than: encoded))
        // Bytes inlined where the model's form keeps them apart; a null where it leaves out a nil.
        #expect(
            try !mayHoldMore(
                #"{"name":"n","tags":[{"id":1,"name":"a","note":null}],"bytes":"AAE="}"#, than: encoded))
        // A property the model lacks, at the root or in an element.
        #expect(
            try mayHoldMore(
                #"{"name":"n","pinned":true,"tags":[{"id":1,"name":"a"}],"bytes":"AAE="}"#, than: encoded))
        #expect(
            try mayHoldMore(
                #"{"name":"n","tags":[{"id":1,"name":"a","color":"red"}],"bytes":"AAE="}"#, than: encoded))
        // Places that do not line up.
        #expect(try mayHoldMore(#"{"name":"n","tags":[],"bytes":"AAE="}"#, than: encoded))
        #expect(
            try mayHoldMore(
                #"{"name":{"first":"n"},"tags":[{"id":1,"name":"a"}],"bytes":"AAE="}"#, than: encoded))
    }

    /// Building the shape only, a change within bytes is not even read, and a whole value is
    /// not checked against the one it replaces: what the walk asks is which keys lie where.
    @Test(arguments: [false, true])
    func theShapeIsBuiltWithoutReadingBytes(shapeOnly: Bool) throws {
        var form = try StoredForm(json: #"{"bytes":"AAE=","name":"n","tags":[]}"#)
        form.shapeOnly = shapeOnly
        let records = [
            // Not a range patch at all: read, it fails.
            ChangeRecord(path: "bytes", kind: "bytes", payload: Data(#"{"unreadable":true}"#.utf8)),
            // Expects a name the tree does not hold.
            ChangeRecord(path: "name", kind: "replace", payload: Data(#"{"old":"m","new":"o"}"#.utf8)),
            ChangeRecord(path: "tags", kind: "replace", payload: Data(#"{"old":[],"new":[{"id":1}]}"#.utf8)),
        ]
        if shapeOnly {
            try form.revert(records, inverted: true)
            #expect(form.json == #"{"bytes":"AAE=","name":"o","tags":[{"id":1}]}"#)
        } else {
            #expect(throws: ReversionError.self) { try form.revert(records, inverted: true) }
            #expect(throws: ReversionError.self) {
                try form.revert(Array(records.dropFirst()), inverted: true)
            }
        }
    }
}
