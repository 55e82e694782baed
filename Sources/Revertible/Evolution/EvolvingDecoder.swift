public import Foundation

/// Decodes JSON stored by an earlier version of a model into today's type.
///
/// Stored data is merged over what the app provides: a key missing from the stored JSON (a
/// property added since) takes its value from the app's `template` at the same place, or where
/// the app has none from the type's ``DecodingDefaults``. An array element has no such place:
/// the app's elements are other elements (its first todo's `priority` is not a stored todo's),
/// so only its type's defaults fill it, and without them it does not decode —
/// except an optional's, which is `nil`, as the standard decoder reads it (a `nil` optional is
/// left out of the JSON, so its absence says nothing of a property added); an extra key (a property
/// removed since) is ignored; a property declared renamed or converted in
/// ``Versionable/propertyEvolution`` (by its name, whatever its JSON key) is read from its old
/// name or old type.
///
/// Stored JSON that decodes as it is takes the standard decoder alone, unless one of its keys is
/// the old name of a property renamed in the ``Versionable/propertyEvolution`` of the type or of
/// a type its values hold (an element's), which the standard decoder would ignore: the tree
/// walk below only runs for data that needs it.
public enum EvolvingDecoding {
    /// Decodes `stored` as a `T`, filling what it lacks from `template`.
    ///
    /// - Parameters:
    ///   - type: Today's type.
    ///   - stored: The stored JSON.
    ///   - template: JSON of a value the app provides (such as a history's initial value), from
    ///     which properties added since are filled; `nil` for none. Only asked for when the
    ///     stored JSON does not decode as it is.
    ///   - decoder: The decoder for leaf values (its strategies for `Data`, dates and floats).
    /// - Throws: The `DecodingError` of the first value that cannot be decoded or filled.
    public static func decode<T: Decodable>(
        _ type: T.Type, from stored: Data, template: () -> Data?, decoder: JSONDecoder
    ) throws -> T {
        try decodeNotingMerge(type, from: stored, template: template, decoder: decoder).value
    }

    /// ``decode(_:from:template:decoder:)``, and whether the stored JSON needed more than the
    /// standard decoder: `true` when it lacked a property (filled from `template` or the
    /// defaults) or held one under another name or type — a stored value that today's model
    /// writes differently, which a storage then does well to store again.
    package static func decodeNotingMerge<T: Decodable>(
        _ type: T.Type, from stored: Data, template: () -> Data?, decoder: JSONDecoder
    ) throws -> (value: T, merged: Bool) {
        let renamed = DeclaredRenames.mayBeIn(stored, for: T.self)
        if !renamed, let value = try? decoder.decode(T.self, from: stored) { return (value, false) }
        let node = try FoundationJSON.object(decoding: stored)
        let templateNode = try template().map(FoundationJSON.object(decoding:))
        let notes = MergeNotes()
        do {
            let value = try TypeBeingDecoded.with(T.self) {
                try TreeDecoder(
                    node: node, template: templateNode, codingPath: [], base: decoder, notes: notes
                ).decode(T.self)
            }
            // Read by the merge only for an old name a key of its JSON has: merged when a
            // property was read from that name (the name may be another type's key).
            return (value, !renamed || notes.changed)
        } catch {
            // The standard decoder's error reads as users expect: report it when it failed at
            // the same place. Where it failed first at a place the merge fills (a todo's
            // `priority` from its type's defaults), the merge's own error names what is left.
            if !renamed {
                do {
                    _ = try decoder.decode(T.self, from: stored)
                } catch let standard as DecodingError {
                    if let merged = error as? DecodingError, merged.place == standard.place,
                        merged.unreadStoredKeys.isEmpty
                    {
                        throw standard
                    }
                }
            }
            throw error
        }
    }
}

