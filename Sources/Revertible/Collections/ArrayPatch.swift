/// The structural change of an array: elements removed from the old array and inserted into
/// the new one, each with its offset (a move is a removal and an insertion).
///
/// Offsets follow `CollectionDifference`: removals index the old array, insertions the new
/// one. Reverting checks the array's length and the element at each inserted offset: what a
/// ``Versionable`` element tracks, `==` for other `Equatable` ones, and the `id` of
/// `Identifiable` ones. Stored as
/// `{"insertions": [{"offset": 2, "element": …}], "removals": [], "oldCount": 2, "newCount": 3}`.
public struct ArrayPatch<Element>: LeafPatch {
    /// An element at an offset.
    public struct Entry {
        /// The element's position.
        public var offset: Int
        /// The element.
        public var element: Element

        /// Pairs an element with its position.
        public init(offset: Int, element: Element) {
            self.offset = offset
            self.element = element
        }
    }

    /// Elements of the old array that the new one does not have there, by ascending offset.
    public var removals: [Entry]
    /// Elements of the new array that the old one did not have there, by ascending offset.
    public var insertions: [Entry]
    /// The old array's length.
    public var oldCount: Int
    /// The new array's length.
    public var newCount: Int

    /// Creates a patch from its parts.
    public init(removals: [Entry], insertions: [Entry], oldCount: Int, newCount: Int) {
        self.removals = removals
        self.insertions = insertions
        self.oldCount = oldCount
        self.newCount = newCount
    }

    /// `"elements"`.
    public static var kind: String { "elements" }

    public func mismatch(in value: [Element], expecting side: PatchSide) -> String? {
        let (count, entries) = side == .new ? (newCount, insertions) : (oldCount, removals)
        guard value.count == count else { return "expected \(count) elements, found \(value.count)" }
        for entry in entries where !value.indices.contains(entry.offset) {
            return "offset \(entry.offset) is outside the array"
        }
        // The whole element, not only its id: one that differs would be lost when it is taken
        // out, and brought back as the patch recorded it. And its id too, which a `Versionable`
        // element does not track (a `let`): another element that holds the same tracked values
        // is not the one the patch recorded, and it would come back with the recorded id.
        for entry in entries {
            let element = value[entry.offset]
            if Equality.sameTracked(element, entry.element) == false
                || DynamicConformance.sameID(element, entry.element) == false
            {
                return "the element at \(entry.offset) differs"
            }
        }
        return nil
    }

    public func apply(to value: inout [Element], toward side: PatchSide) {
        let (remove, insert) = side == .new ? (removals, insertions) : (insertions, removals)
        // `mismatch` was checked first, so the offsets fit (the decoder made them ascending). A
        // damaged reversion whose changes overlap could bring another array; it is left as it is
        // rather than stop the process.
        guard remove.last.map({ $0.offset < value.count }) ?? true,
            insert.last.map({ $0.offset < value.count - remove.count + insert.count }) ?? true
        else { return }
        for entry in remove.reversed() { value.remove(at: entry.offset) }
        for entry in insert { value.insert(entry.element, at: entry.offset) }
    }
}

extension ArrayPatch.Entry: Codable where Element: Codable {}
extension ArrayPatch.Entry: Sendable where Element: Sendable {}

extension ArrayPatch: Codable where Element: Codable {
    private enum CodingKeys: String, CodingKey { case removals, insertions, oldCount, newCount }

    /// Decodes a patch, refusing one whose offsets do not fit its counts (a damaged record),
    /// which could not be applied without trapping.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        removals = try container.decode([Entry].self, forKey: .removals)
        insertions = try container.decode([Entry].self, forKey: .insertions)
        oldCount = try container.decode(Int.self, forKey: .oldCount)
        newCount = try container.decode(Int.self, forKey: .newCount)
        func fits(_ entries: [Entry], _ count: Int) -> Bool {
            zip(entries, entries.dropFirst()).allSatisfy { $0.offset < $1.offset }
                && entries.allSatisfy { $0.offset >= 0 && $0.offset < count }
        }
        guard
            PatchCounts.fit(
                oldCount: oldCount, newCount: newCount, removed: removals.count, inserted: insertions.count),
            fits(removals, oldCount), fits(insertions, newCount)
        else { throw PatchCounts.misfit(decoder, "The offsets do not fit the stored counts") }
    }
}
extension ArrayPatch: Sendable where Element: Sendable {}
