import Foundation
import Revertible
import TestSupport
import Testing

/// Every leaf type out of the box: unchanged makes no reversion; changed reverts exactly and
/// survives a round trip through records.
@Suite struct LeafTests {
    struct Box<Value: Versionable & Equatable & Codable>: Versionable, Equatable, Codable {
        var value: Value
    }

    static func check<Value: Versionable & Equatable & Codable>(_ a: Value, _ b: Value) throws {
        let old = Box(value: a)
        var new = Box(value: b)
        #expect(old.reversion(to: old) == nil)
        let reversion = try #require(new.reversion(to: old))
        #expect(reversion.paths.allSatisfy { $0.components.first == .property("value") })
        let records = try reversion.records()
        var viaRecords = new
        try Reversion(records: records, resolvingAgainst: viaRecords).revert(&viaRecords)
        try reversion.revert(&new)
        #expect(new == old)
        #expect(viaRecords == old)
        try reversion.inverse.revert(&new)
        #expect(new.value == b)
    }

    /// Text changed only in its bytes — the same text in the other Unicode normalization, which
    /// `==` takes as equal — is a change, reverted to the exact bytes, in a property, an array's
    /// element and a dictionary's value. A patch kept whole refuses the other normalization,
    /// as a longer one refuses other bytes: before, it was applied by bytes to text it did not
    /// fit, making "é+" of an undo that should have made "é".
    @Test func textInTheOtherNormalizationIsAChange() throws {
        struct Item: Identifiable, Versionable, Equatable, Codable {
            let id: Int
            var name: String
        }
        struct Texts: Versionable, Equatable, Codable {
            var title: String
            var lines: [String]
            var byKey: [String: String]
            var items: [Item]
            var itemsByKey: [String: Item]
            var note: String?
        }
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        #expect(composed == decomposed)
        func texts(_ text: String?) -> Texts {
            Texts(
                title: text!, lines: [text!], byKey: ["k": text!], items: [Item(id: 1, name: text!)],
                itemsByKey: ["k": Item(id: 1, name: text!)], note: text)
        }
        // `==` passes over none of them, the items either (`TextForms` reads their names).
        let old = texts(composed)
        var new = texts(decomposed)
        #expect(old == new)
        let reversion = try #require(new.reversion(to: old))
        let change = #"text {"new":"cafe\#u{301}","newCount":6,"offset":0,"old":"caf\#u{E9}","oldCount":5}"#
        #expect(
            payloads(try reversion.records())
                == [
                    "title", "lines[0]", #"byKey[key: "k"]"#, "items[id: 1].name",
                    #"itemsByKey[key: "k"].name"#, "note",
                ].map { "\($0) \(change)" })
        try reversion.revert(&new)
        let bytes = { (texts: Texts) in
            [
                texts.title, texts.lines[0], texts.byKey["k"]!, texts.items[0].name,
                texts.itemsByKey["k"]!.name, texts.note!,
            ]
            .map { Array($0.utf8) }
        }
        #expect(bytes(new) == bytes(old))
        #expect(bytes(new) != bytes(texts(decomposed)))
        // A value replaced whole is checked by what a diff finds: the note was `nil`, its text
        // in the other normalization is another version.
        var unset = old
        unset.note = nil
        let replaced = try #require(old.reversion(to: unset))
        var other = texts(decomposed)
        #expect(throws: ReversionError.self) { try replaced.revert(&other) }
        #expect(bytes(other) == bytes(texts(decomposed)))

