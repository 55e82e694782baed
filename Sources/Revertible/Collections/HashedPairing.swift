/// Pairs the members of two hashed collections (dictionaries, sets) by key, in one pass over
/// both.
///
/// A dictionary or set changed in place keeps the layout of the version it was copied from,
/// so walking the two side by side meets most keys at the same step, where comparing them
/// takes no hashing. Where the walks disagree (an entry inserted or removed, a layout that
/// moved) the keys are looked up, and after many such steps the walk stops pairing steps and
/// looks up the rest. The result never depends on the layout, only the cost does: one key
/// comparison per unchanged member when the layouts agree, at most two lookups otherwise.
enum HashedPairing {
    /// Reports each key of `old` as paired with the same key's position in `new`, or as
    /// removed, and each key of `new` that `old` lacks as inserted.
    ///
    /// The collections are the keys (a dictionary's `keys`, a set), so that a step reads one
    /// key and no generic tuple; the callbacks take positions, which a dictionary shares with
    /// its keys.
    ///
    /// - Parameters:
    ///   - position: Where a collection holds a key, if it does (a hashed lookup).
    ///   - both: Called with a key's position in `old` and its position in `new`.
    ///   - removed: Called with the position in `old` of each key `new` lacks.
    ///   - inserted: Called with the position in `new` of each key `old` lacks.
    @inline(__always)
    static func pair<Keys: Collection>(
        _ old: Keys, _ new: Keys, position: (Keys, Keys.Element) -> Keys.Index?,
        both: (Keys.Index, Keys.Index) -> Void, removed: (Keys.Index) -> Void,
        inserted: (Keys.Index) -> Void
    ) where Keys.Element: Hashable {
        // No tuples of generic values here: a step would look their metadata up at run time.
        var oldIndex = old.startIndex
        var newIndex = new.startIndex
        let oldEnd = old.endIndex
        let newEnd = new.endIndex
        var (removedCount, insertedCount) = (0, 0)
        // Steps whose keys were equal, and steps whose keys were both in the other collection
        // elsewhere: once the second outnumber the first, the layouts differ.
        var (aligned, crossed) = (0, 0)
        while oldIndex != oldEnd, newIndex != newEnd, crossed <= max(aligned, 16) {
            let oldKey = old[oldIndex]
            let newKey = new[newIndex]
            if oldKey == newKey {
                both(oldIndex, newIndex)
                aligned += 1
            } else if position(old, newKey) == nil {
                inserted(newIndex)
                insertedCount += 1
                new.formIndex(after: &newIndex)
                continue
            } else if let paired = position(new, oldKey) {
                // The new key is paired where `old` holds it (before this step or after it), as
                // a key of `old` met at a step of another key.
                both(oldIndex, paired)
                crossed += 1
            } else {
                removed(oldIndex)
                removedCount += 1
                old.formIndex(after: &oldIndex)
                continue
            }
            old.formIndex(after: &oldIndex)
            new.formIndex(after: &newIndex)
        }
        while oldIndex != oldEnd {
            if let paired = position(new, old[oldIndex]) {
                both(oldIndex, paired)
            } else {
                removed(oldIndex)
                removedCount += 1
            }
            old.formIndex(after: &oldIndex)
        }
        // Every key of `new` before `newIndex` was paired or reported; the rest only holds
        // insertions when the counts say some are left.
        let insertions = new.count - (old.count - removedCount)
        while insertedCount < insertions, newIndex != newEnd {
            if position(old, new[newIndex]) == nil {
                inserted(newIndex)
                insertedCount += 1
            }
            new.formIndex(after: &newIndex)
        }
    }
}
