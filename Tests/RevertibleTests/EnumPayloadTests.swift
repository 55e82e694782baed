import Foundation
import Revertible
import TestSupport
import Testing

/// Enums with payloads, diffed with no code: only the changed parts of a payload are recorded,
/// each at a readable path; a case change overwrites.
@Suite struct EnumPayloadTests {
    struct Drawing: Versionable, Equatable, Codable {
        struct Item: Identifiable, Versionable, Equatable, Codable {
            let id: Int
            var shape: Shape
            var tint: Tint = .none
        }
        var items: [Item]
        var selection: Shape? = nil
    }

    /// The changes from `before` to `after` as (path, kind, payload JSON); checks that they
    /// revert, redo, and do the same after a trip through stored records.
    func recorded(from before: Drawing, to after: Drawing) throws -> [String] {
        let reversion = try #require(after.reversion(to: before))
        let records = try reversion.records()
        var value = after
        try reversion.revert(&value)
        #expect(value == before)
        try reversion.inverse.revert(&value)
        #expect(value == after)
        let stored = try JSONDecoder().decode([ChangeRecord].self, from: JSONEncoder().encode(records))
        let resolved = try Reversion(records: stored, resolvingAgainst: after)
        try resolved.revert(&value)
        #expect(value == before)
        try resolved.inverse.revert(&value)
        #expect(value == after)
        return records.map { "\($0.path) \($0.kind) \(String(decoding: $0.payload, as: UTF8.self))" }
    }

    func drawing(_ shape: Shape, tint: Tint = .none) -> Drawing {
        Drawing(items: [.init(id: 1, shape: .dot), .init(id: 7, shape: shape, tint: tint)])
    }

