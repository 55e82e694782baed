/// A 64-bit content digest that is the same in every process and on every platform
/// (XXH64 with seed 0, little-endian).
///
/// Swift's `Hasher` is seeded randomly per process, and `Data`'s `hashValue` reads only a
/// prefix, so neither can tell whether a stored reversion still matches a value.
package enum StableDigest {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    package static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var offset = 0
        var hash: UInt64
        if count >= 32 {
            var v1 = p1 &+ p2
            var v2 = p2
            var v3: UInt64 = 0
            var v4: UInt64 = 0 &- p1
            while offset + 32 <= count {
                v1 = round(v1, load64(bytes, offset))
                v2 = round(v2, load64(bytes, offset + 8))
                v3 = round(v3, load64(bytes, offset + 16))
                v4 = round(v4, load64(bytes, offset + 24))
                offset += 32
            }
            hash = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = p5
        }
        hash &+= UInt64(count)
        while offset + 8 <= count {
            hash ^= round(0, load64(bytes, offset))
            hash = rotl(hash, 27) &* p1 &+ p4
            offset += 8
        }
        if offset + 4 <= count {
            let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            hash ^= UInt64(word) &* p1
            hash = rotl(hash, 23) &* p2 &+ p3
            offset += 4
        }
        while offset < count {
            hash ^= UInt64(bytes[offset]) &* p5
            hash = rotl(hash, 11) &* p1
            offset += 1
        }
        hash ^= hash >> 33
        hash &*= p2
        hash ^= hash >> 29
        hash &*= p3
        hash ^= hash >> 32
        return hash
    }

    @inline(__always) private static func load64(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 {
        (x &<< r) | (x &>> (64 &- r))
    }

    @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* p1 &+ p4
    }
}
