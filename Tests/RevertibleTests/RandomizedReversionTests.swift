import Foundation
import Revertible
import TestSupport
import Testing

/// Thousands of random edits: every reversion reverts to exactly the original, its inverse
/// redoes exactly, and the same holds after a round trip through stored records.
@Suite struct RandomizedReversionTests {
    @Test(arguments: 0..<4)
    func randomEditsRevertExactly(batch: UInt64) throws {
        let seed = 0x5EED_0000 + batch
        var generator = SeededGenerator(seed: seed)
        var document = Document.empty
        // Changes recorded inside an enum's payload, which must happen (not only whole cases).
        var payloadChanges = 0
        for step in 0..<1_000 {
            let original = document
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                RandomEdits.edit(&document, using: &generator)
            }
            let edited = document
            guard let reversion = document.reversion(to: original) else {
                #expect(
                    RandomEdits.same(document, original),
                    "seed \(seed) step \(step): changed but no reversion")
                continue
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
