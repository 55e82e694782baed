import Foundation
@_spi(Reflection) import Swift

/// Where a stored path leads in a model's values, and the JSON keys the model stores each
/// property there under: its own name, or the key a type's `CodingKeys` give it.
///
/// Stored change records name properties (``PathComponent/property(_:)``); a value's stored JSON
/// holds its coding keys. For most types the two are the same. For one with custom keys,
///
/// ```swift
/// struct Doc: Codable {
///     var subtitle: String?
///     enum CodingKeys: String, CodingKey { case subtitle = "sub" }
/// }
/// ```
///
/// the change at `subtitle` lies under `"sub"` in the JSON: ``StoredForm`` reads paths through
/// this, and a stored path naming a property the model no longer has but a key it still
/// decodes (a property renamed, its key kept by `CodingKeys`) is read as that property.
///
/// The type at each place is found by reflection (a struct's or class's stored properties, an
/// optional's, array's, set's or dictionary's element), running none of the model's code. A
/// type's keys are read from a real value of it: the stored JSON at that place, decoded as the
/// type, then encoded into a recorder that keeps the keys its keyed container is given (a key's
/// property is the name of its `CodingKeys` case, as synthesized `Codable` requires). The
/// model's code only ever sees its own stored data. Where the type cannot be found (an enum's
/// payload, a collection of the app's own, an existential) or the JSON there does not decode
/// as it, each property is its own key, as before. A type whose own `encode(to:)` keys
/// properties by cases named otherwise shows no property's key: it is learned from a change of
/// the property (``learnKeyPath(of:in:from:inverted:decoder:)``).
package struct CodingKeyTree: @unchecked Sendable {
    // Unchecked because it holds a metatype, which is immutable.

    /// The model's type at this place, or `nil` where it is not known.
    private let type: Any.Type?
    /// The types whose stored JSON did not decode, shared by every place of one root: each is
    /// tried once (a large value's JSON that does not decode is not decoded again for every
    /// change replayed on it); and the properties found stored under their own names.
    private let misses: Misses

    /// A place whose type is not known: every property is its own key.
    package init() { (type, misses) = (nil, Misses()) }

    /// The root of a value of `type`.
    package init(for type: any Decodable.Type) { (self.type, misses) = (type, Misses()) }

    private init(type: Any.Type?, misses: Misses) { (self.type, self.misses) = (type, misses) }

    /// Whether the model's type here is known: without it, every property is its own key.
    var knowsType: Bool { type != nil }

    /// The name of the model's type here, as errors show it (`"JSON"` when not known).
    var typeName: String { type.map { "\($0)" } ?? "JSON" }

    /// The JSON key of the property `name` here, where `object` is the stored JSON at this
    /// place (an object), read with `decoder`.
    ///
    /// A property wrapper's storage (`_title` of `@Trimmed var title`), which stored paths
    /// name as the diff found it, is encoded under its property's key (`title`): it is looked
    /// up there when the type encodes a `title` and no `_title`. Until 2026-11 it was not, and
    /// a history whose versions changed one did not open after an app update that redoes them
    /// on the stored JSON. With no type known (`keepsake value`, salvage), the JSON alone
    /// cannot tell it from a property `_title` beside a `title`, left out while `nil`: the
    /// change itself does, where it fits (``StoredForm/revert(_:inverted:)``).
    ///
    /// A type whose own `encode(to:)` keys a property by a case of another name (`title` under
    /// `case name`, next to a `schemaVersion` no property has) does not show which key is
    /// whose: the key is `nil`, and ``learnKeyPath(of:in:from:inverted:decoder:)`` finds it
    /// from a change of the property; ``keyPath(of:in:decoder:)`` gives what it found, which
    /// may lie in a nested container.
    func key(of name: String, in object: CodedNode, decoder: JSONDecoder) -> String? {
        guard let path = keyPath(of: name, in: object, decoder: decoder), path.count == 1 else { return nil }
        return path[0]
    }

    /// The JSON keys that lead from this place to the property `name`: one key, or more where
    /// the type's own `encode(to:)` stores it in a nested container (`author` in
    /// `"meta": {"author": …}`), as learned from a change of it; `nil` where not known (see
    /// ``key(of:in:decoder:)``).
    func keyPath(of name: String, in object: CodedNode, decoder: JSONDecoder) -> [String]? {
        guard let type,
            let recording = Self.ownRecording(of: type, in: object, decoder: decoder, misses: misses)
        else { return [name] }
        if let key = recording.keys[name] { return [key] }
        if let path = recording.paths[name] { return path }
        guard let cases = recording.caseNames, !cases.contains(name) else { return [name] }
        if name.hasPrefix("_") {
            let property = String(name.dropFirst())
            if cases.contains(property) { return [recording.keys[property] ?? property] }
        }
        // Every key named after a property is that property's: a property with none is not
        // encoded (left out of `CodingKeys`), and a change of it fits wherever it is put.
        guard Self.propertyType(name, of: type) != nil,
            cases.contains(where: { Self.propertyType($0, of: type) == nil }),
            !misses.ownNames.withLock({ $0.contains(TypeStep(type: ObjectIdentifier(type), name: name)) })
        else { return [name] }
        return nil
    }

    /// The property a stored path's `name` is in today's model: the new name where the type
    /// declares `name` renamed in its ``Versionable/propertyEvolution``, as the model's own
    /// replay reads it; otherwise `name`.
    package func currentName(of name: String) -> String {
        (type as? any Versionable.Type)?.propertyEvolution.currentName(of: name) ?? name
    }

    /// The name the property `name` had before a rename its type declares, which JSON an
    /// earlier model wrote holds as its key; `nil` when none is declared.
    func formerName(of name: String) -> String? {
        (type as? any Versionable.Type)?.propertyEvolution.storedName(of: name)
    }

    /// Whether the model reads a value of its own for the property `name` here where the JSON
    /// lacks its key: the type is known and has no such property (a stored change of one
    /// removed or renamed since), or has it and it is not optional (its encoding always writes
    /// it, so JSON lacking it was written without it, and the model read its defaults).
    func readsOwnValue(whereAbsent name: String) -> Bool {
        guard let type else { return false }
        guard let property = Self.propertyType(name, of: type) else { return true }
        return ContainedTypes.unwrapped(property) == property
    }

    /// Whether the type here is known and has no property `name` (removed, or moved, since).
    func lacksProperty(_ name: String) -> Bool {
        guard let type else { return false }
        return Self.propertyType(name, of: type) == nil
    }

    /// Where the type here reads the key `name` at `place` below it (property names), a key no
    /// property there has: `nil` when its decoding never reads it
    /// (``EvolvingDecoding/mayRead(_:at:decoding:template:decoder:)``); `.here` when decoding
    /// `object`, the stored JSON here, asks for it; `.elsewhere` when it may read it from an
    /// earlier form but not from `object` (today's form, where a change of it cannot show).
    func reads(_ name: String, at place: [String], in object: CodedNode, decoder: JSONDecoder)
        -> FormerKeyRead?
    {
        guard let type, case .object = object,
            EvolvingDecoding.mayRead(
                name, at: place, decoding: type, template: { object.jsonData }, decoder: decoder)
        else { return nil }
        let asked = EvolvingDecoding.asks(
            name, at: place, decoding: type, object: object.foundationObject, decoder: decoder)
        return asked ? .here : .elsewhere
    }

    /// Whether a form of the stored JSON reads a key a type may read from an earlier form.
    enum FormerKeyRead {
        case here
        case elsewhere
    }

    /// Whether the type declares a conversion of the property `name` from an old type: a value
    /// stored under its old name is always converted when read.
    func convertsValues(of name: String) -> Bool {
        (type as? any Versionable.Type)?.propertyEvolution.conversion(for: name) != nil
    }

    /// The place of the member stored under the JSON key `key` here, `object` being the stored
    /// JSON at this place: the property whose key it is (its own name, or the one its type's
    /// `CodingKeys` give), or where none is known, the property named `key`.
    func member(underKey key: String, in object: CodedNode, decoder: JSONDecoder) -> CodingKeyTree {
        guard let type,
            let recording = Self.ownRecording(of: type, in: object, decoder: decoder, misses: misses),
            let name = recording.keys.first(where: { $0.value == key })?.key
        else { return self[.property(key)] }
        return self[.property(name)]
    }

    /// The JSON key of the id of `array`'s elements, this being their place: `"id"` unless the
    /// elements' `CodingKeys` say otherwise (read from the first one), or their own
    /// `encode(to:)` stores it under a case of another name (``learnIDKey(in:decoder:)``).
    func idKey(ofElementsIn array: [CodedNode], decoder: JSONDecoder) -> String {
        guard let first = array.first else { return "id" }
        if let key = key(of: "id", in: first, decoder: decoder) { return key }
        return learnIDKey(in: array, decoder: decoder) ?? "id"
    }

    /// Finds the key an element type whose keys do not show it (an `Item` storing its `id`
    /// under `case ident`) stores its id under: the one key of each of `array`'s first
    /// elements that holds the id it decodes to, as records encode it. It is kept for the
    /// type, and returned; `nil` when the elements are not `Identifiable` or do not decode, or
    /// no one key holds their ids. Until 2026-11 `"id"` was looked up, which such elements
    /// lack: a change inside one did not redo on the stored JSON, and the history did not open
    /// after an app update.
    private func learnIDKey(in array: [CodedNode], decoder: JSONDecoder) -> String? {
        guard let type = type as? any (Decodable & Identifiable).Type else { return nil }
        func learn<T: Decodable & Identifiable>(_: T.Type) -> String? {
            let encoder = ChangeRecord.makeEncoder()
            var candidates: Set<String>?
            for element in array.prefix(16) {
                guard case .object(let members) = element,
                    let value = try? decoder.decode(T.self, from: element.jsonData),
                    let id = value.id as? any Encodable,
                    let encoded = (try? encoder.encode(id)).flatMap(CodedNode.parsing)
                else { return nil }
                // A `nil` id is left out of the JSON: it shows no key.
                if encoded == .null { continue }
                let holding = Set(members.compactMap { $0.value == encoded ? $0.key : nil })
                candidates = candidates?.intersection(holding) ?? holding
                if candidates?.count ?? 0 <= 1 { break }
            }
            guard let candidates, candidates.count == 1, let key = candidates.first else { return nil }
            Self.keep([key], for: "id", of: T.self)
            return key
        }
        return learn(type)
    }

    /// Finds the JSON keys of the property `name` here, which ``keyPath(of:in:decoder:)`` does
    /// not know, from a change of it: `object`, the stored JSON at this place, is decoded as
    /// the model's type, `record` (its path from here) is applied to that value, and both are
    /// encoded. The property lies where the two differ in one key, level by level, down to the
    /// one that holds the property's own JSON (`"name"`, or `"meta"` then `"author"` for a
    /// nested container). No key differs: the model does not encode the property (a `draft`
    /// its `encode(to:)` leaves out), and its own name serves, as it does when the decoded
    /// value is not at the side the change expects. The keys are kept for the type, and
    /// returned; `nil` when the type here is not a `Versionable` one, the JSON does not decode
    /// as it, the change does not read as the type's, or no one place holds the property's
    /// JSON (stored in two places, or transformed: a date stored as its year).
    ///
    /// - Parameters:
    ///   - name: The property.
    ///   - object: The stored JSON at this place.
    ///   - record: A change at or inside the property, its path starting here.
    ///   - inverted: Whether it is applied toward its new side, as a redo.
    ///   - decoder: Reads `object` and the record's patch.
    func learnKeyPath(
        of name: String, in object: CodedNode, from record: ChangeRecord, inverted: Bool, decoder: JSONDecoder
    ) -> [String]? {
        guard let type = type as? any (Versionable & Codable).Type else { return nil }
        func learn<T: Versionable & Codable>(_: T.Type) -> [String]? {
            let encoder = ChangeRecord.makeEncoder()
            guard let before = try? decoder.decode(T.self, from: object.jsonData),
                let reversion = try? Reversion<T>(
                    records: [record], resolvingAgainst: before, inverted: inverted, decoder: decoder)
            else { return nil }
            let after: T
            do {
                after = try reversion.reverted(before)
            } catch .wrongVersion {
                // The value the model decodes does not hold the side the change expects: the
                // model does not encode the property (the default it decodes is not what was
                // stored), and its change fits under its name, as above; kept for this root
                // only, as the store could be at fault.
                misses.ownNames.withLock {
                    _ = $0.insert(TypeStep(type: ObjectIdentifier(T.self), name: name))
                }
                return [name]
            } catch {
                return nil
            }
            guard var old = (try? encoder.encode(before)).flatMap(CodedNode.parsing),
                var new = (try? encoder.encode(after)).flatMap(CodedNode.parsing)
            else { return nil }
            // The property's own JSON in the value changed, as the same encoder writes it.
            let own = Mirror(reflecting: after).children.first { $0.label == name || $0.label == "_" + name }
                .flatMap { ($0.value as? any Encodable).flatMap { try? encoder.encode($0) } }
                .flatMap(CodedNode.parsing)
            var path: [String] = []
            while case .object(let oldMembers) = old, case .object(let newMembers) = new {
                let changed = Set(oldMembers.keys).union(newMembers.keys).filter {
                    oldMembers[$0] != newMembers[$0]
                }
                if changed.isEmpty, path.isEmpty {
                    // No key changed: not encoded, as above.
                    Self.keep([name], for: name, of: T.self)
                    return [name]
                }
                guard changed.count == 1, let key = changed.first, let own else { return nil }
                path.append(key)
                (old, new) = (oldMembers[key] ?? .null, newMembers[key] ?? .null)
                guard new != own else {
                    Self.keep(path, for: name, of: T.self)
                    return path
                }
            }
            return nil
        }
        return learn(type)
    }

    /// Keeps `path`, the keys learned to lead to the property `name` of `type`, with what its
    /// encoding showed (``keyPath(of:in:decoder:)`` reads them there): one key beside those its
    /// `CodingKeys` give, more apart.
    private static func keep(_ path: [String], for name: String, of type: Any.Type) {
        recordings.withLock { recordings in
            if path.count == 1 {
                recordings[ObjectIdentifier(type)]?.keys[name] = path[0]
            } else {
                recordings[ObjectIdentifier(type)]?.paths[name] = path
            }
        }
    }

    /// The place a path component leads to: a property's, or an element's for an index, a
    /// dictionary key or an element id.
    package subscript(component: PathComponent) -> CodingKeyTree {
        guard let type else { return self }
        switch component {
        case .property(let name):
            return CodingKeyTree(type: Self.propertyType(name, of: type), misses: misses)
        case .index, .key, .id:
            return CodingKeyTree(type: ContainedTypes.elementType(of: type), misses: misses)
        }
    }

    /// The name of `key`'s enum case (`CodingKey`'s `description` shows its string value, not
    /// the case): the property synthesized `Codable` decodes from that key. `nil` when `key` is
    /// not an enum case, or its type carries no reflection metadata.
    static func caseName(of key: some CodingKey) -> String? {
        _enumCaseName(key).map { String(cString: $0) }
    }

    // MARK: - Types by reflection

    /// The type of `type`'s stored property `name` (an optional's wrapped type), or `nil`.
    static func propertyType(_ name: String, of type: Any.Type) -> Any.Type? {
        let type = ContainedTypes.unwrapped(type)
        let key = TypeStep(type: ObjectIdentifier(type), name: name)
        if let found = propertyTypes.withLock({ $0[key] }) { return found }
        var found: Any.Type?
        // `.ignoreUnknown` (1 << 1), and `.classType` (1 << 0) for a class: the standard
        // library's static options are `var`s, which strict concurrency refuses to read.
        let options = _EachFieldOptions(rawValue: type is AnyClass ? 0b11 : 0b10)
        ContainedTypes.forEachField(of: type, options: options) { field, _, fieldType in
            let label = String(cString: field)
            // A property wrapper's storage is `_name`.
            if label == name || label == "_" + name { found = ContainedTypes.unwrapped(fieldType) }
            return found == nil
        }
        if let found { propertyTypes.withLock { $0[key] = found } }
        return found
    }

    /// What encoding a value of `type` shows of its keys: known already, or read from `object`
    /// decoded as it; `nil` when it does not decode, or did not before for `misses`' root.
    private static func ownRecording(
        of type: Any.Type, in object: CodedNode, decoder: JSONDecoder, misses: Misses
    ) -> KeyRecording? {
        let id = ObjectIdentifier(type)
        if let known = recordings.withLock({ $0[id] }) { return known }
        // Tried once per root: a success is kept for every root, below.
        guard let decodable = type as? any Decodable.Type, misses.types.withLock({ $0.insert(id).inserted })
        else { return nil }
        let json = object.jsonData
        func read<T: Decodable>(_: T.Type) -> KeyRecording? {
            (try? decoder.decode(T.self, from: json)).flatMap { recording(of: $0) }
        }
        return read(decodable)
    }
}

