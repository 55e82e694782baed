/// A collection tracked element by element: structural changes (insertions, removals, moves)
/// as one patch at the collection's path, and changes inside an element below that element's
/// key or id, such as `items[id: 7].title`.
///
/// `Array` and `Dictionary` adopt it. Adopt it for your own collection types to get the same
/// fine-grained history.
public protocol VersionableCollection: Versionable {
    /// What addresses one element: a position, a dictionary key or an element id.
    associatedtype ElementKey
    /// The element type, itself tracked.
    associatedtype VersionedElement: Versionable
    /// The patch that records insertions, removals and moves.
    associatedtype StructurePatch: LeafPatch<Self>

    /// Compares two versions.
    ///
    /// - Parameters:
    ///   - old: The earlier collection.
    ///   - new: The later collection.
    /// - Returns: The structural patch (`nil` when the structure is the same), and the elements
    ///   present in both versions that may differ, each with its key and both versions.
    static func versionedDifference(from old: Self, to new: Self) -> (
        structure: StructurePatch?,
        elements: [(key: ElementKey, old: VersionedElement, new: VersionedElement)]
    )

    /// The element at `key`, or `nil` when there is none.
    func versionedElement(at key: ElementKey) -> VersionedElement?

    /// Mutates the element at `key` in place.
    ///
    /// - Returns: `false` when there is no element at `key`.
    mutating func modifyVersionedElement(at key: ElementKey, _ body: (inout VersionedElement) -> Void) -> Bool

    /// The path component that names `key`.
    static func pathComponent(for key: ElementKey) -> PathComponent

    /// The key a stored path component names, or `nil` when it names none.
    static func elementKey(for component: PathComponent) -> ElementKey?
}

extension VersionableCollection {
    /// Registers the collection element by element.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        reverter.appendElementReversions(at: \.self, component: nil)
    }
}
