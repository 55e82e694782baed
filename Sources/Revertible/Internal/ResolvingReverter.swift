import Foundation

/// The reverter that finds the location a stored path names, by walking the root type's own
/// registrations, and decodes the stored patch for the leaf it finds.
struct ResolvingReverter<Root>: Reverter {
    let value: Root
    let remaining: ArraySlice<PathComponent>
    let record: ChangeRecord
    let decoder: JSONDecoder
    /// Renamed and converted properties of `Root`.
    let evolution: [PropertyEvolution]
    /// The property the path names next by the name it had before a declared rename (its
    /// current name): only an earlier model stored that path.
    private let renamedProperty: String?
    private(set) var result: Result<any EditNode<Root>, ReversionError>?
    /// Whether a registration took the next component (even if what follows was not found).
    private var tookNextComponent = false
    /// Whether the path leads, here or below, to a property its type no longer has.
    private var reachedRemovedProperty = false
    /// Whether the property no longer there that the path reached below is one the decoding of
    /// a type below this one still reads from stored data.
    private var reachedPropertyIsRead = false
    /// The key of the property no longer there that the path reached below, and the place of
    /// the object holding it from here, as property names (`nil`: past an element, whose
    /// place is its type's alone to read).
    private var reachedRemovedKey: (place: [String], key: String)?
    /// Where the stored property the path names next lies in a `Root` value, looked up the
    /// first time a property registered by hand asks (`.some(nil)`: the path names no stored
    /// property of a struct); a type tracked with no code never asks.
    private var nextOffset: Int?? = nil

    init(value: Root, remaining: ArraySlice<PathComponent>, record: ChangeRecord, decoder: JSONDecoder) {
        self.value = value
        self.record = record
        self.decoder = decoder
        let evolution = (Root.self as? any Versionable.Type)?.propertyEvolution ?? []
        self.evolution = evolution
        // A property stored under an old name is looked up under its new one.
        if case .property(let stored)? = remaining.first, let current = evolution.currentName(of: stored) {
            self.remaining = [.property(current)] + remaining.dropFirst()
            renamedProperty = current
        } else {
            self.remaining = remaining
            renamedProperty = nil
        }
    }

    /// `remaining` resolved against `value` by its registrations. A property the path names
    /// that `Root` does not have, but whose name is the JSON key of one it has — renamed, its
    /// key kept by `CodingKeys` — is read as that property: its stored changes are the ones
    /// its JSON holds.
    static func resolved(
        value: Root, remaining: ArraySlice<PathComponent>, record: ChangeRecord, decoder: JSONDecoder
    ) -> Self where Root: Versionable {
        var resolver = Self(value: value, remaining: remaining, record: record, decoder: decoder)
        value.addReversions(into: &resolver)
        guard resolver.result == nil, !resolver.reachedRemovedProperty, resolver.namesRemovedProperty,
            case .property(let name)? = resolver.remaining.first,
            let property = CodingKeyTree.ownKeys(of: value).first(where: { $0.value == name })?.key
        else { return resolver }
        var renamed = Self(
            value: value, remaining: [.property(property)] + resolver.remaining.dropFirst(), record: record,
            decoder: decoder)
        value.addReversions(into: &renamed)
        return renamed
    }

    /// A registration of `keyPath` (under `name`, when one is given) is passed over when it
    /// certainly cannot take the path's next component — the path is resolved already, names
    /// another property, or names a stored property that lies elsewhere — before its name is
    /// looked up.
    mutating func _canPassOver<Value>(_ keyPath: WritableKeyPath<Root, Value>, named name: String?) -> Bool {
        !mayTake(keyPath, named: name)
    }

    /// Whether a registration of `keyPath` (under `name`, when one is given) may take the path's
    /// next component.
    private mutating func mayTake<Value>(_ keyPath: KeyPath<Root, Value>, named name: String?) -> Bool {
        guard result == nil else { return false }
        guard case .property(let next)? = remaining.first else { return true }
        if let name { return name == next }
        // `\.self` adds no component: it passes the whole path on.
        guard Value.self != Root.self, let offset = MemoryLayout<Root>.offset(of: keyPath) else {
            return true
        }
        if nextOffset == nil { nextOffset = .some(FieldTable<Root>.shared.offsetsByName[next]) }
        guard case .some(let expected?) = nextOffset else { return true }
        return offset == expected
    }

    /// Whether the stored path names a property that `Root` (or a type below it) no longer
    /// has: such a change is skipped, since the property is gone. A struct's name is judged
    /// against its stored properties, so a path into another enum case is still an error; so
    /// is a path into a leaf or a collection (`note.text` where `note` is a `String?`), whose
    /// stored properties (`String._guts`) are no model's.
    var namesRemovedProperty: Bool {
        guard result == nil else { return false }
        if reachedRemovedProperty { return true }
        guard !tookNextComponent, case .property(let name)? = remaining.first,
            !(Root.self is any VersionableLeaf.Type), !(Root.self is any VersionableCollection.Type)
        else { return false }
        let table = FieldTable<Root>.shared
        return table.hasStoredProperties && !table.names.values.contains(name)
    }