private final class Misses: Sendable {
    let types = Locked<Set<ObjectIdentifier>>([])
    /// The properties found to be stored under their own names, or not at all, from a change
    /// the model's value did not fit (``CodingKeyTree/learnKeyPath(of:in:from:inverted:decoder:)``).
    let ownNames = Locked<Set<TypeStep>>([])
}

/// A type and one of its properties, as the cache of property types keys them.
private struct TypeStep: Hashable {
    let type: ObjectIdentifier
    let name: String
}

private let propertyTypes = Locked<[TypeStep: Any.Type]>([:])

/// The runtime's name for an enum value's case, as `Mirror` and `print` read it: exported by
/// the Swift runtime on every platform (the standard library's own `_getEnumCaseName` binds
/// it the same way). It returns `nil` for a value that is not an enum, or whose type has no
/// reflection metadata. `CodingKeyTreeTests` pins it.
@_silgen_name("swift_EnumCaseName")
private func _enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?

// MARK: - One type's own keys, from a value

extension CodingKeyTree {
    /// The JSON keys `value`'s type encodes its own properties under, by property name, where
    /// they differ from the names: read once per type by encoding `value` into a recorder that
    /// keeps the keys of its first level and nothing else. Synthesized `Codable` hands every
    /// property to the container, an optional to `encodeIfPresent` whether `nil` or not: every
    /// key of the type is seen, whatever the value holds.
    static func ownKeys<Value>(of value: Value) -> [String: String] {
        recording(of: value)?.keys ?? [:]
    }