extension EvolvingDecoding {
    /// Decodes `stored` (a parsed JSON tree, as ``FoundationJSON`` gives it) as a `T` the way
    /// ``decode(_:from:template:decoder:)`` merges it, and says where the stored JSON holds
    /// what `T` did not read: a key no property asked for (under its name or a declared former
    /// one) or an element no one decoded, with a value other than `null`.
    ///
    /// That is what a model older than the one that stored the data lacks (a property added
    /// by a later release, read by an earlier one): stored again in this model's form, it would
    /// be gone. A property removed since reads the same.
    ///
    /// - Parameters:
    ///   - stored: The stored JSON, parsed.
    ///   - template: The JSON of a value the app provides, parsed, filling what `stored` lacks.
    ///   - decoder: The decoder for leaf values.
    /// - Returns: The value, and the places not read as paths (`tags[0].color`), in order.
    package static func decodeNotingUnread<T: Decodable>(
        _ type: T.Type, from stored: Any, template: Any?, decoder: JSONDecoder
    ) throws -> (value: T, unread: [String]) {
        let (value, reads) = try decodeNotingReads(T.self, from: stored, template: template, decoder: decoder)
        var unread: [[String]] = []
        reads.collectUnread(in: stored, at: [], into: &unread)
        return (value, unread.map(ReadPlaces.text))
    }

    /// ``decodeNotingUnread(_:from:template:decoder:)``'s decode, with the places it read: they
    /// say whether it left a given place unread (``ReadPlaces/isUnread(_:)``) without listing
    /// every place, which for a large value costs more than the few asked about.
    package static func decodeNotingReads<T: Decodable>(
        _ type: T.Type, from stored: Any, template: Any?, decoder: JSONDecoder
    ) throws -> (value: T, reads: ReadPlaces) {
        let notes = MergeNotes()
        let reads = ReadPlaces()
        notes.reads = reads
        let value = try TypeBeingDecoded.with(T.self) {
            try TreeDecoder(
                node: stored, template: template, codingPath: [], base: decoder, notes: notes, place: []
            ).decode(T.self)
        }
        return (value, reads)
    }
}

/// The places of a stored JSON tree a decode read, for
/// ``EvolvingDecoding/decodeNotingUnread(_:from:template:decoder:)``: each place is the JSON
/// keys and element indices (`[0]`) leading to it, as stored (a property read under its former
/// name is read at that name's place).
package final class ReadPlaces {
    /// The keys and indices read in each object or array.
    private var read: [[String]: Set<String>] = [:]
    /// The places read whole, by the standard decoder.
    private var whole: Set<[String]> = []

    func note(_ component: String, at place: [String]) { read[place, default: []].insert(component) }
    func noteWhole(_ place: [String]) { whole.insert(place) }

    /// Whether ``collectUnread(in:at:into:)`` lists `place`, a place of the stored tree that
    /// holds a value other than `null`, as every place above it does: no place on the way to it
    /// was read whole, and its last step is the first one not read.
    package func isUnread(_ place: [String]) -> Bool {
        var parent: [String] = []
        for step in place {
            if whole.contains(parent) { return false }
            guard read[parent]?.contains(step) == true else { return parent.count == place.count - 1 }
            parent.append(step)
        }
        return false
    }

    /// Appends to `unread` the places in `node`, at `place`, that hold a value other than
    /// `null` and were not read, in the order of their keys and indices; not those below them.
    func collectUnread(in node: Any, at place: [String], into unread: inout [[String]]) {
        guard !whole.contains(place) else { return }
        let seen = read[place] ?? []
        if let object = node as? [String: Any] {
            for key in object.keys.sorted() where !isNull(object[key]!) {
                guard seen.contains(key) else {
                    unread.append(place + [key])
                    continue
                }
                collectUnread(in: object[key]!, at: place + [key], into: &unread)
            }
        } else if let array = node as? [Any] {
            for (index, element) in array.enumerated() where !isNull(element) {
                let component = "[\(index)]"
                guard seen.contains(component) else {
                    unread.append(place + [component])
                    continue
                }
                collectUnread(in: element, at: place + [component], into: &unread)
            }
        }
    }

    /// `place` as a path reads: `tags[0].color`.
    package static func text(_ place: [String]) -> String {
        place.reduce(into: "") { text, component in
            text += text.isEmpty || component.hasPrefix("[") ? component : "." + component
        }
    }
}

