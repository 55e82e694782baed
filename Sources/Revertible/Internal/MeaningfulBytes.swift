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
    /// The mask of ``blockCount`` values side by side, in whole words and whole ``period``s: a
    /// block of an array is compared in one branch-free pass.
    let blockWords: [UInt64]
    /// How many values ``blockWords`` covers: 64, or for values over 64 bytes the fewest whose
    /// bytes make whole 64-byte runs (8 values of 72 bytes, one of 4,096).
    let blockCount: Int
    /// The least number of bytes holding whole values and whole 16-byte vectors, when it is
    /// at most 8 vectors (values of 40 bytes: 80); else 0.
    let period: Int

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
        ContainedTypes.forEachField(of: T.self, options: []) { _, offset, fieldType in
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
        blockCount = stride <= 64 ? 64 : 64 / Self.greatestCommonDivisor(stride, 64)
        var blockWords = [UInt64](repeating: 0, count: blockCount * stride / 8)
        for index in 0..<blockCount * stride where bytes[index % stride] {
            blockWords[index / 8] |= 0xFF << UInt64((index % 8) * 8)
        }
        self.blockWords = blockWords
        let period = stride / Self.greatestCommonDivisor(stride, 16) * 16
        self.period = period <= 128 ? period : 0
    }

    private static func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
        b == 0 ? a : greatestCommonDivisor(b, a % b)
    }

    private static func size(of type: Any.Type) -> Int {
        func size<V>(_: V.Type) -> Int { MemoryLayout<V>.size }
        return _openExistential(type, do: size)
    }

    /// The positions `0..<count` where the values at `a` and `b` (arrays of `count` values of
    /// `stride` bytes) differ in their meaningful bytes.
    ///
    /// Most blocks of ``blockCount`` values hold the same values. A `memcmp` settles a block
    /// whose bytes are all the same; one whose bytes differ is compared once more over its
    /// meaningful bytes only, in one branch-free pass, before its values are compared one by
    /// one: an array copied element by element (as copy-on-write copies one) leaves the padding
    /// of the copy as the allocator left it, so on a heap that has been in use every block of
    /// values with padding differs somewhere.
    func differingPositions(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int, stride: Int) -> [Int] {
        var positions: [Int] = []
        words.withUnsafeBufferPointer { words in
            tail.withUnsafeBufferPointer { tail in
                blockWords.withUnsafeBufferPointer { blockWords in
                    var start = 0
                    while start < count {
                        let end = min(start + blockCount, count)
                        let (x, y) = (a + start * stride, b + start * stride)
                        let same =
                            memcmp(x, y, (end - start) * stride) == 0
                            || (end - start == blockCount
                                && (period > 0
                                    ? Self.samePhases(
                                        x, y, bytes: blockWords.count &* 8, period: period, blockWords)
                                    : Self.same(x, y, blockWords, UnsafeBufferPointer(start: nil, count: 0))))
                        if !same {
                            for index in start..<end
                            where !Self.same(a + index * stride, b + index * stride, words, tail) {
                                positions.append(index)
                            }
                        }
                        start = end
                    }
                }
            }
        }
        return positions
    }

    /// How many values in a row, from the ones at `a` and `b` onward (or, `backward`, from the
    /// ones there back toward lower addresses), have the same meaningful bytes: at most `count`.
    ///
    /// A `memcmp` settles a block of ``blockCount`` values whose bytes are all the same; in one
    /// whose bytes differ (its padding, on a heap in use), the values are read one by one.
    func sameRun(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int, stride: Int, backward: Bool) -> Int
    {
        words.withUnsafeBufferPointer { words in
            tail.withUnsafeBufferPointer { tail in
                var run = 0
                while run < count {
                    let length = min(blockCount, count - run)
                    let first = backward ? -(run + length - 1) * stride : run * stride
                    if memcmp(a + first, b + first, length * stride) == 0 {
                        run += length
                        continue
                    }
                    for _ in 0..<length {
                        let at = backward ? -run * stride : run * stride
                        guard Self.same(a + at, b + at, words, tail) else { return run }
                        run += 1
                    }
                }
                return run
            }
        }
    }

    /// Whether the blocks at `a` and `b` (`bytes` long) have the same bytes where `mask` has
    /// ones, for values whose ``period`` is at most 8 vectors: the differences of the vectors
    /// at each place in the period are gathered first, and masked once at the end, so that the
    /// mask is not read per vector. (Longer periods go word by word through the block's mask.)
    @inline(__always)
    private static func samePhases(
        _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, bytes: Int, period: Int,
        _ mask: UnsafeBufferPointer<UInt64>
    ) -> Bool {
        guard let m = mask.baseAddress.map(UnsafeRawPointer.init) else { return true }
        switch period / 16 {
        case 1: return samePhases(Vectors1.self, a, b, bytes: bytes, m)
        case 2: return samePhases(Vectors2.self, a, b, bytes: bytes, m)
        case 3: return samePhases(Vectors3.self, a, b, bytes: bytes, m)
        case 4: return samePhases(Vectors4.self, a, b, bytes: bytes, m)
        case 5: return samePhases(Vectors5.self, a, b, bytes: bytes, m)
        case 6: return samePhases(Vectors6.self, a, b, bytes: bytes, m)
        case 7: return samePhases(Vectors7.self, a, b, bytes: bytes, m)
        default: return samePhases(Vectors8.self, a, b, bytes: bytes, m)
        }
    }

    /// One specialization per period length (`P.count` vectors): the tests on the count are
    /// settled when compiling, and the loop holds only the loads, `^` and `|` it needs.
    @inline(__always)
    private static func samePhases<P: VectorCount>(
        _: P.Type, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, bytes: Int, _ m: UnsafeRawPointer
    ) -> Bool {
        func difference(_ byte: Int) -> SIMD2<UInt64> {
            a.loadUnaligned(fromByteOffset: byte, as: SIMD2<UInt64>.self)
                ^ b.loadUnaligned(fromByteOffset: byte, as: SIMD2<UInt64>.self)
        }
        func masked(_ d: SIMD2<UInt64>, _ phase: Int) -> SIMD2<UInt64> {
            phase < P.count ? d & m.loadUnaligned(fromByteOffset: phase &* 16, as: SIMD2<UInt64>.self) : d
        }
        var (d0, d1, d2, d3) = (SIMD2<UInt64>(), SIMD2<UInt64>(), SIMD2<UInt64>(), SIMD2<UInt64>())
        var (d4, d5, d6, d7) = (SIMD2<UInt64>(), SIMD2<UInt64>(), SIMD2<UInt64>(), SIMD2<UInt64>())
        assert(bytes % (P.count * 16) == 0, "a block of \(bytes) bytes, periods of \(P.count * 16)")
        var byte = 0
        while byte < bytes {
            d0 |= difference(byte)
            if P.count > 1 { d1 |= difference(byte &+ 16) }
            if P.count > 2 { d2 |= difference(byte &+ 32) }
            if P.count > 3 { d3 |= difference(byte &+ 48) }
            if P.count > 4 { d4 |= difference(byte &+ 64) }
            if P.count > 5 { d5 |= difference(byte &+ 80) }
            if P.count > 6 { d6 |= difference(byte &+ 96) }
            if P.count > 7 { d7 |= difference(byte &+ 112) }
            byte &+= P.count &* 16
        }
        let any =
            masked(d0, 0) | masked(d1, 1) | masked(d2, 2) | masked(d3, 3) | masked(d4, 4) | masked(d5, 5)
            | masked(d6, 6) | masked(d7, 7)
        return any == SIMD2()
    }

    /// Whether the values at `a` and `b` have the same meaningful bytes: then they are the same
    /// value. (Different bytes may still be equal values.)
    func same(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer) -> Bool {
        words.withUnsafeBufferPointer { words in tail.withUnsafeBufferPointer { Self.same(a, b, words, $0) } }
    }

    /// Reads no array inside the loop (no reference counting per element).
    @inline(__always)
    static func same(
        _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ words: UnsafeBufferPointer<UInt64>,
        _ tail: UnsafeBufferPointer<Bool>
    ) -> Bool {
        // Branch-free over the words, so that the loop runs at the speed of memory.
        var difference: UInt64 = 0
        for word in 0..<words.count {
            let x = a.loadUnaligned(fromByteOffset: word &* 8, as: UInt64.self)
            let y = b.loadUnaligned(fromByteOffset: word &* 8, as: UInt64.self)
            difference |= (x ^ y) & words[word]
        }
        guard difference == 0 else { return false }
        let offset = words.count * 8
        for index in 0..<tail.count
        where tail[index]
            && a.load(fromByteOffset: offset + index, as: UInt8.self)
                != b.load(fromByteOffset: offset + index, as: UInt8.self)
        {
            return false
        }
        return true
    }
}

