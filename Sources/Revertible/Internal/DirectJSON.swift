/// The JSON of the most common patches — whole-value changes of numbers, booleans and text, and
/// text ranges — written directly: the bytes `JSONEncoder` writes with the records' settings
/// (sorted keys, unescaped slashes), at a fraction of its cost. Anything else (a `Double` that
/// is not finite, any other type) goes through the encoder.
protocol DirectlyWrittenPatch {
    /// Appends the patch's JSON to `json` and returns `true`, or returns `false` (having
    /// appended nothing) when the encoder must write it.
    func writeDirectJSON(into json: inout [UInt8]) -> Bool
}

extension Replacement: DirectlyWrittenPatch {
    func writeDirectJSON(into json: inout [UInt8]) -> Bool {
        guard DirectJSON.isScalar(old), DirectJSON.isScalar(new) else { return false }
        json.appendLiteral(#"{"new":"#)
        DirectJSON.writeScalar(new, into: &json)
        json.appendLiteral(#","old":"#)
        DirectJSON.writeScalar(old, into: &json)
        json.append(UInt8(ascii: "}"))
        return true
    }
}

extension RangePatch: DirectlyWrittenPatch {
    func writeDirectJSON(into json: inout [UInt8]) -> Bool {
        guard DirectJSON.isScalar(old), DirectJSON.isScalar(new) else { return false }
        // The keys sorted, as the encoder writes them: the new side, the offset, the old side.
        json.append(UInt8(ascii: "{"))
        Self.writeSide("new", new, count: newCount, digest: newDigest, into: &json)
        json.appendLiteral(#","offset":"#)
        json.appendDecimal(Int64(offset))
        json.append(UInt8(ascii: ","))
        Self.writeSide("old", old, count: oldCount, digest: oldDigest, into: &json)
        json.append(UInt8(ascii: "}"))
        return true
    }

    /// Appends one side's members: `"new":…,"newCount":…` and `"newDigest":"…"` when it has one.
    private static func writeSide(
        _ side: StaticString, _ value: Value, count: Int, digest: UInt64?, into json: inout [UInt8]
    ) {
        json.append(UInt8(ascii: "\""))
        json.appendLiteral(side)
        json.appendLiteral(#"":"#)
        DirectJSON.writeScalar(value, into: &json)
        json.appendLiteral(#",""#)
        json.appendLiteral(side)
        json.appendLiteral(#"Count":"#)
        json.appendDecimal(Int64(count))
        if let digest {
            json.appendLiteral(#",""#)
            json.appendLiteral(side)
            json.appendLiteral(#"Digest":""#)
            DirectJSON.writeHex(digest, into: &json)
            json.append(UInt8(ascii: "\""))
        }
    }
}

extension [UInt8] {
    /// Appends the UTF-8 of `string` as one copy (appending its `utf8` view goes byte by byte).
    package mutating func appendUTF8(_ string: String) {
        var string = string
        string.withUTF8 { append(contentsOf: $0) }
    }

    /// Appends the UTF-8 of a literal as one copy.
    package mutating func appendLiteral(_ literal: StaticString) {
        literal.withUTF8Buffer { append(contentsOf: $0) }
    }

    /// Appends `value` in decimal, as `String(value)` writes it.
    package mutating func appendDecimal(_ value: Int64) {
        var magnitude = value.magnitude
        // Written from the end of a 24-byte buffer on the stack, then appended as one copy.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }
}

/// JSON text written directly, without an encoder. Keepsake writes its stored records with it too.
package enum DirectJSON {
    /// A JSON string literal, escaped as `JSONEncoder` escapes it (slashes left alone).
    package static func quoted(_ string: String) -> String {
        guard needsEscaping(string) else { return "\"" + string + "\"" }
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{8}": text += "\\b"
            case "\u{C}": text += "\\f"
            case _ where scalar.value < 0x20:
                let digits = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// Whether ``writeScalar(_:into:)`` writes `value`: a number, boolean or string (a `Double`
    /// only when finite).
    static func isScalar<Value>(_ value: Value) -> Bool {
        let type: Any.Type = Value.self
        if type == Double.self { return unsafeBitCast(value, to: Double.self).isFinite }
        return type == String.self || type == Bool.self || type == Int.self || type == Int64.self
            || type == Int32.self || type == UInt.self || type == UInt64.self
    }

    /// Appends ``quoted(_:)``'s text of `string`, copying it as it stands when nothing in it
    /// needs escaping.
    package static func writeQuoted(_ string: String, into json: inout [UInt8]) {
        guard !needsEscaping(string) else {
            json.appendUTF8(quoted(string))
            return
        }
        json.append(UInt8(ascii: "\""))
        json.appendUTF8(string)
        json.append(UInt8(ascii: "\""))
    }

    /// Whether `string` holds a quote, a backslash or a control character.
    private static func needsEscaping(_ string: String) -> Bool {
        string.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    }

    /// Appends `value` as JSON: a number, boolean or string, for which ``isScalar(_:)`` is
    /// `true` (anything else appends nothing).
    ///
    /// The type is compared, not cast: a patch holds its values unboxed, and a cast from `Any`
    /// per type tried would cost more than writing the text.
    static func writeScalar<Value>(_ value: Value, into json: inout [UInt8]) {
        func read<T>(_: T.Type) -> T { unsafeBitCast(value, to: T.self) }
        let type: Any.Type = Value.self
        if type == String.self {
            writeQuoted(read(String.self), into: &json)
        } else if type == Int.self {
            json.appendDecimal(Int64(read(Int.self)))
        } else if type == Int64.self {
            json.appendDecimal(read(Int64.self))
        } else if type == Int32.self {
            json.appendDecimal(Int64(read(Int32.self)))
        } else if type == Bool.self {
            json.appendLiteral(read(Bool.self) ? "true" : "false")
        } else if type == UInt.self {
            json.appendUTF8(String(read(UInt.self)))
        } else if type == UInt64.self {
            json.appendUTF8(String(read(UInt64.self)))
        } else if type == Double.self, read(Double.self).isFinite {
            // As `JSONEncoder` writes it: the shortest text that reads back, without ".0".
            let text = "\(read(Double.self))"
            json.appendUTF8(text.hasSuffix(".0") ? String(text.dropLast(2)) : text)
        }
    }

    /// Appends ``hex(_:)``'s sixteen digits.
    static func writeHex(_ digest: UInt64, into json: inout [UInt8]) {
        for shift in stride(from: 60, through: 0, by: -4) {
            let digit = UInt8(truncatingIfNeeded: (digest >> UInt64(shift)) & 0xF)
            json.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }

    static func hex(_ digest: UInt64) -> String {
        let digits = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