    /// Whether `value`'s type encodes itself as a JSON object whose keys are cases of its
    /// `CodingKeys` naming its stored properties, as synthesized `Codable` does (and custom
    /// keys do): then a stored path through those properties leads where the JSON holds them.
    /// Read once per type, from `value`; `false` for a type that encodes itself as an array or
    /// a single value (`CGPoint`, `Duration`), or under keys of its own making.
    static func encodesAsObject<Value>(_ value: Value) -> Bool {
        guard let recording = recording(of: value) else { return false }
        if let known = recording.namesProperties { return known }
        let properties = FieldTable<Value>.shared.names.values
        let namesProperties = recording.caseNames?.allSatisfy(properties.contains) ?? false
        recordings.withLock { $0[ObjectIdentifier(Value.self)]?.namesProperties = namesProperties }
        return namesProperties
    }

    /// What encoding `value` into a ``KeyRecorder`` showed of its type: recorded once per type,
    /// `nil` for a type that is not `Encodable`.
    private static func recording<Value>(of value: Value) -> KeyRecording? {
        let type = ObjectIdentifier(Value.self)
        if let recording = recordings.withLock({ $0[type] }) { return recording }
        guard let encodable = value as? any Encodable else { return nil }
        let recorder = KeyRecorder()
        let encoded = (try? encodable.encode(to: recorder)) != nil
        let recording = KeyRecording(
            keys: recorder.keys,
            caseNames: encoded && recorder.firstForm == .keyed && !recorder.sawOtherKey
                ? recorder.caseNames : nil)
        recordings.withLock { $0[type] = recording }
        return recording
    }
}

