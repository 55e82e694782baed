import Foundation

/// The JSON keys a model decodes its properties from, where a type's `CodingKeys` give a
/// property a key other than its name — read from the type, at each place in a value a stored
/// path can reach.
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
/// this tree, and a stored path naming a property the model no longer has but a key it still
/// decodes (a property renamed, its key kept by `CodingKeys`) is read as that property.
///
/// The tree is read by decoding the type from a probe that hands out placeholder values (`0`,
/// `""`, an enum's first case, one element per collection) and notes each key asked for: a
/// key's property is the name of its `CodingKeys` case, as synthesized `Codable` requires.
/// Keys that are not an enum's (a dictionary's, a type's own struct) map nothing: they are
/// taken as they are. A type that refuses a placeholder (it validates and throws) keeps the
/// keys it asked for before; one inside itself (a tree's children) is entered once.
package struct CodingKeyTree: Equatable, Sendable {
    /// One step below a place: a property, by name, or any element of a collection (an array's,
    /// a set's, a dictionary's values).
    package enum Step: Hashable, Sendable {
        case property(String)
        case element
    }

    /// The JSON key of each property whose key is not its name, by property name.
    package private(set) var keys: [String: String] = [:]
    /// The places below, where some key differs.
    package private(set) var children: [Step: CodingKeyTree] = [:]

    /// A tree that maps nothing: every property is its own key.
    package init() {}

    /// The keys `type` decodes from, at every place below it (read once per type).
    package init(for type: any Decodable.Type) {
        let id = ObjectIdentifier(type)
        if let tree = treesByType.withLock({ $0[id] }) {
            self = tree
            return
        }
        let probe = KeyProbe(decoding: [id])
        _ = try? type.init(from: probe)
        self = probe.tree
        treesByType.withLock { [tree = self] in $0[id] = tree }
    }

    /// Whether every property here and below is its own key.
    package var isEmpty: Bool { keys.isEmpty && children.isEmpty }

    /// The JSON key of the property `name`.
    package func key(of name: String) -> String { keys[name] ?? name }

    /// The tree one step below (an empty one where nothing differs).
    package subscript(step: Step) -> CodingKeyTree { children[step] ?? CodingKeyTree() }

    /// The tree at the place a path component leads to: a property's, or an element's for an
    /// index, a dictionary key or an element id.
    package subscript(component: PathComponent) -> CodingKeyTree {
        switch component {
        case .property(let name): self[Step.property(name)]
        case .index, .key, .id: self[Step.element]
        }
    }

    fileprivate mutating func merge(_ other: CodingKeyTree, at step: Step? = nil) {
        guard !other.isEmpty else { return }
        guard let step else {
            keys.merge(other.keys) { mine, _ in mine }
            for (step, tree) in other.children { merge(tree, at: step) }
            return
        }
        children[step, default: CodingKeyTree()].merge(other)
    }

    /// Notes `key`'s JSON key under its property's name, and returns the step below it.
    fileprivate mutating func note(_ key: some CodingKey) -> Step {
        guard let name = Self.caseName(of: key) else { return .element }
        if name != key.stringValue { keys[name] = key.stringValue }
        return .property(name)
    }

    /// The name of `key`'s enum case (`CodingKey`'s `description` shows its string value, not
    /// the case): the property synthesized `Codable` decodes from that key. `nil` when `key` is
    /// not an enum case, or its type carries no reflection metadata.
    static func caseName(of key: some CodingKey) -> String? {
        _enumCaseName(key).map { String(cString: $0) }
    }

    /// The first case of an enum with no payloads (one with raw values, a `CodingKeys`), or
    /// `nil`: a `CaseIterable` one's first, else tag 0 — the first declared case, in Swift's
    /// layout of an enum with no payloads (one byte at most) — checked to be an enum case by the
    /// runtime (a one-byte struct is all zeros, a value of its own, and not an enum: `nil`).
    static func firstCase<T>(of _: T.Type) -> T? {
        func first<C: CaseIterable>(_: C.Type) -> Any? { C.allCases.first }
        if let iterable = T.self as? any CaseIterable.Type { return first(iterable) as? T }
        guard MemoryLayout<T>.size <= 1 else { return nil }
        let value = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { byte in
            byte.initialize(repeating: 0)
            return UnsafeRawPointer(byte.baseAddress!).load(as: T.self)
        }
        return _enumCaseName(value) == nil ? nil : value
    }
}

