/// One step of a ``PathDescriptor``: a property name, an array index, a dictionary key or an
/// element identifier.
///
/// Keys and identifiers are held as canonical JSON text (what `JSONEncoder` writes with sorted
/// keys), so a component is `Codable`, `Hashable` and stable across processes whatever the key's
/// Swift type is.
///
/// ```swift
/// let component = PathComponent.property("title")
/// print(component)  // .title
/// ```
public enum PathComponent: Hashable, Sendable {
    /// A stored or registered property, by name.
    case property(String)
    /// An element of an ordered collection, by position.
    case index(Int)
    /// A dictionary value, by its key as canonical JSON text (`"alice"`, `42`).
    case key(String)
    /// An element of a collection of `Identifiable` values, by its `id` as canonical JSON text.
    case id(String)
}

extension PathComponent: CustomStringConvertible {
    /// The component's text form: `.title`, `[3]`, `[key: "alice"]`, `[id: 7]`.
    public var description: String {
        var text = ""
        PathText.write(self, first: false, into: &text)
        return text
    }
}