/// What encoding one value of a type showed: the keys it encodes its properties under where
/// they differ from their names, and whether it encodes as an object of `CodingKeys` cases.
private struct KeyRecording {
    var keys: [String: String]
    /// The keys leading to properties stored in nested containers, as learned from changes.
    var paths: [String: [String]] = [:]
    /// The case names of the keys, when the type encodes as an object under enum cases only.
    var caseNames: Set<String>?
    /// Whether those cases all name stored properties of the type, once asked.
    var namesProperties: Bool?
}

private let recordings = Locked<[ObjectIdentifier: KeyRecording]>([:])

/// An encoder that keeps the keys its first keyed container is given, and nothing else.
private final class KeyRecorder: Encoder {
    enum Form { case keyed, unkeyed, single }

    var keys: [String: String] = [:]
    /// The case names of every key the first keyed container was given.
    var caseNames: Set<String> = []
    /// Whether that container was given a key that is not an enum case.
    var sawOtherKey = false
    /// The kind of the first container asked for: the value's own.
    var firstForm: Form?
    /// Whether a keyed container was made: only the first (the value's own) is read.
    var madeContainer = false
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        defer { madeContainer = true }
        if firstForm == nil { firstForm = .keyed }
        return KeyedEncodingContainer(KeyedRecorder<Key>(recorder: madeContainer ? nil : self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if firstForm == nil { firstForm = .unkeyed }
        return UnkeyedRecorder()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        if firstForm == nil { firstForm = .single }
        return SingleRecorder()
    }
}

private struct KeyedRecorder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let recorder: KeyRecorder?
    var codingPath: [any CodingKey] { [] }

