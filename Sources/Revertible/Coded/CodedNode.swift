import Foundation

/// A value's encoded form as a tree: what diffing a `Codable` value that registers no properties
/// of its own (an enum with payloads, say) compares, part by part.
///
/// Numbers are kept exactly: integers as `Int64`, others as `Double`, so that an integral
/// `Double` and the same integer compare equal whichever way a decoder read them; a number
/// neither holds exactly (a `UInt64` past `Int64.max`, a long `Decimal`) as its JSON text.
enum CodedNode: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    /// A number as its JSON text, when neither `Int64` nor `Double` holds it exactly.
    case numeral(String)
    case string(String)
    case array([CodedNode])
    case object([String: CodedNode])

    /// Whether both are the same tree, text compared by its bytes: `String`'s `==` takes the
    /// same text in another Unicode normalization as equal, which is another version (a diff
    /// found no change in a payload's text pasted again, and a change's check took the other
    /// form for its own). Object keys are still found with `==`, as a dictionary finds them.
    static func == (a: CodedNode, b: CodedNode) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.numeral(let a), .numeral(let b)): a == b
        case (.string(let a), .string(let b)): a.hasSameBytes(as: b)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    /// A number, as an integer when it is one.
    static func number(_ double: Double) -> CodedNode {
        if double.rounded() == double, let integer = Int64(exactly: double) { return .integer(integer) }
        return .double(double)
    }

    /// The tree of `value` as the records' encoder writes it, and that JSON's length in bytes.
    static func encoding<Value: Encodable>(_ value: Value) -> (node: CodedNode, size: Int)? {
        guard let data = try? RecordCoding.encoder.encode(value), let node = parsing(data) else { return nil }
        return (node, data.count)
    }

    /// A `Value` decoded from this tree by the records' decoder, or `nil` when it does not decode.
    func decoded<Value: Decodable>(as type: Value.Type) -> Value? {
        try? RecordCoding.decoder.decode(Value.self, from: jsonData)
    }

    /// The JSON text of this tree, keys sorted.
    var jsonText: String {
        var json: [UInt8] = []
        write(into: &json)
        return String(decoding: json, as: UTF8.self)
    }

    /// ``jsonText`` cut to 60 characters, for a message.
    var abbreviatedText: String {
        let text = jsonText
        return text.count <= 60 ? text : String(text.prefix(57)) + "…"
    }

    /// The UTF-8 of ``jsonText``, for a decoder.
    var jsonData: Data {
        var json: [UInt8] = []
        write(into: &json)
        return Data(json)
    }

    /// Appends the UTF-8 of ``jsonText`` to `json`.
    func write(into json: inout [UInt8]) {
        switch self {
        case .null: json.appendLiteral("null")
        case .bool(let bool): json.appendLiteral(bool ? "true" : "false")
        case .integer(let integer): json.appendDecimal(integer)
        case .double(let double): json.appendUTF8(double.description)
        case .numeral(let numeral): json.appendUTF8(numeral)
        case .string(let string): DirectJSON.writeQuoted(string, into: &json)
        case .array(let array):
            json.append(UInt8(ascii: "["))
            for (offset, element) in array.enumerated() {
                if offset > 0 { json.append(UInt8(ascii: ",")) }
                element.write(into: &json)
            }
            json.append(UInt8(ascii: "]"))
        case .object(let object):
            json.append(UInt8(ascii: "{"))
            for (offset, key) in object.keys.sorted().enumerated() {
                if offset > 0 { json.append(UInt8(ascii: ",")) }
                DirectJSON.writeQuoted(key, into: &json)
                json.append(UInt8(ascii: ":"))
                object[key]!.write(into: &json)
            }
            json.append(UInt8(ascii: "}"))
        }
    }

    /// The length of ``jsonText`` in bytes, without writing it.
    var size: Int {
        switch self {
        case .null: 4
        case .bool(let bool): bool ? 4 : 5
        case .integer(let integer): String(integer).utf8.count
        case .double(let double): "\(double)".utf8.count
        case .numeral(let numeral): numeral.utf8.count
        case .string(let string): string.utf8.count + 2
        case .array(let array): array.reduce(array.count + 1) { $0 + $1.size }
        case .object(let object):
            object.reduce(object.count * 2 + 1) { $0 + $1.key.utf8.count + 2 + $1.value.size }
        }
    }
}

