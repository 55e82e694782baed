/// Dictionaries are tracked by key: added and removed entries form one ``DictionaryPatch`` at
/// the dictionary's path, and a change inside a value whose key is in both versions is
/// recorded below its key, such as `scores[key: "alice"]`.
///
/// A stored property whose values are `Equatable` but not ``Versionable`` is tracked the same
/// way by a type tracked with no code: below its key, a changed value's changed fields when
/// it is a plain `Codable` struct, else the whole value.
extension Dictionary: Versionable, Revertible where Value: Versionable {
    /// Registers the dictionary entry by entry.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        reverter.appendElementReversions(at: KeyPathCache.identity(), component: nil)
    }
}

extension Dictionary: VersionableCollection where Value: Versionable {
    public static func versionedDifference(from old: [Key: Value], to new: [Key: Value]) -> (
        structure: DictionaryPatch<Key, Value>?, elements: [(key: Key, old: Value, new: Value)]
    ) {
        entryDifference(from: old, to: new)
    }

    public func versionedElement(at key: Key) -> Value? {
        self[key]
    }

    public mutating func modifyVersionedElement(at key: Key, _ body: (inout Value) -> Void) -> Bool {
        guard index(forKey: key) != nil else { return false }
        body(&self[key]!)
        return true
    }

    public static func pathComponent(for key: Key) -> PathComponent {
        .key(RecordCoding.canonicalJSON(key))
    }

    public static func elementKey(for component: PathComponent) -> Key? {
        guard case .key(let json) = component else { return nil }
        return RecordCoding.decodeJSON(json, as: Key.self)
    }
}

extension Dictionary {
    /// The entries `new` added and removed (`nil` when none), and those of both whose values
    /// are not equal, in the order of their keys' JSON: what ``versionedDifference(from:to:)``
    /// gives, for values of any type (unequal when they are not `Equatable`).
    static func entryDifference(from old: [Key: Value], to new: [Key: Value]) -> (
        structure: DictionaryPatch<Key, Value>?, elements: [(key: Key, old: Value, new: Value)]
    ) {
        let equal = DynamicConformance.equality(of: Value.self)
        var (removed, inserted): ([Key: Value], [Key: Value]) = ([:], [:])
        // The positions of changed values, made into elements after the walk: a step touches
        // no tuple of generic values, whose metadata would be looked up at run time.
        var changedOld: [Index] = []
        var changedNew: [Index] = []
        HashedPairing.pair(
            old.keys, new.keys, position: { keys, key in keys.firstIndex(of: key) },
            both: { oldIndex, newIndex in
                if equal?(old.values[oldIndex], new.values[newIndex]) != true {
                    changedOld.append(oldIndex)
                    changedNew.append(newIndex)
                }
            },
            removed: { removed[old.keys[$0]] = old.values[$0] },
            inserted: { inserted[new.keys[$0]] = new.values[$0] })
        // In the order of the keys' JSON, not the dictionary's (which differs between equal
        // dictionaries), so that the same change is recorded the same way.
        let elements = RecordCoding.inJSONOrder(
            zip(changedOld, changedNew).map { (key: old.keys[$0], old: old.values[$0], new: new.values[$1]) },
            by: \.key)
        guard !removed.isEmpty || !inserted.isEmpty else { return (nil, elements) }
        return (
            DictionaryPatch(removed: removed, inserted: inserted, oldCount: old.count, newCount: new.count),
            elements
        )
    }
}

/// The entries added to and removed from a dictionary.
///
/// Reverting checks the count, that every inserted key is present (with an equal value for
/// `Equatable` values) and that no removed key is. Stored as
/// `{"inserted": {"bob": 3}, "removed": {}, "oldCount": 1, "newCount": 2}`.
public struct DictionaryPatch<Key: Hashable, Value>: LeafPatch {
    /// Entries of the old dictionary whose keys the new one lacks.
    public var removed: [Key: Value]
    /// Entries of the new dictionary whose keys the old one lacked.
    public var inserted: [Key: Value]
    /// The old dictionary's count.
    public var oldCount: Int
    /// The new dictionary's count.
    public var newCount: Int

    /// Creates a patch from its parts.
    public init(removed: [Key: Value], inserted: [Key: Value], oldCount: Int, newCount: Int) {
        self.removed = removed
        self.inserted = inserted
        self.oldCount = oldCount
        self.newCount = newCount
    }

    /// `"entries"`.
    public static var kind: String { "entries" }

    public func mismatch(in value: [Key: Value], expecting side: PatchSide) -> String? {
        let (count, present, absent) =
            side == .new ? (newCount, inserted, removed) : (oldCount, removed, inserted)
        guard value.count == count else { return "expected \(count) entries, found \(value.count)" }
        for (key, expected) in present {
            guard let found = value[key], Equality.sameTracked(found, expected) != false else {
                return "the entry for \(RecordCoding.canonicalJSON(key)) differs"
            }
        }
        for key in absent.keys where value[key] != nil {
            return "unexpected entry for \(RecordCoding.canonicalJSON(key))"
        }
        return nil
    }

    public func apply(to value: inout [Key: Value], toward side: PatchSide) {
        let (remove, insert) = side == .new ? (removed, inserted) : (inserted, removed)
        for key in remove.keys { value[key] = nil }
        value.merge(insert) { _, inserted in inserted }
    }
}

extension DictionaryPatch: Codable where Key: Codable, Value: Codable {
    private typealias CodingKeys = PatchCounts.MemberKeys

    /// Decodes a patch, refusing one whose counts do not fit its entries (a damaged record),
    /// which would revert and then refuse its own inverse.
    public init(from decoder: any Decoder) throws {
        (removed, inserted, oldCount, newCount) = try PatchCounts.decodeMembers(
            [Key: Value].self, from: decoder)
    }
}
extension DictionaryPatch: Sendable where Key: Sendable, Value: Sendable {}
