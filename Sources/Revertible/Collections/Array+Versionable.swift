/// Arrays are tracked element by element.
///
/// - `Identifiable` elements are matched by `id`: insertions, removals and moves form one
///   ``ArrayPatch`` at the array's path, and a change inside an element that is in both versions
///   is recorded below its id, such as `items[id: 7].title`.
/// - Other elements are matched by position: when the length is unchanged, each changed element
///   is recorded below its index (`items[3]`); otherwise the changed middle (after trimming the
///   common prefix and suffix of `Equatable` elements) is replaced as one ``ArrayPatch``.
///
/// A stored property whose elements are `Equatable` but not ``Versionable`` (a plain `Codable`
/// struct) is tracked the same way by a type tracked with no code: at its id or index, a
/// changed element's changed fields when it is a plain `Codable` struct, else the whole element.
extension Array: Versionable, Revertible where Element: Versionable {
    /// Registers the array element by element.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        reverter.appendElementReversions(at: KeyPathCache.identity(), component: nil)
    }
}

extension Array: VersionableCollection where Element: Versionable {
    public static func versionedDifference(from old: [Element], to new: [Element]) -> (
        structure: ArrayPatch<Element>?, elements: [(key: ElementKey, old: Element, new: Element)]
    ) {
        elementDifference(from: old, to: new) { key, old, new, _, _ in (key, old, new) }
    }

    public static func positionedDifference(from old: [Element], to new: [Element]) -> (
        structure: ArrayPatch<Element>?, elements: [VersionedElementChange<[Element]>]
    ) {
        elementDifference(from: old, to: new) {
            VersionedElementChange(key: $0, old: $1, new: $2, oldPosition: $3, newPosition: $4)
        }
    }

    public func versionedPosition(of key: ElementKey) -> Int? { elementIndex(of: key) }

    public func versionedElement(at key: ElementKey, position: Int?) -> Element? {
        guard let index = elementIndex(of: key, position: position) else { return nil }
        return self[index]
    }

    public mutating func modifyVersionedElement(
        at key: ElementKey, position: Int?, _ body: (inout Element) -> Void
    ) -> Bool {
        guard let index = elementIndex(of: key, position: position) else { return false }
        body(&self[index])
        return true
    }

    public func versionedElement(at key: ElementKey) -> Element? {
        guard let index = elementIndex(of: key) else { return nil }
        return self[index]
    }

    public mutating func modifyVersionedElement(at key: ElementKey, _ body: (inout Element) -> Void) -> Bool {
        guard let index = elementIndex(of: key) else { return false }
        body(&self[index])
        return true
    }

    public static func pathComponent(for key: ElementKey) -> PathComponent { elementPathComponent(for: key) }

    public static func elementKey(for component: PathComponent) -> ElementKey? {
        elementKey(forComponent: component)
    }
}

/// The element-by-element algorithms of any array, whatever its elements: `Array`'s
/// ``VersionableCollection`` conformance uses them, and so does the form that tracks an array of
/// plain `Equatable` elements, with no copy of either array.
extension Array {
    /// A position, or an `id` for `Identifiable` elements.
    public enum ElementKey: Hashable {
        /// An element by position.
        case index(Int)
        /// An `Identifiable` element by its `id`.
        case id(AnyHashable)
    }

    /// The structural patch (`nil` when the structure is the same) and the elements present
    /// in both arrays that differ: `Identifiable` elements by `id`, others by position, each
    /// made by `change` from its key, both versions and both positions.
    static func elementDifference<Change>(
        from old: [Element], to new: [Element],
        _ change: (_ key: ElementKey, _ old: Element, _ new: Element, _ oldPosition: Int, _ newPosition: Int)
            -> Change
    ) -> (structure: ArrayPatch<Element>?, elements: [Change]) {
        if sharesStorage(old, new) {
            return (nil, [])
        }
        if let identifiable = Element.self as? any Identifiable.Type {
            return identifiedDifference(identifiable, old: old, new: new, change)
        }
        let equal = DynamicConformance.equality(of: Element.self)
        if old.count == new.count {
            let changed = differingPositions(old, new).filter { equal?(old[$0], new[$0]) != true }
            return (
                nil,
                changed.map { change(.index($0), old[$0], new[$0], $0, $0) }
            )
        }
        return (trimmedDifference(from: old, to: new), [])
    }

