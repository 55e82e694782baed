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
        json.append(contentsOf: #"{"new":"#.utf8)
        DirectJSON.writeScalar(new, into: &json)
        json.append(contentsOf: #","old":"#.utf8)
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
        json.append(contentsOf: #","offset":"#.utf8)
        json.append(contentsOf: String(offset).utf8)
        json.append(UInt8(ascii: ","))
        Self.writeSide("old", old, count: oldCount, digest: oldDigest, into: &json)
        json.append(UInt8(ascii: "}"))
        return true
    }

    /// Appends one side's members: `"new":…,"newCount":…` and `"newDigest":"…"` when it has one.
    private static func writeSide(
        _ side: String, _ value: Value, count: Int, digest: UInt64?, into json: inout [UInt8]
    ) {
        json.append(UInt8(ascii: "\""))
        json.append(contentsOf: side.utf8)
        json.append(contentsOf: #"":"#.utf8)
        DirectJSON.writeScalar(value, into: &json)
        json.append(contentsOf: #",""#.utf8)
        json.append(contentsOf: side.utf8)
        json.append(contentsOf: #"Count":"#.utf8)
        json.append(contentsOf: String(count).utf8)
        if let digest {
            json.append(contentsOf: #",""#.utf8)
            json.append(contentsOf: side.utf8)
            json.append(contentsOf: #"Digest":""#.utf8)
            DirectJSON.writeHex(digest, into: &json)
            json.append(UInt8(ascii: "\""))
        }
    }
}

/// JSON text written directly, without an encoder. Keepsake writes its stored records with it too.
package enum DirectJSON {
    /// A number, boolean or string as JSON, or `nil` for any other value.
    ///
    /// The type is compared, not cast: a patch holds its values unboxed, and a cast from `Any`
    /// per type tried would cost more than writing the text.
    static func scalar<Value>(_ value: Value) -> String? {
        func read<T>(_: T.Type) -> T { unsafeBitCast(value, to: T.self) }
        let type: Any.Type = Value.self
        if type == String.self { return quoted(read(String.self)) }
        if type == Bool.self { return read(Bool.self) ? "true" : "false" }
        if type == Int.self { return String(read(Int.self)) }
        if type == Int64.self { return String(read(Int64.self)) }
        if type == Int32.self { return String(read(Int32.self)) }
        if type == UInt.self { return String(read(UInt.self)) }
        if type == UInt64.self { return String(read(UInt64.self)) }
        if type == Double.self {
            let double = read(Double.self)
            guard double.isFinite else { return nil }
            // As `JSONEncoder` writes it: the shortest text that reads back, without ".0".
            let text = "\(double)"
            return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
        }
        return nil
    }

    /// A JSON string literal, escaped as `JSONEncoder` escapes it (slashes left alone).
    package static func quoted(_ string: String) -> String {
        var needsEscaping = false
        for byte in string.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscaping = true
            break
        }
        guard needsEscaping else { return "\"" + string + "\"" }
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

    /// Appends ``scalar(_:)``'s text of `value`, for which ``isScalar(_:)`` is `true`.
    static func writeScalar<Value>(_ value: Value, into json: inout [UInt8]) {
        if Value.self == String.self {
            let string = unsafeBitCast(value, to: String.self)
            guard string.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) else {
                json.append(contentsOf: quoted(string).utf8)
                return
            }
            json.append(UInt8(ascii: "\""))
            json.append(contentsOf: string.utf8)
            json.append(UInt8(ascii: "\""))
        } else if let text = scalar(value) {
            json.append(contentsOf: text.utf8)
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
