package import Foundation

extension CodedNode {
    /// The deepest nesting of arrays and objects ``parsing(_:)`` reads: `JSONSerialization`'s
    /// limit, so that a hostile value cannot exhaust the stack of the reader, or of the
    /// recursive walks over the tree after it.
    static let deepestNesting = 512

    /// The tree of JSON `data`, or `nil` when it is not JSON (or nests deeper than
    /// ``deepestNesting``).
    ///
    /// Read directly from the bytes: no `JSONSerialization` objects boxed on the way and cast
    /// back, which cost most of the time of replaying stored changes on a large value's JSON.
    /// Numbers are read as the type says: an integer as `Int64`, or its digits as a
    /// ``numeral(_:)`` past `Int64`; any other number as the `Double` nearest its text, or as
    /// a ``numeral(_:)`` when that `Double` is not the same decimal number (a long `Decimal`'s
    /// digits, which no `Double` holds), written as `Decimal` writes it where it holds them.
    static func parsing(_ data: Data) -> CodedNode? {
        data.withUnsafeBytes { bytes in
            var reader = DirectJSON.Reader(bytes)
            reader.skipWhitespace()
            guard let node = reader.node(depth: 0) else { return nil }
            reader.skipWhitespace()
            return reader.isAtEnd ? node : nil
        }
    }
}

extension CodedNode {
    /// The tree as `JSONSerialization` reads JSON: dictionaries, arrays, strings, `NSNumber`
    /// (`NSDecimalNumber` for a ``numeral(_:)`` past `UInt64`) and `NSNull`.
    var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let bool): NSNumber(value: bool)
        case .integer(let integer): NSNumber(value: integer)
        case .double(let double): NSNumber(value: double)
        case .numeral(let numeral):
            UInt64(numeral).map { NSNumber(value: $0) }
                ?? NSDecimalNumber(string: numeral, locale: Self.posix)
        case .string(let string): string
        case .array(let array): array.map(\.foundationObject)
        case .object(let object): object.mapValues(\.foundationObject)
        }
    }

    /// A number that no `Double` holds, from its JSON text: as `Decimal` writes it (`1.5`, not
    /// `1.50`) when the text has no exponent and at most 38 significant digits, which a
    /// `Decimal` holds exactly; otherwise the text itself.
    static func decimalText(_ text: String) -> String {
        guard !text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
            text.utf8.count(where: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) <= 38,
            let decimal = decimal(text), !decimal.isNaN
        else { return text }
        return decimal.description
    }

    /// The `Decimal` a JSON number's text writes, `nil` past its range (`5e-324`).
    static func decimal(_ text: String) -> Decimal? {
        Decimal(string: text, locale: posix)
    }

    static let posix = Locale(identifier: "en_US_POSIX")
}