    /// The changed middle, after the common prefix and suffix of `Equatable` elements, replaced
    /// as one patch. The ends whose elements have the same bytes (``sameEnds(_:_:)``, or `ends`
    /// when the caller has found them) are skipped without comparing them.
    private static func trimmedDifference(
        from old: [Element], to new: [Element], sameEnds ends: (prefix: Int, suffix: Int)? = nil
    ) -> ArrayPatch<Element> {
        let equal = DynamicConformance.equality(of: Element.self)
        var (prefix, suffix) = ends ?? sameEnds(old, new)
        if let equal {
            let shorter = Swift.min(old.count, new.count)
            while prefix < shorter - suffix, equal(old[prefix], new[prefix]) { prefix += 1 }
            while suffix < shorter - prefix, equal(old[old.count - 1 - suffix], new[new.count - 1 - suffix]) {
                suffix += 1
            }
        }
        return ArrayPatch(
            removals: (prefix..<old.count - suffix).map { .init(offset: $0, element: old[$0]) },
            insertions: (prefix..<new.count - suffix).map { .init(offset: $0, element: new[$0]) },
            oldCount: old.count, newCount: new.count)
    }

    /// How many elements at the start of `old` and `new`, and then at their ends (never the
    /// same ones twice), have the same bytes, so are the same values: read at the speed of
    /// memory, with no generic code per element. An insertion or a removal changes the middle
    /// only, and only the middle is then compared.
    private static func sameEnds(_ old: [Element], _ new: [Element]) -> (prefix: Int, suffix: Int) {
        let stride = MemoryLayout<Element>.stride
        let shorter = Swift.min(old.count, new.count)
        guard stride > 0, shorter > 0 else { return (0, 0) }
        let mask = MeaningfulBytes.of(Element.self)
        return old.withUnsafeBytes { o in
            new.withUnsafeBytes { n in
                guard let a = o.baseAddress, let b = n.baseAddress else { return (0, 0) }
                let prefix = mask.sameRun(a, b, count: shorter, stride: stride, backward: false)
                let suffix = mask.sameRun(
                    a + (old.count - 1) * stride, b + (new.count - 1) * stride, count: shorter - prefix,
                    stride: stride, backward: true)
                return (prefix, suffix)
            }
        }
    }

    /// The positions whose elements differ in their bytes, for two arrays of the same length.
    ///
    /// An element whose fields have the same bytes in both is the same value (the same
    /// references and the same bits), so it needs no comparison: after an edit to a copy, that
    /// is every element but the edited ones, found at the speed of reading memory. Padding is
    /// left out (a copy need not copy it). Elements whose bytes differ may still be equal
    /// (other storage for the same text), so callers compare those.
    private static func differingPositions(_ old: [Element], _ new: [Element]) -> [Int] {
        let stride = MemoryLayout<Element>.stride
        guard stride > 0 else { return [] }
        let mask = MeaningfulBytes.of(Element.self)
        return old.withUnsafeBytes { o in
            new.withUnsafeBytes { n in
                guard let a = o.baseAddress, let b = n.baseAddress else { return [] }
                return mask.differingPositions(a, b, count: old.count, stride: stride)
            }
        }
    }

