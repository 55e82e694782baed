/// Conformances known only at run time, opened once per operation rather than per element.
enum DynamicConformance {
    /// ``Equality/same(_:_:)`` for `T` when it is `Equatable` (`==`, with NaNs and text in
    /// another form as it takes them).
    static func equality<T>(of _: T.Type) -> ((T, T) -> Bool)? {
        guard let type = T.self as? any Equatable.Type else { return nil }
        return equality(type, T.self)
    }

    private static func equality<E: Equatable, T>(_: E.Type, _: T.Type) -> (T, T) -> Bool {
        let text = TextForms.check(for: E.self)
        return { Equality.same(unsafeBitCast($0, to: E.self), unsafeBitCast($1, to: E.self), text: text) }
    }

    /// Whether two elements have equal `id`s, when `T` is `Identifiable`; else `nil`.
    static func sameID<T>(_ a: T, _ b: T) -> Bool? {
        guard let identifiable = T.self as? any Identifiable.Type else { return nil }
        return sameID(identifiable, a, b)
    }

    private static func sameID<E: Identifiable, T>(_: E.Type, _ a: T, _ b: T) -> Bool {
        unsafeBitCast(a, to: E.self).id == unsafeBitCast(b, to: E.self).id
    }
}
