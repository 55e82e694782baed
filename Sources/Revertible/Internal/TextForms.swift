import Foundation

/// The text a value holds, compared by its bytes where `==` compares it by meaning.
///
/// `String`'s `==` takes the same text in another Unicode normalization as equal ("é" as one
/// scalar, or as "e" and a combining accent), so a struct's `==` does too: an item whose name
/// was pasted again from a macOS file name is equal to the one before. A version must keep the
/// new bytes (undo is made and checked by bytes), so ``Equality/same(_:_:)`` asks this, for two
/// values `==` finds equal whose memory differs, whether any text in them changed only in form.
///
/// A type's text is found once from its layout (reflection, as ``FieldTable`` reads fields) and
/// the walk cached: a `String`, `Substring` or `Character`; an optional, array, contiguous
/// array or dictionary value holding text; a struct's stored properties and a tuple's
/// elements holding text; an enum's payload (through `Mirror`, only for the values compared),
/// nested to any depth. A class's properties (and a struct's that keeps its text in one:
/// `AttributedString`), a set's members and a dictionary's keys are not looked into.
///
/// Text whose bytes differ and that is *unequal* is left alone: the type's `==` chose to pass
/// over that property (one that compares only an `id`), and a change there stays hidden, as
/// the README says.
enum TextForms {
    /// Whether the text at `a` differs from the text at `b` only in form (canonically
    /// equivalent, other bytes) somewhere: two values of the type a check was made for.
    /// (Not `@Sendable`, for the generic containers': every one captures only other checks and
    /// offsets, never changed once made, so the cache may share them between threads.)
    typealias Check = (_ a: UnsafeRawPointer, _ b: UnsafeRawPointer) -> Bool

    /// Whether `a` and `b`, two values `==` finds equal, hold text that differs only in form
    /// anywhere in them, by `check`, the check made for `T`.
    static func differOnlyInForm<T>(_ a: T, _ b: T, _ check: Check) -> Bool {
        withUnsafePointer(to: a) { a in withUnsafePointer(to: b) { b in check(a, b) } }
    }

    /// The check for `T`'s values, or `nil` when they hold no text this reads.
    static func check<T>(for _: T.Type) -> Check? {
        var building: Set<ObjectIdentifier> = []
        return check(for: T.self, building: &building)
    }

    private enum Entry {
        case none
        case check(Check)
    }

    private static let cache = Locked<[ObjectIdentifier: Entry]>([:])

    fileprivate static func check<T>(for _: T.Type, building: inout Set<ObjectIdentifier>) -> Check? {
        let key = ObjectIdentifier(T.self)
        switch cache.withLock({ $0[key] }) {
        case .none?: return nil
        case .check(let check)?: return check
        case nil: break
        }
        guard building.insert(key).inserted else {
            // A type that holds itself (a tree's children): its check, found when this one
            // runs, once the walk that reached it here has cached it.
            return { a, b in Self.check(for: T.self)?(a, b) ?? false }
        }
        let made = make(T.self, building: &building)
        building.remove(key)
        cache.withLock { $0[key] = made.map(Entry.check) ?? Entry.none }
        return made
    }

    private static func make<T>(_: T.Type, building: inout Set<ObjectIdentifier>) -> Check? {
        // Text, and the commonest holders of it, read with no generic code: a diff of a
        // document decoded again asks this of every item.
        if T.self == String.self { return { a, b in stringOnlyInForm(a, b) } }
        if T.self == String?.self {
            return { a, b in
                let (x, y) = (
                    a.assumingMemoryBound(to: String?.self), b.assumingMemoryBound(to: String?.self)
                )
                guard x.pointee != nil, y.pointee != nil else { return false }
                // An optional's payload lies at its start.
                return stringOnlyInForm(a, b)
            }
        }
        if T.self == [String].self {
            return { a, b in
                a.assumingMemoryBound(to: [String].self).pointee.withUnsafeBufferPointer { x in
                    b.assumingMemoryBound(to: [String].self).pointee.withUnsafeBufferPointer { y in
                        guard x.count == y.count, x.baseAddress != y.baseAddress else { return false }
                        return x.indices.contains {
                            stringOnlyInForm(x.baseAddress! + $0, y.baseAddress! + $0)
                        }
                    }
                }
            }
        }
        if T.self == Substring.self {
            return { a, b in onlyInForm(a, b, as: Substring.self) { !$0.utf8.elementsEqual($1.utf8) } }
        }
        if T.self == Character.self {
            return { a, b in onlyInForm(a, b, as: Character.self) { !$0.utf8.elementsEqual($1.utf8) } }
        }
        if let container = T.self as? any TextContainer.Type {
            return container.textCheck(building: &building)
        }
        if T.self is AnyClass || ContainedTypes.isStandardLeaf(T.self) { return nil }
        var fields: [(offset: Int, check: Check)] = []
        ContainedTypes.forEachField(of: T.self, options: []) { _, offset, type in
            func field<F>(_: F.Type) -> Check? { check(for: F.self, building: &building) }
            if let check = _openExistential(type, do: field) { fields.append((offset, check)) }
            return true
        }
        if !fields.isEmpty {
            return { [fields] a, b in fields.contains { $0.check(a + $0.offset, b + $0.offset) } }
        }
        // An enum: the payload of the case both values hold (`==` found them equal), read
        // through reflection, when a case's payload may hold text.
        guard let payloads = ContainedTypes.payloadTypes(of: T.self),
            payloads.contains(where: { type in
                func payload<P>(_: P.Type) -> Bool { check(for: P.self, building: &building) != nil }
                return _openExistential(type, do: payload)
            })
        else { return nil }
        return { a, b in
            guard let a = Mirror(reflecting: a.assumingMemoryBound(to: T.self).pointee).children.first?.value,
                let b = Mirror(reflecting: b.assumingMemoryBound(to: T.self).pointee).children.first?.value
            else { return false }
            func payload<P>(_ a: P) -> Bool {
                guard let b = b as? P, let check = check(for: P.self) else { return false }
                return differOnlyInForm(a, b, check)
            }
            return _openExistential(a, do: payload)
        }
    }

