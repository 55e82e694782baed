import Foundation

/// Which side of a change a patch is asked about: the value before it or after it.
public enum PatchSide: Sendable, Hashable {
    /// The earlier value, which reverting produces.
    case old
    /// The later value, which a reversion is applied to.
    case new
}

/// One leaf's change, recorded so that it can be applied in both directions and checked first.
///
/// A patch knows what each side of the change looks like at its location, so a reversion can
/// refuse a value that is not the version it was made from. Make a patch `Codable` so that
/// Keepsake can store it; ``kind`` names its format in stored records.
public protocol LeafPatch<Value> {
    /// The leaf type the patch applies to.
    associatedtype Value

    /// A short, stable name for the patch's stored format, such as `"replace"` or `"text"`.
    static var kind: String { get }

    /// Says why `value` is not the `side` this patch expects, or `nil` when it is.
    ///
    /// - Parameters:
    ///   - value: The value found at the patch's location.
    ///   - side: The side the value should be.
    /// - Returns: A short reason for a mismatch, or `nil`.
    func mismatch(in value: Value, expecting side: PatchSide) -> String?

    /// Turns the other side into `side`.
    ///
    /// - Parameters:
    ///   - value: A value for which ``mismatch(in:expecting:)`` returned `nil` for the other side.
    ///   - side: The side to produce.
    func apply(to value: inout Value, toward side: PatchSide)
}

/// A leaf value that records a change as one ``LeafPatch``.
///
/// Adopting it is how you make your own type diffable as a unit. With the default
/// ``Replacement`` patch it takes one line:
///
/// ```swift
/// enum Color: String, Codable, VersionableLeaf { case red, green, blue }
/// ```
///
/// Types with a cheaper representation of a change provide their own `Patch`, as `String` and
/// `Data` do (only the changed range is kept).
public protocol VersionableLeaf: Versionable, Equatable {
    /// The patch that records a change of this type.
    associatedtype Patch: LeafPatch<Self> = Replacement<Self>

    /// Makes the patch that turns `old` into `new` and back.
    ///
    /// - Parameters:
    ///   - old: The earlier value.
    ///   - new: The later value, not equal to `old`.
    /// - Returns: A patch whose `.old` side is `old` and `.new` side is `new`.
    static func patch(from old: Self, to new: Self) -> Patch
}

extension VersionableLeaf {
    /// Registers the value itself as one leaf.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        reverter.appendLeafReversion(at: KeyPathCache.identity(), component: nil)
    }
}

extension VersionableLeaf where Patch == Replacement<Self> {
    /// Records the whole old and new value.
    public static func patch(from old: Self, to new: Self) -> Replacement<Self> {
        Replacement(old: old, new: new)
    }
}

/// The simplest patch: both whole values.
///
/// Reverting checks the current value equals ``new`` when the type is `Equatable` (otherwise it
/// cannot check); for a ``Versionable`` type, in what it tracks. Stored as `{"old": …, "new": …}`.
public struct Replacement<Value>: LeafPatch {
    /// The value before the change.
    public var old: Value
    /// The value after the change.
    public var new: Value

    /// Records a change from `old` to `new`.
    public init(old: Value, new: Value) {
        self.old = old
        self.new = new
    }

    /// `"replace"`.
    public static var kind: String { "replace" }

    public func mismatch(in value: Value, expecting side: PatchSide) -> String? {
        let expected = side == .new ? new : old
        if Equality.sameTracked(value, expected) == false {
            return
                "expected \(String(describing: expected).truncatedForMessage), found \(String(describing: value).truncatedForMessage)"
        }
        return nil
    }

    public func apply(to value: inout Value, toward side: PatchSide) {
        value = side == .new ? new : old
    }
}

extension Replacement: Equatable where Value: Equatable {}
extension Replacement: Hashable where Value: Hashable {}
extension Replacement: Sendable where Value: Sendable {}
extension Replacement: Codable where Value: Codable {}

extension String {
    var truncatedForMessage: String {
        count <= 60 ? debugDescription : String(prefix(57)).debugDescription + "…"
    }
}