/// The keys of a stored object that no property of the type decoding it reads, carried by the
/// error of a key that object lacks: a property renamed since is stored under one of them.
struct UnreadStoredKeys: Error {
    let keys: [String]
}

extension DecodingError {
    /// The stored keys no property read, when a key was missing beside them.
    var unreadStoredKeys: [String] {
        guard case .keyNotFound(_, let context) = self else { return [] }
        return (context.underlyingError as? UnreadStoredKeys)?.keys ?? []
    }

    /// Where it failed, a missing key's own name included, as ``RecordCoding/text(of:)`` writes
    /// it (`todos[0].priority`).
    var place: String {
        switch self {
        case .keyNotFound(let key, let context): RecordCoding.text(of: context.codingPath + [key])
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            RecordCoding.text(of: context.codingPath)
        @unknown default: ""
        }
    }
}

extension EvolvingDecoding {
    /// Whether a `type`'s own decoding may read `key` from a stored object at `place` (property
    /// names below the type's own object; `[]`: that object), where the type there has no
    /// property of that name any more: one moved into a struct of its own (`title`, now
    /// `meta.title`), or out of one (`meta.title`, now `title`), that an `init(from:)` reads
    /// from data an earlier model stored, as Codable's documentation teaches
    /// (`decodeIfPresent(Meta.self, forKey: .meta)`, else the old keys). A stored change of such
    /// a property changes what the type decodes: skipping it, as a removed property's change
    /// is skipped, would leave the value wrong.
    ///
    /// Found once per type, place and key, by decoding an object holding only `key` (as
    /// `null`) at `place`, once with `template` filling what it lacks and once without: `true`
    /// when either asks for `key` there, or for a key there that decoding `template` itself
    /// (today's form) does not ask for — the type reads an earlier form, whose other keys it may
    /// ask for before `key` (an `init(from:)` reading `title` first stops there, in an object
    /// without it). A synthesized `init(from:)` asks for its own keys only: `false`.
    ///
    /// - Parameters:
    ///   - key: The key, a property's name the type there no longer has.
    ///   - place: Where the object holding it lies in the type's stored object.
    ///   - type: The type decoding the stored object.
    ///   - template: A value of `type` as JSON (`nil` for none), asked for only the first time.
    ///   - decoder: The decoder for leaf values.
    package static func mayRead(
        _ key: String, at place: [String] = [], decoding type: Any.Type, template: () -> Data?,
        decoder: JSONDecoder
    ) -> Bool {
        let memoKey = KeyReadsMemo.Key(type: ObjectIdentifier(type), place: place, key: key)
        if let known = KeyReadsMemo.shared.withLock({ $0[memoKey] }) { return known }
        guard let decodable = type as? any Decodable.Type else { return false }
        let templateNode = template().flatMap(FoundationJSON.object(_:))
        let probe = place.reversed().reduce([key: NSNull()] as Any) { node, name in [name: node] }
        func mayRead<T: Decodable>(_: T.Type) -> Bool {
            let ownKeys = templateNode.map {
                askedKeys(T.self, at: place, decoding: $0, template: nil, decoder: decoder)
            }
            return [templateNode, nil].contains { template in
                let keys = askedKeys(T.self, at: place, decoding: probe, template: template, decoder: decoder)
                return keys.contains(key) || ownKeys.map { !keys.isSubset(of: $0) } == true
            }
        }
        let read = mayRead(decodable)
        KeyReadsMemo.shared.withLock { $0[memoKey] = read }
        return read
    }

