import Foundation

/// The reverter that finds the location a stored path names, by walking the root type's own
/// registrations, and decodes the stored patch for the leaf it finds.
struct ResolvingReverter<Root>: Reverter {
    let value: Root
    let remaining: ArraySlice<PathComponent>
    let record: ChangeRecord
    let decoder: JSONDecoder
    private(set) var result: Result<any EditNode<Root>, ReversionError>?

    init(value: Root, remaining: ArraySlice<PathComponent>, record: ChangeRecord, decoder: JSONDecoder) {
        self.value = value
        self.remaining = remaining
        self.record = record
        self.decoder = decoder
    }

    /// The components left after `component`, or `nil` when `component` is not the next one.
    private func rest(after component: PathComponent?) -> ArraySlice<PathComponent>? {
        guard result == nil else { return nil }
        guard let component else { return remaining }
        guard remaining.first == component else { return nil }
        return remaining.dropFirst()
    }

    mutating func appendReversion<Value: Versionable>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component) else { return }
        let childValue = value[keyPath: keyPath]
        var child = ResolvingReverter<Value>(
            value: childValue, remaining: rest, record: record, decoder: decoder)
        childValue.addReversions(into: &child)
        if let found = child.result {
            result = found.map { lift($0, through: keyPath) }
        }
    }

    mutating func appendOverwriteReversion<Value>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component), rest.isEmpty else { return }
        result = decode(Replacement<Value>.self).map { lift($0, through: keyPath) }
    }

    mutating func appendLeafReversion<Value: VersionableLeaf>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component), rest.isEmpty else { return }
        result = decode(Value.Patch.self).map { lift($0, through: keyPath) }
    }

    mutating func appendElementReversions<Value: VersionableCollection>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component) else { return }
        guard let first = rest.first else {
            result = decode(Value.StructurePatch.self).map { lift($0, through: keyPath) }
            return
        }
        let collection = value[keyPath: keyPath]
        guard let key = Value.elementKey(for: first), let element = collection.versionedElement(at: key)
        else {
            return
        }
        var child = ResolvingReverter<Value.VersionedElement>(
            value: element, remaining: rest.dropFirst(), record: record, decoder: decoder)
        element.addReversions(into: &child)
        if let found = child.result {
            result = found.map { lift(ElementNode<Value>(key: key, inner: $0), through: keyPath) }
        }
    }

    /// Whether the record is a whole-value record at this level, so that a type choosing
    /// between overwriting itself and tracking its parts picks the branch that stored it.
    func hasChanged<Value: Equatable>(at keyPath: KeyPath<Root, Value>) -> Bool {
        remaining.isEmpty && record.kind == Replacement<Value>.kind
    }

    private func decode<Patch: LeafPatch>(_ type: Patch.Type) -> Result<
        any EditNode<Patch.Value>, ReversionError
    > {
        guard record.kind == Patch.kind else {
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Patch.Value.self)",
                    reason: "stored as a \"\(record.kind)\" change, expected \"\(Patch.kind)\""))
        }
        guard let decodable = Patch.self as? any Decodable.Type else {
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Patch.Value.self)", reason: "\(Patch.self) is not Decodable"))
        }
        do {
            let patch = try decoder.decode(decodable, from: record.payload)
            return .success(PatchNode(patch: patch as! Patch))
        } catch {
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Patch.Value.self)", reason: RecordCoding.describe(error)))
        }
    }
}
