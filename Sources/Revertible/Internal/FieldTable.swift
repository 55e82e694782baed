import Foundation
@_spi(Reflection) import Swift

/// The stored properties of a type, read once through the standard library's reflection SPI
/// (`_forEachFieldWithKeyPath`) and cached per type.
///
/// This is what lets a plain struct conform to ``Versionable`` in one line. The SPI is pinned by
/// `FieldTableTests`; explicit ``Versionable/addReversions(into:)`` does not depend on it.
final class FieldTable<Root>: @unchecked Sendable {
    // Sound because every property is a `let` set in `init`, and the registrations only hold
    // key paths, names and byte masks.

    /// Registrations for every tracked stored property, in declaration order.
    let tracked: [any FieldRegistration<Root>]
    /// Stored property names by key path, for `appendReversion(at:)`.
    let names: [AnyKeyPath: String]
    /// The index in `tracked` of each tracked property, by name: resolving a stored path
    /// registers only the property it names.
    let trackedByName: [String: Int]
    /// Where each stored property lies in a `Root` value, by name, when `Root` is a struct:
    /// resolving a stored path, a property registered by hand at another offset is not the one
    /// the path names, and is passed over before its name is looked up.
    let offsetsByName: [String: Int]
    /// Whether reflection found any stored property.
    let hasStoredProperties: Bool
    /// Why `Root`'s stored properties cannot be tracked with no code: `Root` is a class, or the
    /// first `var` whose type is a class, holds instances of one, or is neither ``Versionable``
    /// nor `Equatable` (`nil`: every one can be). Only tracking
    /// with no code (``Reverter/appendStoredPropertyReversions()``) stops on it: a type that
    /// registers its properties by hand, or a leaf such as `String` that a stored path reaches
    /// into, still has its properties' names and offsets read from this table.
    let untrackable: String?
    /// How each tracked field is compared by its bytes (`tracked[i]` by the `i`th check).
    let byteChecks: FieldByteChecks
    /// Whether a `Root` that is not ``Versionable`` can be tracked field by field as if it were
    /// (a plain struct held by a stored property, an array element or a dictionary value): it is
    /// a struct, and every stored property it has is a `var` that can be tracked or a `let` of
    /// an `Equatable` type that holds no class (``constants``). An ignored or untrackable
    /// property could change unseen, so such a struct is replaced whole. Whether its `Codable`
    /// form is an object of its fields is judged from a value.
    let tracksPlainFields: Bool
    /// The `let` properties of a struct tracked field by field: a new value may hold other
    /// values there, which no field's change records, so such a value is replaced whole.
    let constants: [Constant]

    /// A `let` property of `Root`, compared by its bytes, then with `==`.
    struct Constant {
        let bytes: FieldBytes?
        let equal: (Root, Root) -> Bool
    }

    /// Whether every ``constants`` property holds the same value in `old` and `new`.
    func constantsAreEqual(_ old: Root, _ new: Root) -> Bool {
        constants.allSatisfy { constant in
            if let bytes = constant.bytes, bytes.same(old, new) { return true }
            return constant.equal(old, new)
        }
    }

    /// The indices in ``tracked`` of the fields that may differ between `old` and `new`: those
    /// whose bytes differ.
    func changedFields(_ old: Root, _ new: Root) -> [Int] {
        withUnsafeBytes(of: old) { old in
            withUnsafeBytes(of: new) { new in
                guard let a = old.baseAddress, let b = new.baseAddress else { return Array(tracked.indices) }
                return byteChecks.changed(a, b)
            }
        }
    }

    static var shared: FieldTable<Root> {
        let key = ObjectIdentifier(Root.self)
        // The cache holds one table per type, under that type's identifier: the downcast is
        // to the type stored there (`as!` would cost a dynamic cast per diff).
        if let table = fieldTableCache.withLock({ $0[key] }) {
            return unsafeDowncast(table, to: FieldTable<Root>.self)
        }
        let table = FieldTable<Root>()
        fieldTableCache.withLock { $0[key] = table }
        return table
    }