    /// Whether decoding `object` (a parsed JSON object) as a `type` asks for `key` of the object
    /// at `place` in it (property names; `[]`: `object` itself), present or not: whether that
    /// form of the stored data reads it.
    package static func asks(
        _ key: String, at place: [String] = [], decoding type: Any.Type, object: Any, decoder: JSONDecoder
    ) -> Bool {
        guard let decodable = type as? any Decodable.Type else { return false }
        return askedKeys(decodable, at: place, decoding: object, template: nil, decoder: decoder).contains(
            key)
    }

    /// The keys decoding `node` as a `T` asked the object at `place` for, present or not,
    /// whether the decode then succeeded or not.
    private static func askedKeys<T: Decodable>(
        _: T.Type, at place: [String], decoding node: Any, template: Any?, decoder: JSONDecoder
    ) -> Set<String> {
        let notes = MergeNotes()
        notes.askedPlace = place
        _ = try? TypeBeingDecoded.with(T.self) {
            try TreeDecoder(
                node: node, template: template, codingPath: [], base: decoder, notes: notes, place: []
            )
            .decode(T.self)
        }
        return notes.asked
    }

    /// A decoder over one parsed JSON value, for conversions of stored changes.
    package static func decoder(for node: Any, base: JSONDecoder) -> any Decoder {
        TreeDecoder(node: node, template: nil, codingPath: [], base: base, notes: MergeNotes())
    }
}

/// Whether a node of a parsed JSON tree is JSON's `null`: its type compared, where `node is
/// NSNull` bridged every dictionary and array it was asked of to an `NSDictionary` or
/// `NSArray` first (a quarter of a merge's time).
private func isNull(_ node: Any) -> Bool {
    ObjectIdentifier(type(of: node)) == ObjectIdentifier(NSNull.self)
}

/// What a merge did that the standard decoder would not have: shared by every decoder of one
/// tree.
private final class MergeNotes {
    /// Whether a property was read from its name before a rename, filled from the app's value
    /// or a type's defaults, or converted from its old type.
    var changed = false
    /// Where the stored tree was read, when a decode asks (`nil`: no one asks, nothing is
    /// noted).
    var reads: ReadPlaces?
    /// The place whose object's keys asked for are noted in ``asked``, present or not, when a
    /// decode asks (`nil`: nothing is noted).
    var askedPlace: [String]?
    var asked: Set<String> = []
}