    /// Whether the `String`s at `a` and `b` have other bytes and are equal.
    private static func stringOnlyInForm(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer) -> Bool {
        // The same bits: the same storage, or the same small string.
        guard memcmp(a, b, MemoryLayout<String>.size) != 0 else { return false }
        let (a, b) = (a.assumingMemoryBound(to: String.self), b.assumingMemoryBound(to: String.self))
        let same = a.pointee.utf8.withContiguousStorageIfAvailable { x in
            b.pointee.utf8.withContiguousStorageIfAvailable { y in
                x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
        switch same {
        case true??: return false
        case false??: return a.pointee == b.pointee
        default: return !a.pointee.hasSameBytes(as: b.pointee) && a.pointee == b.pointee
        }
    }

    /// Whether the texts at `a` and `b` have other bytes (`differ`) and are equal.
    private static func onlyInForm<Text: Equatable>(
        _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, as _: Text.Type, differ: (Text, Text) -> Bool
    ) -> Bool {
        // The same bits: the same storage, or the same small string.
        guard memcmp(a, b, MemoryLayout<Text>.size) != 0 else { return false }
        let (a, b) = (a.assumingMemoryBound(to: Text.self), b.assumingMemoryBound(to: Text.self))
        return differ(a.pointee, b.pointee) && a.pointee == b.pointee
    }
}

/// A standard container whose elements a text check looks into.
private protocol TextContainer {
    static func textCheck(building: inout Set<ObjectIdentifier>) -> TextForms.Check?
}

extension Optional: TextContainer {
    fileprivate static func textCheck(building: inout Set<ObjectIdentifier>) -> TextForms.Check? {
        guard let wrapped = TextForms.check(for: Wrapped.self, building: &building) else { return nil }
        return { a, b in
            guard let a = a.assumingMemoryBound(to: Self.self).pointee,
                let b = b.assumingMemoryBound(to: Self.self).pointee
            else { return false }
            return TextForms.differOnlyInForm(a, b, wrapped)
        }
    }
}

extension Array: TextContainer {
    fileprivate static func textCheck(building: inout Set<ObjectIdentifier>) -> TextForms.Check? {
        TextForms.check(for: Element.self, building: &building).map(contiguousCheck)
    }
}

extension ContiguousArray: TextContainer {
    fileprivate static func textCheck(building: inout Set<ObjectIdentifier>) -> TextForms.Check? {
        TextForms.check(for: Element.self, building: &building).map(contiguousCheck)
    }
}

extension RandomAccessCollection {
    /// The check of a collection of this type whose elements lie side by side, by the check of
    /// its elements.
    fileprivate static func contiguousCheck(_ element: @escaping TextForms.Check) -> TextForms.Check {
        { a, b in
            let (a, b) = (a.assumingMemoryBound(to: Self.self), b.assumingMemoryBound(to: Self.self))
            let found = a.pointee.withContiguousStorageIfAvailable { a in
                b.pointee.withContiguousStorageIfAvailable { b in
                    // One buffer shared by both: the same elements.
                    guard a.count == b.count, a.baseAddress != b.baseAddress else { return false }
                    return zip(a.indices, b.indices).contains {
                        element(a.baseAddress! + $0, b.baseAddress! + $1)
                    }
                }
            }
            return found.flatMap { $0 } ?? false
        }
    }
}

extension Dictionary: TextContainer {
    fileprivate static func textCheck(building: inout Set<ObjectIdentifier>) -> TextForms.Check? {
        guard let value = TextForms.check(for: Value.self, building: &building) else { return nil }
        return { a, b in
            let b = b.assumingMemoryBound(to: Self.self).pointee
            return a.assumingMemoryBound(to: Self.self).pointee.contains { key, old in
                guard let new = b[key] else { return false }
                return TextForms.differOnlyInForm(old, new, value)
            }
        }
    }
}
