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
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw KeepsakeError.unencodableSnapshot(name: name, reason: "\(error)")
        }
        guard
            let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
                as? [String: Any]
        else {
            return [([], String(decoding: data, as: UTF8.self))]
        }
        return try object.keys.sorted().map { key in
            let json = try JSONSerialization.data(
                withJSONObject: object[key]!,
                options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
            return (PathDescriptor([.property(key)]), String(decoding: json, as: UTF8.self))
        }
    }

    /// Joins the rows into a `Value`; what they lack (properties added since) comes from
    /// `template`, renamed and converted properties are read as the type declares.
    static func value<Value: Decodable>(
        _ type: Value.Type, from rows: [(path: String, json: String)], name: String, decoder: JSONDecoder,
        template: () -> Data? = { nil }
    ) throws -> Value {
        let json: String
        if rows.count == 1, rows[0].path.isEmpty {
            json = rows[0].json
        } else {
            var object = "{"
            for (offset, row) in rows.enumerated() {
                guard let path = try? PathDescriptor(parsing: row.path),
                    case .property(let key)? = path.components.first,
                    path.components.count == 1
                else {
                    throw KeepsakeError.undecodableSnapshot(
                        name: name, path: [],
                        reason: "the stored path \(row.path.debugDescription) is not a property")
                }
                if offset > 0 { object += "," }
                object += jsonString(key) + ":" + row.json
            }
            json = object + "}"
        }
        do {
            return try EvolvingDecoding.decode(
                Value.self, from: Data(json.utf8), template: template, decoder: decoder)
        } catch let error as DecodingError {
            throw KeepsakeError.undecodableSnapshot(
                name: name, path: path(of: error), reason: describe(error))
        } catch {
            throw KeepsakeError.undecodableSnapshot(name: name, path: [], reason: "\(error)")
        }
    }

    private static func jsonString(_ text: String) -> String {
        let data =
            (try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed]))
            ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
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
        return PathDescriptor(keys.map { $0.intValue.map(PathComponent.index) ?? .property($0.stringValue) })
    }

    private static func describe(_ error: DecodingError) -> String {
        if case .keyNotFound(let key, _) = error { return "no value for \"\(key.stringValue)\"" }
        return context(error)?.debugDescription ?? "\(error)"
    }
}
