/// A patch read from its JSON directly, without `JSONDecoder`, when the JSON has the form
/// ``DirectlyWrittenPatch`` writes: reading a stored one-field change back (a durable undo) then
/// costs a fraction of a decoder's work. Anything else — whitespace, escapes in a string, a
/// number the type does not hold — is left to the decoder, which reads it (or says why not).
protocol DirectlyReadPatch {
    /// The patch `json` holds when it is in the directly written form; `nil` sends it to the
    /// decoder.
    static func readDirectJSON(_ json: UnsafeRawBufferPointer) -> Self?
}

extension Replacement: DirectlyReadPatch {
    static func readDirectJSON(_ json: UnsafeRawBufferPointer) -> Replacement? {
        var reader = DirectJSON.Reader(json)
        guard reader.skip(#"{"new":"#), let new: Value = reader.scalar(), reader.skip(#","old":"#),
            let old: Value = reader.scalar(), reader.skip("}"), reader.isAtEnd
        else { return nil }
        return Replacement(old: old, new: new)
    }
}

extension RangePatch: DirectlyReadPatch {
    static func readDirectJSON(_ json: UnsafeRawBufferPointer) -> RangePatch? {
        // The keys sorted, as they are written: the new side, the offset, the old side.
        var reader = DirectJSON.Reader(json)
        guard reader.skip("{"), let new = readSide("new", from: &reader), reader.skip(#","offset":"#),
            let offset: Int = reader.scalar(), reader.skip(","), let old = readSide("old", from: &reader),
            reader.skip("}"), reader.isAtEnd
        else { return nil }
        let patch = RangePatch(
            offset: offset, old: old.value, new: new.value, oldCount: old.count, newCount: new.count,
            oldDigest: old.digest, newDigest: new.digest)
        // One that does not fit goes to the decoder, which says so.
        return patch.rangeFits ? patch : nil
    }

    /// One side's members as `writeSide` writes them: `"new":…,"newCount":…`, and
    /// `,"newDigest":"…"` when it has one.
    private static func readSide(_ side: StaticString, from reader: inout DirectJSON.Reader) -> (
        value: Value, count: Int, digest: UInt64?
    )? {
        guard reader.skip(#"""#), reader.skip(side), reader.skip(#"":"#), let value: Value = reader.scalar(),
            reader.skip(#",""#), reader.skip(side), reader.skip(#"Count":"#), let count: Int = reader.scalar()
        else { return nil }
        // The digest's key, looked for ahead: what follows may be the next key instead.
        var ahead = reader
        guard ahead.skip(#",""#), ahead.skip(side), ahead.skip(#"Digest":"#) else {
            return (value, count, nil)
        }
        guard let digest = ahead.hex() else { return nil }
        reader = ahead
        return (value, count, digest)
    }
}

extension DirectJSON {
    /// Reads the scalars ``writeScalar(_:into:)`` writes, in the form it writes them; any other
    /// form reads as `nil`.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var isAtEnd: Bool { index == bytes.count }

        /// Moves past `literal` if the text continues with it.
        mutating func skip(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// The scalar of type `Value` at the reading position (a string, number or boolean as
        /// ``writeScalar(_:into:)`` writes it), or `nil`.
        mutating func scalar<Value>() -> Value? {
            let type: Any.Type = Value.self
            let value: Any?
            if type == String.self {
                value = string()
            } else if type == Bool.self {
                value = skip("true") ? true : skip("false") ? false : nil
            } else if type == Int.self {
                value = integer().flatMap { Self.signed($0, as: Int.self) }
            } else if type == Int64.self {
                value = integer().flatMap { Self.signed($0, as: Int64.self) }
            } else if type == Int32.self {
                value = integer().flatMap { Self.signed($0, as: Int32.self) }
            } else if type == UInt.self {
                value = integer().flatMap { $0.negative ? nil : UInt(exactly: $0.magnitude) }
            } else if type == UInt64.self {
                value = integer().flatMap { $0.negative ? nil : $0.magnitude }
            } else if type == Double.self {
                value = double()
            } else {
                value = nil
            }
            return value as? Value
        }

        /// A digest as ``writeHex(_:into:)`` writes it, quoted: sixteen lowercase hex digits.
        mutating func hex() -> UInt64? {
            guard bytes.count - index >= 18, bytes[index] == UInt8(ascii: "\""),
                bytes[index + 17] == UInt8(ascii: "\"")
            else { return nil }
            var digest: UInt64 = 0
            for byte in bytes[(index + 1)...(index + 16)] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                default: return nil
                }
                digest = digest << 4 | UInt64(digit)
            }
            index += 18
            return digest
        }

        /// A string with no escape and no control character in it, of valid UTF-8.
        mutating func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                // An escape, or a byte the encoder would have escaped: the decoder reads it.
                guard bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 else { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            // Invalid UTF-8 is left to the decoder, which reads (and refuses) it.
            guard
                let string = String(validatingUTF8Bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            else { return nil }
            index = end + 1
            return string
        }

        /// The extent of a JSON number at the reading position, and whether it has a fraction
        /// or an exponent.
        mutating func number() -> (text: UnsafeRawBufferPointer, isInteger: Bool)? {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    index += 1
                }
                return index - from
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            let integerDigits = digits()
            // JSON: at least one digit, and no leading zero.
            guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
                index = start
                return nil
            }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                isInteger = false
                guard digits() > 0 else {
                    index = start
                    return nil
                }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                isInteger = false
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
                {
                    index += 1
                }
                guard digits() > 0 else {
                    index = start
                    return nil
                }
            }
            return (UnsafeRawBufferPointer(rebasing: bytes[start..<index]), isInteger)
        }

        /// An integer written without a fraction or exponent, whose magnitude fits in 64 bits
        /// (`-0` is left to the decoder).
        mutating func integer() -> (negative: Bool, magnitude: UInt64)? {
            let start = index
            guard let (text, isInteger) = number(), isInteger else {
                index = start
                return nil
            }
            let negative = text[0] == UInt8(ascii: "-")
            var magnitude: UInt64 = 0
            for digit in text.dropFirst(negative ? 1 : 0) {
                let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
                guard !overflow, !carry else {
                    index = start
                    return nil
                }
                magnitude = sum
            }
            guard !(negative && magnitude == 0) else {
                index = start
                return nil
            }
            return (negative, magnitude)
        }

        /// `integer` as a `T`, or `nil` when `T` does not hold it.
        static func signed<T: FixedWidthInteger & SignedInteger>(
            _ integer: (negative: Bool, magnitude: UInt64), as _: T.Type
        ) -> T? {
            guard integer.negative else { return T(exactly: integer.magnitude) }
            if let magnitude = T(exactly: integer.magnitude) { return -magnitude }
            // The one negative value whose magnitude the type does not hold.
            return integer.magnitude == T.min.magnitude ? T.min : nil
        }

        /// A finite number, read as `Double` reads its text (the nearest value).
        private mutating func double() -> Double? {
            let start = index
            guard let (text, _) = number(), let value = Double(String(decoding: text, as: UTF8.self)),
                value.isFinite
            else {
                index = start
                return nil
            }
            return value
        }
    }
}
