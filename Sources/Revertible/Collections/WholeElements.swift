/// An array whose elements are `Equatable` but not ``Versionable`` (a plain `Codable` struct,
/// say), tracked with no code element by element as `Array` tracks its elements: each changed
/// element below `items[id: 7]`, or `items[3]` without ids (see ``WholeElement`` for what is
/// recorded there), and insertions, removals and moves as one ``ArrayPatch`` at `items`, stored
/// as an array of `Versionable` elements stores them.
///
/// Without it such an array was replaced whole: an edit to one title of a thousand items stored
/// both thousand-item arrays, and undoing it decoded them. A stored property of such an array
/// type is registered through the root's `[wholeForm:]` subscript.
struct WholeElements<Element: Equatable>: VersionableCollection, Equatable {
    var elements: [Element]

    typealias ElementKey = [Element].ElementKey
    typealias VersionedElement = WholeElement<Element>
    typealias StructurePatch = WholeElementsPatch<Element>

    func addReversions(into reverter: inout some Reverter<Self>) {
        reverter.appendElementReversions(at: KeyPathCache.identity(), component: nil)
    }

    static func versionedDifference(from old: Self, to new: Self) -> (
        structure: StructurePatch?,
        elements: [(key: ElementKey, old: VersionedElement, new: VersionedElement)]
    ) {
        let (structure, elements) = positionedDifference(from: old, to: new)
        return (structure, elements.map { ($0.key, $0.old, $0.new) })
    }

    /// `Array`'s difference of the elements, only the changed ones wrapped.
    static func positionedDifference(from old: Self, to new: Self) -> (
        structure: StructurePatch?, elements: [VersionedElementChange<Self>]
    ) {
        let (structure, elements) = [Element].elementDifference(from: old.elements, to: new.elements) {
            VersionedElementChange<Self>(
                key: $0, old: WholeElement($1), new: WholeElement($2), oldPosition: $3, newPosition: $4)
        }
        return (structure.map { WholeElementsPatch(patch: $0) }, elements)
    }

    func versionedPosition(of key: ElementKey) -> Int? { elements.elementIndex(of: key) }

    func versionedElement(at key: ElementKey) -> VersionedElement? {
        versionedElement(at: key, position: nil)
    }

    func versionedElement(at key: ElementKey, position: Int?) -> VersionedElement? {
        elements.elementIndex(of: key, position: position).map { WholeElement(elements[$0]) }
    }

    mutating func modifyVersionedElement(at key: ElementKey, _ body: (inout VersionedElement) -> Void) -> Bool
    {
        modifyVersionedElement(at: key, position: nil, body)
    }

    mutating func modifyVersionedElement(
        at key: ElementKey, position: Int?, _ body: (inout VersionedElement) -> Void
    ) -> Bool {
        guard let index = elements.elementIndex(of: key, position: position) else { return false }
        WholeElement.modify(&elements[index], body)
        return true
    }

    static func pathComponent(for key: ElementKey) -> PathComponent {
        [Element].elementPathComponent(for: key)
    }

    static func elementKey(for component: PathComponent) -> ElementKey? {
        [Element].elementKey(forComponent: component)
    }
}

extension WholeElements: Codable where Element: Codable {
    init(from decoder: any Decoder) throws {
        elements = try [Element](from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try elements.encode(to: encoder)
    }
}

/// One element of ``WholeElements`` or value of ``WholeValues``. Its JSON is the element's.
///
/// A plain `Codable` struct is tracked field by field, as a stored property of its type is
/// (`strokes[id: 7].color`), when ``FieldTable/tracksPlainFields`` says it can be and its
/// `Codable` form is an object of its fields; any other element is a leaf, a change to it the
/// whole old and new element (`strokes[id: 7]`, `replace`), as every element was stored by
/// earlier releases.
struct WholeElement<Element: Equatable>: VersionableLeaf {
    var value: Element

    init(_ value: Element) { self.value = value }

    static func == (a: Self, b: Self) -> Bool { Equality.same(a.value, b.value) }

    func addReversions(into reverter: inout some Reverter<Self>) {
        if let value = Self.trackedValue, reverter.appendPlainFieldReversions(at: value, component: nil) {
            return
        }
        reverter.appendLeafReversion(at: KeyPathCache.identity(), component: nil)
    }

