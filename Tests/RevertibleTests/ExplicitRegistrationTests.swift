import Foundation
import Revertible
import TestSupport
import Testing

/// ``Document``'s properties registered one by one, as a hand-written conformance does.
struct ExplicitDocument: Versionable, Equatable {
    var title: String
    var count: Int
    var ratio: Double
    var color: Color
    var note: String?
    var blob: Data
    var items: [Document.Item]
    var numbers: [Int]
    var scores: [String: Int]
    var nested: [String: Document.Item]
    var tint: Tint

    init(_ document: Document) {
        (title, count, ratio, color, note, blob) = (
            document.title, document.count, document.ratio, document.color, document.note, document.blob
        )
        (items, numbers, scores, nested, tint) = (
            document.items, document.numbers, document.scores, document.nested, document.tint
        )
    }

    func addReversions(into reverter: inout some Reverter<ExplicitDocument>) {
        reverter.appendReversion(at: \.title)
        reverter.appendReversion(at: \.count, named: "count")
        reverter.appendReversion(at: \.ratio)
        reverter.appendReversion(at: \.color)
        reverter.appendReversion(at: \.note)
        reverter.appendReversion(at: \.blob)
        reverter.appendReversion(at: \.items)
        reverter.appendReversion(at: \.numbers)
        reverter.appendReversion(at: \.scores)
        reverter.appendReversion(at: \.nested, named: "nested")
        reverter.appendCodableReversion(at: \.tint, component: .property("tint"))
    }
}

/// A hand-written conformance finds exactly the changes the reflected one finds, and resolves
/// them from stored records: registering a property by its key path passes it over when its
/// bytes are the same in both versions, or when a stored path names another property, and
/// must never pass over one that changed or that the path names.
@Suite struct ExplicitRegistrationTests {
    @Test(arguments: Soak.batches(usually: 2))
    func explicitRegistrationsRecordWhatReflectedOnesRecord(batch: UInt64) throws {
        let seed = 0xE791_0000 + batch
        var changedSteps = 0
        try RandomEdits.walk(seed: seed, steps: 500, maximumEdits: 3) { step, original, document in
            let (old, new) = (ExplicitDocument(original), ExplicitDocument(document))
            let reflected = try document.reversion(to: original)?.records() ?? []
            let explicit = try new.reversion(to: old)?.records() ?? []
            try #require(explicit == reflected, "seed \(seed) step \(step): \(explicit) vs \(reflected)")
            guard let reversion = new.reversion(to: old) else { return }
            changedSteps += 1
            var reverted = new
            try reversion.revert(&reverted)
            try #require(
                RandomEdits.same(Document(reverted), original), "seed \(seed) step \(step): revert")
            // Stored records resolve through the same registrations.
            var fromRecords = new
            try Reversion(records: explicit, resolvingAgainst: new).revert(&fromRecords)
            try #require(
                RandomEdits.same(Document(fromRecords), original),
                "seed \(seed) step \(step): revert from records")
        }
        // The walk is not vacuous: most seeds change something in 430 to 470 of the 500 steps;
        // the fewest seen, over the soaks' seeds, is 388 (batch 4000000; the bound was 400).
        #expect(changedSteps > 300, "seed \(seed): \(changedSteps) steps changed something")
    }

    @Test func onlyTheChangedPropertiesAreRecorded() throws {
        var old = ExplicitDocument(.empty)
        old.items = [.init(id: 1, name: "one", done: false, tags: [])]
        var new = old
        new.count = 7
        let paths = try #require(new.reversion(to: old)).paths.map(\.description)
        #expect(paths == ["count"])
        new.items[0].name = "uno"
        let both = try #require(new.reversion(to: old)).paths.map(\.description)
        #expect(both == ["count", "items[id: 1].name"])
        #expect(old.reversion(to: old) == nil)
    }
}

extension Document {
    init(_ explicit: ExplicitDocument) {
        self = .empty
        (self.title, self.count, self.ratio, self.color) = (
            explicit.title, explicit.count, explicit.ratio, explicit.color
        )
        (self.note, self.blob, self.items, self.numbers) = (
            explicit.note, explicit.blob, explicit.items, explicit.numbers
        )
        (self.scores, self.nested, self.tint) = (explicit.scores, explicit.nested, explicit.tint)
    }
}
