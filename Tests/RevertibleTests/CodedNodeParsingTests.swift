import Foundation
import TestSupport
import Testing

@testable import Revertible

/// JSON read into a ``CodedNode`` directly from its bytes: exactly what the tree held before it
/// was written, exactly the value the records' encoder wrote it from, and `nil`, never a crash,
/// for what is not JSON.
@Suite struct CodedNodeParsingTests {
    /// A value of any JSON shape, as an app's `Codable` model writes one.
    indirect enum Sample: Encodable {
        case integer(Int64)
        case unsigned(UInt64)
        case double(Double)
        case decimal(Decimal)
        case string(String)
        case bool(Bool)
        case null
        case array([Sample])
        case object([String: Sample])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .integer(let value): try container.encode(value)
            case .unsigned(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .decimal(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .null: try container.encodeNil()
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }
    }

    /// Whether `node` holds exactly `sample`: its integers as `Int64` (or their digits past it),
    /// its doubles as the same `Double`, its decimals as a number of the same decimal value.
    static func holds(_ node: CodedNode, _ sample: Sample) -> Bool {
        switch (sample, node) {
        case (.integer(let value), _): return node == .integer(value)
        case (.unsigned(let value), _):
            return node == (Int64(exactly: value).map(CodedNode.integer) ?? .numeral(String(value)))
        case (.double(let value), _): return node == .number(value)
        case (.decimal(let value), .integer(let integer)): return Decimal(integer) == value
        case (.decimal(let value), .double(let double)): return Decimal(string: double.description) == value
        case (.decimal(let value), .numeral(let numeral)): return Decimal(string: numeral) == value
        case (.string(let value), _): return node == .string(value)
        case (.bool(let value), _): return node == .bool(value)
        case (.null, _): return node == .null
        case (.array(let samples), .array(let nodes)):
            return samples.count == nodes.count && zip(nodes, samples).allSatisfy { holds($0, $1) }
        case (.object(let samples), .object(let nodes)):
            return Set(samples.keys) == Set(nodes.keys)
                && samples.allSatisfy { holds(nodes[$0.key]!, $0.value) }
        default: return false
        }
    }

    /// Whether `decoded` is `direct`, but for integers past 2^53 that are the same `Double`
    /// (a decoder's reading of such a number written with an exponent).
    static func same(_ decoded: CodedNode, _ direct: CodedNode) -> Bool {
        switch (decoded, direct) {
        case (.integer(let a), .integer(let b)) where a != b:
            return a.magnitude > 1 << 53 && Double(a) == Double(b)
        case (.array(let a), .array(let b)):
            return a.count == b.count
                && zip(a, b).allSatisfy { same($0, $1) }
        case (.object(let a), .object(let b)):
            return Set(a.keys) == Set(b.keys)
                && a.allSatisfy { same($0.value, b[$0.key]!) }
        default:
            return decoded == direct
        }
    }

    // MARK: - Random values

    static let scalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\u{0}", "\u{1}", "\u{8}", "\u{C}", "\n", "\r", "\t", "\u{1F}",
        "\u{7F}", "é", "ß", "\u{301}", "\u{2028}", "\u{FEFF}", "\u{FFFD}", "中", "😀", "\u{10FFFF}",
    ]

    static let doubles: [Double] = [
        0.1, 0.30000000000000004, 1e21, 1e22, .leastNonzeroMagnitude, 2.2250738585072014e-308,
        .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, 9_007_199_254_740_992.nextUp, 1.2345678901234567, 123e-20, 2.5e-7, 100,
        -1.5,
    ]

