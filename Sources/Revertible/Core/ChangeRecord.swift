public import Foundation

/// One change of a reversion as plain data: its path, the kind of patch and the patch as JSON.
///
/// Records are what Keepsake stores. They are read back into a ``Reversion`` by resolving each
/// path through the root type's own ``Versionable/addReversions(into:)``:
///
/// ```swift
/// let records = try reversion.records()
/// let restored = try Reversion<User>(records: records, resolvingAgainst: user)
/// try restored.revert(&user)
/// ```
public struct ChangeRecord: Hashable, Sendable, Codable {
    /// Where the change is.
    public var path: PathDescriptor
    /// The patch format, ``LeafPatch/kind``: `"replace"`, `"text"`, `"bytes"`, …
    public var kind: String
    /// The patch encoded as JSON (sorted keys, so equal patches give equal bytes).
    public var payload: Data

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - path: Where the change is.
    ///   - kind: The patch format.
    ///   - payload: The patch as JSON.
    public init(path: PathDescriptor, kind: String, payload: Data) {
        self.path = path
        self.kind = kind
        self.payload = payload
    }
}

extension Reversion {
    /// The reversion's changes as records, in the order ``init(records:resolvingAgainst:inverted:decoder:)``
    /// expects.
    ///
    /// An inverse reversion is recorded as its forward changes; keep ``isInverted`` beside them.
    ///
    /// - Returns: One record per changed leaf.
    /// - Throws: ``ReversionError/notEncodable(path:type:)`` naming the first change whose
    ///   value is not `Encodable`.
    public func records() throws(ReversionError) -> [ChangeRecord] {
        try records(encoder: RecordCoding.encoder)
    }

    /// The reversion's changes as records, encoded with `encoder` (for instance one made by
    /// ``ChangeRecord/makeEncoder()`` with a custom `dataEncodingStrategy`).
    ///
    /// - Parameter encoder: The JSON encoder for patches.
    /// - Returns: One record per changed leaf.
    /// - Throws: ``ReversionError/notEncodable(path:type:)``.
    public func records(encoder: JSONEncoder) throws(ReversionError) -> [ChangeRecord] {
        try records(encoderWhenNeeded: { encoder })
    }

    /// ``records(encoder:)`` with an encoder made only if a patch is not written directly.
    package func records(encoderWhenNeeded makeEncoder: () -> JSONEncoder) throws(ReversionError)
        -> [ChangeRecord]
    {
        var records: [ChangeRecord] = []
        records.reserveCapacity(changes.count)
        try forEachRecord(encoderWhenNeeded: makeEncoder) { path, kind, json in
            records.append(ChangeRecord(path: path, kind: kind, payload: Data(json)))
        }
        return records
    }

    /// Calls `body` with each change's path, patch kind and patch JSON, in the order of
    /// ``records(encoder:)``: what a store writes, in one reused buffer, with no record made.
    ///
    /// - Parameters:
    ///   - makeEncoder: Makes the encoder, called only if a patch is not written directly.
    ///   - body: Receives each change; `json` is valid only during the call.
    /// - Throws: What ``records(encoder:)`` throws.
    package func forEachRecord(
        encoderWhenNeeded makeEncoder: () -> JSONEncoder,
        _ body: (_ path: PathDescriptor, _ kind: String, _ json: UnsafeRawBufferPointer) -> Void
    ) throws(ReversionError) {
        var made: JSONEncoder?
        var json: [UInt8] = []
        json.reserveCapacity(256)
        for change in changes {
            json.removeAll(keepingCapacity: true)
            if let kind = change.node.writeLeafJSON(into: &json) {
                json.withUnsafeBytes { body(change.path, kind, $0) }
                continue
            }
            let patch = change.node.leafPatch
            guard let encodable = patch as? any Encodable else {
                throw .notEncodable(path: change.path, type: "\(type(of: patch).valueTypeName)")
            }
            let encoder = made ?? makeEncoder()
            made = encoder
            let encoded: Data
            do {
                encoded = try encoder.encode(encodable)
            } catch is EncodingError {
                throw .notEncodable(path: change.path, type: "\(type(of: patch).valueTypeName)")
            } catch {
                // The encoder's own strategy failed (a store's blob table, say): not the value.
                throw .storage(StorageFailure(error))
            }
            encoded.withUnsafeBytes { body(change.path, type(of: patch).kind, $0) }
        }
    }

    /// Whether this reversion is the ``inverse`` of one made by diffing.
    public var isInverted: Bool { isInverse }