    private func note(_ key: Key) {
        guard let recorder else { return }
        guard let name = CodingKeyTree.caseName(of: key) else {
            recorder.sawOtherKey = true
            return
        }
        recorder.caseNames.insert(name)
        if name != key.stringValue { recorder.keys[name] = key.stringValue }
    }

    mutating func encodeNil(forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: String, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { note(key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { note(key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { note(key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { note(key) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        note(key)
        return KeyedEncodingContainer(KeyedRecorder<NestedKey>(recorder: nil))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        note(key)
        return UnkeyedRecorder()
    }

    mutating func superEncoder() -> any Encoder { KeyRecorder() }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        note(key)
        return KeyRecorder()
    }
}

private struct UnkeyedRecorder: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    private(set) var count = 0

    mutating func encodeNil() throws { count += 1 }
    mutating func encode(_ value: Bool) throws { count += 1 }
    mutating func encode(_ value: String) throws { count += 1 }
    mutating func encode(_ value: Double) throws { count += 1 }
    mutating func encode(_ value: Float) throws { count += 1 }
    mutating func encode(_ value: Int) throws { count += 1 }
    mutating func encode(_ value: Int8) throws { count += 1 }
    mutating func encode(_ value: Int16) throws { count += 1 }
    mutating func encode(_ value: Int32) throws { count += 1 }
    mutating func encode(_ value: Int64) throws { count += 1 }
    mutating func encode(_ value: UInt) throws { count += 1 }
    mutating func encode(_ value: UInt8) throws { count += 1 }
    mutating func encode(_ value: UInt16) throws { count += 1 }
    mutating func encode(_ value: UInt32) throws { count += 1 }
    mutating func encode(_ value: UInt64) throws { count += 1 }
    mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        count += 1
        return KeyedEncodingContainer(KeyedRecorder<NestedKey>(recorder: nil))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        count += 1
        return UnkeyedRecorder()
    }

    mutating func superEncoder() -> any Encoder {
        count += 1
        return KeyRecorder()
    }
}

private struct SingleRecorder: SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws {}
    mutating func encode(_ value: String) throws {}
    mutating func encode(_ value: Double) throws {}
    mutating func encode(_ value: Float) throws {}
    mutating func encode(_ value: Int) throws {}
    mutating func encode(_ value: Int8) throws {}
    mutating func encode(_ value: Int16) throws {}
    mutating func encode(_ value: Int32) throws {}
    mutating func encode(_ value: Int64) throws {}
    mutating func encode(_ value: UInt) throws {}
    mutating func encode(_ value: UInt8) throws {}
    mutating func encode(_ value: UInt16) throws {}
    mutating func encode(_ value: UInt32) throws {}
    mutating func encode(_ value: UInt64) throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
}