extension CodedNode {
    /// What lies at a path inside a tree.
    enum Lookup: Equatable {
        /// A node.
        case found(CodedNode)
        /// Nothing: the last component names a key its object does not have (an optional
        /// left out of the JSON).
        case absent
        /// The path leads nowhere: an intermediate step is missing or of another kind.
        case invalid(String)
    }

    /// The node at `path`.
    func lookup(_ path: ArraySlice<PathComponent>) -> Lookup {
        guard let component = path.first else { return .found(self) }
        switch (self, component) {
        case (.object(let object), .property(let key)):
            guard let child = object[key] else {
                return path.count == 1 ? .absent : .invalid("no \(PathText.quoted(key)) in the encoded value")
            }
            return child.lookup(path.dropFirst())
        case (.array(let array), .index(let index)):
            guard array.indices.contains(index) else {
                return .invalid("no element \(index) in the encoded value")
            }
            return array[index].lookup(path.dropFirst())
        default:
            return .invalid("\(component) does not name a place in the encoded value")
        }
    }

    /// Calls `body` with the node at `path`, which it changes in place; `false`, with `body`
    /// not called, when the path leads nowhere. As with ``replace(at:with:)``, a container this
    /// tree alone holds is not copied, provided `body` lets go of the node before changing its
    /// container (take the container out, set the node to `.null`, put it back).
    mutating func modify<Failure: Error>(
        at path: ArraySlice<PathComponent>, _ body: (inout CodedNode) throws(Failure) -> Void
    ) throws(Failure) -> Bool {
        switch path.first {
        case nil:
            try body(&self)
            return true
        case .property(let key)?:
            guard case .object(var object) = self, object[key] != nil else { return false }
            self = .null
            defer { self = .object(object) }
            return try object[key]!.modify(at: path.dropFirst(), body)
        case .index(let index)?:
            guard case .array(var array) = self, array.indices.contains(index) else { return false }
            self = .null
            defer { self = .array(array) }
            return try array[index].modify(at: path.dropFirst(), body)
        default:
            return false
        }
    }

    /// Puts `node` at `path` (removes the key for `nil`); `false`, with nothing changed, when
    /// the path leads nowhere. A container this tree alone holds changes in place, not copied:
    /// replaying many changes on a large tree costs what they touch.
    mutating func replace(at path: ArraySlice<PathComponent>, with node: CodedNode?) -> Bool {
        guard let last = path.last else {
            guard let node else { return false }
            self = node
            return true
        }
        // The container found as ``modify(at:_:)`` finds it; the last step may name a key its
        // object lacks (the node is added).
        var placed = false
        let reached = modify(at: path.dropLast()) { parent in
            switch last {
            case .property(let key):
                guard case .object(var object) = parent else { return }
                // The parent's own reference let go, `object` is the only one.
                parent = .null
                defer { parent = .object(object) }
                object[key] = node
            case .index(let index):
                guard let node, case .array(var array) = parent, array.indices.contains(index) else { return }
                parent = .null
                defer { parent = .array(array) }
                array[index] = node
            default:
                return
            }
            placed = true
        }
        return reached && placed
    }
}

extension CodedNode: Codable {
    /// Decodes any JSON value, as ``parsing(_:)`` reads its text.
    ///
    /// A decoder gives no number's text, and reads an integer from `3180110162945305.1` (the
    /// `Double` nearest it is integral): the `Decimal` it reads beside has the text's digits,
    /// which say whether the number is that integer, that `Double`, or neither.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let decimal = { try? container.decode(Decimal.self) }
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self),
            decimal().map({ $0 == Decimal(integer) }) ?? true
        {
            self = .integer(integer)
        } else if let string = try? container.decode(String.self) {
            // Before `Double`: a decoder reading "NaN" strings as numbers must not turn a
            // string into one.
            self = .string(string)
        } else if let double = try? container.decode(Double.self) {
            if let decimal = decimal(), CodedNode.decimal(double.description) != decimal {
                self = .numeral(CodedNode.decimalText(decimal.description))
            } else {
                self = .number(double)
            }
        } else if let array = try? container.decode([CodedNode].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: CodedNode].self))
        }
    }

    /// Encodes the JSON value the tree holds.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .integer(let integer): try container.encode(integer)
        case .double(let double): try container.encode(double)
        case .numeral(let numeral):
            if let unsigned = UInt64(numeral) {
                try container.encode(unsigned)
            } else {
                try container.encode(Decimal(string: numeral) ?? .nan)
            }
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}