/// A decoder over a parsed JSON tree, with the app's template tree beside it.
private struct TreeDecoder: Decoder {
    let node: Any
    let template: Any?
    let codingPath: [any CodingKey]
    let base: JSONDecoder
    let notes: MergeNotes
    /// Where `node` lies in the stored tree, as ``ReadPlaces`` names places, while reads are
    /// noted; `nil` otherwise, and for a node of the template's.
    var place: [String]? = nil
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    /// Decodes a `T` here: leaves through the standard decoder, everything else through its
    /// own `init(from:)` on this tree, with its declared evolution, and with its
    /// ``DecodingDefaults`` where the app provides no template.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let value: T = Self.directLeaf(node) { return value }
        if ContainedTypes.isStandardLeaf(T.self) || isNull(node) {
            if let place { notes.reads?.noteWhole(place) }
            let data = try JSONSerialization.data(withJSONObject: node, options: .fragmentsAllowed)
            do {
                return try base.decode(T.self, from: data)
            } catch let error as DecodingError {
                throw Self.relocated(error, to: codingPath)
            }
        }
        if template == nil, let defaults = DecodingDefaultsTree.of(T.self) {
            return try T(
                from: TreeDecoder(
                    node: node, template: defaults, codingPath: codingPath, base: base, notes: notes,
                    place: place))
        }
        return try T(from: self)
    }

    /// A `String`, `Bool`, `Int`, `Int64` or `Double` read straight from its node, when the node holds
    /// one as the standard decoder would read it from the node's JSON (text for text, an
    /// integer for an integer, a number for a `Double`); `nil` for anything else, which the
    /// standard decoder reads. Writing each leaf as JSON for the decoder took most of a merge's
    /// time: a value of 500,000 items has a million and a half leaves.
    static func directLeaf<T>(_ node: Any) -> T? {
        if T.self == String.self { return node as? String as? T }
        guard T.self == Int.self || T.self == Int64.self || T.self == Double.self || T.self == Bool.self,
            let number = node as? NSNumber
        else { return nil }
        // `FoundationJSON` makes an integer's number of an `Int64` ("q"), a boolean's of a
        // `Bool` ("c"), any other's of a `Double` ("d").
        switch (number.objCType.pointee, T.self) {
        case (CChar(UInt8(ascii: "c")), is Bool.Type): return number.boolValue as? T
        case (CChar(UInt8(ascii: "q")), is Int.Type): return Int(exactly: number.int64Value) as? T
        case (CChar(UInt8(ascii: "q")), is Int64.Type): return number.int64Value as? T
        case (CChar(UInt8(ascii: "q")), is Double.Type): return Double(number.int64Value) as? T
        case (CChar(UInt8(ascii: "d")), is Double.Type): return number.doubleValue as? T
        default: return nil
        }
    }

    /// `error` with the path of this tree in front of the path it names.
    static func relocated(_ error: DecodingError, to path: [any CodingKey]) -> DecodingError {
        func moved(_ context: DecodingError.Context) -> DecodingError.Context {
            .init(codingPath: path + context.codingPath, debugDescription: context.debugDescription)
        }
        switch error {
        case .typeMismatch(let type, let context): return .typeMismatch(type, moved(context))
        case .valueNotFound(let type, let context): return .valueNotFound(type, moved(context))
        case .keyNotFound(let key, let context): return .keyNotFound(key, moved(context))
        case .dataCorrupted(let context): return .dataCorrupted(moved(context))
        @unknown default: return error
        }
    }

    /// The decoder of `node`, which lies under `key`: stored under `storedKey` here (`[3]` for
    /// an element; `nil` for a node that is not stored, the template's).
    func child(_ node: Any, template: Any?, key: any CodingKey, storedKey: String?) -> TreeDecoder {
        TreeDecoder(
            node: node, template: template, codingPath: codingPath + [key], base: base, notes: notes,
            place: storedKey.flatMap { key in place.map { $0 + [key] } })
    }

    /// Notes that the node under `storedKey` here was read, while reads are noted.
    func noteRead(_ storedKey: String) {
        if let place { notes.reads?.note(storedKey, at: place) }
    }

    /// Notes that `key` was asked for here, present or not, while this place's are noted.
    func noteAsked(_ key: @autoclosure () -> String) {
        if let asked = notes.askedPlace, place == asked { notes.asked.insert(key()) }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let object = node as? [String: Any] else {
            throw DecodingError.typeMismatch(
                [String: Any].self, .init(codingPath: codingPath, debugDescription: "Expected an object"))
        }
        let keyed = KeyedTree<Key>(
            decoder: self, object: object, template: template as? [String: Any], evolution: [])
        // A property declared removed is read, for what storing the value again keeps.
        if let place {
            for key in keyed.evolution.removedKeys where object[key] != nil {
                noteRead(key)
                notes.reads?.noteWhole(place + [key])
            }
        }
        return KeyedDecodingContainer(keyed)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = node as? [Any] else {
            throw DecodingError.typeMismatch(
                [Any].self, .init(codingPath: codingPath, debugDescription: "Expected an array"))
        }
        // No element of the app's stands in for what stored elements lack: the app's array holds
        // other elements (its first todo is not a stored todo's place), so only the element
        // type's `DecodingDefaults` fill them.
        return UnkeyedTree(decoder: self, array: array)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleTree(decoder: self) }
}

