import Foundation
import Testing

@testable import Keepsake
@testable import Revertible

/// A version's `changes` column (schema 4): one JSON array that Keepsake writes and splits
/// itself, that SQLite's JSON functions read the same way, and that migration 0004 builds from
/// schema 3's `change` rows.
@Suite struct StoredChangesTests {
    let directory = TemporaryDirectory()

    /// Paths whose text needs every kind of JSON escape (a key component holds its key as JSON).
    static let awkwardPaths: [String] = [
        [], [.property("title")], [.property("labels"), .key(DirectJSON.quoted(#"a "quoted" key"#))],
        [.property("labels"), .key(DirectJSON.quoted(#"back\slash"#))],
        [.property("labels"), .key(DirectJSON.quoted("line\nbreak"))],
        [.property("labels"), .key(DirectJSON.quoted("tab\tand \u{1}"))],
        [.property("labels"), .key(DirectJSON.quoted("naïve ☃ 🎉"))],
        [.property("items"), .id("7"), .property("title")],
    ].map { (components: [PathComponent]) in PathDescriptor(components).description }

    static let patches = [
        #"{"new":"Milk","old":"Mlk"}"#, #"{"new":"a ] } [ { \" \\ b","old":null}"#, #"[1,[2,{"x":[]}]]"#,
        #""just a string, with ] and }""#, "-12.5e3", "true", "null", #"{"new":{"$blob":3},"old":""}"#,
    ]

    func records() throws -> [ChangeRecord] {
        try zip(Self.awkwardPaths, Self.patches).map { path, patch in
            ChangeRecord(
                path: try PathDescriptor(parsing: path), kind: "replace",
                payload: Data(patch.utf8))
        }
    }

    @Test func recordsRoundTripByteForByte() throws {
        let records = try records()
        let (text, bytes) = StoredChanges.encode(records, position: 42)
        #expect(try StoredChanges.records(text, position: 42) == records)
        #expect(bytes == records.reduce(0) { $0 + $1.payload.count + $1.path.description.utf8.count })
        #expect(StoredChanges.encode([], position: 1).text == "[]")
        #expect(try StoredChanges.records("[]", position: 1) == [])
        #expect(try StoredChanges.records(" [ ] ", position: 1) == [])
    }

    /// A value whose changes take every path to their JSON: written directly (a number, a text
    /// range) and through the encoder (a value that is not finite, an array's structure, bytes).
    struct Mixed: Versionable, Equatable, Codable {
        var count = 1
        var title = "A draft title"
        var ratio = 0.5
        var tags = ["a", "b"]
        var bytes = Data([1, 2, 3])
    }

    /// An append writes the text straight from the reversion, with no records made on the way:
    /// byte for byte the text its records give.
    @Test func aReversionIsWrittenAsItsRecordsWouldBe() throws {
        let old = Mixed()
        let new = Mixed(
            count: 2, title: "A final title", ratio: .nan, tags: ["a", "b", "c"], bytes: Data([1, 9, 3]))
        let reversion = try #require(old.reversion(to: new))
        let records = try reversion.records()
        #expect(records.map(\.kind) == ["replace", "text", "replace", "elements", "bytes"])
        let written = try StoredChanges.encode(
            reversion, position: 7, encoderWhenNeeded: ChangeRecord.makeEncoder)
        let fromRecords = StoredChanges.encode(records, position: 7)
        #expect(written.text == fromRecords.text)
        #expect(written.bytes == fromRecords.bytes)
        #expect(try StoredChanges.records(written.text, position: 7) == records)
    }

    @Test func theExactTextOfOneChange() throws {
        let record = ChangeRecord(
            path: try PathDescriptor(parsing: "items[id: 7].title"), kind: "replace",
            payload: Data(#"{"new":"Milk","old":"Mlk"}"#.utf8))
        let digest = HistoryRows.digest(
            position: 3, ordinal: 0, "items[id: 7].title", "replace", #"{"new":"Milk","old":"Mlk"}"#)
        #expect(
            StoredChanges.encode([record], position: 3).text
                == #"[["items[id: 7].title","replace",{"new":"Milk","old":"Mlk"},"# + "\(digest)]]")
    }

    /// SQLite's `json_each` (what the `changes` view and the shell use) finds the same paths,
    /// kinds and patches.
    @Test func sqliteReadsTheSameEntries() throws {
        let records = try records()
        let text = StoredChanges.encode(records, position: 9).text
        let connection = try SQLiteConnection(path: ":memory:")
        #expect(try connection.scalarInt("SELECT json_valid(?)", [.text(text)]) == 1)
        // The `changes` view's columns, on the JSON of the version.
        let view = try #require(Schema.views["changes"])
        let path = "json_extract(j.value, '$[0]')"
        let kind = "json_extract(j.value, '$[1]')"
        let patch = try #require(
            view.range(of: "CASE json_type(j.value, '$[2]')").flatMap { start in
                view.range(of: " AS patch", range: start.lowerBound..<view.endIndex).map {
                    String(view[start.lowerBound..<$0.lowerBound])
                }
            })
        #expect(view.contains(path + " AS path") && view.contains(kind + " AS kind"))
        let rows = try connection.query(
            "SELECT \(path), \(kind), \(patch) FROM json_each(?) AS j", [.text(text)]
        ) { ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2) ?? "") }
        #expect(rows.map(\.0) == records.map(\.path.description))
        #expect(rows.map(\.1) == records.map(\.kind))
        // The same JSON values (a bare number in SQLite's form of it: -12.5e3 as -12500.0).
        func decoded(_ json: String) throws -> NSObject {
            try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as! NSObject
        }
        #expect(try rows.map { try decoded($0.2) } == Self.patches.map(decoded))
        #expect(
            rows.map(\.2)[..<3] == [
                #"{"new":"Milk","old":"Mlk"}"#, #"{"new":"a ] } [ { \" \\ b","old":null}"#,
                #"[1,[2,{"x":[]}]]"#,
            ])
        #expect(
            rows.map(\.2)[3...] == [
                #""just a string, with ] and }""#, "-12500.0", "true", "null",
                #"{"new":{"$blob":3},"old":""}"#,
            ])
    }

    /// Migration 0004 quotes with SQLite's `json_quote`; Keepsake reads that text the same way.
    @Test func textQuotedBySQLiteReadsTheSame() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        for path in Self.awkwardPaths {
            let quoted = try #require(try connection.scalarText("SELECT json_quote(?)", [.text(path)]))
            let entries = try StoredChanges.entries("[[" + quoted + #","kind",{},null]]"#)
            #expect(entries == [.init(path: path, kind: "kind", patch: "{}", digest: nil)])
        }
    }

    @Test func aChangedByteOrAMovedChangeIsDamage() throws {
        let records = try records()
        let text = StoredChanges.encode(records, position: 5).text
        #expect(throws: KeepsakeError.self) { try StoredChanges.records(text, position: 6) }
        let edited = text.replacingOccurrences(of: "Milk", with: "Silk")
        #expect(edited != text)
        #expect {
            try StoredChanges.records(edited, position: 5)
        } throws: { error in
            guard case .damaged(_, let reason) = error as? KeepsakeError else { return false }
            return reason == "change 0 of version 5 (at (root)) does not match its digest"
        }
        // Swapping two changes moves each to the other's index, which its digest covers.
        var entries = try StoredChanges.entries(text)
        entries.swapAt(0, 1)
        #expect(throws: KeepsakeError.self) {
            try StoredChanges.records(StoredChanges.text(of: entries), position: 5)
        }
        // With no digest (migrated from before schema 2), the change is read unchecked.
        entries = try StoredChanges.entries(edited).map {
            .init(path: $0.path, kind: $0.kind, patch: $0.patch)
        }
        #expect(
            try StoredChanges.records(StoredChanges.text(of: entries), position: 5).count == records.count)
    }

    @Test(arguments: [
        "", "{}", "[", "[[", #"[["a","b",{},1]"#, #"[["a","b",{},1]]x"#, #"[["a","b",{},1],]"#,
        #"[["a","b",{"x":1},"1"]]"#, #"[["a","b",{"x":1}]]"#, #"[["a",2,{},1]]"#, #"[["a","b",,1]]"#,
        #"[["a","b",{"x":"]]"#, #"[["unclosed,"b",{},1]]"#, #"[["a","b",{},99999999999999999999]]"#,
        #"[["\x","b",{},1]]"#,
    ])
    func malformedTextIsDamageNeverACrash(text: String) throws {
        #expect {
            try StoredChanges.records(text, position: 1)
        } throws: { error in
            guard case .damaged(_, let reason) = error as? KeepsakeError else { return false }
            return reason.hasPrefix("the changes of version 1 are not readable: ")
        }
    }
}

extension StoredChanges {
    /// The column's text for `records` of the version at `position`, and the bytes the records
    /// take (paths and patches), through the same writer as an append: the reference an
    /// append's text, written straight from its reversion, is held to.
    static func encode(_ records: [ChangeRecord], position: Int) -> (text: String, bytes: Int) {
        var writer = Writer(position: position, capacity: records.reduce(2) { $0 + $1.payload.count + 64 })
        for record in records {
            record.payload.withUnsafeBytes {
                writer.append(path: record.path, kind: record.kind, patch: $0)
            }
        }
        return writer.finish()
    }
}