    /// Whether the property no longer there that ``namesRemovedProperty`` found is one the
    /// decoding of its type, or of a type holding it through properties, may read from stored
    /// data (moved into a struct of its own, or out of one, and read from the earlier form by
    /// an `init(from:)`): its change then changes what the stored data decodes to, and is not
    /// skipped (see ``EvolvingDecoding/mayRead(_:at:decoding:template:decoder:)``).
    var removedPropertyIsRead: Bool {
        guard namesRemovedProperty else { return false }
        if reachedPropertyIsRead { return true }
        guard let removed = removedKey else { return false }
        return EvolvingDecoding.mayRead(
            removed.key, at: removed.place, decoding: Root.self,
            template: { [value] in (value as? any Encodable).flatMap { try? JSONEncoder().encode($0) } },
            decoder: decoder)
    }

    /// The key of the property no longer there that ``namesRemovedProperty`` found, and the
    /// place from here of the object holding it (see ``reachedRemovedKey``).
    private var removedKey: (place: [String], key: String)? {
        if reachedRemovedProperty { return reachedRemovedKey }
        guard case .property(let name)? = remaining.first else { return nil }
        return ([], name)
    }

    /// The components left after `component`, or `nil` when `component` is not the next one.
    private mutating func rest(after component: PathComponent?) -> ArraySlice<PathComponent>? {
        guard result == nil else { return nil }
        guard let component else { return remaining }
        guard remaining.first == component else { return nil }
        tookNextComponent = true
        return remaining.dropFirst()
    }