    private static func identifiedDifference<E: Identifiable, Change>(
        _: E.Type, old: [Element], new: [Element],
        _ change: (ElementKey, Element, Element, Int, Int) -> Change
    ) -> (structure: ArrayPatch<Element>?, elements: [Change]) {
        // `E` is `Element`, opened once so that ids compare without a dynamic cast per element.
        let oldElements = unsafeBitCast(old, to: [E].self)
        let newElements = unsafeBitCast(new, to: [E].self)
        let equal = DynamicConformance.equality(of: Element.self)
        if old.count == new.count {
            // When every position keeps its id, only the changed elements are listed; elements
            // with the same bytes are the same, so only the others are read.
            var changed: [Change] = []
            var sameIDs = true
            for index in differingPositions(old, new) {
                guard oldElements[index].id == newElements[index].id else {
                    sameIDs = false
                    break
                }
                if equal?(old[index], new[index]) != true {
                    // A stored path keeps no position: `[id: 7]` names the first element with
                    // that id. An element after another of its id (an app's bug: ids counted
                    // from zero again, a copy that kept its id) is named by its position
                    // instead, which every position keeping its id makes the same in both.
                    let key: ElementKey =
                        isSharedEarlier(at: index, in: newElements)
                        ? .index(index) : .id(AnyHashable(newElements[index].id))
                    changed.append(change(key, old[index], new[index], index, index))
                }
            }
            if sameIDs { return (nil, changed) }
        }
        // An insertion, a removal or a move changes the middle of the array only. The elements
        // at both ends that are the same values in both versions are left out, and only the
        // middle is matched by id (an item inserted among 10,000 took 6 ms to find when every
        // element was matched through generic code).
        let (prefix, suffix) = sameEnds(old, new)
        let oldMiddle = prefix..<old.count - suffix
        let newMiddle = prefix..<new.count - suffix
        // Ids elements share make matching by id wrong: the elements of an id kept in both
        // versions would pair with one element only, and an element beside an inserted or
        // removed one of its id would not be compared at all, its changes lost. The changed
        // middle of such an array is replaced whole (ids shared only by inserted elements, or
        // only by removed ones, pair nothing, and need not): its positions do not keep their
        // ids, so no element there can be diffed field by field (its `id`, a `let`, would not
        // be recorded).
        guard let match = matchByID(oldElements, oldMiddle, newElements, newMiddle) else {
            return (trimmedDifference(from: old, to: new, sameEnds: (prefix, suffix)), [])
        }
        let changed = differingPairs(old, new, match.kept).filter { equal?(old[$0.0], new[$0.1]) != true }
        // Another element of a changed one's id, at an end (the same in both versions; the
        // middle's were checked): `[id: …]` could name that one, on either side. The middle is
        // replaced whole, as above.
        if endsHoldAnID(
            of: changed.map(\.1), in: newElements, ends: [0..<prefix, new.count - suffix..<new.count])
        {
            return (trimmedDifference(from: old, to: new, sameEnds: (prefix, suffix)), [])
        }
        let removals = match.removed.map { ArrayPatch<Element>.Entry(offset: $0, element: old[$0]) }
        let insertions = match.inserted.map { ArrayPatch<Element>.Entry(offset: $0, element: new[$0]) }
        let elements = changed.map { oldIndex, newIndex in
            change(
                .id(AnyHashable(newElements[newIndex].id)), old[oldIndex], new[newIndex], oldIndex, newIndex)
        }
        let patch = ArrayPatch(
            removals: removals, insertions: insertions, oldCount: old.count, newCount: new.count)
        return (patch, elements)
    }

    /// The pairs of `kept` (an old position, a new one) whose elements differ in their bytes:
    /// the others are the same values, left where they were or moved with the elements around
    /// them, and need no comparison.
    private static func differingPairs(
        _ old: [Element], _ new: [Element], _ kept: [(Int, Int)]
    ) -> [(Int, Int)] {
        let stride = MemoryLayout<Element>.stride
        let mask = MeaningfulBytes.of(Element.self)
        return old.withUnsafeBytes { o in
            new.withUnsafeBytes { n in
                guard let a = o.baseAddress, let b = n.baseAddress else { return kept }
                return kept.filter { !mask.same(a + $0.0 * stride, b + $0.1 * stride) }
            }
        }
    }

    /// How the middles of two arrays of `Identifiable` elements match by id, or `nil` when an
    /// id kept in both has more than one element in either.
    ///
    /// The ids are read as machine words where they compare by their bytes (an integer, a
    /// `UUID`) and as strings where they are strings, so that the matching runs in code made
    /// for that key, not through generic code per element.
    private static func matchByID<E: Identifiable>(
        _ old: [E], _ oldMiddle: Range<Int>, _ new: [E], _ newMiddle: Range<Int>
    ) -> IDMatch? {
        if let field = IDField.of(E.self), let oldWords = field.words(of: old, at: oldMiddle),
            let newWords = field.words(of: new, at: newMiddle)
        {
            return IDMatch(
                old: oldWords, from: oldMiddle.lowerBound, new: newWords, from: newMiddle.lowerBound)
        }
        if let field = StringIDField.of(E.self) {
            return IDMatch(
                old: field.strings(of: old, at: oldMiddle), from: oldMiddle.lowerBound,
                new: field.strings(of: new, at: newMiddle), from: newMiddle.lowerBound)
        }
        // Closures: a key path into `E` would be built at run time on every diff.
        return IDMatch(
            old: old[oldMiddle].map { $0.id }, from: oldMiddle.lowerBound,
            new: new[newMiddle].map { $0.id }, from: newMiddle.lowerBound)
    }