extension DirectJSON.Reader {
    /// Moves past JSON's whitespace: spaces, tabs, line feeds and carriage returns.
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    /// The JSON value at the reading position, nested `depth` deep, or `nil` when it is not
    /// one.
    mutating func node(depth: Int) -> CodedNode? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < CodedNode.deepestNesting else { return nil }
            index += 1
            var object: [String: CodedNode] = [:]
            skipWhitespace()
            if skip("}") { return .object(object) }
            repeat {
                skipWhitespace()
                guard let key = quotedString() else { return nil }
                skipWhitespace()
                guard skip(":") else { return nil }
                skipWhitespace()
                guard let value = node(depth: depth + 1) else { return nil }
                // A key given twice keeps its last value, as `JSONSerialization` reads it.
                object[key] = value
                skipWhitespace()
            } while skip(",")
            return skip("}") ? .object(object) : nil
        case UInt8(ascii: "["):
            guard depth < CodedNode.deepestNesting else { return nil }
            index += 1
            var array: [CodedNode] = []
            skipWhitespace()
            if skip("]") { return .array(array) }
            repeat {
                skipWhitespace()
                guard let element = node(depth: depth + 1) else { return nil }
                array.append(element)
                skipWhitespace()
            } while skip(",")
            return skip("]") ? .array(array) : nil
        case UInt8(ascii: "\""):
            return quotedString().map(CodedNode.string)
        case UInt8(ascii: "t"):
            return skip("true") ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return skip("false") ? .bool(false) : nil
        case UInt8(ascii: "n"):
            return skip("null") ? .null : nil
        default:
            return numberNode()
        }
    }

    /// A JSON string, escapes and all, of valid UTF-8 with no control character; `nil` for
    /// anything else (a lone surrogate's escape among them: no `String` holds one).
    mutating func quotedString() -> String? {
        if let plain = string() { return plain }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        var utf8: [UInt8] = []
        var position = index + 1
        /// The four hex digits at `position`, moved past.
        func hexUnit() -> UInt16? {
            guard bytes.count - position >= 4 else { return nil }
            var unit: UInt16 = 0
            for byte in bytes[position..<position + 4] {
                guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { return nil }
                unit = unit << 4 | UInt16(digit)
            }
            position += 4
            return unit
        }
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validatingUTF8Bytes: utf8) else { return nil }
                index = position
                return string
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let unit = hexUnit() else { return nil }
                    var scalar = Unicode.Scalar(unit)
                    if UTF16.isLeadSurrogate(unit) {
                        guard bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { return nil }
                        position += 2
                        guard let trail = hexUnit(), UTF16.isTrailSurrogate(trail) else { return nil }
                        scalar = Unicode.Scalar(UTF16.decode(UTF16.EncodedScalar([unit, trail])).value)
                    }
                    guard let scalar else { return nil }
                    utf8.append(contentsOf: UTF8.encode(scalar)!)
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                utf8.append(byte)
            }
        }
        return nil
    }

    /// A JSON number as ``CodedNode/parsing(_:)`` reads it, or `nil` when the text is none, or
    /// too large for a `Double` (as `JSONSerialization` refuses it).
    private mutating func numberNode() -> CodedNode? {
        let start = index
        if let integer = integer() {
            if let value = Self.signed(integer, as: Int64.self) { return .integer(value) }
            index = start
        }
        guard let (text, isInteger) = number() else { return nil }
        let string = String(decoding: text, as: UTF8.self)
        // Only -0 and integers past `Int64` are left: JSON writes no leading zeros, so the
        // digits are the number's own.
        if isInteger { return string == "-0" ? .integer(0) : .numeral(string) }
        guard let double = Double(string), double.isFinite else { return nil }
        return Self.isExactly(double, string) ? .number(double) : .numeral(CodedNode.decimalText(string))
    }

    /// Whether `text`, a JSON number with a fraction or an exponent, is the decimal number
    /// `double` writes (its shortest description): always, with 15 significant digits or
    /// fewer; never, with more than 17; in between, when the two are the same decimal.
    private static func isExactly(_ double: Double, _ text: String) -> Bool {
        let mantissa = text.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        let digits = mantissa.filter { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }.reversed().drop { $0 == UInt8(ascii: "0") }
        if significant.count <= 15 { return true }
        if significant.count > 17 { return false }
        return CodedNode.decimal(text) == CodedNode.decimal(double.description)
    }
}

extension String {
    /// `bytes` as a string, or `nil` when they are not valid UTF-8 (`String(decoding:as:)`
    /// would repair them).
    init?(validatingUTF8Bytes bytes: some Collection<UInt8>) {
        let string = String(decoding: bytes, as: UTF8.self)
        guard string.utf8.elementsEqual(bytes) else { return nil }
        self = string
    }
}

/// JSON read into the objects `JSONSerialization` gives — dictionaries, arrays, strings,
/// `NSNumber`, `NSNull` — through ``CodedNode``'s reader: `JSONSerialization` itself drops a
/// U+FEFF that starts a string or follows an escape in one (swift-corelibs-foundation, Swift
/// 6.3), so a value read back through it lost those characters. Everything that reads stored
/// JSON into such objects reads it here.
package enum FoundationJSON {
    /// The objects of JSON `data` (a fragment, such as a bare string, too), or `nil` when it
    /// is not JSON.
    package static func object(_ data: Data) -> Any? {
        CodedNode.parsing(data)?.foundationObject
    }

    /// ``object(_:)``, or the error `JSONDecoder` throws for data that is not JSON.
    package static func object(decoding data: Data) throws -> Any {
        guard let object = object(data) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "The given data was not valid JSON."))
        }
        return object
    }
}