    /// Reads a reversion back from records made by ``records()``.
    ///
    /// - Parameters:
    ///   - records: The records, in the order ``records()`` returned them.
    ///   - value: A current value of `Root`, used to walk its registrations (and to find
    ///     elements by key). It is not modified.
    ///   - inverted: Whether the records belong to an inverse reversion.
    ///   - decoder: The JSON decoder for patches, matching the encoder that wrote them.
    /// - Throws: ``ReversionError/pathNotFound(path:type:)`` when a path names no tracked
    ///   location of `value`, ``ReversionError/undecodable(path:type:reason:)`` when a patch
    ///   does not decode as the type found there, or when two records change the same place
    ///   (or one changes inside what another replaces), which no diff records. A change to a
    ///   property the type no longer has (one removed since it was stored) is skipped, unless
    ///   the type's own `init(from:)` reads its key from stored data (a property moved into a
    ///   struct of its own, read from the old keys): then it changes what that data decodes
    ///   to, and is ``ReversionError/pathNotFound(path:type:)``, for the caller to compute the
    ///   value on the stored data (as a Keepsake store does).
    public init(
        records: [ChangeRecord], resolvingAgainst value: Root, inverted: Bool = false,
        decoder: JSONDecoder = ChangeRecord.makeDecoder()
    ) throws(ReversionError)
    where Root: Versionable {
        var changes: [Change] = []
        changes.reserveCapacity(records.count)
        for record in records {
            let resolver = ResolvingReverter<Root>.resolved(
                value: value, remaining: record.path.components[...], record: record, decoder: decoder)
            switch resolver.result {
            case .success(let node)?: changes.append(Change(path: record.path, node: node))
            case .failure(let error)?: throw error
            // A property removed from the type since: its change no longer has a place,
            // unless the type's decoding reads it from stored data (moved into a struct).
            case nil where resolver.namesRemovedProperty:
                guard !resolver.removedPropertyIsRead else {
                    throw .pathNotFound(path: record.path, type: "\(Root.self)")
                }
            case nil: throw .pathNotFound(path: record.path, type: "\(Root.self)")
            }
        }
        try Self.refuseOverlaps(changes)
        self.init(changes: changes, isInverse: inverted)
    }

    /// Refuses changes two of which reach the same place, or one of which reaches inside
    /// another's leaf: a diff never records such a reversion, and every change is checked
    /// against the value before any is applied, so the later one would be applied, unchecked,
    /// to what the earlier one left (a text patch then no longer fits, and stops the process).
    /// A change inside one element of a collection whose structure another change records is
    /// how a diff records a collection, and is allowed.
    private static func refuseOverlaps(_ changes: [Change]) throws(ReversionError) {
        guard changes.count > 1 else { return }
        var indices: [[AnyHashable]: Int] = [:]
        var locations: [[AnyHashable]] = []
        locations.reserveCapacity(changes.count)
        for (index, change) in changes.enumerated() {
            var location: [AnyHashable] = []
            change.node.appendLocation(to: &location)
            if let earlier = indices.updateValue(index, forKey: location) {
                throw overlap(changes[index], changes[earlier])
            }
            locations.append(location)
        }
        for (index, location) in locations.enumerated() {
            for length in 0..<location.count {
                guard let outer = indices[Array(location[..<length])],
                    !isStructurePatch(changes[outer].node.leafPatch)
                else { continue }
                throw overlap(changes[index], changes[outer])
            }
        }
    }

    private static func overlap(_ change: Change, _ other: Change) -> ReversionError {
        func type<Patch: LeafPatch>(_: Patch) -> String { "\(Patch.Value.self)" }
        return .undecodable(
            path: change.path, type: type(change.node.leafPatch),
            reason: "it overlaps the change at `\(other.path)` of the same reversion")
    }

    /// Whether `patch` is the structure patch of a ``VersionableCollection``.
    private static func isStructurePatch(_ patch: any LeafPatch) -> Bool {
        func isStructure<Patch: LeafPatch>(_: Patch) -> Bool {
            guard let collection = Patch.Value.self as? any VersionableCollection.Type else { return false }
            return structurePatch(of: collection) == Patch.self
        }
        return isStructure(patch)
    }

    private static func structurePatch<Collection: VersionableCollection>(of _: Collection.Type) -> Any.Type {
        Collection.StructurePatch.self
    }
}

extension ChangeRecord {
    /// A JSON encoder with the settings records use: sorted keys, unescaped slashes, and
    /// non-finite numbers as the strings `"NaN"`, `"+Infinity"`, `"-Infinity"`.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    /// A JSON decoder matching ``makeEncoder()``.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }
}

