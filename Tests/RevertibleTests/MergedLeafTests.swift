import Foundation
import TestSupport
import Testing

@testable import Revertible

/// A value read through the merge (a property added since) reads every leaf as the standard
/// decoder reads it, the ones read straight from the tree (text, booleans, integers, doubles)
/// and the rest alike.
@Suite struct MergedLeafTests {
    struct Stored: Codable, Equatable {
        var text: String
        var flag: Bool
        var int: Int
        var int64: Int64
        var double: Double
        var float: Float
        var unsigned: UInt64
        var small: Int8
        var amount: Decimal
        var maybe: Double?
        var list: [Int]
        var byName: [String: Double]
    }

    /// `Stored` once the app added a property.
    struct Today: Codable, Equatable {
        var text: String
        var flag: Bool
        var int: Int
        var int64: Int64
        var double: Double
        var float: Float
        var unsigned: UInt64
        var small: Int8
        var amount: Decimal
        var maybe: Double?
        var list: [Int]
        var byName: [String: Double]
        var added: Int
    }

    static func random(_ random: inout SeededGenerator) -> Stored {
        // No -0.0: a tree holds JSON's -0 as the integer 0, which reads as 0.0 (`==` to it).
        func double() -> Double {
            let double = anyDouble()
            return double == 0 ? 0 : double
        }
        func anyDouble() -> Double {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                [
                    0.1, 1e21, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 3, -2.5, .nan,
                    .infinity,
                ].randomElement(using: &random)!
            case 1: .random(in: -1e6...1e6, using: &random)
            case 2: Double(Int.random(in: -1000...1000, using: &random))
            default:
                Double(bitPattern: random.next())
            }
        }
        return Stored(
            text: ["", "a", "\u{FEFF}b", "tab\t", "NaN", "1", "true", "😀"].randomElement(using: &random)!,
            flag: .random(using: &random),
            int: [Int.min, .max, 0, -1, .random(in: -1000...1000, using: &random)].randomElement(
                using: &random)!,
            int64: .random(in: .min ... .max, using: &random), double: double(),
            float: Float(Double.random(in: -1e6...1e6, using: &random)),
            unsigned: .random(in: 0 ... .max, using: &random),
            small: .random(in: .min ... .max, using: &random),
            amount: Decimal(
                string:
                    "\(Int.random(in: -99999...99999, using: &random)).\(UInt32.random(in: 0...999_999, using: &random))"
            )!,
            maybe: Bool.random(using: &random) ? nil : double(),
            list: (0..<Int.random(in: 0...3, using: &random)).map { _ in .random(in: -5...5, using: &random)
            },
            byName: ["x": double(), "y": double()])
    }

    @Test(arguments: Soak.batches(usually: 4))
    func everyLeafReadsAsTheStandardDecoderReadsIt(batch: UInt64) throws {
        var random = SeededGenerator(seed: 0x3E76_0000 + batch)
        let encoder = ChangeRecord.makeEncoder()
        let decoder = ChangeRecord.makeDecoder()
        let template = try encoder.encode(
            Today(
                text: "", flag: false, int: 0, int64: 0, double: 0, float: 0, unsigned: 0, small: 0,
                amount: 0,
                maybe: nil, list: [], byName: [:], added: 7))
        for trial in 0..<200 {
            let stored = Self.random(&random)
            let json = try encoder.encode(stored)
            let (merged, didMerge) = try EvolvingDecoding.decodeNotingMerge(
                Today.self, from: json, template: { template }, decoder: decoder)
            #expect(didMerge)
            #expect(merged.added == 7)
            // Read back as the stored type, through its JSON: what the standard decoder makes of it.
            let expected = try decoder.decode(Stored.self, from: json)
            let read = Stored(
                text: merged.text, flag: merged.flag, int: merged.int, int64: merged.int64,
                double: merged.double,
                float: merged.float, unsigned: merged.unsigned, small: merged.small, amount: merged.amount,
                maybe: merged.maybe, list: merged.list, byName: merged.byName)
            let (readJSON, expectedJSON) = try (encoder.encode(read), encoder.encode(expected))
            #expect(
                readJSON == expectedJSON,
                "batch \(batch) trial \(trial): \(String(decoding: readJSON, as: UTF8.self)) is not \(String(decoding: expectedJSON, as: UTF8.self))"
            )
        }
    }
}