private let cache = Locked<[ObjectIdentifier: MeaningfulBytes]>([:])

/// A number of 16-byte vectors known when compiling, for ``MeaningfulBytes``' specializations.
private protocol VectorCount { static var count: Int { get } }
private enum Vectors1: VectorCount { static var count: Int { 1 } }
private enum Vectors2: VectorCount { static var count: Int { 2 } }
private enum Vectors3: VectorCount { static var count: Int { 3 } }
private enum Vectors4: VectorCount { static var count: Int { 4 } }
private enum Vectors5: VectorCount { static var count: Int { 5 } }
private enum Vectors6: VectorCount { static var count: Int { 6 } }
private enum Vectors7: VectorCount { static var count: Int { 7 } }
private enum Vectors8: VectorCount { static var count: Int { 8 } }

/// Where an `Identifiable` element keeps its `id`, when the id is a stored property named `id`
/// whose type compares by its bytes (an integer or a `UUID`): then searching an array for an id
/// reads only those bytes, instead of copying each element through generic code.
struct IDField: @unchecked Sendable {
    let offset: Int
    let size: Int

    static func of<Element: Identifiable>(_: Element.Type) -> IDField? {
        let key = ObjectIdentifier(Element.self)
        if let cached = idFieldCache.withLock({ $0[key] }) { return cached }
        let field = find(Element.self)
        idFieldCache.withLock { $0[key] = .some(field) }
        return field
    }

