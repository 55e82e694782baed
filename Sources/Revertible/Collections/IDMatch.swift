/// How the elements of two runs of ids match: which are taken out, which are put in, and which
/// are kept, with as few taken out and put in as can be (a longest common subsequence).
///
/// Each id must belong to one element on each side to pair: the kept elements are then the
/// longest run of pairs in the same order on both sides, found in O(n log n) by patience
/// sorting, where a general diff (`CollectionDifference`) takes O(n × d) for d changes (an
/// array of 10,000 items reversed took two seconds to diff).
struct IDMatch {
    /// Positions in the old array of the elements taken out (removed or moved), ascending.
    var removed: [Int] = []
    /// Positions in the new array of the elements put in (inserted or moved), ascending.
    var inserted: [Int] = []
    /// The elements kept, as (old position, new position), ascending on both sides.
    var kept: [(Int, Int)] = []

    /// Matches `old` (the ids of the old array from position `oldStart`) with `new` (those of the
    /// new array from `newStart`), or `nil` when an id present on both sides belongs to more
    /// than one element on either side (ids held only by removed elements, or only by inserted
    /// ones, pair nothing and need not be unique).
    init?<Key: Hashable>(old: [Key], from oldStart: Int, new: [Key], from newStart: Int) {
        // One hash per element: each id's slot holds its position on each side.
        var slots: [Key: Slot] = [:]
        slots.reserveCapacity(old.count)
        for index in old.indices {
            slots[old[index], default: Slot()].noteOld(index)
        }
        var pairs: [(old: Int, new: Int)] = []
        var inserted: [Int] = []
        var paired = [Bool](repeating: false, count: old.count)
        for index in new.indices {
            let slot = slots[new[index], default: Slot()].noteNew(index)
            guard slot.old != Slot.none else {
                inserted.append(index)
                continue
            }
            // A second element of an id kept in both, on either side.
            guard slot.old != Slot.shared, slot.new == index else { return nil }
            pairs.append((slot.old, index))
            paired[slot.old] = true
        }
        var removed = old.indices.filter { !paired[$0] }
        // The longest run of pairs whose old positions ascend, as the new ones do: `tails[k]`
        // is the pair ending the run of length k + 1 that ends lowest, and `previous` links
        // each pair to the one before it in its run.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: pairs.count)
        for (index, pair) in pairs.enumerated() {
            var (low, high) = (0, tails.count)
            while low < high {
                let middle = (low + high) / 2
                if pairs[tails[middle]].old < pair.old { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var inRun = [Bool](repeating: false, count: pairs.count)
        var link = tails.last ?? -1
        while link >= 0 {
            inRun[link] = true
            link = previous[link]
        }
        var kept: [(Int, Int)] = []
        kept.reserveCapacity(tails.count)
        for (index, pair) in pairs.enumerated() {
            if inRun[index] {
                kept.append((oldStart + pair.old, newStart + pair.new))
            } else {
                removed.append(pair.old)
                inserted.append(pair.new)
            }
        }
        removed.sort()
        inserted.sort()
        self.removed = removed.map { oldStart + $0 }
        self.inserted = inserted.map { newStart + $0 }
        self.kept = kept
    }

    /// Where an id is on each side: ``none``, one position, or ``shared``.
    private struct Slot {
        static let none = -2
        static let shared = -1
        var old = none
        var new = none

        /// Notes an element of the old array at `position`.
        mutating func noteOld(_ position: Int) { old = old == Self.none ? position : Self.shared }

        /// Notes an element of the new array at `position`, and gives the slot as it is then.
        mutating func noteNew(_ position: Int) -> Slot {
            new = new == Self.none ? position : Self.shared
            return self
        }
    }
}