    private init() {
        var tracked: [any FieldRegistration<Root>] = []
        var names: [AnyKeyPath: String] = [:]
        var trackedByName: [String: Int] = [:]
        var offsetsByName: [String: Int] = [:]
        var untrackable = Self.sharedInstanceReason(root: Root.self)
        var constants: [Constant] = []
        var count = 0
        _forEachFieldWithKeyPath(of: Root.self, options: []) { cName, keyPath in
            count += 1
            let name = String(cString: cName)
            names[keyPath] = name
            if !(Root.self is AnyClass) { offsetsByName[name] = MemoryLayout<Root>.offset(of: keyPath) }
            switch Self.registration(name: name, keyPath: keyPath) {
            case .tracked(let registration):
                trackedByName[name] = tracked.count
                tracked.append(registration)
            case .untrackable(let reason): untrackable = untrackable ?? reason
            case .constant(let constant): constants.append(constant)
            case .ignored: break
            }
            return true
        }
        self.untrackable = untrackable
        self.tracked = tracked
        self.names = names
        self.trackedByName = trackedByName
        self.offsetsByName = offsetsByName
        self.hasStoredProperties = count > 0
        self.byteChecks = FieldByteChecks(tracked.map(\.bytes))
        self.constants = constants
        self.tracksPlainFields =
            !(Root.self is AnyClass) && untrackable == nil && !tracked.isEmpty
            && tracked.count + constants.count == count
    }

    /// What tracking a stored property takes.
    private enum Registration {
        case tracked(any FieldRegistration<Root>)
        /// Left out: a `let`, which a plain struct tracked field by field compares (`nil`
        /// when its type is not `Equatable` or holds a class).
        case constant(Constant)
        /// Left out: `@VersionableIgnored`, or a `let` that cannot be compared.
        case ignored
        /// A `var` that cannot be tracked, and why.
        case untrackable(String)
    }

    private static func registration(name: String, keyPath: PartialKeyPath<Root>) -> Registration {
        let valueType = type(of: keyPath).valueType
        if valueType is any VersionableIgnoredMarker.Type { return .ignored }
        // `let` properties come back as read-only key paths: they cannot change.
        guard isWritable(keyPath, valueType) else {
            guard sharedInstanceClass(in: valueType) == nil, let equatable = valueType as? any Equatable.Type
            else { return .ignored }
            return .constant(constant(equatable, keyPath: keyPath))
        }
        if let instanceClass = sharedInstanceClass(in: valueType) {
            let holding =
                instanceClass == valueType
                ? "has type \(valueType), a class" : "holds instances of \(instanceClass), a class"
            return .untrackable(
                """
                Stored property \(Root.self).\(name) \(holding): the versions share each instance, so a \
                change made inside one in place cannot be seen, and would be lost. Make \(instanceClass) \
                a struct; if its instances are never changed once made, conform it to VersionableLeaf; \
                or mark the property @VersionableIgnored, or implement addReversions(into:) for \(Root.self).
                """)
        }
        if let registration = registration(named: name, keyPath: keyPath) { return .tracked(registration) }
        return .untrackable(
            """
            Stored property \(Root.self).\(name) has type \(valueType), which is neither Versionable \
            nor Equatable. Conform it to Versionable (or VersionableLeaf), mark the property \
            @VersionableIgnored, or implement addReversions(into:) for \(Root.self).
            """)
    }

    private static func registration(
        named name: String, keyPath: PartialKeyPath<Root>
    ) -> (any FieldRegistration<Root>)? {
        let valueType = type(of: keyPath).valueType
        // Leaves and collections are registered directly, so that diffing a field costs no
        // child reverter; diffing and resolving use the same registrations, so paths agree.
        if let leaf = valueType as? any VersionableLeaf.Type {
            return leafRegistration(leaf, name: name, keyPath: keyPath)
        }
        if let collection = valueType as? any VersionableCollection.Type {
            return collectionRegistration(collection, name: name, keyPath: keyPath)
        }
        if let versionable = valueType as? any Versionable.Type {
            return versionableRegistration(versionable, name: name, keyPath: keyPath)
        }
        // An array or dictionary of values that are not `Versionable` (with them it is), or an
        // optional one: one by one, each a plain struct's fields or whole.
        if let collection = valueType as? any WholeForm.Type,
            let registration = collection.wholeField(name: name, keyPath: keyPath)
        {
            return registration
        }
        if let optional = valueType as? any OptionalOfWholeForm.Type,
            let registration = optional.wholeField(name: name, keyPath: keyPath)
        {
            return registration
        }
        if let codable = valueType as? any (Codable & Equatable).Type,
            let registration = codableRegistration(codable, name: name, keyPath: keyPath)
                ?? plainStructRegistration(codable, name: name, keyPath: keyPath)
        {
            return registration
        }
        if let equatable = valueType as? any Equatable.Type {
            return overwriteRegistration(equatable, name: name, keyPath: keyPath)
        }
        return nil
    }

