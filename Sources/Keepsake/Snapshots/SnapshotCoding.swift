import Foundation
import Revertible

/// Splits a value's JSON into one row per top-level property, and joins rows back.
///
/// A value that does not encode as a JSON object (an enum with a raw value, an array) is one
/// row at the root path.
enum SnapshotCoding {
    static func properties<Value: Encodable>(of value: Value, name: String, encoder: JSONEncoder) throws -> [(
        PathDescriptor, String
    )] {
        let data = try KeepsakeError.encoding(
            { try encoder.encode(value) }, refusedAs: { .unencodableSnapshot(name: name, reason: $0) })
        // The encoder wrote sorted keys: the top-level members are split out of its bytes as
        // they are, without parsing and writing the JSON again.
        guard let members = JSONMembers.split(data) else {
            return [([], String(decoding: data, as: UTF8.self))]
        }
        return members.map { (PathDescriptor([.property($0.key)]), $0.json) }
    }

    /// Joins the rows into a `Value`; what they lack (properties added since) comes from
    /// `template`, renamed and converted properties are read as the type declares. Where
    /// `template` gives nothing and the caller could pass one (`restore(_:as:)`), an error
    /// about a missing property outside any array says to.
    static func value<Value: Decodable>(
        _ type: Value.Type, from rows: [(path: String, json: String)], name: String, decoder: JSONDecoder,
        template: () -> Data? = { nil }, templateCouldFill: Bool = false
    ) throws -> Value {
        let json: String
        if rows.count == 1, rows[0].path.isEmpty {
            json = rows[0].json
        } else {
            var members: [(key: String, json: String)] = []
            for row in rows {
                guard let path = try? PathDescriptor(parsing: row.path), let key = path.propertyName else {
                    throw KeepsakeError.undecodableSnapshot(
                        name: name, path: [],
                        reason: "the stored path \(row.path.debugDescription) is not a property")
                }
                members.append((key, row.json))
            }
            json = object(members)
        }
        do {
            return try EvolvingDecoding.decode(
                Value.self, from: Data(json.utf8), template: template, decoder: decoder)
        } catch let error as DecodingError {
            throw KeepsakeError.undecodableSnapshot(
                name: name, path: path(of: error),
                reason: describe(error, templateCouldFill: templateCouldFill))
        } catch {
            throw KeepsakeError.undecodableSnapshot(name: name, path: [], reason: "\(error)")
        }
    }

    /// The JSON object of `members`, each key with its JSON, in this order.
    static func object(_ members: some Sequence<(key: String, json: String)>) -> String {
        var object = "{"
        for (offset, member) in members.enumerated() {
            if offset > 0 { object += "," }
            object += DirectJSON.quoted(member.key) + ":" + member.json
        }
        return object + "}"
    }

    /// Each row's property and JSON, or `nil` when a row's path is not one property (a value
    /// saved whole, at the root path).
    static func members(of rows: [(PathDescriptor, String)]) -> [(key: String, json: String)]? {
        var members: [(key: String, json: String)] = []
        for (path, json) in rows {
            guard let key = path.propertyName else { return nil }
            members.append((key, json))
        }
        return members
    }

    private static func context(_ error: DecodingError) -> DecodingError.Context? {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            context
        @unknown default: nil
        }
    }

    /// The path of the property a decoding error is about.
    private static func path(of error: DecodingError) -> PathDescriptor {
        var keys = context(error)?.codingPath ?? []
        if case .keyNotFound(let key, _) = error { keys.append(key) }
        return PathDescriptor(codingPath: keys)
    }

    private static func describe(_ error: DecodingError, templateCouldFill: Bool) -> String {
        if case .keyNotFound(let key, let context) = error {
            // A template fills a property added since at any place but in an array's elements
            // (an element of the app's is another element): there, only the element type's
            // `DecodingDefaults` do.
            let added: String? =
                if templateCouldFill, !context.codingPath.contains(where: { $0.intValue != nil }) {
                    """
                    if "\(key.stringValue)" was added since the snapshot was saved, restore it with \
                    fillingMissingFrom: a value of today's type to take it from (or conform the type that \
                    declares it to DecodingDefaults, or make it optional)
                    """
                } else { nil }
            return "no value for \"\(key.stringValue)\"; "
                + RecordCoding.missingPropertyHint(error, key, added: added)
        }
        return RecordCoding.describe(
            error, as: context(error).map { RecordCoding.sentence($0.debugDescription) } ?? "\(error)",
            decodingModelAt: nil)
    }
}

/// The members of a JSON object, found by scanning its bytes: each key, and its value's JSON
/// exactly as written.
enum JSONMembers {
    /// The object's members in order, or `nil` when `data` is not an object.
    static func split(_ data: Data) -> [(key: String, json: String)]? {
        data.withUnsafeBytes { raw -> [(key: String, json: String)]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = skipSpace(bytes, 0)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index = skipSpace(bytes, index + 1)
            var members: [(key: String, json: String)] = []
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { return members }
            while index < bytes.count {
                guard bytes[index] == UInt8(ascii: "\""), let keyEnd = stringEnd(bytes, index) else {
                    return nil
                }
                guard let key = decodedString(UnsafeBufferPointer(rebasing: bytes[index..<keyEnd])) else {
                    return nil
                }
                index = skipSpace(bytes, keyEnd)
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                let start = skipSpace(bytes, index + 1)
                guard let end = valueEnd(bytes, start) else { return nil }
                members.append(
                    (key, String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)))
                index = skipSpace(bytes, end)
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "}") { return members }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index = skipSpace(bytes, index + 1)
            }
            return nil
        }
    }

    private static func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The index after the string starting at `start` (a quote), or `nil` when it does not end.
    static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return nil
    }

    /// The index after the value starting at `start`: its end at depth zero.
    private static func valueEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var index = start
        var depth = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                guard let end = stringEnd(bytes, index) else { return nil }
                index = end
                if depth == 0 { return index }
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return index }
                depth -= 1
                if depth == 0 { return index + 1 }
            case UInt8(ascii: ","), 0x20, 0x09, 0x0A, 0x0D:
                if depth == 0 { return index }
            default: break
            }
            index += 1
        }
        return depth == 0 && index > start ? index : nil
    }

    /// A JSON string literal's text, unescaped.
    private static func decodedString(_ literal: UnsafeBufferPointer<UInt8>) -> String? {
        guard literal.contains(UInt8(ascii: "\\")) else {
            return String(
                decoding: UnsafeBufferPointer(rebasing: literal.dropFirst().dropLast()), as: UTF8.self)
        }
        return try? JSONDecoder().decode(String.self, from: Data(literal))
    }
}

extension PathDescriptor {
    /// The property this path is, when it is one top-level property: a snapshot row's.
    var propertyName: String? {
        guard components.count == 1, case .property(let key) = components[0] else { return nil }
        return key
    }

    /// The path a coder's `codingPath` names: integer keys as indexes, the others as
    /// properties.
    init(codingPath: [any CodingKey]) {
        self.init(codingPath.map { $0.intValue.map(PathComponent.index) ?? .property($0.stringValue) })
    }
}
