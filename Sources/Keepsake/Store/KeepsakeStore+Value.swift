import Foundation
import Revertible

extension KeepsakeStore {
    /// The value of a history at one of its versions, as JSON, computed from the stored base
    /// value and change records alone — without the app's types, as `keepsake value` shows it.
    ///
    /// ```swift
    /// let json = try store.valueJSON(ofHistory: "note-42", atVersion: 1)
    /// // {"body": "", "tags": [], "title": "Groceries"}
    /// ```
    ///
    /// Version 0 is the base value; a version on the redo stack, or in an inner scope, gives the
    /// value that redoing up to it would give. `Data` is written as base64, as `JSONEncoder`
    /// writes it.
    ///
    /// - Parameters:
    ///   - name: The history's name.
    ///   - version: A version number as ``timeline(of:)`` lists it; the current version when `nil`.
    /// - Returns: Pretty-printed JSON with sorted keys, or `nil` when there is no such history or
    ///   version.
    /// - Throws: ``KeepsakeError``; `.reversion` naming the version and path of a change that
    ///   cannot be applied without the app's type (a patch kind of the app's own, say).
    public func valueJSON(ofHistory name: String, atVersion version: Int? = nil) throws(KeepsakeError)
        -> String?
    {
        try read { connection, blobs -> String? in
            guard let id = try HistoryRows.historyID(named: name, in: connection) else { return nil }
            let rows = HistoryRows(connection: connection, blobs: blobs, historyID: id)
            let versions = try connection.query(
                "SELECT position, scope_level, is_undone FROM version WHERE history_id = ? ORDER BY position",
                [.integer(id)]
            ) {
                (
                    version: HistoryRows.Version(position: Int(try $0.requiredInt64(0))),
                    level: Int(try $0.requiredInt64(1)), undone: $0.int64(2) == 1
                )
            }
            // Versions at or below the floor are folded into the base value: version 0 is the
            // value at the floor, which the stored base value and they give.
            let floor = try rows.floor()
            let newestApplied = versions.last(where: { !$0.undone })?.version.position ?? 0
            var target = version ?? (newestApplied > floor ? newestApplied : 0)
            let level: Int
            if target == 0 {
                (target, level) = (floor, 0)
            } else if target > floor, let found = versions.first(where: { $0.version.position == target }) {
                level = found.level
            } else {
                return nil
            }
            // The versions undo would pass from `target` to the base: the applied ones of every
            // outer scope, then those of its own scope up to it.
            let chain = versions.filter {
                target > 0
                    && (($0.level < level && !$0.undone)
                        || ($0.level == level && $0.version.position <= target))
            }
            guard let base = try rows.baseCheckpoint() else {
                throw KeepsakeError.damaged(history: name, reason: "it has no base value")
            }
            var value = try JSONValue(text: try blobs.inliningBlobs(in: base))
            for entry in chain {
                // Redoing a version applies its changes last to first, toward their new side.
                for record in try rows.records(of: entry.version).reversed() {
                    do {
                        let patch = try JSONValue(
                            text: try blobs.inliningBlobs(in: String(decoding: record.payload, as: UTF8.self))
                        )
                        try value.apply(record.kind, patch, at: record.path.components[...])
                    } catch let error as JSONValue.Failure {
                        throw KeepsakeError.reversion(
                            history: name, version: entry.version.position,
                            error: .undecodable(path: record.path, type: "JSON", reason: error.reason))
                    }
                }
            }
            return value.text
        }
    }
}

