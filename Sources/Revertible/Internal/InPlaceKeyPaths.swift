/// Key paths that changes are applied through in place, and read through safely.
///
/// A key path writes through a computed property or a subscript by getting a copy and setting
/// it back: undoing an edit to one of 10,000 items copied all of them (0.1 ms, where the same
/// array held directly took 3 µs). And a key path through `!` stops the process when it meets
/// `nil`, where a reversion must refuse the value. So the library's own key paths of that kind
/// (an optional's wrapped value, the versionable form of a collection of plain elements) are
/// registered here with a read that can fail and a change made through `_modify`, and
/// ``lift(_:through:)`` wraps a change below one in an ``InPlaceNode``.
enum InPlaceKeyPaths {
    /// A registered key path (kept alive, so that its identifier names no other) and its
    /// ``InPlaceAccess``.
    private static let registered = Locked<[ObjectIdentifier: (keyPath: AnyKeyPath, access: Any)]>([:])

    /// Records how to read and change what `keyPath` reaches.
    ///
    /// - Parameters:
    ///   - keyPath: The key path, kept for the life of the process.
    ///   - read: What `keyPath` reaches, or `nil` where it reaches nothing.
    ///   - modify: Runs its second argument on what `keyPath` reaches, in place.
    /// - Returns: `keyPath`.
    static func register<Root, Child>(
        _ keyPath: WritableKeyPath<Root, Child>, read: @escaping (Root) -> Child?,
        modify: @escaping (inout Root, (inout Child) -> Void) -> Void
    ) -> WritableKeyPath<Root, Child> {
        let access = InPlaceAccess(read: read, modify: modify)
        registered.withLock { $0[ObjectIdentifier(keyPath)] = (keyPath, access) }
        return keyPath
    }

    /// `node` applied through `keyPath` in place, or `nil` when `keyPath` was not registered.
    static func node<Root, Child>(_ node: any EditNode<Child>, through keyPath: WritableKeyPath<Root, Child>)
        -> (any EditNode<Root>)?
    {
        // A stored property of a struct, most key paths, is changed in place already (reading
        // its offset costs less than asking for a conformance); and only these roots and
        // children are ever registered: others skip the lookup.
        guard MemoryLayout<Root>.offset(of: keyPath) == nil,
            Child.self is any InPlaceForm.Type || Root.self is any OptionalRoot.Type,
            let access = registered.withLock({ $0[ObjectIdentifier(keyPath)] })?.access
                as? InPlaceAccess<Root, Child>
        else { return nil }
        return InPlaceNode(keyPath: keyPath, access: access, inner: node)
    }
}

/// How to read and change what a registered key path reaches.
struct InPlaceAccess<Root, Child> {
    let read: (Root) -> Child?
    let modify: (inout Root, (inout Child) -> Void) -> Void
}

/// A type whose values are reached through a registered ``InPlaceKeyPaths`` key path.
protocol InPlaceForm {}

/// An optional, whose wrapped value is reached through a registered key path.
private protocol OptionalRoot {}

extension Optional: OptionalRoot {}

/// A change below a registered key path: refused where the key path reaches nothing, applied
/// in place.
struct InPlaceNode<Root, Child>: EditNode {
    let keyPath: WritableKeyPath<Root, Child>
    let access: InPlaceAccess<Root, Child>
    let inner: any EditNode<Child>

    func mismatch(in root: Root, expecting side: PatchSide) -> String? {
        guard let child = access.read(root) else { return "expected a value, found nil" }
        return inner.mismatch(in: child, expecting: side)
    }

    func apply(to root: inout Root, toward side: PatchSide) {
        access.modify(&root) { inner.apply(to: &$0, toward: side) }
    }

    var leafPatch: any LeafPatch { inner.leafPatch }

    func writeLeafJSON(into json: inout [UInt8]) -> String? { inner.writeLeafJSON(into: &json) }

    func appendLocation(to location: inout [AnyHashable]) {
        location.append(keyPath)
        inner.appendLocation(to: &location)
    }
}
