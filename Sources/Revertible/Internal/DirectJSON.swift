/// The JSON of the most common patches — whole-value changes of numbers, booleans and text, and
/// text ranges — written directly: the bytes `JSONEncoder` writes with the records' settings
/// (sorted keys, unescaped slashes), at a fraction of its cost. Anything else (a `Double` that
/// is not finite, any other type) goes through the encoder.
protocol DirectlyWrittenPatch {
    /// The patch's JSON, or `nil` when the encoder must write it.
    func directJSON() -> String?
}

extension Replacement: DirectlyWrittenPatch {
    func directJSON() -> String? {
        guard let old = DirectJSON.scalar(old), let new = DirectJSON.scalar(new) else { return nil }
        return "{\"new\":\(new),\"old\":\(old)}"
    }
}

extension RangePatch: DirectlyWrittenPatch {
    func directJSON() -> String? {
        guard let old = DirectJSON.scalar(old), let new = DirectJSON.scalar(new) else { return nil }
        var json = "{\"new\":\(new),\"newCount\":\(newCount)"
        if let newDigest { json += ",\"newDigest\":\"\(DirectJSON.hex(newDigest))\"" }
        json += ",\"offset\":\(offset),\"old\":\(old),\"oldCount\":\(oldCount)"
        if let oldDigest { json += ",\"oldDigest\":\"\(DirectJSON.hex(oldDigest))\"" }
        return json + "}"
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

    static func hex(_ digest: UInt64) -> String {
        let digits = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
