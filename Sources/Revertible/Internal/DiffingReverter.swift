import Foundation

/// The reverter that compares two versions and emits one edit chain per changed leaf.
struct DiffingReverter<Root>: Reverter {
    let old: Root
    let new: Root
    let path: [PathComponent]
    let emit: (PathDescriptor, any EditNode<Root>) -> Void

    init(
        old: Root, new: Root, path: [PathComponent],
        emit: @escaping (PathDescriptor, any EditNode<Root>) -> Void
    ) {
        self.old = old
        self.new = new
        self.path = path
        self.emit = emit
    }

    /// The values at `keyPath` in the two versions. A stored property of a struct is read at
    /// its offset: projecting a key path goes through the runtime (~700 instructions a read,
    /// two per changed field, paid by every diff), an offset is a load.
    private func values<Value>(at keyPath: KeyPath<Root, Value>) -> (old: Value, new: Value) {
        guard let offset = MemoryLayout<Root>.offset(of: keyPath) else {
            return (old[keyPath: keyPath], new[keyPath: keyPath])
        }
        func read(_ root: UnsafePointer<Root>) -> Value {
            UnsafeRawPointer(root).load(fromByteOffset: offset, as: Value.self)
        }
        return (withUnsafePointer(to: old, read), withUnsafePointer(to: new, read))
    }

    /// Whether the stored property at `keyPath` has the same bytes in both versions, and so the
    /// same value: `false` when its bytes differ anywhere (padding inside the value included,
    /// which only sends an equal value down the comparing path) or `keyPath` is not a stored
    /// property of a struct.
    func hasSameBytes<Value>(at keyPath: KeyPath<Root, Value>) -> Bool {
        guard let offset = MemoryLayout<Root>.offset(of: keyPath) else { return false }
        return withUnsafePointer(to: old) { old in
            withUnsafePointer(to: new) { new in
                memcmp(
                    UnsafeRawPointer(old) + offset, UnsafeRawPointer(new) + offset, MemoryLayout<Value>.size)
                    == 0
            }
        }
    }

    /// A stored property with the same bytes in both versions holds the same value: registering
    /// it would record nothing.
    func _canPassOver<Value>(_ keyPath: WritableKeyPath<Root, Value>, named name: String?) -> Bool {
        hasSameBytes(at: keyPath)
    }

    /// The indices in `table.tracked` of the fields that may differ between the two versions.
    func changedFields(_ table: FieldTable<Root>) -> [Int] {
        table.changedFields(old, new)
    }

    private func childPath(_ component: PathComponent?) -> [PathComponent] {
        guard let component else { return path }
        return path + [component]
    }

    mutating func appendReversion<Value: Versionable>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        // No whole-subtree comparison first: when something changed it would be paid twice.
        // Leaves compare themselves, and collections skip equal elements and shared storage.
        let (oldValue, newValue) = values(at: keyPath)
        var child = child(oldValue, newValue, at: keyPath, component: component)
        newValue.addReversions(into: &child)
    }

    /// A plain struct, field by field (``PlainStructField``), or whole when its `Codable` form
    /// is not an object of its fields, so that stored paths through it would not lead into its
    /// JSON, or when one of its `let`s holds another value, which no field's change records.
    mutating func appendPlainFieldReversions<Value>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        let (oldValue, newValue) = values(at: keyPath)
        guard CodingKeyTree.encodesAsObject(newValue),
            FieldTable<Value>.shared.constantsAreEqual(oldValue, newValue)
        else {
            appendOverwriteReversion(at: keyPath, component: component)
            return
        }
        var child = child(oldValue, newValue, at: keyPath, component: component)
        child.appendStoredPropertyReversions()
    }

    /// A reverter comparing `oldValue` and `newValue`, the values at `keyPath`, whose changes
    /// are emitted through `keyPath`.
    private func child<Value>(
        _ oldValue: Value, _ newValue: Value, at keyPath: WritableKeyPath<Root, Value>,
        component: PathComponent?
    ) -> DiffingReverter<Value> {
        let emit = self.emit
        return DiffingReverter<Value>(old: oldValue, new: newValue, path: childPath(component)) {
            path, node in
            emit(path, lift(node, through: keyPath))
        }
    }

    mutating func appendOverwriteReversion<Value>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        let (oldValue, newValue) = values(at: keyPath)
        if Equality.equal(oldValue, newValue) == true { return }
        let node = PatchNode(patch: Replacement(old: oldValue, new: newValue))
        emit(PathDescriptor(childPath(component)), lift(node, through: keyPath))
    }

    mutating func appendCodableReversion<Value: Codable & Equatable>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        let (oldValue, newValue) = values(at: keyPath)
        if Equality.same(oldValue, newValue) { return }
        let base = childPath(component)
        guard let changes = CodedDiff.changes(from: oldValue, to: newValue) else {
            let node = PatchNode(patch: Replacement(old: oldValue, new: newValue))
            emit(PathDescriptor(base), lift(node, through: keyPath))
            return
        }
        for change in changes {
            let patch = CodedPatch<Value>(
                path: change.path, sides: CodedSides(old: change.old, new: change.new))
            emit(PathDescriptor(base + change.path), lift(PatchNode(patch: patch), through: keyPath))
        }
    }

    mutating func appendLeafReversion<Value: VersionableLeaf>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        let (oldValue, newValue) = values(at: keyPath)
        if Equality.same(oldValue, newValue) { return }
        let node = PatchNode(patch: Value.patch(from: oldValue, to: newValue))
        emit(PathDescriptor(childPath(component)), lift(node, through: keyPath))
    }

    mutating func appendElementReversions<Value: VersionableCollection>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        let base = childPath(component)
        let (oldValue, newValue) = values(at: keyPath)
        let (structure, elements) = Value.positionedDifference(from: oldValue, to: newValue)
        let emit = self.emit
        // Element changes come first: they address elements by key, which exist in both
        // versions, and reverting applies changes in order, before the structure is undone.
        for element in elements {
            let (key, oldPosition, newPosition) = (element.key, element.oldPosition, element.newPosition)
            var child = DiffingReverter<Value.VersionedElement>(
                old: element.old, new: element.new, path: base + [Value.pathComponent(for: key)]
            ) { path, node in
                let node = ElementNode<Value>(
                    key: key, oldPosition: oldPosition, newPosition: newPosition, inner: node)
                emit(path, lift(node, through: keyPath))
            }
            element.new.addReversions(into: &child)
        }
        if let structure {
            emit(PathDescriptor(base), lift(PatchNode(patch: structure), through: keyPath))
        }
    }

    func hasChanged<Value: Equatable>(at keyPath: KeyPath<Root, Value>) -> Bool {
        let (oldValue, newValue) = values(at: keyPath)
        return !Equality.same(oldValue, newValue)
    }
}
