import Foundation
import Revertible
import TestSupport
import Testing

/// Seeded fuzzing: the path parser and the record decoder, fed random and mutated input, never
/// crash; whatever they accept behaves.
@Suite struct FuzzTests {
    static let pathAlphabet = Array("ab_Z09.[]\":{},-\\ idkey\u{0}é🎉\n")
    static let seeds = [
        #"childActivities[3].title"#, #"scores[key: "alice"]"#, #"items[id: 7].name"#,
        #""weird name"[key: {"x":[1,"]"]}]"#,
        #"[2][0]"#, "",
    ]

    static func mutate(_ text: String, using generator: inout SeededGenerator) -> String {
        var characters = Array(text)
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let position = Int.random(in: 0...characters.count, using: &generator)
            let character = pathAlphabet.randomElement(using: &generator)!
            let operation = Int.random(in: 0..<3, using: &generator)
            if operation == 0 || position == characters.count {
                characters.insert(character, at: position)
            } else if operation == 1 {
                characters.remove(at: position)
            } else {
                characters[position] = character
            }
        }
        return String(characters)
    }

    @Test(arguments: Soak.batches(usually: 4))
    func thePathParserNeverCrashesAndWhatItAcceptsRoundTrips(batch: UInt64) throws {
        var generator = SeededGenerator(seed: 0xFA75_0000 + batch)
        var accepted = 0
        for _ in 0..<25_000 {
            let text: String
            if Bool.random(using: &generator) {
                text = String(
                    (0..<Int.random(in: 0..<24, using: &generator)).map { _ in
                        Self.pathAlphabet.randomElement(using: &generator)!
                    })
            } else {
                text = Self.mutate(Self.seeds.randomElement(using: &generator)!, using: &generator)
            }
            guard let path = try? PathDescriptor(parsing: text) else { continue }
            accepted += 1
            try #require(try PathDescriptor(parsing: path.description) == path, "\(text.debugDescription)")
        }
        #expect(accepted > 1_000)
    }

    @Test(arguments: Soak.batches(usually: 4))
    func theRecordDecoderNeverCrashesOnDamagedRecords(batch: UInt64) throws {
        var generator = SeededGenerator(seed: 0xDEC0_0000 + batch)
        var document = Document.empty
        var outcomes = (accepted: 0, refused: 0)
        // 10,000 rounds a batch (each a random edit, its diff, a damaged record, a resolve and
        // two reverts: the heaviest test of a run, at 25,000); `Scripts/soak` runs more batches.
        for _ in 0..<10_000 {
            let before = document
            RandomEdits.edit(&document, using: &generator)
            guard let reversion = document.reversion(to: before), var records = try? reversion.records()
            else { continue }
            let index = Int.random(in: 0..<records.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                records[index].path =
                    (try? PathDescriptor(
                        parsing: Self.mutate(records[index].path.description, using: &generator)))
                    ?? records[index].path
            case 1:
                records[index].kind = ["replace", "text", "bytes", "elements", "entries", "members", "x"]
                    .randomElement(using: &generator)!
            default:
                var payload = Array(records[index].payload)
                for _ in 0..<Int.random(in: 1...3, using: &generator) where !payload.isEmpty {
                    payload[Int.random(in: 0..<payload.count, using: &generator)] = UInt8.random(
                        in: 32...126, using: &generator)
                }
                records[index].payload = Data(payload)
            }
            do {
                let damaged = try Reversion(records: records, resolvingAgainst: document)
                _ = try? damaged.reverted(document)
                _ = try? damaged.inverse.reverted(before)
                outcomes.accepted += 1
            } catch {
                outcomes.refused += 1
            }
        }
        #expect(outcomes.refused > 1_000, "\(outcomes)")
        #expect(outcomes.accepted > 1_000, "\(outcomes)")
    }
}