    private static func find<Element: Identifiable>(_: Element.Type) -> IDField? {
        // An id compared by its bytes.
        let idType = Element.ID.self
        guard idType is any FixedWidthInteger.Type || idType == UUID.self,
            let offset = storedIDOffset(Element.self)
        else { return nil }
        return IDField(offset: offset, size: MemoryLayout<Element.ID>.size)
    }

    /// Where an element stored inline (not a class reference) keeps its `id`, when that is a
    /// stored property named `id` of the type `Identifiable` gives it.
    static func storedIDOffset<Element: Identifiable>(_: Element.Type) -> Int? {
        guard !(Element.self is AnyClass) else { return nil }
        let idType = Element.ID.self
        var found: Int?
        ContainedTypes.forEachField(of: Element.self, options: []) { name, offset, fieldType in
            guard String(cString: name) == "id", fieldType == idType else { return true }
            found = offset
            return false
        }
        return found
    }

    /// Whether an element of `elements` in `range` has the id of the one at `index`.
    func hasID<Element>(of index: Int, in elements: [Element], among range: Range<Int>) -> Bool {
        elements.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            let wanted = base + (index &* MemoryLayout<Element>.stride &+ offset)
            return firstIndex(of: wanted, in: base, stride: MemoryLayout<Element>.stride, among: range) != nil
        }
    }

    /// The first position in `range` of an element (at `base`, `stride` bytes apart) whose id has
    /// the bytes at `wanted`: a read of each one's id, as one or two words where it is 8 or 16
    /// bytes (an `Int`, a `UUID`), with no generic code and no call per element in the loop.
    private func firstIndex(
        of wanted: UnsafeRawPointer, in base: UnsafeRawPointer, stride: Int, among range: Range<Int>
    ) -> Int? {
        guard !range.isEmpty else { return nil }
        var at = range.lowerBound &* stride &+ offset
        switch size {
        case 8:
            let first = wanted.loadUnaligned(as: UInt64.self)
            for index in range {
                if base.loadUnaligned(fromByteOffset: at, as: UInt64.self) == first { return index }
                at &+= stride
            }
            return nil
        case 16:
            let first = wanted.loadUnaligned(as: UInt64.self)
            let second = wanted.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            for index in range {
                if base.loadUnaligned(fromByteOffset: at, as: UInt64.self) == first,
                    base.loadUnaligned(fromByteOffset: at &+ 8, as: UInt64.self) == second
                {
                    return index
                }
                at &+= stride
            }
            return nil
        default:
            return range.first { memcmp(base + ($0 &* stride &+ offset), wanted, size) == 0 }
        }
    }

    /// The ids of the elements of `elements` at `positions`, as their bytes (zero-filled to 16),
    /// or `nil` when an id takes more than 16 bytes.
    func words<Element>(of elements: [Element], at positions: some Collection<Int>) -> [IDWords]? {
        guard size <= 16 else { return nil }
        let stride = MemoryLayout<Element>.stride
        let (offset, size) = (offset, size)
        return elements.withUnsafeBytes { buffer -> [IDWords] in
            guard let base = buffer.baseAddress else { return [] }
            return positions.map { index in
                let id = base + (index &* stride &+ offset)
                switch size {
                case 8: return IDWords(low: id.loadUnaligned(as: UInt64.self), high: 0)
                case 16:
                    return IDWords(
                        low: id.loadUnaligned(as: UInt64.self),
                        high: id.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                default:
                    var words = IDWords(low: 0, high: 0)
                    withUnsafeMutableBytes(of: &words) {
                        $0.copyMemory(from: UnsafeRawBufferPointer(start: id, count: size))
                    }
                    return words
                }
            }
        }
    }

    /// The index of the first element of `elements` whose id has the bytes of `id`.
    func index<Element: Identifiable>(of id: Element.ID, in elements: [Element]) -> Int? {
        withUnsafeBytes(of: id) { target in
            elements.withUnsafeBytes { buffer -> Int? in
                guard let base = buffer.baseAddress, let wanted = target.baseAddress else { return nil }
                return firstIndex(
                    of: wanted, in: base, stride: MemoryLayout<Element>.stride, among: 0..<elements.count)
            }
        }
    }
}