    private static func constant<Value: Equatable>(_: Value.Type, keyPath: PartialKeyPath<Root>) -> Constant {
        let keyPath = unsafeDowncast(keyPath, to: KeyPath<Root, Value>.self)
        return Constant(bytes: FieldBytes(keyPath)) { $0[keyPath: keyPath] == $1[keyPath: keyPath] }
    }

    private static func versionableRegistration<Value: Versionable>(
        _: Value.Type, name: String, keyPath: PartialKeyPath<Root>
    ) -> (any FieldRegistration<Root>)? {
        // `let` properties come back as read-only key paths: they cannot change, so skip them.
        guard let keyPath = keyPath as? WritableKeyPath<Root, Value> else { return nil }
        return VersionableField(keyPath: keyPath, component: .property(name), bytes: FieldBytes(keyPath))
    }

    private static func leafRegistration<Value: VersionableLeaf>(
        _: Value.Type, name: String, keyPath: PartialKeyPath<Root>
    ) -> (any FieldRegistration<Root>)? {
        guard let keyPath = keyPath as? WritableKeyPath<Root, Value> else { return nil }
        return LeafField(keyPath: keyPath, component: .property(name), bytes: FieldBytes(keyPath))
    }

    private static func collectionRegistration<Value: VersionableCollection>(
        _: Value.Type, name: String, keyPath: PartialKeyPath<Root>
    ) -> (any FieldRegistration<Root>)? {
        guard let keyPath = keyPath as? WritableKeyPath<Root, Value> else { return nil }
        return CollectionField(keyPath: keyPath, component: .property(name), bytes: FieldBytes(keyPath))
    }

    private static func overwriteRegistration<Value: Equatable>(
        _: Value.Type, name: String, keyPath: PartialKeyPath<Root>
    ) -> (any FieldRegistration<Root>)? {
        guard let keyPath = keyPath as? WritableKeyPath<Root, Value> else { return nil }
        return OverwriteField(keyPath: keyPath, component: .property(name), bytes: FieldBytes(keyPath))
    }

    /// A struct that is `Codable` and `Equatable` but not ``Versionable`` is tracked field by
    /// field, as if it were, when ``tracksPlainFields``; otherwise, when its `Codable` form is
    /// not an object of its fields, and when a new value's `let` differs, it is replaced whole.
    private static func plainStructRegistration<Value: Codable & Equatable>(
        _: Value.Type, name: String, keyPath: PartialKeyPath<Root>
    ) -> (any FieldRegistration<Root>)? {
        guard FieldTable<Value>.shared.tracksPlainFields,
            let keyPath = keyPath as? WritableKeyPath<Root, Value>
        else { return nil }
        return PlainStructField(keyPath: keyPath, component: .property(name), bytes: FieldBytes(keyPath))
    }

    /// An enum (a type without stored properties) that is `Codable` is diffed through its
    /// encoded form even when it is not ``Versionable``: a payload change records only the
    /// changed parts. Structs are tracked field by field, or replaced whole
    /// (`plainStructRegistration`).
    private static func codableRegistration<Value: Codable & Equatable>(
        _: Value.Type, name: String, keyPath: PartialKeyPath<Root>
    ) -> (any FieldRegistration<Root>)? {
        guard !FieldTable<Value>.shared.hasStoredProperties,
            let keyPath = keyPath as? WritableKeyPath<Root, Value>
        else { return nil }
        return CodableField(keyPath: keyPath, component: .property(name), bytes: FieldBytes(keyPath))
    }

