/// A set is a leaf whose patch lists the members removed and inserted.
extension Set: Versionable, Revertible, VersionableLeaf {
    /// Records removed and inserted members; see ``SetPatch``.
    public typealias Patch = SetPatch<Element>

    /// Makes a ``SetPatch``.
    public static func patch(from old: Set<Element>, to new: Set<Element>) -> SetPatch<Element> {
        var (removed, inserted): (Set<Element>, Set<Element>) = ([], [])
        HashedPairing.pair(
            old, new, position: { members, member in members.firstIndex(of: member) }, both: { _, _ in },
            removed: { removed.insert(old[$0]) }, inserted: { inserted.insert(new[$0]) })
        return SetPatch(removed: removed, inserted: inserted, oldCount: old.count, newCount: new.count)
    }
}

/// The members removed from and inserted into a set.
///
/// Reverting checks the count, that every inserted member is present and that no removed
/// member is. Stored as `{"inserted": ["b"], "removed": [], "oldCount": 1, "newCount": 2}`.
public struct SetPatch<Element: Hashable>: LeafPatch {
    /// Members of the old set that the new one lacks.
    public var removed: Set<Element>
    /// Members of the new set that the old one lacked.
    public var inserted: Set<Element>
    /// The old set's count.
    public var oldCount: Int
    /// The new set's count.
    public var newCount: Int

    /// Creates a patch from its parts.
    public init(removed: Set<Element>, inserted: Set<Element>, oldCount: Int, newCount: Int) {
        self.removed = removed
        self.inserted = inserted
        self.oldCount = oldCount
        self.newCount = newCount
    }

    /// `"members"`.
    public static var kind: String { "members" }

    public func mismatch(in value: Set<Element>, expecting side: PatchSide) -> String? {
        let (count, present, absent) =
            side == .new ? (newCount, inserted, removed) : (oldCount, removed, inserted)
        guard value.count == count else { return "expected \(count) members, found \(value.count)" }
        guard present.isSubset(of: value), absent.isDisjoint(with: value) else { return "the members differ" }
        return nil
    }

    public func apply(to value: inout Set<Element>, toward side: PatchSide) {
        let (remove, insert) = side == .new ? (removed, inserted) : (inserted, removed)
        value.subtract(remove)
        value.formUnion(insert)
    }
}

extension SetPatch: Codable where Element: Codable {
    private typealias CodingKeys = PatchCounts.MemberKeys

    /// Encodes the patch with each list of members in the order of their JSON, so that the same
    /// change is stored as the same bytes: a set's own order differs from one instance to the
    /// next, even between equal sets.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(RecordCoding.inJSONOrder(removed) { $0 }, forKey: .removed)
        try container.encode(RecordCoding.inJSONOrder(inserted) { $0 }, forKey: .inserted)
        try container.encode(oldCount, forKey: .oldCount)
        try container.encode(newCount, forKey: .newCount)
    }

    /// Decodes a patch, refusing one whose counts do not fit its members (a damaged record),
    /// which would revert and then refuse its own inverse.
    public init(from decoder: any Decoder) throws {
        (removed, inserted, oldCount, newCount) = try PatchCounts.decodeMembers(
            Set<Element>.self, from: decoder)
    }
}
extension SetPatch: Sendable where Element: Sendable {}