    /// Whether an element in `ends` has the id of an element at one of `positions`: each
    /// position's ends read (no hashing) while that reads few ids, else the ends' ids hashed once
    /// (an edit to every item and an insertion in front of them would otherwise read every id
    /// once for every item).
    private static func endsHoldAnID<E: Identifiable>(
        of positions: [Int], in elements: [E], ends: [Range<Int>]
    )
        -> Bool
    {
        let endCount = ends.reduce(0) { $0 + $1.count }
        guard !positions.isEmpty, endCount > 0 else { return false }
        if positions.count * endCount <= 1 << 16 {
            return positions.contains { position in
                ends.contains { hasID(of: position, in: elements, among: $0) }
            }
        }
        if let field = IDField.of(E.self), let probes = field.words(of: elements, at: positions) {
            let held = Set(ends.flatMap { field.words(of: elements, at: $0) ?? [] })
            return probes.contains(where: held.contains)
        }
        if let field = StringIDField.of(E.self) {
            let held = Set(ends.flatMap { field.strings(of: elements, at: $0) })
            return field.strings(of: elements, at: positions).contains(where: held.contains)
        }
        let held = Set(ends.flatMap { elements[$0].map(\.id) })
        return positions.contains { held.contains(elements[$0].id) }
    }

    /// Whether an element before the one at `index` has that one's id.
    private static func isSharedEarlier<E: Identifiable>(at index: Int, in elements: [E]) -> Bool {
        hasID(of: index, in: elements, among: 0..<index)
    }

    /// Whether an element of `elements` in `range` has the id of the one at `index`.
    private static func hasID<E: Identifiable>(of index: Int, in elements: [E], among range: Range<Int>)
        -> Bool
    {
        if let field = IDField.of(E.self) { return field.hasID(of: index, in: elements, among: range) }
        if let field = StringIDField.of(E.self) { return field.hasID(of: index, in: elements, among: range) }
        let id = elements[index].id
        return elements[range].contains { $0.id == id }
    }

    /// The index of `key`: `position` when the element there has that id, else a search.
    func elementIndex(of key: ElementKey, position: Int?) -> Int? {
        if case .id(let id) = key, let position, indices.contains(position),
            let identifiable = Element.self as? any Identifiable.Type,
            Self.hasID(self[position], id, identifiable)
        {
            return position
        }
        return elementIndex(of: key)
    }

    private static func hasID<E: Identifiable>(_ element: Element, _ id: AnyHashable, _: E.Type) -> Bool {
        guard let id = id.base as? E.ID else { return false }
        return unsafeBitCast(element, to: E.self).id == id
    }

    /// The index of `key`, or `nil` when there is no such element.
    func elementIndex(of key: ElementKey) -> Int? {
        switch key {
        case .index(let index):
            return indices.contains(index) ? index : nil
        case .id(let id):
            guard let identifiable = Element.self as? any Identifiable.Type else { return nil }
            return index(ofID: id, identifiable)
        }
    }

    private func index<E: Identifiable>(ofID id: AnyHashable, _: E.Type) -> Int? {
        guard let id = id.base as? E.ID else { return nil }
        let elements = unsafeBitCast(self, to: [E].self)
        if let field = IDField.of(E.self) { return field.index(of: id, in: elements) }
        return elements.firstIndex { $0.id == id }
    }

    /// The path component that names `key`: `[3]` or `[id: 7]`.
    static func elementPathComponent(for key: ElementKey) -> PathComponent {
        switch key {
        case .index(let index): .index(index)
        case .id(let id): .id(RecordCoding.canonicalJSON(id.base))
        }
    }

    /// The key a stored path component names, or `nil` when it names none.
    static func elementKey(forComponent component: PathComponent) -> ElementKey? {
        switch component {
        case .index(let index):
            return .index(index)
        case .id(let json):
            guard let identifiable = Element.self as? any Identifiable.Type else { return nil }
            return decodeID(json, identifiable)
        case .key, .property:
            return nil
        }
    }

    private static func decodeID<E: Identifiable>(_ json: String, _: E.Type) -> ElementKey? {
        RecordCoding.decodeJSON(json, as: E.ID.self).map { .id(AnyHashable($0)) }
    }
}

extension Array {
    /// Whether `a` and `b` are copies that still share one storage, so equal: O(1), the common
    /// case for an array a change left untouched.
    static func sharesStorage(_ a: [Element], _ b: [Element]) -> Bool {
        a.count == b.count
            && a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress }
            }
    }
}
