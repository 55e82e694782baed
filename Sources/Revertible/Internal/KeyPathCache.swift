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
        /// `Optional`'s `versionedWrapped`.
        case optionalWrapped
    }

    private struct Key: Hashable {
        let root: ObjectIdentifier
        let slot: Slot
    }

    private static let paths = Locked<[Key: AnyKeyPath]>([:])

    /// The key path in `slot` of `root`, made by `make` the first time it is asked for.
    ///
    /// A slot always holds key paths of one type for a given root, so the one found is of the
    /// type asked for.
    static func path<Path: AnyKeyPath>(_ slot: Slot, of root: Any.Type, _ make: () -> Path) -> Path {
        let key = Key(root: ObjectIdentifier(root), slot: slot)
        if let path = paths.withLock({ $0[key] }) {
            return unsafeDowncast(path, to: Path.self)
        }
        let path = make()
        paths.withLock { $0[key] = path }
        return path
    }

    /// `\Root.self`.
    static func identity<Root>(_: Root.Type = Root.self) -> WritableKeyPath<Root, Root> {
        path(.identity, of: Root.self) { () -> WritableKeyPath<Root, Root> in \Root.self }
    }
}