extension LeafPatch {
    static var valueTypeName: String { "\(Value.self)" }
}

/// The JSON settings every record uses, in one place.
package enum RecordCoding {
    static let encoder = ChangeRecord.makeEncoder()
    package static let decoder = ChangeRecord.makeDecoder()

    /// A decoding error as a sentence that says where (a missing key's own name included),
    /// without a full stop: every message it goes into ends with its own.
    package static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            var (path, hint) = (context.codingPath, "")
            var what = sentence(context.debugDescription)
            if case DecodingError.keyNotFound(let key, _) = error {
                path.append(key)
                // The decoder's own words name the key as `CodingKeys(stringValue: …)`.
                what = "no value for \"\(key.stringValue)\""
                hint = "; " + missingPropertyHint(error as? DecodingError, key)
            }
            let location = text(of: path)
            return (location.isEmpty ? what : "\(what) (at \(location))") + hint
        default:
            return "\(error)"
        }
    }

    /// ``describe(_:)`` for an error decoding stored data as today's model, the stored change
    /// at `path` (`nil`: a whole value): where a value is of another type than its property
    /// today, it goes on to say how to declare the conversion.
    package static func describe(_ error: any Error, decodingModelAt path: PathDescriptor?) -> String {
        describe(error, as: describe(error), decodingModelAt: path)
    }

    /// `description`, of `error`, followed by what to do when it is about a stored value of
    /// another type than its property today, or a raw value no case of its enum has today (a
    /// case removed or renamed since). The property is the innermost one of the app's types on
    /// the error's coding path, else the last property of `path`.
    package static func describe(
        _ error: any Error, as description: String, decodingModelAt path: PathDescriptor?
    )
        -> String
    {
        func property(_ context: DecodingError.Context) -> String? {
            context.codingPath.reversed().lazy.compactMap(appPropertyName).first ?? path.flatMap(lastProperty)
        }
        // The property whose value, not an element of it, the error is about: the last key of
        // the coding path, or, for a stored change's own value (under its patch's one key),
        // the property its path ends in.
        func ownProperty(_ context: DecodingError.Context) -> String? {
            let keys = context.codingPath
            if let last = keys.last, let name = appPropertyName(last) { return name }
            guard keys.count <= 1, case .property(let name)? = path?.components.last else { return nil }
            return name
        }
        switch error {
        case DecodingError.typeMismatch(_, let context):
            return describe(description, changedTypeOf: property(context))
        case DecodingError.dataCorrupted(let context):
            // Only where the value is the property's own: an element's conversion is the
            // collection's, from a collection of the raw type, which the hint would misname.
            guard let (enumType, rawType) = invalidRawValue(context.debugDescription),
                let name = ownProperty(context)
            else { return description }
            return description + """
                ; if the app removed or renamed a case of \(enumType) since, declare \
                .converted("\(name)", from: \(rawType).self) { … }
                """ + declarationPlace
        default:
            return description
        }
    }

    /// `description` followed by what to do about a stored value of another type than the
    /// property `name` today; `description` alone when there is no property to name.
    package static func describe(_ description: String, changedTypeOf name: String?) -> String {
        guard let name else { return description }
        return description + """
            ; if the app changed the type of "\(name)" since, declare .converted("\(name)", from: \
            TheOldType.self) { … }
            """ + declarationPlace
    }

    /// Where a conversion is declared, as the hints above end.
    private static let declarationPlace =
        " in the propertyEvolution of the type that declares it (adopting Versionable)"

    /// The enum and its raw value's type, when `description` is the standard library's refusal
    /// of a raw value no case has: "Cannot initialize Status from invalid String value archived".
    private static func invalidRawValue(_ description: String) -> (enumType: String, rawType: String)? {
        let prefix = "Cannot initialize "
        guard description.hasPrefix(prefix) else { return nil }
        let rest = description.dropFirst(prefix.count)
        guard let from = rest.range(of: " from invalid "),
            let value = rest[from.upperBound...].range(of: " value ")
        else { return nil }
        return (String(rest[..<from.lowerBound]), String(rest[from.upperBound..<value.lowerBound]))
    }

    /// The last property `path` names (an element's path names its collection's), or `nil`.
    package static func lastProperty(of path: PathDescriptor) -> String? {
        path.components.reversed().lazy.compactMap { component -> String? in
            if case .property(let name) = component { name } else { nil }
        }.first
    }

    /// The property `key` is synthesized `Codable`'s key for, in one of the app's types: not a
    /// key of the library's own patches, nor a decoder's key for an array's position or a
    /// dictionary's key (an enum too, in Foundation).
    private static func appPropertyName(_ key: any CodingKey) -> String? {
        guard !libraryModules.contains(module(of: type(of: key))) else { return nil }
        return CodingKeyTree.caseName(of: key)
    }

    /// The module that declares `type`: `Revertible` for
    /// `(extension in Revertible):Revertible.ArrayPatch<…>.CodingKeys` too.
    private static func module(of type: Any.Type) -> String {
        let name = String(reflecting: type)
        let extensionPrefix = "(extension in "
        if name.hasPrefix(extensionPrefix), let end = name.firstIndex(of: ")") {
            return String(name[name.index(name.startIndex, offsetBy: extensionPrefix.count)..<end])
        }
        return String(name.prefix { $0 != "." })
    }

    /// The modules whose coding keys name no property of the app's.
    private static let libraryModules: Set = ["Revertible", "Swift", "Foundation", "FoundationEssentials"]

    /// A decoder's description without its full stop, so that a message can go on after it.
    package static func sentence(_ description: String) -> String {
        description.hasSuffix(".") ? String(description.dropLast()) : description
    }

    /// A coding path as a path reads: `todos[0].priority` (a decoder names an array's
    /// position `Index 0`, which a message would show as `todos.Index 0.priority`).
    package static func text(of path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            // An array's position, or a dictionary's integer key; a `CodingKeys` case with an
            // integer raw value keeps its name.
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)"
            {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    /// What to do about a property missing from stored data, which the app may have added
    /// since: a sentence without its full stop, as ``describe(_:)`` ends.
    package static func addedPropertyHint(_ key: any CodingKey) -> String {
        """
        if "\(key.stringValue)" was added since the data was stored, conform the type that declares \
        it to DecodingDefaults (or make it optional), so that stored values lacking it can be read
        """
    }

    /// What to do about a property missing from stored data: `added` (by default
    /// ``addedPropertyHint(_:)``), after a word on a rename when the stored object has keys its
    /// type reads nowhere. Without it, a renamed property reads as one added, and defaults would
    /// stand in for every stored value of it.
    package static func missingPropertyHint(
        _ error: DecodingError?, _ key: any CodingKey, added: String? = nil
    ) -> String {
        let added = added ?? addedPropertyHint(key)
        guard let unread = error?.unreadStoredKeys, let first = unread.first else { return added }
        let name = key.stringValue
        let keys = unread.map { "\"\($0)\"" }.joined(separator: ", ")
        let stored = unread.count == 1 ? "was stored as \"\(first)\"" : "was stored under one of them"
        return "the stored data has \(keys), which no property reads: if \"\(name)\" \(stored), declare "
            + ".renamed(\"\(first)\", to: \"\(name)\") in the propertyEvolution of the type that declares it "
            + "(adopting Versionable), and .converted if its type changed; " + added
    }

    /// `items` in the order of the canonical JSON of each one's `key`: the order records list
    /// what a set or a dictionary holds in, since their own order differs between equal values.
    static func inJSONOrder<Item, Key>(_ items: some Collection<Item>, by key: (Item) -> Key) -> [Item] {
        guard items.count > 1 else { return Array(items) }
        return items.map { (json: canonicalJSON(key($0)), item: $0) }.sorted { $0.json < $1.json }.map(\.item)
    }

    /// Canonical JSON text of a key or id, for path components.
    static func canonicalJSON<T>(_ value: T) -> String {
        // An id of a number or text (an `Any` from `AnyHashable`, opened) is written as the
        // encoder would write it, without the encoder: a diff names every changed element so.
        func direct<V>(_ value: V) -> String? {
            guard DirectJSON.isScalar(value) else { return nil }
            var json: [UInt8] = []
            DirectJSON.writeScalar(value, into: &json)
            return String(decoding: json, as: UTF8.self)
        }
        if let text = _openExistential(value as Any, do: direct) { return text }
        if let encodable = value as? any Encodable, let data = try? encoder.encode(encodable) {
            return String(decoding: data, as: UTF8.self)
        }
        return PathText.quoted(String(describing: value))
    }

    /// Decodes a key or id from its canonical JSON text.
    static func decodeJSON<T>(_ text: String, as type: T.Type) -> T? {
        guard let decodable = T.self as? any Decodable.Type else { return nil }
        return (try? decoder.decode(decodable, from: Data(text.utf8))) as? T
    }
}
