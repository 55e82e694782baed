/// One change inside a reversion: a chain of steps (property, element, optional) ending in a
/// leaf patch. Steps hold typed key paths, so applying a change never parses anything.
protocol EditNode<Root> {
    associatedtype Root
    func mismatch(in root: Root, expecting side: PatchSide) -> String?
    func apply(to root: inout Root, toward side: PatchSide)
    /// The leaf patch at the end of the chain, for storing.
    var leafPatch: any LeafPatch { get }
    /// Appends the leaf patch's JSON to `json` when it is written directly
    /// (``DirectlyWrittenPatch``) and returns its kind; returns `nil`, having appended nothing,
    /// when the encoder must write it. The patch is asked where its type is known: reaching it
    /// through ``leafPatch`` boxes it and casts one existential to another.
    func writeLeafJSON(into json: inout [UInt8]) -> String?
    /// Appends what names each step of the chain (a key path, an element's key) to `location`,
    /// so that two changes reaching the same place have equal locations however their stored
    /// paths were spelled.
    func appendLocation(to location: inout [AnyHashable])
}

struct PatchNode<Patch: LeafPatch>: EditNode {
    let patch: Patch

    func mismatch(in root: Patch.Value, expecting side: PatchSide) -> String? {
        patch.mismatch(in: root, expecting: side)
    }

    func apply(to root: inout Patch.Value, toward side: PatchSide) {
        patch.apply(to: &root, toward: side)
    }

    var leafPatch: any LeafPatch { patch }

    func writeLeafJSON(into json: inout [UInt8]) -> String? {
        guard let direct = patch as? any DirectlyWrittenPatch, direct.writeDirectJSON(into: &json) else {
            return nil
        }
        return Patch.kind
    }

    func appendLocation(to location: inout [AnyHashable]) {
        if let part = patch as? any PartPatch { location += part.path.map(AnyHashable.init) }
    }
}

/// A leaf patch that changes one part of its value, found by a path below it (a part of a
/// `Codable` value's encoded form).
protocol PartPatch {
    /// Where the part is below the value.
    var path: [PathComponent] { get }
}

struct PropertyNode<Root, Child>: EditNode {
    let keyPath: WritableKeyPath<Root, Child>
    let inner: any EditNode<Child>

    func mismatch(in root: Root, expecting side: PatchSide) -> String? {
        inner.mismatch(in: root[keyPath: keyPath], expecting: side)
    }

    func apply(to root: inout Root, toward side: PatchSide) {
        inner.apply(to: &root[keyPath: keyPath], toward: side)
    }

    var leafPatch: any LeafPatch { inner.leafPatch }

    func writeLeafJSON(into json: inout [UInt8]) -> String? { inner.writeLeafJSON(into: &json) }

    func appendLocation(to location: inout [AnyHashable]) {
        location.append(keyPath)
        inner.appendLocation(to: &location)
    }
}

struct ElementNode<Collection: VersionableCollection>: EditNode {
    let key: Collection.ElementKey
    /// Where the element was in each version when the change was made, if known: looked at
    /// first, so that finding it costs no search.
    let oldPosition: Int?
    let newPosition: Int?
    let inner: any EditNode<Collection.VersionedElement>

    init(
        key: Collection.ElementKey, oldPosition: Int? = nil, newPosition: Int? = nil,
        inner: any EditNode<Collection.VersionedElement>
    ) {
        self.key = key
        self.oldPosition = oldPosition
        self.newPosition = newPosition
        self.inner = inner
    }

    private func position(_ side: PatchSide) -> Int? { side == .old ? oldPosition : newPosition }

    func mismatch(in root: Collection, expecting side: PatchSide) -> String? {
        guard let element = root.versionedElement(at: key, position: position(side)) else {
            return "no element at \(Collection.pathComponent(for: key))"
        }
        return inner.mismatch(in: element, expecting: side)
    }

    func apply(to root: inout Collection, toward side: PatchSide) {
        // `mismatch` was checked first, so the element exists; the collection is at the other side.
        _ = root.modifyVersionedElement(at: key, position: position(side.other)) {
            inner.apply(to: &$0, toward: side)
        }
    }

    var leafPatch: any LeafPatch { inner.leafPatch }

    func writeLeafJSON(into json: inout [UInt8]) -> String? { inner.writeLeafJSON(into: &json) }

    func appendLocation(to location: inout [AnyHashable]) {
        location.append((key as? AnyHashable) ?? AnyHashable(Collection.pathComponent(for: key)))
        inner.appendLocation(to: &location)
    }
}

/// Wraps `node` so that it applies to `Root` through `keyPath`, without a wrapper for `\.self`,
/// and in place through a key path ``InPlaceKeyPaths`` knows.
func lift<Root, Child>(_ node: any EditNode<Child>, through keyPath: WritableKeyPath<Root, Child>)
    -> any EditNode<Root>
{
    if Root.self == Child.self, keyPath == KeyPathCache.identity(Root.self) {
        return node as! any EditNode<Root>
    }
    if let inPlace = InPlaceKeyPaths.node(node, through: keyPath) { return inPlace }
    return PropertyNode(keyPath: keyPath, inner: node)
}
