import Foundation
import Revertible
import TestSupport
import Testing

/// Thousands of random edits: every reversion reverts to exactly the original, its inverse
/// redoes exactly, and the same holds after a round trip through stored records.
@Suite struct RandomizedReversionTests {
    @Test(arguments: Soak.batches(usually: 4))
    func randomEditsRevertExactly(batch: UInt64) throws {
        let seed = 0x5EED_0000 + batch
        // Changes recorded inside an enum's payload, which must happen (not only whole cases).
        var payloadChanges = 0
        try RandomEdits.walk(seed: seed, steps: 1_000, maximumEdits: 4) { step, original, edited in
            var document = edited
            guard let reversion = document.reversion(to: original) else {
                #expect(
                    RandomEdits.same(document, original),
                    "seed \(seed) step \(step): changed but no reversion")
                return
            }
            try reversion.revert(&document)
            try #require(RandomEdits.same(document, original), "seed \(seed) step \(step): revert")
            try reversion.inverse.revert(&document)
            try #require(RandomEdits.same(document, edited), "seed \(seed) step \(step): inverse")

            let records = try reversion.records()
            payloadChanges += records.count {
                let text = $0.path.description
                return text.contains(".shape.") || text.hasPrefix("tint.")
            }
            let stored = try Reversion(records: records, resolvingAgainst: document)
            try stored.revert(&document)
            try #require(
                RandomEdits.same(document, original), "seed \(seed) step \(step): revert from records")
            try stored.inverse.revert(&document)
            try #require(
                RandomEdits.same(document, edited), "seed \(seed) step \(step): inverse from records")
        }
        #expect(payloadChanges > 20, "seed \(seed): \(payloadChanges) changes inside enum payloads")
    }

    /// A reversion given another version than its own, chosen at random from the walk's past:
    /// it refuses with ``ReversionError/wrongVersion(path:reason:)`` and changes nothing, or,
    /// when that version agrees at every changed path, it applies and its inverse gives that
    /// version back exactly. Never a crash: a change inside an optional given `nil` there
    /// stopped the process (a force unwrap), where it must refuse.
    @Test(arguments: Soak.batches(usually: 4))
    func aReversionGivenAnotherVersionRefusesOrComesBackExactly(batch: UInt64) throws {
        let seed = 0x0DD5_0000 + batch
        var generator = SeededGenerator(seed: seed)
        var past: [Document] = []
        var (refused, applied) = (0, 0)
        try RandomEdits.walk(seed: seed, steps: 600, maximumEdits: 3) { step, original, edited in
            past.append(original)
            guard let reversion = edited.reversion(to: original) else { return }
            let stored = try Reversion(records: try reversion.records(), resolvingAgainst: edited)
            for (name, reversion) in [("direct", reversion), ("from records", stored)] {
                let other = past.randomElement(using: &generator)!
                var document = other
                let outcome = Result { () throws(ReversionError) in try reversion.revert(&document) }
                if case .failure(let error) = outcome {
                    guard case .wrongVersion = error else { throw error }
                    refused += 1
                    try #require(
                        RandomEdits.same(document, other),
                        "seed \(seed) step \(step) \(name): changed when refused")
                    continue
                }
                applied += 1
                try reversion.inverse.revert(&document)
                try #require(
                    RandomEdits.same(document, other), "seed \(seed) step \(step) \(name): not given back")
            }
        }
        // Both outcomes happen, or the test proves nothing.
        #expect(refused > 100 && applied > 20, "seed \(seed): \(refused) refused, \(applied) applied")
    }
}