    mutating func appendReversion<Value: Versionable>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component) else { return }
        take(
            ResolvingReverter<Value>.resolved(
                value: value[keyPath: keyPath], remaining: rest, record: record, decoder: decoder)
        ) { lift($0, through: keyPath) }
    }

    /// A plain struct's change: one of its fields' (``PlainStructField``), or the whole
    /// value, as an earlier release (or a type whose `Codable` form is not an object) stored it.
    mutating func appendPlainFieldReversions<Value>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component) else { return }
        guard !rest.isEmpty else {
            appendOverwriteReversion(at: keyPath, component: component)
            return
        }
        var child = ResolvingReverter<Value>(
            value: value[keyPath: keyPath], remaining: rest, record: record, decoder: decoder)
        child.appendStoredPropertyReversions()
        take(child) { lift($0, through: keyPath) }
    }

    /// Takes what `child`, which resolved the rest of the path below this place, found: its
    /// change reached from here by `lift`, or that the path names a removed property.
    private mutating func take<Value>(
        _ child: ResolvingReverter<Value>, _ lift: (any EditNode<Value>) -> any EditNode<Root>
    ) {
        if let found = child.result {
            result = found.map(lift)
        } else if child.namesRemovedProperty {
            reachedRemovedProperty = true
            reachedPropertyIsRead = child.removedPropertyIsRead
            // Through properties only: the components taken here, as names.
            let taken = remaining.prefix(remaining.count - child.remaining.count)
            let names = taken.compactMap { component -> String? in
                guard case .property(let name) = component else { return nil }
                return name
            }
            reachedRemovedKey = child.removedKey.flatMap {
                names.count == taken.count ? (names + $0.place, $0.key) : nil
            }
        }
    }

    mutating func appendOverwriteReversion<Value>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component), rest.isEmpty else { return }
        result = converted(decode(Replacement<Value>.self), component) { old, new in
            PatchNode(patch: Replacement(old: old, new: new))
        }.map { lift($0, through: keyPath) }
    }

    mutating func appendCodableReversion<Value: Codable & Equatable>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component) else { return }
        guard !rest.isEmpty else {
            // The whole value, as an overwrite records it.
            appendOverwriteReversion(at: keyPath, component: component)
            return
        }
        result = decodePatch(CodedPatch<Value>.self).map { decoded in
            var patch = decoded
            patch.path = Array(rest)
            return lift(PatchNode(patch: patch), through: keyPath)
        }
    }

    mutating func appendLeafReversion<Value: VersionableLeaf>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component), rest.isEmpty else { return }
        result = converted(decode(Value.Patch.self), component) { old, new in
            PatchNode(patch: Value.patch(from: old, to: new))
        }.map { lift($0, through: keyPath) }
    }

    mutating func appendElementReversions<Value: VersionableCollection>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?
    ) {
        guard let rest = rest(after: component) else { return }
        guard let first = rest.first else {
            // A whole-collection change: stored by a release that replaced such an array
            // whole, or before its elements became `Versionable`.
            if record.kind == Replacement<Value>.kind, Value.StructurePatch.kind != Replacement<Value>.kind {
                result = decode(Replacement<Value>.self).map { lift($0, through: keyPath) }
            } else {
                result = decode(Value.StructurePatch.self).map { lift($0, through: keyPath) }
            }
            return
        }
        let collection = value[keyPath: keyPath]
        guard let key = Value.elementKey(for: first) else { return }
        // Found once here; the change looks at the same position first when it is applied.
        let position = collection.versionedPosition(of: key)
        guard let element = collection.versionedElement(at: key, position: position) else { return }
        let child = ResolvingReverter<Value.VersionedElement>.resolved(
            value: element, remaining: rest.dropFirst(), record: record, decoder: decoder)
        take(child) {
            lift(
                ElementNode<Value>(key: key, oldPosition: position, newPosition: position, inner: $0),
                through: keyPath)
        }
    }

    /// `decoded`, or — when `Root` declares a conversion for the property at `component`, and
    /// the change did not decode or is a whole-value change stored under the property's old name
    /// (so by an earlier model, whatever it decodes as) — the stored whole-value change read as
    /// the old type and converted.
    private func converted<Value>(
        _ decoded: Result<any EditNode<Value>, ReversionError>, _ component: PathComponent?,
        node: (Value, Value) -> any EditNode<Value>
    ) -> Result<any EditNode<Value>, ReversionError> {
        guard case .property(let name)? = component, let conversion = evolution.conversion(for: name) else {
            return decoded
        }
        // A change within the value (a text's edited range) cannot be converted: it is read as
        // it decoded.
        if case .success = decoded, renamedProperty != name || record.kind != "replace" { return decoded }
        guard record.kind == "replace",
            let sides = FoundationJSON.object(record.payload) as? [String: Any],
            let old = sides["old"], let new = sides["new"]
        else {
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Value.self)",
                    reason:
                        "stored as a \"\(record.kind)\" change of \(conversion.oldType), which only a whole-value change can be converted from"
                ))
        }
        do {
            guard
                let oldValue = try conversion.convert(EvolvingDecoding.decoder(for: old, base: decoder))
                    as? Value,
                let newValue = try conversion.convert(EvolvingDecoding.decoder(for: new, base: decoder))
                    as? Value
            else {
                return .failure(
                    .undecodable(
                        path: record.path, type: "\(Value.self)",
                        reason: "the conversion from \(conversion.oldType) does not give a \(Value.self)"))
            }
            return .success(node(oldValue, newValue))
        } catch {
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Value.self)",
                    reason: "as \(conversion.oldType): \(RecordCoding.describe(error))"))
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
        decodePatch(type).map { PatchNode(patch: $0) }
    }

    private func decodePatch<Patch: LeafPatch>(_ type: Patch.Type) -> Result<Patch, ReversionError> {
        guard record.kind == Patch.kind else {
            // Another kind of change than today's type makes: the property's type changed.
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Patch.Value.self)",
                    reason: RecordCoding.describe(
                        "stored as a \"\(record.kind)\" change, expected \"\(Patch.kind)\"",
                        changedTypeOf: RecordCoding.lastProperty(of: record.path))))
        }
        guard let decodable = Patch.self as? any Decodable.Type else {
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Patch.Value.self)", reason: "\(Patch.self) is not Decodable"))
        }
        // The common forms (a number, boolean or text replaced) are read directly.
        if let direct = Patch.self as? any DirectlyReadPatch.Type,
            let patch = record.payload.withUnsafeBytes({ direct.readDirectJSON($0) }) as? Patch
        {
            return .success(patch)
        }
        // The standard decoder where the payload decodes as it is and holds no key renamed
        // since; else values stored by an earlier model (an element lacking a property added
        // since, filled from its type's `DecodingDefaults`; a property stored under its old
        // name), read as stored checkpoints are. Its error names what is left once the merge
        // filled what it could, and a renamed property's old key.
        func evolving<D: Decodable>(_: D.Type) throws -> Patch? {
            try EvolvingDecoding.decode(D.self, from: record.payload, template: { nil }, decoder: decoder)
                as? Patch
        }
        do {
            guard let patch = try evolving(decodable) else {
                return .failure(
                    .undecodable(
                        path: record.path, type: "\(Patch.Value.self)", reason: "not a \(Patch.self)"))
            }
            return .success(patch)
        } catch {
            return .failure(
                .undecodable(
                    path: record.path, type: "\(Patch.Value.self)",
                    reason: RecordCoding.describe(error, decodingModelAt: record.path)))
        }
    }
}
