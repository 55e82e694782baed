import Foundation

/// The text form of path descriptors: writing and a small hand-written parser.
///
/// Grammar (`json` is one JSON value, `ident` is `[A-Za-z_][A-Za-z0-9_]*`):
///
///     path      = [ first { step } ]
///     first     = name | bracket
///     step      = "." name | bracket
///     name      = ident | json-string
///     bracket   = "[" digits "]" | "[key: " json "]" | "[id: " json "]"
enum PathText {
    static func write(_ component: PathComponent, first: Bool, into text: inout String) {
        switch component {
        case .property(let name):
            if !first { text += "." }
            text += isIdentifier(name) ? name : quoted(name)
        case .index(let index):
            text += "[\(index)]"
        case .key(let json):
            text += "[key: \(json)]"
        case .id(let json):
            text += "[id: \(json)]"
        }
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, isIdentifierHead(first) else { return false }
        return name.utf8.dropFirst().allSatisfy { isIdentifierHead($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    private static func isIdentifierHead(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    /// A JSON string literal for `name`.
    static func quoted(_ name: String) -> String { DirectJSON.quoted(name) }

    static func parse(_ text: String) throws(PathDescriptor.ParseError) -> [PathComponent] {
        var parser = Parser(text: text, bytes: Array(text.utf8))
        return try parser.parsePath()
    }

    private struct Parser {
        let text: String
        let bytes: [UInt8]
        var offset = 0

        mutating func parsePath() throws(PathDescriptor.ParseError) -> [PathComponent] {
            var components: [PathComponent] = []
            while offset < bytes.count {
                let byte = bytes[offset]
                if byte == UInt8(ascii: "[") {
                    components.append(try parseBracket())
                } else if byte == UInt8(ascii: ".") && !components.isEmpty {
                    offset += 1
                    components.append(.property(try parseName()))
                } else if components.isEmpty {
                    components.append(.property(try parseName()))
                } else {
                    throw fail("\".\" or \"[\"")
                }
            }
            return components
        }

        private func fail(_ expected: String) -> PathDescriptor.ParseError {
            PathDescriptor.ParseError(text: text, offset: offset, expected: expected)
        }

        private mutating func parseName() throws(PathDescriptor.ParseError) -> String {
            guard offset < bytes.count else { throw fail("a property name") }
            if bytes[offset] == UInt8(ascii: "\"") {
                let start = offset
                try skipJSONString()
                guard let name = decodeJSON(start..<offset) as? String else { throw fail("a JSON string") }
                return name
            }
            let start = offset
            while offset < bytes.count, isNameByte(bytes[offset], first: offset == start) {
                offset += 1
            }
            guard offset > start else { throw fail("a property name") }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        private func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
            PathText.isIdentifierHead(byte) || (!first && byte >= 0x30 && byte <= 0x39)
        }

        private mutating func parseBracket() throws(PathDescriptor.ParseError) -> PathComponent {
            offset += 1  // "["
            if consume("key: ") {
                let json = try parseJSONUntilBracket()
                return .key(json)
            }
            if consume("id: ") {
                let json = try parseJSONUntilBracket()
                return .id(json)
            }
            let start = offset
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
            guard offset > start, offset - start <= 18 else {
                offset = start
                throw fail("an index, \"key: \" or \"id: \"")
            }
            let index = Int(String(decoding: bytes[start..<offset], as: UTF8.self))!
            guard consume("]") else { throw fail("\"]\"") }
            return .index(index)
        }

        private mutating func consume(_ literal: String) -> Bool {
            let literalBytes = Array(literal.utf8)
            guard bytes.count - offset >= literalBytes.count,
                bytes[offset..<offset + literalBytes.count].elementsEqual(literalBytes)
            else { return false }
            offset += literalBytes.count
            return true
        }

        /// Reads one JSON value up to the `]` that closes the bracket; returns its text.
        private mutating func parseJSONUntilBracket() throws(PathDescriptor.ParseError) -> String {
            let start = offset
            var depth = 0
            while offset < bytes.count {
                switch bytes[offset] {
                case UInt8(ascii: "\""):
                    try skipJSONString()
                    continue
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                case UInt8(ascii: "}"):
                    depth -= 1
                case UInt8(ascii: "]"):
                    if depth == 0 {
                        let range = start..<offset
                        guard !range.isEmpty, decodeJSON(range) != nil else {
                            offset = start
                            throw fail("a JSON value")
                        }
                        offset += 1
                        return String(decoding: bytes[range], as: UTF8.self)
                    }
                    depth -= 1
                default:
                    break
                }
                guard depth >= 0 else { throw fail("balanced brackets") }
                offset += 1
            }
            throw fail("\"]\"")
        }

        private mutating func skipJSONString() throws(PathDescriptor.ParseError) {
            offset += 1  // opening quote
            while offset < bytes.count {
                switch bytes[offset] {
                case UInt8(ascii: "\\"): offset += 2
                case UInt8(ascii: "\""):
                    offset += 1
                    return
                default: offset += 1
                }
            }
            throw fail("a closing quote")
        }

        private func decodeJSON(_ range: Range<Int>) -> Any? {
            guard range.upperBound <= bytes.count else { return nil }
            return FoundationJSON.object(Data(bytes[range]))
        }
    }
}
