public import Foundation

/// A value stored as contiguous bytes, which a ``RangePatch`` edits by range.
public protocol RangePatchable: Equatable {
    /// The patch's stored kind: `"text"` for `String`, `"bytes"` for `Data`.
    static var rangePatchKind: String { get }
    /// Whether ranges must start and end on UTF-8 scalar boundaries.
    static var isScalarAligned: Bool { get }
    /// Calls `body` with the value's bytes.
    func withPatchableBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    /// Makes a value from bytes.
    init(patchableBytes: UnsafeRawBufferPointer)
    /// Replaces the bytes in `range` with those of `replacement`.
    mutating func replacePatchableBytes(in range: Range<Int>, with replacement: Self)
}

/// The change of a `String` or `Data`: only the changed range, with a content digest.
///
/// Two values are compared byte by byte from both ends; the patch keeps the changed middle of
/// each side, both lengths and, for values over 256 bytes, a stable 64-bit digest (XXH64) of
/// each whole side. One edit to 1 MiB of `Data` therefore keeps a few dozen bytes, yet reverting
/// a value that differs anywhere — even at byte 12,345 only — is refused. Values up to 256 bytes
/// are kept whole, which reads better in a stored record.
///
/// Stored as `{"offset": 5, "old": "", "new": " world", "oldCount": 5, "newCount": 11}`, with
/// `oldDigest`/`newDigest` as 16 hex digits when present.
public struct RangePatch<Value: RangePatchable>: LeafPatch {
    /// Where the changed range starts, in bytes (UTF-8 code units for `String`).
    public var offset: Int
    /// The old value's bytes in the changed range.
    public var old: Value
    /// The new value's bytes in the changed range.
    public var new: Value
    /// The old value's total length in bytes.
    public var oldCount: Int
    /// The new value's total length in bytes.
    public var newCount: Int
    /// Digest of the whole old value, for values over 256 bytes.
    public var oldDigest: UInt64?
    /// Digest of the whole new value, for values over 256 bytes.
    public var newDigest: UInt64?

    /// The patch turning `old` into `new`.
    ///
    /// - Complexity: O(*n*) in the values' length.
    public init(from old: Value, to new: Value) {
        self = old.withPatchableBytes { oldBytes in
            new.withPatchableBytes { newBytes in
                Self(oldBytes: oldBytes, newBytes: newBytes)
            }
        }
    }

    /// A patch of stored parts, as a decoder reads them; check ``rangeFits`` before use.
    init(
        offset: Int, old: Value, new: Value, oldCount: Int, newCount: Int, oldDigest: UInt64?,
        newDigest: UInt64?
    ) {
        (self.offset, self.old, self.new) = (offset, old, new)
        (self.oldCount, self.newCount, self.oldDigest, self.newDigest) = (
            oldCount, newCount, oldDigest, newDigest
        )
    }

    /// Whether the stored range fits the stored lengths, as a patch made by diffing does.
    var rangeFits: Bool {
        let oldLength = old.withPatchableBytes { $0.count }
        let newLength = new.withPatchableBytes { $0.count }
        // Written so that no stored number, however large, can overflow: counts and lengths are
        // checked non-negative first, and only differences of non-negative numbers are taken.
        return offset >= 0 && oldCount >= 0 && newCount >= 0 && oldLength <= oldCount && newLength <= newCount
            && offset <= oldCount - oldLength && offset <= newCount - newLength
            && oldCount - oldLength == newCount - newLength
    }

    private init(oldBytes: UnsafeRawBufferPointer, newBytes: UnsafeRawBufferPointer) {
        oldCount = oldBytes.count
        newCount = newBytes.count
        if max(oldBytes.count, newBytes.count) <= ByteRange.wholeValueLimit {
            offset = 0
            old = Value(patchableBytes: oldBytes)
            new = Value(patchableBytes: newBytes)
            return
        }
        let range = ByteRange.changed(old: oldBytes, new: newBytes, scalarAligned: Value.isScalarAligned)
        offset = range.offset
        old = Value(
            patchableBytes: UnsafeRawBufferPointer(
                rebasing: oldBytes[range.offset..<range.offset + range.oldLength]))
        new = Value(
            patchableBytes: UnsafeRawBufferPointer(
                rebasing: newBytes[range.offset..<range.offset + range.newLength]))
        oldDigest = StableDigest.of(oldBytes)
        newDigest = StableDigest.of(newBytes)
    }

    /// `"text"` for `String`, `"bytes"` for `Data`.
    public static var kind: String { Value.rangePatchKind }

    public func mismatch(in value: Value, expecting side: PatchSide) -> String? {
        let (count, slice, digest) = side == .new ? (newCount, new, newDigest) : (oldCount, old, oldDigest)
        if oldDigest == nil, newDigest == nil {
            // Both sides were kept whole: compare them and say what was found. By bytes, as
            // the rest of a patch is made and checked: `==` takes a `String` in another Unicode
            // normalization as equal, which is another version.
            guard !value.hasSameBytes(as: slice) else { return nil }
            return
                "expected \(String(describing: slice).truncatedForMessage), found \(String(describing: value).truncatedForMessage)"
        }
        return value.withPatchableBytes { bytes -> String? in
            guard bytes.count == count else { return "expected \(count) bytes, found \(bytes.count)" }
            let sliceMatches = slice.withPatchableBytes { expected in
                // memcmp, not a generic element loop: the slice can be megabytes.
                expected.isEmpty
                    || memcmp(bytes.baseAddress! + offset, expected.baseAddress!, expected.count) == 0
            }
            guard sliceMatches else { return "the bytes at \(offset) differ" }
            if let digest, StableDigest.of(bytes) != digest { return "the content digest differs" }
            return nil
        }
    }

