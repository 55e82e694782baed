import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// Enum payload changes are stored at their own paths and come back, in another process's
/// reading, exactly: undo and redo across reopens.
@MainActor @Suite struct DurableEnumPayloadTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("doc.keepsake") }

    func reopen() throws -> KeepsakeHistory<Doc> {
        try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
    }

    @Test func payloadChangesAreStoredAtTheirPathsAndSurviveReopening() throws {
        var doc = Doc.empty
        doc.items = [.init(id: 3, title: "Three", done: false, shape: .circle(radius: 10))]
        let edits: [(inout Doc) -> Void] = [
            { $0.items[0].shape = .circle(radius: 12) },
            { $0.items[0].shape = .styled(.init(stroke: 1, fill: nil)) },
            { $0.items[0].shape = .styled(.init(stroke: 1, fill: "red")) },
            { $0.items[0].shape = .polygon(points: [.init(x: 0, y: 0), .init(x: 1, y: 1)]) },
            { $0.items[0].shape = .polygon(points: [.init(x: 0, y: 0), .init(x: 1, y: 4)]) },
            { $0.items[0].shape = .label(nil) },
            { $0.items[0].shape = .label("hi") },
        ]
        var versions = [doc]
        do {
            let history = try reopen()
            try history.append(doc)
            for edit in edits {
                edit(&doc)
                try history.append(doc)
                versions.append(doc)
            }
            try history.close()
        }

        let connection = try SQLiteConnection(path: path)
        let stored = try storedChanges(connection).filter { $0.position > 1 }.map {
            "\($0.entry.path) \($0.entry.patch)"
        }
        #expect(
            stored == [
                #"items[id: 3].shape.circle.radius {"new":12,"old":10}"#,
                #"items[id: 3].shape {"new":{"styled":{"_0":{"stroke":1}}},"old":{"circle":{"radius":12}}}"#,
                #"items[id: 3].shape.styled._0.fill {"new":"red"}"#,
                #"items[id: 3].shape {"new":{"polygon":{"points":[{"x":0,"y":0},{"x":1,"y":1}]}},"old":{"styled":{"_0":{"fill":"red","stroke":1}}}}"#,
                #"items[id: 3].shape.polygon.points[1].y {"new":4,"old":1}"#,
                #"items[id: 3].shape {"new":{"label":{}},"old":{"polygon":{"points":[{"x":0,"y":0},{"x":1,"y":4}]}}}"#,
                #"items[id: 3].shape.label._0 {"new":"hi"}"#,
            ])
        connection.close()

        // Undo to the start and redo to the end, reopening the store before every step.
        for expected in versions.reversed().dropFirst() {
            let history = try reopen()
            #expect(try history.undo() == expected)
            try history.checkInvariants()
        }
        for expected in versions.dropFirst() {
            let history = try reopen()
            #expect(try history.redo() == expected)
            try history.checkInvariants()
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.history("doc", initialValue: Doc.empty).value == doc)
        #expect(try store.verify().isOK)
        // The shell's view of a version, from the stored records alone.
        for (number, version) in versions.enumerated() {
            let json = try #require(try store.valueJSON(ofHistory: "doc", atVersion: number + 1))
            #expect(try JSONDecoder().decode(Doc.self, from: Data(json.utf8)) == version)
        }
    }

    /// An enum whose payloads hold numbers no `Double` holds exactly, and text that starts with
    /// a byte order mark (which `JSONSerialization` drops).
    enum Reading: Codable, Equatable {
        case amount(Decimal)
        case pair(amount: Decimal, label: String, count: UInt64)
    }

    struct Meter: Versionable, Equatable, Codable {
        var reading: Reading
    }

    /// A payload change records the changed part, whose sides a decoder reads back: exactly,
    /// or undo would reach a value a digit off (`99479765.33470481` read as the nearest
    /// `Double`, `…482`) and call it the version before.
    @Test(arguments: [
        [
            Reading.amount(Decimal(string: "99479765.33470481")!),
            .amount(Decimal(string: "99479765.33470482")!),
        ],
        [
            .pair(amount: Decimal(string: "99479765.33470481")!, label: "a", count: 1),
            .pair(amount: Decimal(string: "99479765.33470482")!, label: "a", count: 1),
        ],
        [
            .pair(amount: Decimal(string: "12345678901234567890.123456789")!, label: "a", count: 1),
            .pair(amount: Decimal(string: "12345678901234567890.123456788")!, label: "a", count: 1),
        ],
        [.pair(amount: 1, label: "a", count: .max), .pair(amount: 1, label: "a", count: .max - 1)],
        [
            .pair(amount: 1, label: "\u{FEFF}a", count: 1), .pair(amount: 1, label: "a", count: 1),
            .pair(amount: 1, label: "\t\u{FEFF}", count: 1),
        ],
    ])
    func payloadNumbersAndTextUndoAndRedoExactlyAcrossReopens(readings: [Reading]) throws {
        func reopen() throws -> KeepsakeHistory<Meter> {
            try KeepsakeStore(path: path).history("meter", initialValue: Meter(reading: readings[0]))
        }
        do {
            let history = try reopen()
            for reading in readings.dropFirst() { try history.append(Meter(reading: reading)) }
            #expect(history.versionCount == readings.count - 1)
            try history.close()
        }
        for expected in readings.reversed().dropFirst() {
            let history = try reopen()
            #expect(try history.undo().reading == expected)
            try history.checkInvariants()
        }
        for expected in readings.dropFirst() {
            let history = try reopen()
            #expect(try history.redo().reading == expected)
            try history.checkInvariants()
        }
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