private let idFieldCache = Locked<[ObjectIdentifier: IDField?]>([:])

/// The bytes of an id that compares by its bytes (``IDField``), as a key hashed by code made
/// for it rather than by the id's generic code.
struct IDWords: Hashable {
    var low: UInt64
    var high: UInt64
}

/// Where an `Identifiable` element keeps a `String` id, when it is a stored property named
/// `id`: equal strings may be stored apart, so they are compared as strings, read from their
/// place without the element's generic code.
struct StringIDField: @unchecked Sendable {
    let offset: Int

    static func of<Element: Identifiable>(_: Element.Type) -> StringIDField? {
        let key = ObjectIdentifier(Element.self)
        if let cached = stringIDFieldCache.withLock({ $0[key] }) { return cached }
        let found =
            Element.ID.self == String.self
            ? IDField.storedIDOffset(Element.self).map(StringIDField.init) : nil
        stringIDFieldCache.withLock { $0[key] = .some(found) }
        return found
    }

    /// Whether an element of `elements` in `range` has the id of the one at `index`.
    func hasID<Element>(of index: Int, in elements: [Element], among range: Range<Int>) -> Bool {
        let stride = MemoryLayout<Element>.stride
        let offset = offset
        return elements.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            // Read in place (borrowed, not copied): a copy of a string stored apart would
            // retain and release its storage, which costs more than comparing.
            let wanted = (base + (index &* stride &+ offset)).assumingMemoryBound(to: String.self)
            var at = range.lowerBound &* stride &+ offset
            for _ in range {
                if (base + at).assumingMemoryBound(to: String.self).pointee == wanted.pointee { return true }
                at &+= stride
            }
            return false
        }
    }

    /// The ids of the elements of `elements` at `positions`.
    func strings<Element>(of elements: [Element], at positions: some Collection<Int>) -> [String] {
        let stride = MemoryLayout<Element>.stride
        let offset = offset
        return elements.withUnsafeBytes { buffer -> [String] in
            guard let base = buffer.baseAddress else { return [] }
            return positions.map {
                (base + ($0 &* stride &+ offset)).assumingMemoryBound(to: String.self).pointee
            }
        }
    }
}

private let stringIDFieldCache = Locked<[ObjectIdentifier: StringIDField?]>([:])