/// The runtime's name for an enum value's case, as `Mirror` and `print` read it: exported by
/// the Swift runtime on every platform (the standard library's own `_getEnumCaseName` binds
/// it the same way). It returns `nil` for a value that is not an enum, or whose type has no
/// reflection metadata. `CodingKeyTreeTests` pins it.
@_silgen_name("swift_EnumCaseName")
private func _enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?

private let treesByType = Locked<[ObjectIdentifier: CodingKeyTree]>([:])

// MARK: - The probe

/// Why the probe stops a decode: a type inside itself (a tree's children), which would
/// otherwise be probed forever, or a placeholder the type cannot take.
private struct ProbeStop: Error {}

/// A decoder that hands out placeholders (`0`, `""`, `false`, one element per array, `nil`
/// for every optional after probing its type) and notes every key it is asked for.
private final class KeyProbe: Decoder {
    /// What this probe's containers noted.
    var own = CodingKeyTree()
    /// Probes below, read at the end (containers are used after they are made).
    var below: [(CodingKeyTree.Step?, KeyProbe)] = []
    /// The types being decoded on the way here: one met again is not entered.
    let decoding: Set<ObjectIdentifier>
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]

    init(decoding: Set<ObjectIdentifier>) { self.decoding = decoding }

    var tree: CodingKeyTree {
        var tree = own
        for (step, probe) in below { tree.merge(probe.tree, at: step) }
        return tree
    }

    /// A probe for what lies at `step` (`nil`: here).
    func child(at step: CodingKeyTree.Step?, decoding type: Any.Type? = nil) -> KeyProbe {
        let probe = KeyProbe(decoding: type.map { decoding.union([ObjectIdentifier($0)]) } ?? decoding)
        below.append((step, probe))
        return probe
    }

    /// A placeholder `T`, decoded from a probe at `step` (`nil`: here).
    func decode<T: Decodable>(_: T.Type, at step: CodingKeyTree.Step?) throws -> T {
        if let leaf = Self.placeholder(T.self) { return leaf }
        guard !decoding.contains(ObjectIdentifier(T.self)), decoding.count < 64 else { throw ProbeStop() }
        do {
            return try T(from: child(at: step, decoding: T.self))
        } catch {
            // What cannot take a placeholder — an enum with raw values, a collection whose
            // element cannot (an enum with payloads, which needs a case's key) — stands in by its
            // first case or empty, so that the type holding it goes on to its other keys.
            guard let stand = CodingKeyTree.firstCase(of: T.self) ?? Self.empty(T.self) else { throw error }
            return stand
        }
    }

    /// An empty collection of type `T` (an array, a set, a dictionary), or `nil`.
    static func empty<T>(_: T.Type) -> T? {
        func array<A: ExpressibleByArrayLiteral>(_: A.Type) -> Any { [] as A }
        func dictionary<D: ExpressibleByDictionaryLiteral>(_: D.Type) -> Any { [:] as D }
        if let type = T.self as? any ExpressibleByArrayLiteral.Type { return array(type) as? T }
        if let type = T.self as? any ExpressibleByDictionaryLiteral.Type { return dictionary(type) as? T }
        return nil
    }

    /// A placeholder for a type with no keys (`Data` and `Date` too, which would otherwise
    /// ask for bytes and numbers), or `nil`.
    static func placeholder<T>(_: T.Type) -> T? {
        let value: Any? =
            switch T.self {
            case is String.Type: ""
            case is Bool.Type: false
            case is Int.Type: 0
            case is Int8.Type: 0 as Int8
            case is Int16.Type: 0 as Int16
            case is Int32.Type: 0 as Int32
            case is Int64.Type: 0 as Int64
            case is UInt.Type: 0 as UInt
            case is UInt8.Type: 0 as UInt8
            case is UInt16.Type: 0 as UInt16
            case is UInt32.Type: 0 as UInt32
            case is UInt64.Type: 0 as UInt64
            case is Double.Type: 0.0
            case is Float.Type: 0 as Float
            case is Data.Type: Data()
            case is Date.Type: Date(timeIntervalSinceReferenceDate: 0)
            case is URL.Type: URL(fileURLWithPath: "/")
            case is Decimal.Type: Decimal()
            default: nil
            }
        // Not `value as? T` alone: `nil` would cast to an optional `T`, and end the probe there.
        guard let value else { return nil }
        return value as? T
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedProbe<Key>(probe: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { UnkeyedProbe(probe: self) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleProbe(probe: self) }
}

private struct KeyedProbe<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: KeyProbe
    var codingPath: [any CodingKey] { [] }

    /// One key, so that what lies under it is probed: a dictionary's container offers the empty
    /// key; an enum with payloads, whose container must hold one of its cases' keys, its first
    /// case's (a type's `CodingKeys` have no empty key).
    var allKeys: [Key] { [Key(stringValue: "") ?? CodingKeyTree.firstCase(of: Key.self)].compactMap { $0 } }

    func contains(_ key: Key) -> Bool {
        _ = probe.own.note(key)
        return true
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        _ = probe.own.note(key)
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(type, key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(type, key) }

    private func value<T: Decodable>(_: T.Type, _ key: Key) throws -> T {
        try probe.decode(T.self, at: probe.own.note(key))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        // The type is probed for its keys; the optional is absent.
        _ = try? probe.decode(T.self, at: probe.own.note(key))
        return nil
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        KeyedDecodingContainer(KeyedProbe<NestedKey>(probe: probe.child(at: probe.own.note(key))))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        UnkeyedProbe(probe: probe.child(at: probe.own.note(key)))
    }

    func superDecoder() throws -> any Decoder { probe.child(at: nil) }

    func superDecoder(forKey key: Key) throws -> any Decoder { probe.child(at: probe.own.note(key)) }
}

/// An array of one element, so that the element type is probed.
private struct UnkeyedProbe: UnkeyedDecodingContainer {
    let probe: KeyProbe
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 1 }
    private(set) var currentIndex = 0
    var isAtEnd: Bool { currentIndex > 0 }

    init(probe: KeyProbe) { self.probe = probe }

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try element(type) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try element(type) }
    mutating func decode(_ type: String.Type) throws -> String { try element(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try element(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try element(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try element(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element(type) }

    private mutating func element<T: Decodable>(_: T.Type) throws -> T {
        guard !isAtEnd else { throw ProbeStop() }
        currentIndex += 1
        return try probe.decode(T.self, at: .element)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        currentIndex += 1
        return KeyedDecodingContainer(KeyedProbe<NestedKey>(probe: probe.child(at: .element)))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        currentIndex += 1
        return UnkeyedProbe(probe: probe.child(at: .element))
    }

    mutating func superDecoder() throws -> any Decoder {
        currentIndex += 1
        return probe.child(at: .element)
    }
}

private struct SingleProbe: SingleValueDecodingContainer {
    let probe: KeyProbe
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try inner(type) }
    func decode(_ type: Bool.Type) throws -> Bool { try inner(type) }
    func decode(_ type: String.Type) throws -> String { try inner(type) }
    func decode(_ type: Double.Type) throws -> Double { try inner(type) }
    func decode(_ type: Float.Type) throws -> Float { try inner(type) }
    func decode(_ type: Int.Type) throws -> Int { try inner(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try inner(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try inner(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try inner(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try inner(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try inner(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try inner(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try inner(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try inner(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try inner(type) }

    /// A value that decodes from one other value (an optional, a wrapper) is that value.
    private func inner<T: Decodable>(_: T.Type) throws -> T { try probe.decode(T.self, at: nil) }
}

// MARK: - One type's own keys, from a value

extension CodingKeyTree {
    /// The JSON keys `value`'s type encodes its own properties under, by property name, where
    /// they differ from the names: read once per type by encoding `value` into a recorder that
    /// keeps the keys of its first level and nothing else. Encoding a value never stops at a
    /// placeholder, and synthesized `Codable` hands every optional to `encodeIfPresent`, `nil`
    /// or not: every key of the type is seen.
    static func ownKeys<Value>(of value: Value) -> [String: String] {
        let type = ObjectIdentifier(Value.self)
        if let keys = ownKeysByType.withLock({ $0[type] }) { return keys }
        guard let encodable = value as? any Encodable else { return [:] }
        let recorder = KeyRecorder()
        try? encodable.encode(to: recorder)
        ownKeysByType.withLock { [keys = recorder.keys] in $0[type] = keys }
        return recorder.keys
    }
}

private let ownKeysByType = Locked<[ObjectIdentifier: [String: String]]>([:])

/// An encoder that keeps the keys its first keyed container is given, and nothing else.
private final class KeyRecorder: Encoder {
    var keys: [String: String] = [:]
    /// Whether a keyed container was made: only the first (the value's own) is read.
    var madeContainer = false
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        defer { madeContainer = true }
        return KeyedEncodingContainer(KeyedRecorder<Key>(recorder: madeContainer ? nil : self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedRecorder() }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleRecorder() }
}

private struct KeyedRecorder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let recorder: KeyRecorder?
    var codingPath: [any CodingKey] { [] }

    private func note(_ key: Key) {
        guard let recorder, let name = CodingKeyTree.caseName(of: key), name != key.stringValue else {
            return
        }
        recorder.keys[name] = key.stringValue
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
