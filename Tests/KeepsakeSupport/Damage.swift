public import Foundation

/// Changes one byte of page data of the store file `bytes` (past its 100-byte header), picked
/// by `generator`, to another value; returns its offset.
public func flipAByte(_ bytes: inout Data, using generator: inout some RandomNumberGenerator) -> Int {
    let offset = Int.random(in: 100..<bytes.count, using: &generator)
    bytes[offset] ^= UInt8.random(in: 1...255, using: &generator)
    return offset
}

/// Writes `bytes` to `path` with one byte of page data changed (``flipAByte(_:using:)``);
/// returns its offset.
public func writeWithAByteFlipped(
    _ bytes: Data, to path: String, using generator: inout some RandomNumberGenerator
) throws -> Int {
    var bytes = bytes
    let offset = flipAByte(&bytes, using: &generator)
    try bytes.write(to: URL(fileURLWithPath: path))
    return offset
}

extension RichStore {
    /// A kind of damage done to a copy of the rich store.
    public enum DamageKind: String, CaseIterable, Sendable, CustomStringConvertible {
        /// One or two bytes of page data changed.
        case bytes
        /// One to three cells changed or rows deleted, the shell's way
        /// (``damageOneCell(_:using:)``).
        case cells
        /// One or two keys changed by one where they lie (``keyDamages(_:in:)``).
        case keys

        public var description: String { rawValue }
    }

    /// Writes a copy of the store `original` to `path` (its log and shared memory removed),
    /// damaged the way `kind` says, as `generator` picks: `keyDamages` are the ones to pick
    /// from (``everyKeyDamage(_:copyAt:)``). Returns what was done: empty when nothing was.
    public static func writeDamaged(
        _ original: Data, to path: String, _ kind: DamageKind, keyDamages: [ByteDamage],
        using generator: inout some RandomNumberGenerator
    ) throws -> [String] {
        for suffix in ["-wal", "-shm", "-journal"] { unlink(path + suffix) }
        var bytes = original
        var done: [String] = []
        switch kind {
        case .bytes:
            for _ in 0..<Int.random(in: 1...2, using: &generator) {
                done.append("byte \(flipAByte(&bytes, using: &generator)) changed")
            }
            try bytes.write(to: URL(fileURLWithPath: path))
        case .cells:
            try bytes.write(to: URL(fileURLWithPath: path))
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                if let damage = try damageOneCell(path, using: &generator) { done.append(damage) }
            }
        case .keys:
            for _ in 0..<Int.random(in: 1...2, using: &generator) {
                guard let damage = keyDamages.randomElement(using: &generator) else { break }
                bytes[damage.offset] = damage.byte
                done.append(damage.what)
            }
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        return done
    }
}
