/// Key paths into generic types, built once per type.
///
/// A key path literal whose root is a generic parameter (`\Root.self`,
/// `\Optional<Wrapped>.isNone`) is built at run time every time it is evaluated when the code
/// is not specialized for that type, and a library's code called from an app is not: some
/// 16,000 instructions each time, more than diffing a small struct (diffing a `[String]` with
/// one element changed spent half its time building two of them). Here each is built once per
/// type, then found by a lookup.
enum KeyPathCache {
    /// Which key path of a type.
    enum Slot {
        /// `\Root.self`.
        case identity
        /// `Optional`'s `isNone`.
        case optionalIsNone
        /// `Optional`'s wrapped value, `\Wrapped?.!`.
        case optionalWrapped
        /// The key paths a ``VersioningController`` tells its observers about.
        case observedByController
        /// A ``WholeElement``'s value, when its element is tracked field by field.
        case wholeElementValue
    }

    /// A value held by reference, so that the cache can hold it.
    final class Box<Value>: @unchecked Sendable {
        // Sound because it is never changed after `init`, and only key paths are put in one.
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private struct Key: Hashable {
        let root: ObjectIdentifier
        let slot: Slot
    }

    private static let objects = Locked<[Key: AnyObject]>([:])

    /// The object in `slot` of `root` (a key path, or a box of them), made by `make` the first
    /// time it is asked for.
    ///
    /// A slot always holds objects of one type for a given root, so the one found is of the
    /// type asked for.
    static func object<Object: AnyObject>(_ slot: Slot, of root: Any.Type, _ make: () -> Object) -> Object {
        let key = Key(root: ObjectIdentifier(root), slot: slot)
        if let object = objects.withLock({ $0[key] }) {
            return unsafeDowncast(object, to: Object.self)
        }
        let object = make()
        objects.withLock { $0[key] = object }
        return object
    }

    /// The key path in `slot` of `root`, made by `make` the first time it is asked for.
    static func path<Path: AnyKeyPath>(_ slot: Slot, of root: Any.Type, _ make: () -> Path) -> Path {
        object(slot, of: root, make)
    }

    /// `\Root.self`.
    static func identity<Root>(_: Root.Type = Root.self) -> WritableKeyPath<Root, Root> {
        path(.identity, of: Root.self) { () -> WritableKeyPath<Root, Root> in \Root.self }
    }
}