/// A JSON value that stored patches can be applied to.
enum JSONValue: Equatable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(NSNumber)
    case bool(Bool)
    case null

    struct Failure: Error {
        let reason: String
    }

    init(text: String) throws {
        self.init(any: try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed))
    }

    init(any: Any) {
        switch any {
        case let object as [String: Any]: self = .object(object.mapValues(JSONValue.init(any:)))
        case let array as [Any]: self = .array(array.map(JSONValue.init(any:)))
        case let string as String: self = .string(string)
        // Booleans come back as NSNumbers of type char.
        case let number as NSNumber where String(cString: number.objCType) == "c":
            self = .bool(number.boolValue)
        case let number as NSNumber: self = .number(number)
        default: self = .null
        }
    }

    var any: Any {
        switch self {
        case .object(let object): object.mapValues(\.any)
        case .array(let array): array.map(\.any)
        case .string(let string): string
        case .number(let number): number
        case .bool(let bool): bool
        case .null: NSNull()
        }
    }

    var text: String {
        let data =
            (try? JSONSerialization.data(
                withJSONObject: any,
                options: [.fragmentsAllowed, .prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
            ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// Where a path component leads inside this value.
    enum Place {
        /// The object's member under this key (which may be missing: a nil optional).
        case member(String)
        /// The array's element at this position.
        case element(Int)
    }

    /// The place `component` names here, or why it names none.
    func place(of component: PathComponent) throws(Failure) -> Place {
        switch (self, component) {
        case (.object, .property(let name)):
            return .member(name)
        case (.object(let object), .key(let json)):
            // Integer keys are written as object keys too ("2"), strings as themselves.
            let key: String? =
                switch try? JSONValue(text: json) {
                case .string(let key)?: key
                case .number?: json
                default: nil
                }
            guard let key, object[key] != nil else {
                throw Failure(reason: "the dictionary has no key \(json)")
            }
            return .member(key)
        case (.array(let array), .index(let index)):
            guard array.indices.contains(index) else {
                throw Failure(reason: "the array has no element \(index)")
            }
            return .element(index)
        case (.array(let array), .id(let json)):
            guard let id = try? JSONValue(text: json), let index = array.firstIndex(where: { $0["id"] == id })
            else {
                throw Failure(reason: "the array has no element with id \(json)")
            }
            return .element(index)
        case (.array(let array), .key(let json)):
            // A dictionary whose keys are not strings is stored as [key, value, key, value, …].
            guard let key = try? JSONValue(text: json),
                let index = stride(from: 0, to: array.count - 1, by: 2).first(where: { array[$0] == key })
            else { throw Failure(reason: "the dictionary has no key \(json)") }
            return .element(index + 1)
        default:
            throw Failure(reason: "\(component) does not name a place in the stored value")
        }
    }

    /// What lies at a path: a value, nothing (the last step names a member its object does
    /// not have, such as an optional left out), or no place at all.
    enum Lookup {
        case found(JSONValue)
        case absent
        case invalid(String)
    }

    /// Why nothing was found at a path: see ``Lookup``.
    enum Missing: Error {
        case absent
        case invalid(String)
    }

    /// The value at `path`.
    func lookup(_ path: ArraySlice<PathComponent>) -> Lookup {
        guard let component = path.first else { return .found(self) }
        do {
            switch (self, try place(of: component)) {
            case (.object(let object), .member(let key)):
                guard let child = object[key] else {
                    return path.count == 1 ? .absent : .invalid("the object has no \"\(key)\"")
                }
                return child.lookup(path.dropFirst())
            case (.array(let array), .element(let index)):
                return array[index].lookup(path.dropFirst())
            default:
                return .invalid("\(component) does not name a place in the stored value")
            }
        } catch {
            return .invalid(error.reason)
        }
    }

    /// Applies a stored patch toward its new side at `path`.
    mutating func apply(_ kind: String, _ patch: JSONValue, at path: ArraySlice<PathComponent>)
        throws(Failure)
    {
        guard let component = path.first else {
            try applyHere(kind, patch)
            return
        }
        switch (self, try place(of: component)) {
        case (.object(var object), .member(let key)):
            // An optional that is nil is left out of the JSON: it is null.
            var child = object[key] ?? .null
            try child.apply(kind, patch, at: path.dropFirst())
            object[key] = child == .null ? nil : child
            self = .object(object)
        case (.array(var array), .element(let index)):
            try array[index].apply(kind, patch, at: path.dropFirst())
            self = .array(array)
        default:
            throw Failure(reason: "\(component) does not name a place in the stored value")
        }
    }

    private mutating func applyHere(_ kind: String, _ patch: JSONValue) throws(Failure) {
        switch kind {
        case "replace":
            self = patch["new"] ?? .null
        case "text", "bytes":
            guard case .number(let offset)? = patch["offset"], case .string(let old)? = patch["old"],
                case .string(let new)? = patch["new"]
            else { throw Failure(reason: "a malformed \(kind) patch") }
            let decode: (String) -> [UInt8]? =
                kind == "text" ? { Array($0.utf8) } : { Data(base64Encoded: $0).map { [UInt8]($0) } }
            guard case .string(let current) = self, var bytes = decode(current), let oldBytes = decode(old),
                let newBytes = decode(new)
            else { throw Failure(reason: "the value is not \(kind == "text" ? "text" : "base64 data")") }
            let start = offset.intValue
            guard start >= 0, start <= bytes.count - oldBytes.count,
                bytes[start..<(start + oldBytes.count)].elementsEqual(oldBytes)
            else { throw Failure(reason: "the \(kind) at \(start) is not what the change was made from") }
            bytes.replaceSubrange(start..<(start + oldBytes.count), with: newBytes)
            self = .string(
                kind == "text" ? String(decoding: bytes, as: UTF8.self) : Data(bytes).base64EncodedString())
        case "elements":
            guard case .array(var array) = self, case .array(let removals)? = patch["removals"],
                case .array(let insertions)? = patch["insertions"]
            else { throw Failure(reason: "a malformed elements patch, or the value is not an array") }
            for removal in removals.reversed() {
                guard case .number(let offset)? = removal["offset"], array.indices.contains(offset.intValue)
                else {
                    throw Failure(reason: "a removal outside the array")
                }
                array.remove(at: offset.intValue)
            }
            for insertion in insertions {
                guard case .number(let offset)? = insertion["offset"], offset.intValue >= 0,
                    offset.intValue <= array.count, let element = insertion["element"]
                else { throw Failure(reason: "an insertion outside the array") }
                array.insert(element, at: offset.intValue)
            }
            self = .array(array)
        case "entries":
            switch (self, patch["removed"], patch["inserted"]) {
            case (.object(var object), .object(let removed)?, .object(let inserted)?):
                for key in removed.keys { object[key] = nil }
                object.merge(inserted) { $1 }
                self = .object(object)
            case (.array(var array), .array(let removed)?, .array(let inserted)?):
                let removedKeys = stride(from: 0, to: removed.count - 1, by: 2).map { removed[$0] }
                var pairs = stride(from: 0, to: array.count - 1, by: 2).map { (array[$0], array[$0 + 1]) }
                pairs.removeAll { removedKeys.contains($0.0) }
                pairs += stride(from: 0, to: inserted.count - 1, by: 2).map {
                    (inserted[$0], inserted[$0 + 1])
                }
                array = pairs.flatMap { [$0.0, $0.1] }
                self = .array(array)
            default:
                throw Failure(reason: "a malformed entries patch, or the value is not a dictionary")
            }
        case "members":
            guard case .array(var array) = self, case .array(let removed)? = patch["removed"],
                case .array(let inserted)? = patch["inserted"]
            else { throw Failure(reason: "a malformed members patch, or the value is not a set") }
            array.removeAll { removed.contains($0) }
            array += inserted
            self = .array(array)
        default:
            throw Failure(
                reason: "a \"\(kind)\" change is a patch of the app's own type: applying it needs that type")
        }
    }
}