        let patch = RangePatch(from: composed, to: composed + "!")
        #expect(patch.mismatch(in: decomposed, expecting: .old) == #"expected "café", found "café""#)
        #expect(patch.mismatch(in: composed, expecting: .old) == nil)
    }

    /// Applying is only ever done after the check, but a patch applied to a value it does not
    /// fit (what a damaged reversion whose changes overlap could bring) leaves it as it is
    /// rather than stop the process.
    @Test func aPatchAppliedWhereItDoesNotFitLeavesTheValue() {
        let text = RangePatch(from: "a long title", to: "a long title, edited")
        var short = "ab"
        text.apply(to: &short, toward: .new)
        #expect(short == "ab")
        var bytes = Data([1])
        RangePatch(from: Data([1, 2, 3, 4]), to: Data([1, 2, 9, 4])).apply(to: &bytes, toward: .old)
        #expect(bytes == Data([1]))
        let elements = ArrayPatch<Int>(
            removals: [.init(offset: 3, element: 7)], insertions: [.init(offset: 5, element: 8)], oldCount: 6,
            newCount: 6)
        var numbers = [1, 2]
        elements.apply(to: &numbers, toward: .new)
        #expect(numbers == [1, 2])
        elements.apply(to: &numbers, toward: .old)
        #expect(numbers == [1, 2])
        // Where it fits, it applies.
        numbers = [0, 1, 2, 7, 4, 5]
        elements.apply(to: &numbers, toward: .new)
        #expect(numbers == [0, 1, 2, 4, 5, 8])
    }

    @Test func numbersAndFlags() throws {
        try Self.check(true, false)
        try Self.check(1, 2)
        try Self.check(Int8.min, Int8.max)
        try Self.check(Int16(-3), 4)
        try Self.check(Int32(5), -6)
        try Self.check(Int64.max, Int64.min)
        try Self.check(UInt(7), 8)
        try Self.check(UInt8(9), 10)
        try Self.check(UInt16(11), 12)
        try Self.check(UInt32(13), 14)
        try Self.check(UInt64.max, 0)
        try Self.check(Float(1.5), -2.25)
        try Self.check(0.1, 0.2)
        try Self.check(Double.infinity, -Double.greatestFiniteMagnitude)
        try Self.check(Decimal(string: "3.14159")!, Decimal(string: "-2.5")!)
    }

    @Test func foundationValues() throws {
        try Self.check(Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000.25))
        try Self.check(UUID(uuid: Activity.uuid(1)), UUID(uuid: Activity.uuid(2)))
        try Self.check(URL(string: "https://example.com/a")!, URL(string: "file:///tmp/b")!)
        try Self.check("", "héllo 👋🏽")
        try Self.check(Data(), Data([0, 255, 7]))
    }

    @Test func optionalsAndCollections() throws {
        try Self.check(Int?.none, 5)
        try Self.check(Optional("a"), nil)
        try Self.check(Optional("a"), "b")
        try Self.check([1, 2, 3], [1, 3])
        try Self.check([1, 2, 3], [3, 2, 1])
        try Self.check(["a", "b"], ["a", "c", "b", "d"])
        try Self.check(Set(["a", "b"]), Set(["b", "c"]))
        try Self.check(["x": 1, "y": 2], ["y": 3, "z": 4])
        try Self.check([1: "one"], [2: "two"])
        try Self.check([[1, 2], [3]], [[1], [3, 4]])
        try Self.check(Color.red, .blue)
    }

    @Test func nanIsStoredAndComparedAsAValue() throws {
        let old = Box(value: 1.0)
        var new = Box(value: Double.nan)
        let reversion = try #require(new.reversion(to: old))
        let records = try reversion.records()
        #expect(String(decoding: records[0].payload, as: UTF8.self) == #"{"new":"NaN","old":1}"#)
        try Reversion(records: records, resolvingAgainst: new).inverse.inverse.revert(&new)
        #expect(new.value == 1.0)
    }

    @Test func aChangeInsideAnOptionalIsRecordedThroughIt() throws {
        let old = Box(value: Optional("hello"))
        var new = Box(value: Optional("hello!"))
        let reversion = try #require(new.reversion(to: old))
        #expect(try reversion.records().map(\.kind) == ["text"])
        try reversion.revert(&new)
        #expect(new == old)
    }
}
