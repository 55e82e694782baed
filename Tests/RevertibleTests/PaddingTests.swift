import Foundation
import Revertible
import TestSupport
import Testing

/// An array copied by copy-on-write holds its elements' padding as the allocator left it: the
/// diff must find exactly the changed elements whatever those bytes are, with blocks of equal
/// values settled by their meaningful bytes and changes inside such blocks still found.
@Suite struct PaddingTests {
    /// 40 bytes: 7 of padding after `flag`. Identifiable: matched by id.
    typealias Row = CollectionTests.Padded

    /// 4 bytes, not a whole word: 1 of padding after `mark`. Matched by position.
    struct Small: Versionable, Equatable, Codable {
        var mark: Bool
        var count: Int16
    }

    /// 3 bytes, an odd stride: blocks of 64 values make whole 64-byte runs. No padding.
    struct Flags: Versionable, Equatable, Codable {
        var a: Bool
        var level: UInt8
        var b: Bool
    }

    /// Over 64 bytes, so compared in blocks of 8: padding after each flag.
    struct Wide: Versionable, Equatable, Codable {
        var a: Bool
        var x: Int
        var b: Bool
        var y: Int
        var c: Bool
        var z: Int
        var d: Bool
        var w: Int
        var e: Bool
        var v: Int
    }

    /// 88 bytes, whose period of whole values and 16-byte vectors (176 bytes) is too long to
    /// gather by place: compared through the block's mask. Padding after `f` and at the end;
    /// `wide`'s own padding counts as meaningful here.
    struct Wider: Versionable, Equatable, Codable {
        var f: Bool
        var wide: Wide
    }

    /// Fills every byte of `array`'s elements outside `meaningful` (offsets within one element)
    /// with random bytes, as a heap in use leaves them.
    static func scribble<Element>(
        _ array: inout [Element], keeping meaningful: [Range<Int>], _ random: inout SeededGenerator
    ) {
        let stride = MemoryLayout<Element>.stride
        let kept = Set(meaningful.flatMap { $0 })
        array.withUnsafeMutableBytes { bytes in
            for element in 0..<bytes.count / stride {
                for offset in 0..<stride where !kept.contains(offset) {
                    bytes[element * stride + offset] = UInt8.random(in: 0...255, using: &random)
                }
            }
        }
    }

    /// The byte ranges of `fields` (key paths into `Element` with their sizes).
    static func ranges<Element>(_ fields: [(PartialKeyPath<Element>, Int)]) -> [Range<Int>] {
        fields.map { keyPath, size in
            let offset = MemoryLayout<Element>.offset(of: keyPath)!
            return offset..<offset + size
        }
    }

    /// Random arrays of `make`'s elements, a few changed by `change`, the copy's padding
    /// scribbled over: the positions found are the changed ones, and the reversion reverts.
    func check<Element: Versionable & Equatable & Codable>(
        seed: UInt64, meaningful: [Range<Int>], make: (Int) -> Element,
        change: (inout Element, inout SeededGenerator) -> Void
    ) throws {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<60 {
            let count = Int.random(in: 0...300, using: &random)
            let old = (0..<count).map(make)
            var new = old
            var changed = Set<Int>()
            for _ in 0..<Int.random(in: 0...3, using: &random) where count > 0 {
                let index = Int.random(in: 0..<count, using: &random)
                change(&new[index], &random)
                if new[index] != old[index] { changed.insert(index) } else { changed.remove(index) }
            }
            Self.scribble(&new, keeping: meaningful, &random)
            let (structure, found) = [Element].positionedDifference(from: old, to: new)
            #expect(structure == nil)
            #expect(
                found.compactMap(\.newPosition).sorted() == changed.sorted(), "seed \(seed), count \(count)")
            var value = new
            if let diff = new.reversion(to: old) { try diff.revert(&value) }
            let reverted = value == old
            #expect(reverted, "seed \(seed), count \(count)")
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func identifiedRowsWithScribbledPadding(seed: UInt64) throws {
        try check(
            seed: seed,
            meaningful: Self.ranges([
                (\Row.id, 8), (\Row.flag, 1), (\Row.text, 16), (\Row.amount, 8),
            ]),
            make: { Row(id: $0, flag: $0 % 3 == 0, text: "row \($0)", amount: Double($0)) },
            change: { row, random in
                switch Int.random(in: 0..<3, using: &random) {
                case 0: row.flag.toggle()
                case 1: row.text += "!"
                default: row.amount += 1
                }
            })
    }

    @Test(arguments: [4, 5] as [UInt64]) func smallValuesByPositionWithScribbledPadding(seed: UInt64) throws {
        #expect(MemoryLayout<Small>.stride == 4)
        try check(
            seed: seed,
            meaningful: Self.ranges([(\Small.mark, 1), (\Small.count, 2)]),
            make: { Small(mark: $0 % 2 == 0, count: Int16($0)) },
            change: { small, random in
                if Bool.random(using: &random) { small.mark.toggle() } else { small.count &+= 1 }
            })
    }

    @Test(arguments: [8, 9] as [UInt64]) func oddStrideValues(seed: UInt64) throws {
        #expect(MemoryLayout<Flags>.stride == 3)
        try check(
            seed: seed, meaningful: [0..<3],
            make: { Flags(a: $0 % 2 == 0, level: UInt8(truncatingIfNeeded: $0), b: false) },
            change: { flags, random in
                if Bool.random(using: &random) { flags.b.toggle() } else { flags.level &+= 1 }
            })
    }

    @Test(arguments: [10, 11] as [UInt64]) func widerValuesWithScribbledPadding(seed: UInt64) throws {
        #expect(MemoryLayout<Wider>.stride == 88)
        let wide = MemoryLayout<Wider>.offset(of: \.wide)!
        try check(
            seed: seed, meaningful: [0..<1, wide..<wide + MemoryLayout<Wide>.size],
            make: {
                Wider(
                    f: $0 % 2 == 0,
                    wide: Wide(a: true, x: $0, b: false, y: 0, c: true, z: -$0, d: false, w: 2, e: true, v: 7)
                )
            },
            change: { wider, random in
                switch Int.random(in: 0..<3, using: &random) {
                case 0: wider.f.toggle()
                case 1: wider.wide.e.toggle()
                default: wider.wide.x &+= 1
                }
            })
    }

    @Test(arguments: [6, 7] as [UInt64]) func wideValuesWithScribbledPadding(seed: UInt64) throws {
        #expect(MemoryLayout<Wide>.stride > 64)
        try check(
            seed: seed,
            meaningful: Self.ranges([
                (\Wide.a, 1), (\Wide.x, 8), (\Wide.b, 1), (\Wide.y, 8), (\Wide.c, 1), (\Wide.z, 8),
                (\Wide.d, 1), (\Wide.w, 8), (\Wide.e, 1), (\Wide.v, 8),
            ]),
            make: {
                Wide(a: false, x: $0, b: true, y: -$0, c: false, z: 0, d: true, w: 1, e: false, v: $0 * 2)
            },
            change: { wide, random in
                switch Int.random(in: 0..<4, using: &random) {
                case 0: wide.e.toggle()
                case 1: wide.v &+= 1
                case 2: wide.a.toggle()
                default: wide.z &+= 1
                }
            })
    }
}