    /// `\Self.value` when the element type is a plain `Codable` struct that can be tracked field
    /// by field, else `nil`: decided once per type, found by one lookup per changed element.
    private static var trackedValue: WritableKeyPath<Self, Element>? {
        typealias Found = KeyPathCache.Box<WritableKeyPath<Self, Element>?>
        let found = KeyPathCache.object(.wholeElementValue, of: Self.self) { () -> Found in
            let tracked = Element.self is any Codable.Type && FieldTable<Element>.shared.tracksPlainFields
            let value: WritableKeyPath<Self, Element> = \Self.value
            return Found(tracked ? value : nil)
        }
        return found.value
    }
}

extension WholeElement {
    /// Runs `body` on `element` as a `WholeElement`, in place: a copy would share the element's
    /// storage (its arrays, its strings), so a change inside it would copy them.
    static func modify(_ element: inout Element, _ body: (inout Self) -> Void) {
        // A struct of one stored property is laid out as that property.
        withUnsafeMutablePointer(to: &element) { pointer in
            pointer.withMemoryRebound(to: Self.self, capacity: 1) { body(&$0.pointee) }
        }
    }
}

extension WholeElement: Identifiable where Element: Identifiable {
    var id: Element.ID { value.id }
}

extension WholeElement: Codable where Element: Codable {
    init(from decoder: any Decoder) throws {
        value = try Element(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// The insertions, removals and moves of ``WholeElements``: an ``ArrayPatch`` of its elements,
/// stored as one.
struct WholeElementsPatch<Element: Equatable>: LeafPatch {
    var patch: ArrayPatch<Element>

    static var kind: String { ArrayPatch<Element>.kind }

    func mismatch(in value: WholeElements<Element>, expecting side: PatchSide) -> String? {
        patch.mismatch(in: value.elements, expecting: side)
    }

    func apply(to value: inout WholeElements<Element>, toward side: PatchSide) {
        patch.apply(to: &value.elements, toward: side)
    }
}

extension WholeElementsPatch: Codable where Element: Codable {
    init(from decoder: any Decoder) throws {
        patch = try ArrayPatch(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try patch.encode(to: encoder)
    }
}

/// The values of a dictionary whose values are `Equatable` but not ``Versionable``, tracked
/// with no code entry by entry as `Dictionary` tracks them, each changed value below its key
/// (`scores[key: "alice"]`, see ``WholeElement``), and added and removed entries as one
/// ``DictionaryPatch`` at the dictionary's path.
struct WholeValues<Key: Hashable, Value: Equatable>: VersionableCollection, Equatable {
    var entries: [Key: Value]

    typealias ElementKey = Key
    typealias VersionedElement = WholeElement<Value>
    typealias StructurePatch = WholeValuesPatch<Key, Value>

    func addReversions(into reverter: inout some Reverter<Self>) {
        reverter.appendElementReversions(at: KeyPathCache.identity(), component: nil)
    }

    static func versionedDifference(from old: Self, to new: Self) -> (
        structure: StructurePatch?, elements: [(key: Key, old: VersionedElement, new: VersionedElement)]
    ) {
        let (structure, elements) = [Key: Value].entryDifference(from: old.entries, to: new.entries)
        return (
            structure.map { WholeValuesPatch(patch: $0) },
            elements.map { ($0.key, WholeElement($0.old), WholeElement($0.new)) }
        )
    }

    func versionedElement(at key: Key) -> VersionedElement? {
        entries[key].map { WholeElement($0) }
    }

    mutating func modifyVersionedElement(at key: Key, _ body: (inout VersionedElement) -> Void) -> Bool {
        guard let index = entries.index(forKey: key) else { return false }
        WholeElement.modify(&entries.values[index], body)
        return true
    }

    static func pathComponent(for key: Key) -> PathComponent {
        [Key: VersionedElement].pathComponent(for: key)
    }

    static func elementKey(for component: PathComponent) -> Key? {
        [Key: VersionedElement].elementKey(for: component)
    }
}

extension WholeValues: Codable where Key: Codable, Value: Codable {
    init(from decoder: any Decoder) throws {
        entries = try [Key: Value](from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try entries.encode(to: encoder)
    }
}

/// The added and removed entries of ``WholeValues``: a ``DictionaryPatch`` of its entries,
/// stored as one.
struct WholeValuesPatch<Key: Hashable, Value: Equatable>: LeafPatch {
    var patch: DictionaryPatch<Key, Value>

    static var kind: String { DictionaryPatch<Key, Value>.kind }

    func mismatch(in value: WholeValues<Key, Value>, expecting side: PatchSide) -> String? {
        patch.mismatch(in: value.entries, expecting: side)
    }

    func apply(to value: inout WholeValues<Key, Value>, toward side: PatchSide) {
        patch.apply(to: &value.entries, toward: side)
    }
}

extension WholeValuesPatch: Codable where Key: Codable, Value: Codable {
    init(from decoder: any Decoder) throws {
        patch = try DictionaryPatch(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try patch.encode(to: encoder)
    }
}

/// A collection with a ``Versionable`` form that tracks its elements one by one, each as a
/// ``WholeElement``:
/// ``WholeElements`` for an array, ``WholeValues`` for a dictionary. A stored property is
/// registered through ``whole``.
protocol WholeForm {
    associatedtype Whole: VersionableCollection & EmptyForm
    /// The collection in its versionable form, sharing its storage.
    var whole: Whole { get }
    /// The collection `whole` holds.
    init(whole: Whole)
}

/// A versionable form with an empty value, left in a collection's place while its form is
/// changed in place.
protocol EmptyForm {
    static var emptyForm: Self { get }
}

extension WholeElements: EmptyForm {
    static var emptyForm: Self { WholeElements(elements: []) }
}

extension WholeValues: EmptyForm {
    static var emptyForm: Self { WholeValues(entries: [:]) }
}

extension Array: WholeForm where Element: Equatable {
    init(whole: WholeElements<Element>) { self = whole.elements }
    var whole: WholeElements<Element> { WholeElements(elements: self) }
}

extension Dictionary: WholeForm where Value: Equatable {
    init(whole: WholeValues<Key, Value>) { self = whole.entries }
    var whole: WholeValues<Key, Value> { WholeValues(entries: self) }
}

// The `[wholeForm:]` subscripts of a root, so that a registration's key path is formed in one
// piece: `appending(path:)` a computed component that captures generic arguments made the
// runtime read garbage now and then (a crash in `KeyPath._projectReadOnly`). A ``Versionable``
// root has them, and so has a plain struct tracked field by field (an `Equatable` one): a key
// path's root must have the member itself, and no protocol covers both.

extension Versionable {
    /// The collection at `keyPath` in its versionable form, read and changed in place.
    subscript<Collection: WholeForm>(wholeForm keyPath: WritableKeyPath<Self, Collection>) -> Collection.Whole
    {
        get { self[keyPath: keyPath].whole }
        _modify {
            var whole = Collection.moveOut(of: &self, at: keyPath)
            defer { self[keyPath: keyPath] = Collection(whole: whole) }
            yield &whole
        }
    }

    /// The same for an optional collection: an optional of its versionable form.
    subscript<Collection: WholeForm>(wholeForm keyPath: WritableKeyPath<Self, Collection?>) -> Collection
        .Whole?
    {
        get { self[keyPath: keyPath].map { $0.whole } }
        _modify {
            var whole = Collection.moveOut(of: &self, at: keyPath)
            defer { self[keyPath: keyPath] = whole.map { Collection(whole: $0) } }
            yield &whole
        }
    }
}

extension Equatable {
    /// The collection at `keyPath` in its versionable form, read and changed in place.
    subscript<Collection: WholeForm>(wholeForm keyPath: WritableKeyPath<Self, Collection>) -> Collection.Whole
    {
        get { self[keyPath: keyPath].whole }
        _modify {
            var whole = Collection.moveOut(of: &self, at: keyPath)
            defer { self[keyPath: keyPath] = Collection(whole: whole) }
            yield &whole
        }
    }

    /// The same for an optional collection: an optional of its versionable form.
    subscript<Collection: WholeForm>(wholeForm keyPath: WritableKeyPath<Self, Collection?>) -> Collection
        .Whole?
    {
        get { self[keyPath: keyPath].map { $0.whole } }
        _modify {
            var whole = Collection.moveOut(of: &self, at: keyPath)
            defer { self[keyPath: keyPath] = whole.map { Collection(whole: $0) } }
            yield &whole
        }
    }
}

extension WholeForm {
    /// The collection at `keyPath` in `root`, in its versionable form, moved out: an empty
    /// one is left in its place, so that the storage stays uniquely referenced and a change to
    /// one element costs no copy of the collection. The caller moves it back.
    static func moveOut<Root>(of root: inout Root, at keyPath: WritableKeyPath<Root, Self>) -> Whole {
        let whole = root[keyPath: keyPath].whole
        root[keyPath: keyPath] = Self(whole: Whole.emptyForm)
        return whole
    }

    /// The same for an optional collection, `nil` left in its place.
    static func moveOut<Root>(of root: inout Root, at keyPath: WritableKeyPath<Root, Self?>) -> Whole? {
        let whole = root[keyPath: keyPath].map { $0.whole }
        root[keyPath: keyPath] = nil
        return whole
    }
}

/// The versionable forms, reached through registered ``InPlaceKeyPaths``.
extension WholeElements: InPlaceForm {}
extension WholeValues: InPlaceForm {}
extension Optional: InPlaceForm where Wrapped: InPlaceForm {}

extension WholeForm {
    /// The registration of a stored property of this type (its elements not ``Versionable``,
    /// else the type is, and is registered as such): its elements one by one.
    /// `nil` when `Root` is neither ``Versionable`` nor `Equatable` (a plain struct tracked
    /// field by field is).
    static func wholeField<Root>(name: String, keyPath: PartialKeyPath<Root>) -> (
        any FieldRegistration<Root>
    )? {
        func form<R: Versionable>(_: R.Type) -> AnyKeyPath? {
            guard let keyPath = keyPath as? WritableKeyPath<R, Self> else { return nil }
            return InPlaceKeyPaths.register(
                \R.[wholeForm: keyPath], read: { $0[wholeForm: keyPath] },
                modify: { $1(&$0[wholeForm: keyPath]) })
        }
        func plainForm<R: Equatable>(_: R.Type) -> AnyKeyPath? {
            guard let keyPath = keyPath as? WritableKeyPath<R, Self> else { return nil }
            return InPlaceKeyPaths.register(
                \R.[wholeForm: keyPath], read: { $0[wholeForm: keyPath] },
                modify: { $1(&$0[wholeForm: keyPath]) })
        }
        let formed =
            (Root.self as? any Versionable.Type).flatMap { form($0) }
            ?? (Root.self as? any Equatable.Type).flatMap { plainForm($0) }
        guard let whole = formed as? WritableKeyPath<Root, Whole>,
            let keyPath = keyPath as? WritableKeyPath<Root, Self>
        else { return nil }
        return CollectionField(keyPath: whole, component: .property(name), bytes: FieldBytes(keyPath))
    }

    /// The same for a stored property of this type's optional.
    static func optionalWholeField<Root>(name: String, keyPath: PartialKeyPath<Root>) -> (
        any FieldRegistration<Root>
    )? {
        func form<R: Versionable>(_: R.Type) -> AnyKeyPath? {
            guard let keyPath = keyPath as? WritableKeyPath<R, Self?> else { return nil }
            return InPlaceKeyPaths.register(
                \R.[wholeForm: keyPath], read: { $0[wholeForm: keyPath] },
                modify: { $1(&$0[wholeForm: keyPath]) })
        }
        func plainForm<R: Equatable>(_: R.Type) -> AnyKeyPath? {
            guard let keyPath = keyPath as? WritableKeyPath<R, Self?> else { return nil }
            return InPlaceKeyPaths.register(
                \R.[wholeForm: keyPath], read: { $0[wholeForm: keyPath] },
                modify: { $1(&$0[wholeForm: keyPath]) })
        }
        let formed =
            (Root.self as? any Versionable.Type).flatMap { form($0) }
            ?? (Root.self as? any Equatable.Type).flatMap { plainForm($0) }
        guard let whole = formed as? WritableKeyPath<Root, Whole?>,
            let keyPath = keyPath as? WritableKeyPath<Root, Self?>
        else { return nil }
        return VersionableField(keyPath: whole, component: .property(name), bytes: FieldBytes(keyPath))
    }
}

/// An optional of a ``WholeForm`` collection, asked for its wrapped type's.
protocol OptionalOfWholeForm {
    static func wholeField<Root>(name: String, keyPath: PartialKeyPath<Root>) -> (
        any FieldRegistration<Root>
    )?
}

extension Optional: OptionalOfWholeForm where Wrapped: WholeForm {
    static func wholeField<Root>(name: String, keyPath: PartialKeyPath<Root>) -> (
        any FieldRegistration<Root>
    )? {
        Wrapped.optionalWholeField(name: name, keyPath: keyPath)
    }
}
