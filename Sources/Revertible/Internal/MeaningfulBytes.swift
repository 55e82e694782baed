import Foundation
@_spi(Reflection) import Swift

/// Which bytes of a value's memory hold its fields, as a mask of 64-bit words over its stride:
/// padding between and after fields may hold anything (a copy need not copy it), so two values
/// are compared by their bytes only through this mask.
///
/// Only the type's own fields are read; padding inside a field's type counts as meaningful,
/// which can only make equal values look different (and be compared with `==`), never the
/// reverse.
struct MeaningfulBytes: @unchecked Sendable {
    /// One mask word per whole 8 bytes of the stride.
    let words: [UInt64]
    /// Which of the bytes after the last whole word are meaningful.
    let tail: [Bool]

    static func of<T>(_: T.Type) -> MeaningfulBytes {
        let key = ObjectIdentifier(T.self)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let mask = MeaningfulBytes(T.self)
        cache.withLock { $0[key] = mask }
        return mask
    }

    private init<T>(_: T.Type) {
        let stride = MemoryLayout<T>.stride
        var bytes = [Bool](repeating: false, count: stride)
        var found = false
        _ = _forEachField(of: T.self, options: []) { _, offset, fieldType, _ in
            found = true
            let size = Self.size(of: fieldType)
            for index in offset..<min(stride, offset + size) { bytes[index] = true }
            return true
        }
        if !found {
            // Not a struct with fields (an enum, a class reference, a tuple): all of its size.
            for index in 0..<MemoryLayout<T>.size { bytes[index] = true }
        }
        var words = [UInt64](repeating: 0, count: stride / 8)
        for (index, meaningful) in bytes.prefix(words.count * 8).enumerated() where meaningful {
            words[index / 8] |= 0xFF << UInt64((index % 8) * 8)
        }
        self.words = words
        self.tail = Array(bytes.dropFirst(words.count * 8))
    }

    private static func size(of type: Any.Type) -> Int {
        func size<V>(_: V.Type) -> Int { MemoryLayout<V>.size }
        return _openExistential(type, do: size)
    }

    /// The positions `0..<count` where the values at `a` and `b` (arrays of `count` values of
    /// `stride` bytes) differ in their meaningful bytes.
    func differingPositions(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int, stride: Int) -> [Int] {
        var positions: [Int] = []
        let block = 32
        words.withUnsafeBufferPointer { words in
            var start = 0
            while start < count {
                let end = min(start + block, count)
                // Most blocks are byte for byte the same: one `memcmp` settles them.
                if memcmp(a + start * stride, b + start * stride, (end - start) * stride) != 0 {
                    for index in start..<end where !same(a + index * stride, b + index * stride, words) {
                        positions.append(index)
                    }
                }
                start = end
            }
        }
        return positions
    }

    @inline(__always)
    private func same(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ words: UnsafeBufferPointer<UInt64>)
        -> Bool
    {
        for (word, mask) in words.enumerated() {
            let x = a.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self)
            let y = b.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self)
            if (x ^ y) & mask != 0 { return false }
        }
        let offset = words.count * 8
        for (index, meaningful) in tail.enumerated()
        where meaningful
            && a.load(fromByteOffset: offset + index, as: UInt8.self)
                != b.load(fromByteOffset: offset + index, as: UInt8.self)
        {
            return false
        }
        return true
    }
}

private let cache = Locked<[ObjectIdentifier: MeaningfulBytes]>([:])