    /// The class whose instances a value of `type` would share with its earlier versions: `type`
    /// itself, or the elements of the optional, array, set or dictionary it is. A change made in
    /// place inside such an instance is in every version at once, where no diff can see it. `nil`
    /// for other types, and for a ``VersionableLeaf`` class: adopting it says its instances are
    /// replaced, never changed in place.
    static func sharedInstanceClass(in type: Any.Type) -> Any.Type? {
        let type = ContainedTypes.unwrapped(type)
        if type is any VersionableLeaf.Type { return nil }
        if type is AnyClass { return type }
        return ContainedTypes.elementType(of: type).flatMap(sharedInstanceClass(in:))
    }

    /// Why `root` cannot be tracked with no code when it is a class, or `nil`.
    private static func sharedInstanceReason(root: Any.Type) -> String? {
        guard sharedInstanceClass(in: root) == root else { return nil }
        return """
            \(root) is a class: the versions a controller keeps would share one instance, so a change \
            made in place could not be seen, and would be lost. Make \(root) a struct; if its \
            instances are never changed once made, conform it to VersionableLeaf; or implement \
            addReversions(into:) for it.
            """
    }

    private static func isWritable(_ keyPath: PartialKeyPath<Root>, _ valueType: Any.Type) -> Bool {
        func check<Value>(_: Value.Type) -> Bool { keyPath is WritableKeyPath<Root, Value> }
        return _openExistential(valueType, do: check)
    }

    /// The path component for a registration without an explicit name.
    func component(for keyPath: AnyKeyPath) -> PathComponent? {
        // A stored property's name first: the common case, and `\.self` is never one.
        if let name = names[keyPath] { return .property(name) }
        if keyPath == KeyPathCache.identity(Root.self) { return nil }
        preconditionFailure(
            """
            \(keyPath) is not a stored property of \(Root.self): pass a name with \
            appendReversion(at:named:).
            """)
    }
}

private let fieldTableCache = Locked<[ObjectIdentifier: AnyObject]>([:])

protocol FieldRegistration<Root> {
    associatedtype Root
    func register<R: Reverter<Root>>(into reverter: inout R)
    /// Where the field lies in a `Root` value and which of its bytes matter, when `Root` is a
    /// struct: a field whose bytes are the same in two versions is the same value, and diffing
    /// skips it without reading it through its key path.
    var bytes: FieldBytes? { get }
}

/// The byte comparison of some fields, with their masks laid end to end: comparing two
/// versions reads plain arrays, with no reference counting or generic code per field.
final class FieldByteChecks: @unchecked Sendable {
    // Sound because every property is a `let` set in `init`.
    private let checks: [Check]
    private let words: [UInt64]
    private let tail: [Bool]

    /// Where one field lies (`nil`: it cannot be compared by its bytes), and where its mask lies
    /// in `words` and `tail`.
    private struct Check {
        var offset: Int?
        var words: Range<Int>
        var tail: Range<Int>
    }

    init(_ fields: [FieldBytes?]) {
        var (checks, words, tail) = ([Check](), [UInt64](), [Bool]())
        for field in fields {
            let mask = field?.mask
            checks.append(
                Check(
                    offset: field?.offset, words: words.count..<words.count + (mask?.words.count ?? 0),
                    tail: tail.count..<tail.count + (mask?.tail.count ?? 0)))
            words += mask?.words ?? []
            tail += mask?.tail ?? []
        }
        (self.checks, self.words, self.tail) = (checks, words, tail)
    }

    /// The indices of the fields whose meaningful bytes differ between the values at `a` and
    /// `b` (and of those that cannot be compared by their bytes): a field whose bytes are the
    /// same holds the same value in both.
    func changed(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer) -> [Int] {
        var changed: [Int] = []
        checks.withUnsafeBufferPointer { checks in
            words.withUnsafeBufferPointer { words in
                tail.withUnsafeBufferPointer { tail in
                    for (index, check) in checks.enumerated() {
                        guard let offset = check.offset,
                            MeaningfulBytes.same(
                                a + offset, b + offset, UnsafeBufferPointer(rebasing: words[check.words]),
                                UnsafeBufferPointer(rebasing: tail[check.tail]))
                        else {
                            changed.append(index)
                            continue
                        }
                    }
                }
            }
        }
        return changed
    }
}