/// Equality as versioning needs it: `==`, except that NaNs are the same as each other, alone or
/// inside a value (a struct's field, an array's element, an enum's payload). Otherwise a value
/// holding a NaN would look changed on every diff, and a change to or from it could never be
/// undone or redone.
///
/// And a `String` is the same only with the same bytes: `==` also takes the same text in
/// another Unicode normalization as equal ("é" as one scalar, or as "e" and a combining accent,
/// as text pasted from a macOS file name holds it). Such a change went unrecorded: the value
/// kept the new bytes, the history the old, and undoing an earlier change of that text, which
/// is made and checked by bytes, was refused (or, on text kept whole, made text that was
/// neither version). So a value of another type is the same only when `==` finds it equal and
/// no text in it differs in form only (``TextForms``, read only when the two differ in memory):
/// an array's element or a dictionary's value that `==` finds equal is then looked into when an
/// item's name changed form. For the same reason ``sameTracked(_:_:)`` diffs equal values whose
/// bytes differ.
enum Equality {
    /// Whether `a` and `b` are the same version of a value.
    static func same<E: Equatable>(_ a: E, _ b: E) -> Bool { same(a, b, text: TextForms.check(for: E.self)) }

    /// ``same(_:_:)`` with `E`'s text check (``TextForms/check(for:)``), looked up only when
    /// needed: a caller comparing many values looks it up once.
    static func same<E: Equatable>(_ a: E, _ b: E, text: @autoclosure () -> TextForms.Check?) -> Bool {
        if E.self == String.self {
            return unsafeBitCast(a, to: String.self).hasSameBytes(as: unsafeBitCast(b, to: String.self))
        }
        // Only a value unequal to itself can hold a NaN: the rest is left for that rare case.
        guard a == b else { return a != a && sameHoldingNaN(a, b) }
        // Equal values whose bytes differ may hold text in another form (see `TextForms`).
        guard !sameMemory(a, b), let text = text() else { return true }
        return !TextForms.differOnlyInForm(a, b, text)
    }

    /// Whether `a` and `b` have the same bytes in memory: then they are copies of one value
    /// (the same references and the same bits). Padding counts, so other bytes may still be
    /// the same value.
    static func sameMemory<T>(_ a: T, _ b: T) -> Bool {
        withUnsafeBytes(of: a) { a in
            withUnsafeBytes(of: b) { b in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    /// ``same(_:_:)`` when `T` is `Equatable` at run time, else `nil`.
    static func equal<T>(_ a: T, _ b: T) -> Bool? {
        guard let type = T.self as? any Equatable.Type else { return nil }
        return equal(type, a, b)
    }

    /// Whether `a` and `b` hold the same versions of what is tracked, as a reversion checks a
    /// value it is given: for a ``Versionable`` type that is not a leaf, whether a diff finds
    /// no change (what `@VersionableIgnored` leaves out, such as a `lastOpened` date, may
    /// differ); otherwise ``equal(_:_:)``.
    ///
    /// `==` compares ignored properties too. A value replaced whole or an entry removed by a
    /// change then refused its undo once an ignored property had changed since, with another
    /// edit (an app that sets `lastOpened` as it edits): the undo stack stopped there.
    ///
    /// Equal values with other bytes are diffed too: `==` takes a `String` inside them in
    /// another Unicode normalization as equal, which is another version.
    static func sameTracked<T>(_ a: T, _ b: T) -> Bool? {
        // `==` first: equal values with the same bytes are the same in what is tracked too, and
        // that is the usual answer. Only a difference may lie in what is ignored.
        let equal = equal(a, b)
        guard !(T.self is any VersionableLeaf.Type), let type = T.self as? any Versionable.Type else {
            return equal
        }
        if equal == true, sameMemory(a, b) {
            return true
        }
        return sameTracked(type, a, b)
    }

    private static func sameTracked<V: Versionable, T>(_: V.Type, _ a: T, _ b: T) -> Bool {
        unsafeBitCast(b, to: V.self).reversion(to: unsafeBitCast(a, to: V.self)) == nil
    }

    private static func equal<E: Equatable, T>(_: E.Type, _ a: T, _ b: T) -> Bool {
        same(unsafeBitCast(a, to: E.self), unsafeBitCast(b, to: E.self))
    }

    /// Whether `a`, a value unequal to itself, and `b` are the same but for the NaNs in them:
    /// two NaNs; two copies of one value (the same bytes); or two values whose JSON is the same,
    /// with each NaN written as `"NaN"`, as records write it.
    private static func sameHoldingNaN<T>(_ a: T, _ b: T) -> Bool {
        if let a = a as? any FloatingPoint { return a.isNaN && (b as? any FloatingPoint)?.isNaN == true }
        if sameMemory(a, b) { return true }
        guard let a = a as? any Encodable, let b = b as? any Encodable else { return false }
        let encoder = ChangeRecord.makeEncoder()
        guard let aJSON = try? encoder.encode(a), let bJSON = try? encoder.encode(b) else { return false }
        return aJSON == bJSON
    }
}
