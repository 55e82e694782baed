/// The changed middle of two byte sequences: what is left after trimming their common prefix
/// and suffix. Shared by the `String` and `Data` patches.
struct ByteRange: Equatable {
    /// Where the changed middle starts, in both sequences.
    var offset: Int
    /// Length of the changed middle in the old sequence.
    var oldLength: Int
    /// Length of the changed middle in the new sequence.
    var newLength: Int

    /// Below this size a patch keeps both whole values: readable, and cheap enough.
    static let wholeValueLimit = 256

    /// - Parameter scalarAligned: Keep both ends on UTF-8 scalar boundaries (for `String`).
    /// - Complexity: O(*n*), comparing eight bytes at a time.
    static func changed(old: UnsafeRawBufferPointer, new: UnsafeRawBufferPointer, scalarAligned: Bool)
        -> ByteRange
    {
        let shorter = min(old.count, new.count)
        var prefix = 0
        while prefix + 8 <= shorter,
            old.loadUnaligned(fromByteOffset: prefix, as: UInt64.self)
                == new.loadUnaligned(fromByteOffset: prefix, as: UInt64.self)
        {
            prefix += 8
        }
        while prefix < shorter, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        let maxSuffix = shorter - prefix
        while suffix + 8 <= maxSuffix,
            old.loadUnaligned(fromByteOffset: old.count - suffix - 8, as: UInt64.self)
                == new.loadUnaligned(fromByteOffset: new.count - suffix - 8, as: UInt64.self)
        {
            suffix += 8
        }
        while suffix < maxSuffix, old[old.count - suffix - 1] == new[new.count - suffix - 1] { suffix += 1 }
        if scalarAligned {
            // A boundary sits before any byte that is not a UTF-8 continuation byte (10xxxxxx).
            func isContinuation(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Bool {
                index < bytes.count && bytes[index] & 0xC0 == 0x80
            }
            while prefix > 0, isContinuation(old, prefix) || isContinuation(new, prefix) { prefix -= 1 }
            while suffix > 0,
                isContinuation(old, old.count - suffix) || isContinuation(new, new.count - suffix)
            {
                suffix -= 1
            }
        }
        return ByteRange(
            offset: prefix, oldLength: old.count - prefix - suffix, newLength: new.count - prefix - suffix)
    }
}
