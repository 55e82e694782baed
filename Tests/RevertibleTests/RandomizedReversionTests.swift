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
}
