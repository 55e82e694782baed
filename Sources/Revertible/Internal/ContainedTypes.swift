/// What the standard containers hold, read from their types alone: the element type of an
/// array, set or dictionary (its values), and the type an optional wraps.
enum ContainedTypes {
    /// The element type of an array, set or dictionary (its values), without the optionals
    /// around either, or `nil`.
    static func elementType(of type: Any.Type) -> Any.Type? {
        (unwrapped(type) as? any StandardCollection.Type).map { unwrapped($0.elementType) }
    }

    /// `type` without the optionals around it.
    static func unwrapped(_ type: Any.Type) -> Any.Type {
        guard let optional = type as? any OptionalType.Type else { return type }
        return unwrapped(optional.wrappedType)
    }
}

/// The collections whose elements a stored path reaches by index, key or id.
private protocol StandardCollection {
    static var elementType: Any.Type { get }
}

extension Array: StandardCollection { fileprivate static var elementType: Any.Type { Element.self } }
extension ContiguousArray: StandardCollection {
    fileprivate static var elementType: Any.Type { Element.self }
}
extension Set: StandardCollection { fileprivate static var elementType: Any.Type { Element.self } }
extension Dictionary: StandardCollection { fileprivate static var elementType: Any.Type { Value.self } }

private protocol OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType { fileprivate static var wrappedType: Any.Type { Wrapped.self } }