    /// The whole value on `side` where the patch keeps it whole (values up to 256 bytes are
    /// kept whole on both sides): what applying the patch toward `side` makes, whatever value it
    /// is applied to. `nil` where it keeps only a changed range.
    func whole(_ side: PatchSide) -> Value? {
        let (slice, count) = side == .new ? (new, newCount) : (old, oldCount)
        guard offset == 0, slice.withPatchableBytes(\.count) == count else { return nil }
        return slice
    }

    public func apply(to value: inout Value, toward side: PatchSide) {
        let (current, target) = side == .new ? (old, new) : (new, old)
        let currentLength = current.withPatchableBytes(\.count)
        // `mismatch` was checked first, so the range fits. A damaged reversion whose changes
        // overlap could bring another value; it is left as it is rather than stop the process.
        guard offset + currentLength <= value.withPatchableBytes(\.count) else { return }
        value.replacePatchableBytes(in: offset..<offset + currentLength, with: target)
    }
}

extension RangePatchable {
    /// Whether both hold the same bytes (a `String`'s `==` compares Unicode text: the same text
    /// in another normalization is equal).
    func hasSameBytes(as other: Self) -> Bool {
        withPatchableBytes { a in
            other.withPatchableBytes { b in
                a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
            }
        }
    }
}

extension RangePatch: Equatable {}
extension RangePatch: Sendable where Value: Sendable {}

extension RangePatch: Codable where Value: Codable {
    private enum CodingKeys: String, CodingKey {
        case offset, old, new, oldCount, newCount, oldDigest, newDigest
    }

    /// Decodes a patch; digests are 16 hex digits.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        offset = try container.decode(Int.self, forKey: .offset)
        old = try container.decode(Value.self, forKey: .old)
        new = try container.decode(Value.self, forKey: .new)
        oldCount = try container.decode(Int.self, forKey: .oldCount)
        newCount = try container.decode(Int.self, forKey: .newCount)
        oldDigest = try Self.digest(container, .oldDigest)
        newDigest = try Self.digest(container, .newDigest)
        guard rangeFits else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "The range does not fit the stored lengths"))
        }
    }

    private static func digest(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws
        -> UInt64?
    {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard text.utf8.count == 16, let digest = UInt64(text, radix: 16) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "Expected 16 hex digits")
        }
        return digest
    }

    /// Encodes the patch; digests as 16 hex digits.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(offset, forKey: .offset)
        try container.encode(old, forKey: .old)
        try container.encode(new, forKey: .new)
        try container.encode(oldCount, forKey: .oldCount)
        try container.encode(newCount, forKey: .newCount)
        if let oldDigest { try container.encode(DirectJSON.hex(oldDigest), forKey: .oldDigest) }
        if let newDigest { try container.encode(DirectJSON.hex(newDigest), forKey: .newDigest) }
    }
}

extension String: RangePatchable, VersionableLeaf {
    /// Records only the changed range of UTF-8; see ``RangePatch``.
    public typealias Patch = RangePatch<String>

    /// `"text"`.
    public static var rangePatchKind: String { "text" }
    /// `true`: a patch never splits a Unicode scalar.
    public static var isScalarAligned: Bool { true }

    /// Calls `body` with the string's UTF-8 bytes.
    public func withPatchableBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes UTF-8 bytes.
    public init(patchableBytes: UnsafeRawBufferPointer) {
        self = String(decoding: patchableBytes, as: UTF8.self)
    }

    /// Replaces a range of UTF-8 bytes that starts and ends on scalar boundaries.
    public mutating func replacePatchableBytes(in range: Range<Int>, with replacement: String) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count - range.count + replacement.utf8.count)
        withPatchableBytes { current in
            bytes.append(contentsOf: current[..<range.lowerBound])
            bytes.append(contentsOf: replacement.utf8)
            bytes.append(contentsOf: current[range.upperBound...])
        }
        self = String(decoding: bytes, as: UTF8.self)
    }

    /// Makes a ``RangePatch``.
    public static func patch(from old: String, to new: String) -> RangePatch<String> {
        RangePatch(from: old, to: new)
    }
}

extension Data: RangePatchable, VersionableLeaf {
    /// Records only the changed range of bytes; see ``RangePatch``.
    public typealias Patch = RangePatch<Data>

    /// `"bytes"`.
    public static var rangePatchKind: String { "bytes" }
    /// `false`.
    public static var isScalarAligned: Bool { false }

    /// Calls `body` with the bytes.
    public func withPatchableBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }

    /// Copies bytes.
    public init(patchableBytes: UnsafeRawBufferPointer) {
        self.init(patchableBytes)
    }

    /// Replaces a range of bytes in place.
    public mutating func replacePatchableBytes(in range: Range<Int>, with replacement: Data) {
        let base = startIndex
        replaceSubrange(base + range.lowerBound..<base + range.upperBound, with: replacement)
    }

    /// Makes a ``RangePatch``.
    public static func patch(from old: Data, to new: Data) -> RangePatch<Data> {
        RangePatch(from: old, to: new)
    }
}
