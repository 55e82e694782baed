import Foundation
import TestSupport
import Testing

@testable import Revertible

/// Stored patches read without `JSONDecoder` read as the decoder reads them, and anything the
/// direct reader does not take is left to the decoder.
@Suite struct DirectJSONReadingTests {
    /// `readDirectJSON` of `json`, and what the decoder makes of the same bytes (`nil`: it
    /// refuses them).
    func bothReadings<Patch: DirectlyReadPatch & Decodable>(_ json: [UInt8], as _: Patch.Type) -> (
        direct: Patch?, decoded: Patch?
    ) {
        let direct = json.withUnsafeBytes { Patch.readDirectJSON($0) }
        let decoded = try? ChangeRecord.makeDecoder().decode(Patch.self, from: Data(json))
        return (direct, decoded)
    }

    /// Encodes `patch` both ways (the encoder, and directly when it can), and reads each back.
    func expectRoundTrip<Patch: DirectlyReadPatch & DirectlyWrittenPatch & Codable & Equatable>(
        _ patch: Patch, mustReadDirectly: Bool, _ context: String
    ) throws {
        let encoded = Array(try ChangeRecord.makeEncoder().encode(patch))
        var written: [UInt8] = []
        if patch.writeDirectJSON(into: &written) {
            #expect(written == encoded, "\(context): written as the encoder writes")
        }
        let (direct, decoded) = bothReadings(encoded, as: Patch.self)
        #expect(decoded == patch, "\(context): the decoder reads it")
        if mustReadDirectly { #expect(direct == patch, "\(context): read directly") }
        if let direct { #expect(direct == decoded, "\(context): read directly as decoded") }
    }

    static func randomString(using generator: inout SeededGenerator, plain: Bool = false) -> String {
        let pieces =
            plain
            ? ["a", "Z", "0", " ", "é", "日本", "👩‍💻", "/", "\u{7F}"]
            : ["a", "Z", "0", " ", "é", "日本", "👩‍💻", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{7F}"]
        let count = Int.random(in: 0..<12, using: &generator)
        return (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    @Test(arguments: 0..<4)
    func randomReplacementsReadAsTheDecoderReadsThem(batch: UInt64) throws {
        var generator = SeededGenerator(seed: 0xD1EC_0000 + batch)
        for step in 0..<300 {
            let context = "batch \(batch) step \(step)"
            let old = Self.randomString(using: &generator)
            let new = Self.randomString(using: &generator)
            let plain = !(old + new).utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
            try expectRoundTrip(Replacement(old: old, new: new), mustReadDirectly: plain, context)
            let ints = [Int.min, Int.max, 0, -1, 1, Int.random(in: .min ... .max, using: &generator)]
            try expectRoundTrip(
                Replacement(
                    old: ints.randomElement(using: &generator)!, new: ints.randomElement(using: &generator)!),
                mustReadDirectly: true, context)
            try expectRoundTrip(
                Replacement(old: Int32.min, new: Int32.random(in: .min ... .max, using: &generator)),
                mustReadDirectly: true, context)
            try expectRoundTrip(
                Replacement(old: UInt64.max, new: UInt64.random(in: 0 ... .max, using: &generator)),
                mustReadDirectly: true, context)
            let doubles = [
                0.1, -0.0, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 3, -2.5,
                Double(bitPattern: generator.next()),
            ].filter(\.isFinite)
            try expectRoundTrip(
                Replacement(
                    old: doubles.randomElement(using: &generator)!,
                    new: doubles.randomElement(using: &generator)!),
                mustReadDirectly: true, context)
            try expectRoundTrip(
                Replacement(old: Bool.random(using: &generator), new: Bool.random(using: &generator)),
                mustReadDirectly: true, context)
        }
    }

    @Test(arguments: 0..<2)
    func randomTextRangesReadAsTheDecoderReadsThem(batch: UInt64) throws {
        var generator = SeededGenerator(seed: 0x4A7E_0000 + batch)
        var withDigests = 0
        defer { #expect(withDigests > 10, "ranges with digests: \(withDigests)") }
        for step in 0..<100 {
            // Long enough, some of them, for a range with digests; half of them with nothing
            // the encoder escapes, which the direct reader must read.
            let plain = step.isMultiple(of: 2)
            let base = (0..<Int.random(in: 0..<60, using: &generator)).map { _ in
                Self.randomString(using: &generator, plain: plain)
            }.joined()
            var edited = base
            edited.insert(
                contentsOf: Self.randomString(using: &generator, plain: plain), at: edited.startIndex)
            let patch = RangePatch(from: base, to: edited)
            if patch.newDigest != nil { withDigests += 1 }
            try expectRoundTrip(patch, mustReadDirectly: plain, "batch \(batch) step \(step)")
        }
    }

    /// Forms the encoder does not write, numbers a type does not hold, broken text: the
    /// direct reader leaves each to the decoder (or reads it as the decoder does).
    @Test func anythingElseIsLeftToTheDecoder() {
        let ints: [String] = [
            #"{"new": 1,"old":2}"#, #"{"old":2,"new":1}"#, #"{"new":-0,"old":0}"#, #"{"new":01,"old":0}"#,
            #"{"new":1.0,"old":0}"#, #"{"new":1e2,"old":0}"#, #"{"new":9223372036854775808,"old":0}"#,
            #"{"new":-9223372036854775808,"old":0}"#, #"{"new":99999999999999999999999,"old":0}"#,
            #"{"new":1,"old":2} "#, #"{"new":1,"old":2"#, #"{"new":"1","old":2}"#, #"{"new":+1,"old":2}"#,
        ]
        for json in ints {
            let (direct, decoded) = bothReadings(Array(json.utf8), as: Replacement<Int>.self)
            if let direct { #expect(direct == decoded, "\(json)") }
        }
        #expect(bothReadings(Array(#"{"new":-0,"old":0}"#.utf8), as: Replacement<Int>.self).direct == nil)
        #expect(
            bothReadings(Array(#"{"new":-9223372036854775808,"old":0}"#.utf8), as: Replacement<Int>.self)
                .direct
                == Replacement(old: 0, new: Int.min))
        #expect(
            bothReadings(Array(#"{"new":9223372036854775808,"old":0}"#.utf8), as: Replacement<Int>.self)
                .direct
                == nil)
        let strings: [[UInt8]] = [
            Array(#"{"new":"a\"b","old":""}"#.utf8), Array(#"{"new":"\u0041","old":""}"#.utf8),
            Array(#"{"new":"a","old":"b}"#.utf8), Array(#"{"new":"x","old":"y"}"#.utf8) + [0],
            Array(#"{"new":""#.utf8) + [0xFF, 0xFE] + Array(#"","old":""}"#.utf8),
            Array(#"{"new":""#.utf8) + [0x0A] + Array(#"","old":""}"#.utf8),
        ]
        for json in strings {
            let (direct, decoded) = bothReadings(json, as: Replacement<String>.self)
            #expect(direct == nil || direct == decoded, "\(json)")
        }
        // Invalid UTF-8 is never repaired into a value.
        #expect(bothReadings(strings[4], as: Replacement<String>.self).direct == nil)
        let ranges = [
            #"{"new":"a","newCount":1,"offset":5,"old":"b","oldCount":1}"#,
            #"{"new":"a","newCount":1,"newDigest":"00000000000000ZZ","offset":0,"old":"b","oldCount":1}"#,
            #"{"new":"a","newCount":1,"newDigest":"ABCDEF0123456789","offset":0,"old":"b","oldCount":1}"#,
        ]
        for json in ranges {
            let (direct, decoded) = bothReadings(Array(json.utf8), as: RangePatch<String>.self)
            #expect(direct == nil, "\(json)")
            _ = decoded
        }
    }
}