    @Test func aPayloadFieldChangeRecordsThatFieldAlone() throws {
        #expect(
            try recorded(from: drawing(.circle(radius: 10)), to: drawing(.circle(radius: 12))) == [
                #"items[id: 7].shape.circle.radius replace {"new":12,"old":10}"#
            ])
        #expect(
            try recorded(from: drawing(.rect(w: 1, h: 2)), to: drawing(.rect(w: 1, h: 2.5))) == [
                #"items[id: 7].shape.rect.h replace {"new":2.5,"old":2}"#
            ])
    }

    @Test func aNestedPayloadStructRecordsItsChangedProperty() throws {
        let before = drawing(.styled(.init(stroke: 1, fill: "red")))
        #expect(
            try recorded(from: before, to: drawing(.styled(.init(stroke: 2, fill: "red")))) == [
                #"items[id: 7].shape.styled._0.stroke replace {"new":2,"old":1}"#
            ])
        // An optional inside the struct, set and cleared: the absent side is left out.
        #expect(
            try recorded(from: before, to: drawing(.styled(.init(stroke: 1, fill: nil)))) == [
                #"items[id: 7].shape.styled._0.fill replace {"old":"red"}"#
            ])
        #expect(
            try recorded(
                from: drawing(.styled(.init(stroke: 1, fill: nil))),
                to: drawing(.styled(.init(stroke: 3, fill: "blue")))) == [
                    #"items[id: 7].shape.styled._0.fill replace {"new":"blue"}"#,
                    #"items[id: 7].shape.styled._0.stroke replace {"new":3,"old":1}"#,
                ])
    }

    @Test func anArrayInsideAPayloadIsDiffedByPositionWhileItsLengthHolds() throws {
        let points = [Shape.Point(x: 0, y: 0), Shape.Point(x: 1, y: 1), Shape.Point(x: 2, y: 2)]
        var moved = points
        moved[1].y = 5
        #expect(
            try recorded(from: drawing(.polygon(points: points)), to: drawing(.polygon(points: moved))) == [
                #"items[id: 7].shape.polygon.points[1].y replace {"new":5,"old":1}"#
            ])
        // Another length: the array is replaced, not the whole shape.
        #expect(
            try recorded(
                from: drawing(.polygon(points: Array(points.prefix(1)))),
                to: drawing(.polygon(points: Array(points.prefix(2))))) == [
                    #"items[id: 7].shape.polygon.points replace {"new":[{"x":0,"y":0},{"x":1,"y":1}],"old":[{"x":0,"y":0}]}"#
                ])
    }

    @Test func anOptionalPayloadRecordsAnAbsentSideByLeavingItOut() throws {
        #expect(
            try recorded(from: drawing(.label(nil)), to: drawing(.label("hi"))) == [
                #"items[id: 7].shape.label._0 replace {"new":"hi"}"#
            ])
        #expect(
            try recorded(from: drawing(.label("hi")), to: drawing(.label("ho"))) == [
                #"items[id: 7].shape.label._0 replace {"new":"ho","old":"hi"}"#
            ])
        #expect(
            try recorded(from: drawing(.label("ho")), to: drawing(.label(nil))) == [
                #"items[id: 7].shape.label._0 replace {"old":"ho"}"#
            ])
    }

    @Test func aCaseChangeOverwritesTheWholeValue() throws {
        #expect(
            try recorded(from: drawing(.circle(radius: 10)), to: drawing(.rect(w: 1, h: 2))) == [
                #"items[id: 7].shape replace {"new":{"rect":{"h":2,"w":1}},"old":{"circle":{"radius":10}}}"#
            ])
        #expect(
            try recorded(from: drawing(.dot), to: drawing(.label(nil))) == [
                #"items[id: 7].shape replace {"new":{"label":{}},"old":{"dot":{}}}"#
            ])
    }

    @Test func anEnumThatIsOnlyCodableIsDiffedByPayloadToo() throws {
        #expect(
            try recorded(
                from: drawing(.dot, tint: .rgb(r: 1, g: 2, b: 3)),
                to: drawing(.dot, tint: .rgb(r: 1, g: 9, b: 3)))
                == [#"items[id: 7].tint.rgb.g replace {"new":9,"old":2}"#])
    }

    @Test func anOptionalEnumIsDiffedThroughItsWrappedValue() throws {
        var before = drawing(.dot)
        before.selection = .circle(radius: 1)
        var after = before
        after.selection = .circle(radius: 2)
        #expect(
            try recorded(from: before, to: after) == [#"selection.circle.radius replace {"new":2,"old":1}"#])
        after.selection = nil
        #expect(
            try recorded(from: before, to: after) == [
                #"selection replace {"new":null,"old":{"circle":{"radius":1}}}"#
            ])
    }

    @Test func aPayloadChangeOfTheWrongVersionIsRefused() throws {
        let before = drawing(.circle(radius: 10))
        let after = drawing(.circle(radius: 12))
        let reversion = try #require(after.reversion(to: before))
        var other = drawing(.circle(radius: 11))
        #expect(
            throws: ReversionError.wrongVersion(
                path: "items[id: 7].shape.circle.radius", reason: "expected 12, found 11")
        ) { try reversion.revert(&other) }
        var rect = drawing(.rect(w: 1, h: 2))
        #expect(
            throws: ReversionError.wrongVersion(
                path: "items[id: 7].shape.circle.radius", reason: #"no "circle" in the encoded value"#)
        ) { try reversion.revert(&rect) }
        #expect(other == drawing(.circle(radius: 11)))
        #expect(rect == drawing(.rect(w: 1, h: 2)))
    }

    @Test func aStoredPartThatNoLongerDecodesIsRefusedBeforeAnythingChanges() throws {
        // A radius stored as text: the value with that change does not decode.
        let record = ChangeRecord(
            path: "items[id: 7].shape.circle.radius", kind: "replace",
            payload: Data(#"{"new":12,"old":"ten"}"#.utf8))
        let reversion = try Reversion(records: [record], resolvingAgainst: drawing(.circle(radius: 12)))
        var value = drawing(.circle(radius: 12))
        #expect(
            throws: ReversionError.wrongVersion(
                path: "items[id: 7].shape.circle.radius",
                reason: "the value with this change does not decode as Shape")
        ) { try reversion.revert(&value) }
        #expect(value == drawing(.circle(radius: 12)))
    }

    @Test func recordsOfTheWholeValueStillResolve() throws {
        // What earlier releases stored for any enum change: a whole-value replacement.
        let record = ChangeRecord(
            path: "items[id: 7].shape", kind: "replace",
            payload: Data(#"{"new":{"circle":{"radius":12}},"old":{"circle":{"radius":10}}}"#.utf8))
        var value = drawing(.circle(radius: 12))
        try Reversion(records: [record], resolvingAgainst: value).revert(&value)
        #expect(value == drawing(.circle(radius: 10)))
    }

    @Test func partsAreNeverLargerThanTheWholeValues() throws {
        // Twelve points each moved by one: twelve parts with their paths take more bytes than
        // both whole values, so the value is replaced whole.
        let points = (0..<12).map { Shape.Point(x: $0 % 10, y: 0) }
        let moved = points.map { Shape.Point(x: $0.x, y: 1) }
        let lines = try recorded(
            from: drawing(.polygon(points: points)), to: drawing(.polygon(points: moved)))
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("items[id: 7].shape replace ") == true)
        // Two of them moved: two parts.
        let two = points.enumerated().map { $0.offset < 2 ? moved[$0.offset] : $0.element }
        #expect(
            try recorded(from: drawing(.polygon(points: points)), to: drawing(.polygon(points: two))) == [
                #"items[id: 7].shape.polygon.points[0].y replace {"new":1,"old":0}"#,
                #"items[id: 7].shape.polygon.points[1].y replace {"new":1,"old":0}"#,
            ])
    }

    @Test func moreThanSixteenPartsAreReplacedWhole() throws {
        let points = (0..<20).map { Shape.Point(x: $0, y: 100 * $0) }
        let moved = points.map { Shape.Point(x: $0.x, y: $0.y + 1) }
        let lines = try recorded(
            from: drawing(.polygon(points: points)), to: drawing(.polygon(points: moved)))
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("items[id: 7].shape replace ") == true)
    }

    /// An enum whose encoded form leaves out part of its value.
    enum Lossy: Codable, Equatable, Versionable {
        case point(x: Int, label: String, hidden: Int)
        enum CodingKeys: CodingKey { case x, label }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self = .point(
                x: try container.decode(Int.self, forKey: .x),
                label: try container.decode(String.self, forKey: .label),
                hidden: 0)
        }
        func encode(to encoder: any Encoder) throws {
            guard case .point(let x, let label, _) = self else { return }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(x, forKey: .x)
            try container.encode(label, forKey: .label)
        }
    }

    /// An enum whose decoding refuses some payloads: `lo` above `hi`.
    enum Span: Codable, Equatable, Versionable {
        case span(lo: Int, hi: Int, label: String)
        enum CodingKeys: CodingKey { case lo, hi, label }
        struct Inverted: Error {}
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let (lo, hi) = (
                try container.decode(Int.self, forKey: .lo), try container.decode(Int.self, forKey: .hi)
            )
            guard lo <= hi else { throw Inverted() }
            self = .span(lo: lo, hi: hi, label: try container.decode(String.self, forKey: .label))
        }
        func encode(to encoder: any Encoder) throws {
            guard case .span(let lo, let hi, let label) = self else { return }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(lo, forKey: .lo)
            try container.encode(hi, forKey: .hi)
            try container.encode(label, forKey: .label)
        }
    }

    /// A label long enough that recording one number alone is worth it.
    static let label = String(repeating: "a long label ", count: 8)

    struct Holder<Value: Versionable & Codable & Equatable & SendableMetatype>: Versionable, Equatable,
        Codable
    {
        var value: Value
    }

    @Test func aValueThatDoesNotDecodeBackAsItselfIsReplacedWhole() throws {
        let before = Holder(value: Lossy.point(x: 1, label: Self.label, hidden: 5))
        var after = before
        after.value = .point(x: 2, label: Self.label, hidden: 5)
        let reversion = try #require(after.reversion(to: before))
        #expect(reversion.paths == ["value"])
        var value = after
        try reversion.revert(&value)
        #expect(value == before)
    }

    @Test func changesThatDoNotDecodeOneByOneAreReplacedWhole() throws {
        // Reverting `hi` first would give lo 5 > hi 3, which does not decode.
        let before = Holder(value: Span.span(lo: 1, hi: 3, label: Self.label))
        var after = before
        after.value = .span(lo: 5, hi: 9, label: Self.label)
        let reversion = try #require(after.reversion(to: before))
        #expect(reversion.paths == ["value"])
        var value = after
        try reversion.revert(&value)
        #expect(value == before)
        // One part alone decodes either way: recorded alone.
        after.value = .span(lo: 1, hi: 9, label: Self.label)
        #expect(after.reversion(to: before)?.paths == ["value.hi"])
    }
}
