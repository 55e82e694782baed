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

    /// ``versionedDifference(from:to:)`` with where each element sits in both versions, so that
    /// reverting finds it without a search. The default gives no positions.
    ///
    /// - Parameters:
    ///   - old: The earlier collection.
    ///   - new: The later collection.
    /// - Returns: The structural patch, and the elements present in both versions that may
    ///   differ.
    static func positionedDifference(from old: Self, to new: Self) -> (
        structure: StructurePatch?, elements: [VersionedElementChange<Self>]
    )

    /// Where the element at `key` is (a position ``versionedElement(at:position:)`` takes),
    /// or `nil` when there is none or the collection has no positions. The default is `nil`.
    func versionedPosition(of key: ElementKey) -> Int?

    /// The element at `key`, looked for at `position` first; a wrong or `nil` position only
    /// costs the search. The default ignores the position.
    func versionedElement(at key: ElementKey, position: Int?) -> VersionedElement?

    /// Mutates the element at `key` in place, looked for at `position` first.
    ///
    /// - Returns: `false` when there is no element at `key`.
    mutating func modifyVersionedElement(
        at key: ElementKey, position: Int?, _ body: (inout VersionedElement) -> Void
    ) -> Bool

    /// The path component that names `key`.
    static func pathComponent(for key: ElementKey) -> PathComponent

    /// The key a stored path component names, or `nil` when it names none.
    static func elementKey(for component: PathComponent) -> ElementKey?
}

/// An element present in both versions of a collection, with where it sits in each.
public struct VersionedElementChange<Collection: VersionableCollection> {
    /// The element's key or id.
    public var key: Collection.ElementKey
    /// The element in the earlier version.
    public var old: Collection.VersionedElement
    /// The element in the later version.
    public var new: Collection.VersionedElement
    /// Its position in the earlier version, when the collection has positions.
    public var oldPosition: Int?
    /// Its position in the later version, when the collection has positions.
    public var newPosition: Int?

    /// Describes one element of both versions.
    public init(
        key: Collection.ElementKey, old: Collection.VersionedElement, new: Collection.VersionedElement,
        oldPosition: Int? = nil, newPosition: Int? = nil
    ) {
        self.key = key
        self.old = old
        self.new = new
        self.oldPosition = oldPosition
        self.newPosition = newPosition
    }
}

extension VersionableCollection {
    /// The elements of ``versionedDifference(from:to:)``, without positions.
    public static func positionedDifference(from old: Self, to new: Self) -> (
        structure: StructurePatch?, elements: [VersionedElementChange<Self>]
    ) {
        let (structure, elements) = versionedDifference(from: old, to: new)
        return (structure, elements.map { VersionedElementChange(key: $0.key, old: $0.old, new: $0.new) })
    }

    /// No positions.
    public func versionedPosition(of key: ElementKey) -> Int? { nil }

    /// The element at `key`, found by key alone.
    public func versionedElement(at key: ElementKey, position: Int?) -> VersionedElement? {
        versionedElement(at: key)
    }

    /// Mutates the element at `key`, found by key alone.
    public mutating func modifyVersionedElement(
        at key: ElementKey, position: Int?, _ body: (inout VersionedElement) -> Void
    ) -> Bool {
        modifyVersionedElement(at: key, body)
    }
}

extension VersionableCollection {
    /// Registers the collection element by element.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        reverter.appendElementReversions(at: KeyPathCache.identity(), component: nil)
    }
}