/// A stored property's place in its struct, and the mask of its meaningful bytes.
struct FieldBytes {
    let offset: Int
    let mask: MeaningfulBytes

    init?<Root, Value>(_ keyPath: KeyPath<Root, Value>) {
        guard !(Root.self is AnyClass), let offset = MemoryLayout<Root>.offset(of: keyPath) else {
            return nil
        }
        self.offset = offset
        mask = MeaningfulBytes.of(Value.self)
    }

    /// Whether the field's meaningful bytes are the same in `a` and `b`, and so its value.
    func same<Root>(_ a: Root, _ b: Root) -> Bool {
        withUnsafeBytes(of: a) { a in
            withUnsafeBytes(of: b) { b in
                guard let a = a.baseAddress, let b = b.baseAddress else { return true }
                return mask.words.withUnsafeBufferPointer { words in
                    mask.tail.withUnsafeBufferPointer {
                        MeaningfulBytes.same(a + offset, b + offset, words, $0)
                    }
                }
            }
        }
    }
}

struct VersionableField<Root, Value: Versionable>: FieldRegistration {
    let keyPath: WritableKeyPath<Root, Value>
    let component: PathComponent
    let bytes: FieldBytes?

    func register<R: Reverter<Root>>(into reverter: inout R) {
        reverter.appendReversion(at: keyPath, component: component)
    }
}

private struct LeafField<Root, Value: VersionableLeaf>: FieldRegistration {
    let keyPath: WritableKeyPath<Root, Value>
    let component: PathComponent
    let bytes: FieldBytes?

    func register<R: Reverter<Root>>(into reverter: inout R) {
        reverter.appendLeafReversion(at: keyPath, component: component)
    }
}

struct CollectionField<Root, Value: VersionableCollection>: FieldRegistration {
    let keyPath: WritableKeyPath<Root, Value>
    let component: PathComponent
    let bytes: FieldBytes?

    func register<R: Reverter<Root>>(into reverter: inout R) {
        reverter.appendElementReversions(at: keyPath, component: component)
    }
}

/// A struct that is not ``Versionable``, tracked field by field with no code, as one that is:
/// a change inside it records only the changed leaves (`canvas.strokes[id: 7]`), where it
/// recorded the whole struct twice. Diffing and resolving reach it through their own methods;
/// any other reverter replaces it whole.
private struct PlainStructField<Root, Value: Equatable>: FieldRegistration {
    let keyPath: WritableKeyPath<Root, Value>
    let component: PathComponent
    let bytes: FieldBytes?

    func register<R: Reverter<Root>>(into reverter: inout R) {
        if reverter.appendPlainFieldReversions(at: keyPath, component: component) { return }
        reverter.appendOverwriteReversion(at: keyPath, component: component)
    }
}

extension Reverter {
    /// Registers the plain struct at `keyPath` field by field, through the diffing or the
    /// resolving reverter's own method (``PlainStructField``, ``WholeElement``).
    ///
    /// - Returns: `false` when this is another reverter, which the caller registers the struct
    ///   with whole.
    mutating func appendPlainFieldReversions<Value>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) -> Bool {
        if inPlace(
            as: DiffingReverter<Root>.self,
            { $0.appendPlainFieldReversions(at: keyPath, component: component) })
        {
            return true
        }
        return inPlace(
            as: ResolvingReverter<Root>.self,
            { $0.appendPlainFieldReversions(at: keyPath, component: component) })
    }
}

private struct OverwriteField<Root, Value: Equatable>: FieldRegistration {
    let keyPath: WritableKeyPath<Root, Value>
    let component: PathComponent
    let bytes: FieldBytes?

    func register<R: Reverter<Root>>(into reverter: inout R) {
        reverter.appendOverwriteReversion(at: keyPath, component: component)
    }
}

private struct CodableField<Root, Value: Codable & Equatable>: FieldRegistration {
    let keyPath: WritableKeyPath<Root, Value>
    let component: PathComponent
    let bytes: FieldBytes?

    func register<R: Reverter<Root>>(into reverter: inout R) {
        reverter.appendCodableReversion(at: keyPath, component: component)
    }
}

/// A lock-protected value, usable from any thread.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
