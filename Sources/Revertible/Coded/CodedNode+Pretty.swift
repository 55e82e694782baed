import Foundation

extension CodedNode {
    /// The tree as pretty-printed JSON, byte for byte what `JSONSerialization` writes of
    /// ``foundationObject`` with `.prettyPrinted`, `.sortedKeys`, `.withoutEscapingSlashes` and
    /// `.fragmentsAllowed` — two spaces of indent, `"key" : value`, keys in Foundation's
    /// numeric, case-insensitive order — written directly: `JSONSerialization` bridged every
    /// dictionary and array and cast every value, most of the 13 s `keepsake value` took for a
    /// 500,000-item value. A ``numeral(_:)`` past 38 digits is written whole, where
    /// `NSDecimalNumber` would round it.
    var prettyJSON: [UInt8] {
        var json: [UInt8] = []
        var orders: [[String]: [String]] = [:]
        writePretty(into: &json, indent: 0, orders: &orders)
        return json
    }

    /// The order `JSONSerialization` writes `keys` in, from `orders` when an object with the
    /// same keys came before: the objects of an array of models share theirs.
    private static func sortedKeys(_ keys: [String], orders: inout [[String]: [String]]) -> [String] {
        let known = keys.sorted()
        if let order = orders[known] { return order }
        let order = known.sorted { a, b in
            a.compare(
                b, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.startIndex..<a.endIndex,
                locale: NSLocale.system) == .orderedAscending
        }
        orders[known] = order
        return order
    }

    private static func writeIndent(_ indent: Int, into json: inout [UInt8]) {
        json.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
    }

    private func writePretty(into json: inout [UInt8], indent: Int, orders: inout [[String]: [String]]) {
        switch self {
        case .double(let double):
            // As `JSONSerialization` writes a floating-point number: its description, without
            // a trailing `.0`.
            var text = double.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            json.appendUTF8(text)
        case .array(let array):
            json.appendLiteral("[\n")
            for (offset, element) in array.enumerated() {
                if offset > 0 { json.appendLiteral(",\n") }
                Self.writeIndent(indent + 2, into: &json)
                element.writePretty(into: &json, indent: indent + 2, orders: &orders)
            }
            json.append(UInt8(ascii: "\n"))
            Self.writeIndent(indent, into: &json)
            json.append(UInt8(ascii: "]"))
        case .object(let object):
            json.appendLiteral("{\n")
            for (offset, key) in Self.sortedKeys(Array(object.keys), orders: &orders).enumerated() {
                if offset > 0 { json.appendLiteral(",\n") }
                Self.writeIndent(indent + 2, into: &json)
                DirectJSON.writeQuoted(key, into: &json)
                json.appendLiteral(" : ")
                object[key]!.writePretty(into: &json, indent: indent + 2, orders: &orders)
            }
            json.append(UInt8(ascii: "\n"))
            Self.writeIndent(indent, into: &json)
            json.append(UInt8(ascii: "}"))
        case .null, .bool, .integer, .numeral, .string:
            write(into: &json)
        }
    }
}
