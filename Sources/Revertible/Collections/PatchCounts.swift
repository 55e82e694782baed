/// The check every collection patch's decoder makes of its stored counts.
enum PatchCounts {
    /// Whether a collection patch's stored counts fit what it removes and inserts: neither
    /// count is smaller than what leaves or enters its side, and both sides keep the same
    /// members in between. A patch that fails (a damaged or hand-made record) would apply one
    /// way and then be refused the other, or trap on an offset.
    ///
    /// Subtractions of non-negative numbers only, so that no stored count can overflow.
    static func fit(oldCount: Int, newCount: Int, removed: Int, inserted: Int) -> Bool {
        oldCount >= removed && newCount >= inserted && oldCount - removed == newCount - inserted
    }

    /// The stored form of a set's or a dictionary's patch.
    enum MemberKeys: String, CodingKey { case removed, inserted, oldCount, newCount }

    /// The parts of a set's or a dictionary's patch (`Members` is the set or the dictionary),
    /// refusing counts that do not ``fit(oldCount:newCount:removed:inserted:)``.
    static func decodeMembers<Members: Decodable & Collection>(_: Members.Type, from decoder: any Decoder)
        throws
        -> (removed: Members, inserted: Members, oldCount: Int, newCount: Int)
    {
        let container = try decoder.container(keyedBy: MemberKeys.self)
        let parts = (
            removed: try container.decode(Members.self, forKey: .removed),
            inserted: try container.decode(Members.self, forKey: .inserted),
            oldCount: try container.decode(Int.self, forKey: .oldCount),
            newCount: try container.decode(Int.self, forKey: .newCount)
        )
        guard
            fit(
                oldCount: parts.oldCount, newCount: parts.newCount, removed: parts.removed.count,
                inserted: parts.inserted.count)
        else { throw misfit(decoder) }
        return parts
    }

    /// The error a collection patch's decoder throws when ``fit(oldCount:newCount:removed:inserted:)``
    /// fails, or what else the patch says does not fit.
    static func misfit(
        _ decoder: any Decoder,
        _ what: String = "The stored counts do not fit the members removed and inserted"
    ) -> DecodingError {
        .dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: what))
    }
}
