import Foundation
import TestSupport
import Testing

@testable import Revertible

/// Dictionaries and sets are diffed by walking both versions side by side, which meets most keys
/// at the same step when one version is the other changed in place. The result must not depend
/// on the layouts: these tests pair versions changed in place (values changed, entries inserted
/// and removed, enough of them to grow the storage), rebuilt in another order, and reserved at
/// another capacity, and check each against set algebra on the keys.
@Suite struct HashedPairingTests {
    /// What a pairing reported, by key.
    struct Pairing: Equatable {
        var both: [Int: Int] = [:]
        var removed: Set<Int> = []
        var inserted: Set<Int> = []
    }

    /// The pairing set algebra gives: each shared key with itself.
    static func expected(_ old: [Int: String], _ new: [Int: String]) -> Pairing {
        let shared = Set(old.keys).intersection(new.keys)
        return Pairing(
            both: Dictionary(uniqueKeysWithValues: shared.map { ($0, $0) }),
            removed: Set(old.keys).subtracting(new.keys), inserted: Set(new.keys).subtracting(old.keys))
    }

    /// What `HashedPairing` reports, failing on a key reported twice.
    static func paired(_ old: [Int: String], _ new: [Int: String]) -> Pairing {
        var pairing = Pairing()
        var reported = 0
        HashedPairing.pair(
            old.keys, new.keys, position: { keys, key in keys.firstIndex(of: key) },
            both: { oldIndex, newIndex in
                #expect(pairing.both.updateValue(new.keys[newIndex], forKey: old.keys[oldIndex]) == nil)
                reported += 1
            },
            removed: { #expect(pairing.removed.insert(old.keys[$0]).inserted) },
            inserted: { #expect(pairing.inserted.insert(new.keys[$0]).inserted) })
        #expect(reported == pairing.both.count)
        return pairing
    }

    /// A version of `old` made the way `form` says: changed in place, rebuilt, or reserved.
    static func version(
        of old: [Int: String], form: Int, using generator: inout SeededGenerator
    ) -> [Int: String] {
        var new: [Int: String]
        switch form {
        case 0, 1, 2:
            new = old  // changed in place below: the layout of `old`, until it grows
        case 3:
            new = Dictionary(uniqueKeysWithValues: old.shuffled(using: &generator))
        default:
            new = [:]
            new.reserveCapacity(old.count * 3 + 1)
            for (key, value) in old.shuffled(using: &generator) { new[key] = value }
        }
        let edits = Int.random(in: 0...(form == 2 ? 40 : 6), using: &generator)
        for _ in 0..<edits {
            let key = Int.random(in: 0..<200, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: new[key] = nil
            case 1: new[key] = "inserted \(key)"
            default: if new[key] != nil { new[key]! += "!" }
            }
        }
        return new
    }

    /// 0, 1, 5, 40 or 150 entries (by round) with keys below 200.
    static func randomEntries(round: Int, using generator: inout SeededGenerator) -> [Int: String] {
        var entries: [Int: String] = [:]
        while entries.count < [0, 1, 5, 40, 150][round % 5] {
            entries[Int.random(in: 0..<200, using: &generator)] = "value"
        }
        return entries
    }

    @Test(arguments: Soak.batches(usually: 3))
    func dictionariesPairLikeTheirKeysSets(batch: UInt64) {
        var generator = SeededGenerator(seed: 0x4A5E_D000 &+ batch)
        for round in 0..<400 {
            let old = Self.randomEntries(round: round, using: &generator)
            let new = Self.version(of: old, form: round % 5, using: &generator)
            #expect(Self.paired(old, new) == Self.expected(old, new), "batch \(batch), round \(round)")
            // The dictionary's difference, as set algebra and `!=` on the values give it.
            let (structure, elements) = [Int: String].entryDifference(from: old, to: new)
            let expected = Self.expected(old, new)
            #expect(structure?.removed ?? [:] == old.filter { expected.removed.contains($0.key) })
            #expect(structure?.inserted ?? [:] == new.filter { expected.inserted.contains($0.key) })
            #expect((structure == nil) == (expected.removed.isEmpty && expected.inserted.isEmpty))
            let changed = expected.both.keys.filter { old[$0] != new[$0] }
            #expect(elements.map(\.key) == changed.sorted { "\($0)" < "\($1)" })
            #expect(elements.allSatisfy { $0.old == old[$0.key] && $0.new == new[$0.key] })
        }
    }

    @Test(arguments: Soak.batches(usually: 3))
    func setsPairLikeSetAlgebra(batch: UInt64) {
        var generator = SeededGenerator(seed: 0x5E7_D000 &+ batch)
        for round in 0..<400 {
            let oldSet = Set(Self.randomEntries(round: round, using: &generator).keys)
            var newSet = round % 5 < 3 ? oldSet : Set(oldSet.shuffled(using: &generator))
            for _ in 0..<Int.random(in: 0...(round % 5 == 2 ? 40 : 6), using: &generator) {
                let member = Int.random(in: 0..<200, using: &generator)
                if Bool.random(using: &generator) { newSet.insert(member) } else { newSet.remove(member) }
            }
            let patch = Set.patch(from: oldSet, to: newSet)
            #expect(patch.removed == oldSet.subtracting(newSet), "batch \(batch), round \(round)")
            #expect(patch.inserted == newSet.subtracting(oldSet), "batch \(batch), round \(round)")
            #expect(patch.oldCount == oldSet.count && patch.newCount == newSet.count)
        }
    }

    /// The layouts of the two versions are unrelated: every step's keys differ, and each key is
    /// still paired once.
    @Test func unrelatedLayoutsPairEveryKeyOnce() {
        let old = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ($0, "\($0)") })
        var new: [Int: String] = [:]
        new.reserveCapacity(10_000)
        for key in (500..<1_500).reversed() { new[key] = "\(key)" }
        let pairing = Self.paired(old, new)
        #expect(pairing == Self.expected(old, new))
        #expect(pairing.both.count == 500 && pairing.removed.count == 500 && pairing.inserted.count == 500)
    }
}