/// What a type's `init(from:)` sees in place of an object: the stored keys, renamed ones
/// under their new names, and the template's keys for what is missing.
private struct KeyedTree<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TreeDecoder
    let object: [String: Any]
    let template: [String: Any]?
    let evolution: [PropertyEvolution]
    var codingPath: [any CodingKey] { decoder.codingPath }

    init(
        decoder: TreeDecoder, object: [String: Any], template: [String: Any]?, evolution: [PropertyEvolution]
    ) {
        self.decoder = decoder
        self.object = object
        self.template = template
        // The evolution of the type being decoded: the keyed container is asked for by its
        // `init(from:)`, so its type is the one whose tree this is.
        self.evolution = evolution.isEmpty ? TypeBeingDecoded.evolution : evolution
    }

    var allKeys: [Key] {
        object.keys.compactMap { Key(stringValue: evolution.currentName(of: $0) ?? $0) }
    }

    /// The stored node for `key`, under its current name or the one it was stored under.
    func stored(_ key: Key) -> Any? { lookUp(key)?.node }

    /// The stored node for `key`, the key it is stored under, and whether that is the name the
    /// property had before a declared rename: there only data an earlier model wrote has it.
    private func lookUp(_ key: Key) -> (node: Any, storedKey: String, underOldName: Bool)? {
        decoder.noteAsked(key.stringValue)
        if let node = object[key.stringValue] {
            decoder.noteRead(key.stringValue)
            return (node, key.stringValue, false)
        }
        let storedName =
            evolution.storedName(of: Self.property(key)) ?? evolution.storedName(of: key.stringValue)
        guard let storedName, let node = object[storedName] else { return nil }
        decoder.notes.changed = true
        decoder.noteRead(storedName)
        return (node, storedName, true)
    }

    /// The property `key` decodes: its `CodingKeys` case's name (the JSON key may differ), as
    /// ``PropertyEvolution`` names properties.
    static func property(_ key: Key) -> String { CodingKeyTree.caseName(of: key) ?? key.stringValue }

    func contains(_ key: Key) -> Bool { stored(key) != nil || template?[key.stringValue] != nil }

    /// The template's node for `key`, which the stored object lacks, noted as filled.
    private func filled(_ key: Key) -> Any? {
        guard let node = template?[key.stringValue] else { return nil }
        decoder.notes.changed = true
        return node
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let node = stored(key) ?? filled(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value"))
        }
        return isNull(node)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let templateNode = template?[key.stringValue]
        guard let (node, storedKey, underOldName) = lookUp(key) else {
            guard let templateNode = templateNode ?? DecodingDefaultsTree.of(T.self) else {
                // Stored keys the type reads nowhere may hold it under its name of before.
                let unread = object.keys.filter {
                    Key(stringValue: evolution.currentName(of: $0) ?? $0) == nil
                }
                throw DecodingError.keyNotFound(
                    key,
                    .init(
                        codingPath: codingPath, debugDescription: "No stored value, and none from the app",
                        underlyingError: unread.isEmpty ? nil : UnreadStoredKeys(keys: unread.sorted())))
            }
            // Added since the data was stored: the app's value.
            decoder.notes.changed = true
            return try TypeBeingDecoded.with(T.self) {
                try decoder.child(templateNode, template: nil, key: key, storedKey: nil).decode(T.self)
            }
        }
        let child = decoder.child(node, template: templateNode, key: key, storedKey: storedKey)
        let conversion =
            evolution.conversion(for: Self.property(key)) ?? evolution.conversion(for: key.stringValue)
        // Under its old name a value is certainly of the old type: converted even when it reads
        // as the new one too (cents stored as an `Int`, read as dollars in a `Double`).
        if let conversion, underOldName { return try converted(child, by: conversion) }
        do {
            return try TypeBeingDecoded.with(T.self) { try child.decode(T.self) }
        } catch {
            guard let conversion else { throw error }
            return try converted(child, by: conversion)
        }
    }

    /// The stored value at `child` read as its old type and converted.
    private func converted<T>(_ child: TreeDecoder, by conversion: PropertyEvolution.Conversion) throws -> T {
        decoder.notes.changed = true
        guard let converted = try conversion.convert(child) as? T else {
            throw DecodingError.typeMismatch(
                T.self,
                .init(
                    codingPath: child.codingPath,
                    debugDescription: "The conversion from \(conversion.oldType) does not give a \(T.self)"))
        }
        return converted
    }

    // An optional the stored JSON leaves out is `nil`, as the standard decoder reads it, never
    // the app's value: synthesized `Codable` leaves out every `nil` optional, so the absence
    // cannot tell a property added since from one stored as `nil`, and the app's value in its
    // place would change what the user stored.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try optional(type, key)
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

    private func optional<T: Decodable>(_: T.Type, _ key: Key) throws -> T? {
        guard let node = stored(key), !isNull(node) else { return nil }
        return try decode(T.self, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try childDecoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try childDecoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        if object["super"] != nil { decoder.noteRead("super") }
        return decoder.child(
            object["super"] ?? NSNull(), template: template?["super"], key: AnyKey("super"),
            storedKey: object["super"] == nil ? nil : "super")
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try childDecoder(key) }

    private func childDecoder(_ key: Key) throws -> TreeDecoder {
        if let (node, storedKey, _) = lookUp(key) {
            return decoder.child(node, template: template?[key.stringValue], key: key, storedKey: storedKey)
        }
        guard let node = filled(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value"))
        }
        return decoder.child(node, template: template?[key.stringValue], key: key, storedKey: nil)
    }
}

