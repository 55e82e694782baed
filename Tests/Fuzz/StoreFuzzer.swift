import Foundation
import Keepsake
import KeepsakeTestSupport
import TestSupport

/// What the fuzzer does to a copy of the rich store (``RichStore``) before it checks it.
enum FuzzMode: String, CaseIterable {
    /// Damage (bytes flipped, cells changed, keys changed where they lie), then everything read.
    case bytes, cells, keys
    /// The same damage, then random operations, side by side with the undamaged store.
    case opsBytes = "ops-bytes"
    case opsCells = "ops-cells"
    case opsKeys = "ops-keys"

    var damage: RichStore.DamageKind {
        switch self {
        case .bytes, .opsBytes: .bytes
        case .cells, .opsCells: .cells
        case .keys, .opsKeys: .keys
        }
    }

    var runsOperations: Bool { rawValue.hasPrefix("ops-") }
}

/// A random number generator that yields the bytes of a fuzzer's input, eight at a time, then
/// numbers seeded by their count: the same input always picks the same damage. (Never zeros
/// for ever: picking a number in a range draws again and again while it gets zeros.)
struct InputGenerator: RandomNumberGenerator {
    var bytes: ArraySlice<UInt8>
    var rest: SeededGenerator

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        rest = SeededGenerator(seed: UInt64(bytes.count))
    }

    mutating func next() -> UInt64 {
        guard !bytes.isEmpty else { return rest.next() }
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(bytes.popFirst() ?? 0) }
        return value
    }
}

/// Checks one input at a time: damages a copy of the rich store as the input picks, and reads
/// it (or runs operations on it) against the undamaged store.
@MainActor final class StoreFuzzer {
    let mode: FuzzMode
    let directory: String
    let original: Data
    let expected: [RichStore.Step]
    let keyDamages: [RichStore.ByteDamage]

    /// Writes the rich store in a directory of its own (in memory when `/dev/shm` is there).
    init(mode: FuzzMode) throws {
        self.mode = mode
        let parent = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        directory = "\(parent)/keepsake-fuzz-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let reference = "\(directory)/reference.keepsake"
        try? FileManager.default.removeItem(atPath: reference)
        original = try RichStore.write(to: reference)
        keyDamages = try RichStore.everyKeyDamage(original, copyAt: reference)
        let (steps, failure) = RichStore.trace(reference)
        if let failure { throw failure }
        expected = steps
    }

    /// The problem `input` shows, if any, and what was done (the damage, the operations).
    func check(_ input: [UInt8]) throws -> (problem: String?, account: [String]) {
        let path = "\(directory)/damaged.keepsake"
        guard mode.runsOperations else {
            var generator = InputGenerator(input[...])
            let damage = try RichStore.writeDamaged(
                original, to: path, mode.damage, keyDamages: keyDamages, using: &generator)
            guard !damage.isEmpty else { return (nil, []) }
            return (RichStore.readDamaged(path, expecting: expected).problem, damage)
        }
        // The first byte says how many of the next ones pick the damage, and whether edits are
        // held back (debounced); the rest are operations.
        guard let first = input.first else { return (nil, []) }
        let debounced = first >= 128
        let split = min(1 + Int(first) % 24, input.count)
        var generator = InputGenerator(input[1..<split])
        let operations = Array(input[split...].prefix(24))
        let (damage, expected, problem) = try RichStore.runBeside(
            operations, debounced: debounced, original: original,
            undamaged: "\(directory)/undamaged.keepsake",
            damaged: path, mode.damage, keyDamages: keyDamages, using: &generator)
        let account = [
            "\(debounced ? "debounced " : "")operations: " + expected.map(\.label).joined(separator: ", ")
        ]
        return (problem, damage + account)
    }
}