    static func string(_ random: inout SeededGenerator) -> String {
        var string = ""
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            string.unicodeScalars.append(
                Bool.random(using: &random)
                    ? scalars.randomElement(using: &random)!
                    : Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random)))
        }
        return string
    }

    static func digits(_ count: Int, _ random: inout SeededGenerator) -> String {
        String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
    }

    static func sample(depth: Int, _ random: inout SeededGenerator) -> Sample {
        switch Int.random(in: 0..<(depth < 4 ? 11 : 9), using: &random) {
        case 0: return .integer(.random(in: .min ... .max, using: &random))
        case 1: return .integer([.min, .max, 0, -1, 1].randomElement(using: &random)!)
        case 2: return .unsigned(.random(in: UInt64(Int64.max)...UInt64.max, using: &random))
        case 3:
            let double = Double(bitPattern: random.next())
            return .double(double.isFinite ? double : 0)
        case 4:
            return .double(
                Bool.random(using: &random)
                    ? doubles.randomElement(using: &random)! : .random(in: -1e6...1e6, using: &random))
        case 5:
            // Up to 38 digits, a `Decimal`'s own, with its point anywhere.
            let integral = digits(Int.random(in: 1...20, using: &random), &random)
            let fraction = digits(Int.random(in: 0...18, using: &random), &random)
            let sign = Bool.random(using: &random) ? "-" : ""
            return .decimal(Decimal(string: sign + integral + (fraction.isEmpty ? "" : "." + fraction))!)
        case 6: return .string(string(&random))
        case 7: return .bool(.random(using: &random))
        case 8: return .null
        case 9:
            return .array(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in sample(depth: depth + 1, &random) })
        default:
            var object: [String: Sample] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                object[string(&random)] = sample(depth: depth + 1, &random)
            }
            return .object(object)
        }
    }

    /// Random values of every shape, written by the records' encoder (compact) and a
    /// pretty-printing one (whitespace everywhere JSON allows it), read as the value they were
    /// written from, as a decoder reads them, and written back as the encoder wrote them.
    @Test(arguments: Soak.batches(usually: 4))
    func readsTheRecordsEncodersJSONAsTheValueItWasWrittenFrom(batch: UInt64) throws {
        var random = SeededGenerator(seed: 0xC0DE_0000 + batch)
        let pretty = ChangeRecord.makeEncoder()
        pretty.outputFormatting.insert(.prettyPrinted)
        for trial in 0..<400 {
            let sample = Self.sample(depth: 0, &random)
            for data in [try ChangeRecord.makeEncoder().encode(sample), try pretty.encode(sample)] {
                let text = String(decoding: data, as: UTF8.self)
                let direct = try #require(CodedNode.parsing(data), "batch \(batch) trial \(trial): \(text)")
                #expect(
                    Self.holds(direct, sample), "batch \(batch) trial \(trial): \(text) read as \(direct)")
                // A stored change's sides are read by a decoder where they are not read
                // directly: they must be the same tree, or a change would not find the value
                // it was made to. A decoder gives no number's text, so one pair reads two ways:
                // an integral `Double` past 2^53 written with an exponent is read directly as
                // the `Double`'s own value (3.027322129351007e+17: 302732212935100672), and by
                // a decoder as the integer its digits write (302732212935100700), as the
                // same integer's own text reads (found by the soak, batch 77007). Both decode
                // as the same `Double`. The sides a decoder reads (an enum payload's part)
                // never hold that form: they are written from the tree, whose integral doubles
                // are integers, in digits; a `Double` replaced whole is written with the
                // exponent, and read directly or as a `Double`.
                let decoder = ChangeRecord.makeDecoder()
                let decoded = try decoder.decode(CodedNode.self, from: data)
                #expect(
                    Self.same(decoded, direct),
                    "batch \(batch) trial \(trial): \(text) decoded as \(decoded)")
                let stored = try ChangeRecord.makeEncoder().encode(direct)
                #expect(
                    try decoder.decode(CodedNode.self, from: stored) == direct,
                    "batch \(batch) trial \(trial): \(text) stored")
                // Written back, the tree reads as itself.
                #expect(
                    CodedNode.parsing(direct.jsonData) == direct, "batch \(batch) trial \(trial): \(text)")
            }
        }
    }

    /// Keys whose order `JSONSerialization` decides by case, numbers, accents and width.
    static let keys = [
        "a10", "a9", "A9", "B", "b", "e", "é", "E", "Z", "z", "_", "", "10", "9", "ß", "ss", "ｂ", "😀",
    ]

    /// The pretty-printed JSON of random values (as `keepsake value` shows a stored value) is
    /// byte for byte what `JSONSerialization` writes of the same tree.
    @Test(arguments: Soak.batches(usually: 4))
    func writesPrettyJSONAsJSONSerializationDoes(batch: UInt64) throws {
        var random = SeededGenerator(seed: 0x9E77_0000 + batch)
        for trial in 0..<300 {
            var sample = Self.sample(depth: 0, &random)
            if case .object = sample {
            } else {
                // Objects whose keys are the ones that order differently, and one of the sample.
                var object: [String: Sample] = ["": sample]
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    object[Self.keys.randomElement(using: &random)!] = Self.sample(depth: 2, &random)
                }
                sample = .object(object)
            }
            let node = try #require(CodedNode.parsing(ChangeRecord.makeEncoder().encode(sample)))
            let serialization = try JSONSerialization.data(
                withJSONObject: node.foundationObject,
                options: [.fragmentsAllowed, .prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            let written = String(decoding: node.prettyJSON, as: UTF8.self)
            #expect(
                written == String(decoding: serialization, as: UTF8.self),
                "batch \(batch) trial \(trial):\n\(written)")
        }
    }

    /// `JSONSerialization` drops a U+FEFF that starts a string or follows an escape in one
    /// (swift-corelibs-foundation, Swift 6.3): a value read through it lost those characters.
    @Test func keepsAByteOrderMarkAnywhereInAString() throws {
        for string in ["\u{FEFF}a", "\t\u{FEFF}b", "a\\\u{FEFF}", "\u{FEFF}", "x\u{FEFF}\u{FEFF}y"] {
            let data = try ChangeRecord.makeEncoder().encode([string: [string]])
            #expect(
                CodedNode.parsing(data) == .object([string: .array([.string(string)])]),
                "\(string.debugDescription)")
        }
    }

    // MARK: - Numbers

    @Test(arguments: [
        ("1", CodedNode.integer(1)),
        ("-0", .integer(0)),
        ("-0.0", .integer(0)),
        ("1.0", .integer(1)),
        ("1E2", .integer(100)),
        ("1.5", .double(1.5)),
        ("-2.5e-7", .double(-2.5e-7)),
        ("0.1", .double(0.1)),
        ("1e21", .double(1e21)),
        ("5e-324", .double(.leastNonzeroMagnitude)),
        ("-1e-400", .integer(0)),
        ("0.30000000000000004", .double(0.30000000000000004)),
        ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        ("9223372036854775807", .integer(.max)),
        ("-9223372036854775808", .integer(.min)),
        ("9223372036854775808", .numeral("9223372036854775808")),
        ("18446744073709551615", .numeral("18446744073709551615")),
        ("-9223372036854775809", .numeral("-9223372036854775809")),
        // Digits no `Double` holds are kept as written, past `Decimal`'s 38 too.
        (
            "123456789012345678901234567890123456789012345",
            .numeral("123456789012345678901234567890123456789012345")
        ),
        ("12345678901234567890.123456789", .numeral("12345678901234567890.123456789")),
        ("3.14159265358979323846264338327950288", .numeral("3.14159265358979323846264338327950288")),
        ("1.2345678901234567", .double(1.2345678901234567)),
        // 17 digits that the nearest `Double` writes as 1.2345678901234568.
        ("1.23456789012345671", .numeral("1.23456789012345671")),
        // Written as `Decimal` writes the number, as a decoder's reading is.
        ("1.2345678901234567100", .numeral("1.23456789012345671")),
    ])
    func readsANumberAsWhatHoldsItExactly(text: String, expected: CodedNode) {
        #expect(CodedNode.parsing(Data(text.utf8)) == expected, "\(text)")
    }

    // MARK: - Strings

    @Test func readsEveryEscape() {
        let json = #""\"\\\/\b\f\n\r\t\u00e9\u00E9\u0000\ud83d\ude00 é😀""#
        #expect(CodedNode.parsing(Data(json.utf8)) == .string("\"\\/\u{8}\u{C}\n\r\t\u{E9}\u{E9}\u{0}😀 é😀"))
    }

    // MARK: - Not JSON

    @Test(arguments: [
        "", " ", "tru", "nul", "falsey", "01", "-", "1.", ".5", "+1", "1e", "1e+", "0x10", "NaN", "Infinity",
        "1e400", "-1e400", "[1,]", "[1 2]", "[", "]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{\"a\":}", "{1:2}",
        "1 2", "\"a", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"a\u{1}b\"", "\"a\nb\"", "\u{FEFF}1", "'a'", "[1]x",
    ])
    func refusesWhatIsNotJSON(text: String) {
        #expect(CodedNode.parsing(Data(text.utf8)) == nil, "\(text.debugDescription)")
    }

    @Test func refusesBytesThatAreNotUTF8() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0xFF],
        ] {
            #expect(CodedNode.parsing(Data(bytes)) == nil, "\(bytes)")
        }
    }

    /// Nesting is read to `JSONSerialization`'s depth, and refused past it without going deeper:
    /// a hostile value a million arrays deep costs no stack.
    @Test func readsNestingToItsLimitAndRefusesDeeper() {
        func nested(_ depth: Int, open: String, close: String) -> Data {
            Data((String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)).utf8)
        }
        let limit = CodedNode.deepestNesting
        #expect(limit == 512)
        #expect(CodedNode.parsing(nested(limit, open: "[", close: "]")) != nil)
        #expect(CodedNode.parsing(nested(limit, open: "{\"a\":", close: "}")) != nil)
        #expect(CodedNode.parsing(nested(limit + 1, open: "[", close: "]")) == nil)
        #expect(CodedNode.parsing(nested(limit + 1, open: "{\"a\":", close: "}")) == nil)
        #expect(CodedNode.parsing(Data(String(repeating: "[", count: 1_000_000).utf8)) == nil)
    }

    @Test func aKeyGivenTwiceKeepsItsLastValue() {
        #expect(
            CodedNode.parsing(Data(#"{"a":1,"b":[],"a":{"c":null}}"#.utf8))
                == .object(["a": .object(["c": .null]), "b": .array([])]))
    }
}