/// The elements of a stored array.
private struct UnkeyedTree: UnkeyedDecodingContainer {
    let decoder: TreeDecoder
    let array: [Any]
    var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    init(decoder: TreeDecoder, array: [Any]) {
        self.decoder = decoder
        self.array = array
    }

    /// The next element's decoder; `T`'s ``DecodingDefaults`` (when it has them) stand in for
    /// what it lacks.
    private mutating func next(_ type: Any.Type = Any.self) throws -> TreeDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any.self, .init(codingPath: codingPath, debugDescription: "No more elements"))
        }
        defer { currentIndex += 1 }
        // Only while reads are noted: a merge of 500,000 elements makes no text for them.
        let storedKey = decoder.place == nil ? nil : "[\(currentIndex)]"
        if let storedKey { decoder.noteRead(storedKey) }
        return decoder.child(
            array[currentIndex], template: DecodingDefaultsTree.of(type),
            key: AnyKey(index: currentIndex), storedKey: storedKey)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, isNull(array[currentIndex]) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let child = try next(T.self)
        return try TypeBeingDecoded.with(T.self) { try child.decode(T.self) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

/// A single stored value.
private struct SingleTree: SingleValueDecodingContainer {
    let decoder: TreeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { isNull(decoder.node) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try TypeBeingDecoded.with(T.self) { try decoder.decode(T.self) }
    }
}

/// A coding key made up on the spot (array indices, `super`).
private struct AnyKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}

/// The evolution declared by the type whose `init(from:)` is running on this thread, so that
/// the keyed container it asks for can read renamed and converted properties.
private enum TypeBeingDecoded {
    @TaskLocal static var evolution: [PropertyEvolution] = []

    static func with<T, R>(_ type: T.Type, _ body: () throws -> R) rethrows -> R {
        try $evolution.withValue((T.self as? any Versionable.Type)?.propertyEvolution ?? [], operation: body)
    }
}

/// What ``EvolvingDecoding/mayRead(_:at:decoding:template:decoder:)`` found, by type, place and key: a
/// type's decoding does not change within a process.
private enum KeyReadsMemo {
    struct Key: Hashable {
        let type: ObjectIdentifier
        let place: [String]
        let key: String
    }

    static let shared = Locked<[Key: Bool]>([:])
}
