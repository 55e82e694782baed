import Foundation

extension StoredForm {
    /// The top-level members of this tree — a whole value's JSON as today's model `T` writes
    /// it, an object — that gain what `earlier`, JSON stored for the same value before, holds
    /// and `T` does not read: a property a later release of the app added, stored again by an
    /// earlier one, which would otherwise be gone. Each is returned with its JSON, the members
    /// it gained added; members that gain nothing are not returned.
    ///
    /// What is kept is a member `earlier` holds (other than `null`) where this tree's object
    /// lacks it, found in objects and in array elements paired by their id, under the key
    /// their type stores it (`"id"`, or the one its `CodingKeys` or its own `encode(to:)`
    /// give: ``CodingKeyTree/idKey(ofElementsIn:decoder:)``), or, for elements without ids,
    /// by what they hold at every depth (an element the earlier release left as it was, whose
    /// arrays then pair by position; elements sharing an id, or alike, are not looked into:
    /// nothing says which is which); and only where
    /// decoding `earlier` as a `T` does not read it
    /// (``EvolvingDecoding/decodeNotingUnread(_:from:template:decoder:)``, this tree filling
    /// what `earlier` lacks): an optional set to `nil` since, which synthesized `Codable`
    /// leaves out, is read, and stays `nil`; so is a property declared
    /// ``PropertyEvolution/removed(_:)``.
    ///
    /// - Parameter earlier: The JSON stored before; its members that equal this tree's may be
    ///   left out.
    /// - Returns: `[]` when `earlier` holds nothing `T` does not read, or does not decode as a
    ///   `T`.
    /// - Complexity: One walk of the two trees; a decode of `earlier` only when it holds a
    ///   member this tree lacks.
    package func membersKeepingUnread<T: Decodable>(
        of earlier: StoredForm, as _: T.Type
    ) -> [(key: String, json: String)] {
        var collector = AbsentMembers(decoder: decoder)
        collector.collect(earlier.root, in: root, keys: CodingKeyTree(for: T.self), aligned: false)
        let absent = collector.found
        guard !absent.isEmpty,
            let reads = try? EvolvingDecoding.decodeNotingReads(
                T.self, from: earlier.root.foundationObject, template: root.foundationObject,
                decoder: earlier.decoder
            ).reads
        else { return [] }
        var tree = root
        var gained: Set<String> = []
        for member in absent where reads.isUnread(member.place) {
            guard tree.replace(at: member.steps[...], with: member.node),
                case .property(let key)? = member.steps.first
            else { continue }
            gained.insert(key)
        }
        guard case .object(let members) = tree else { return [] }
        return gained.sorted().compactMap { key in members[key].map { (key, $0.jsonText) } }
    }

}

/// A member one tree holds and the other lacks: its place in the first as a decode's unread
/// places name it (keys, and indices written `[0]`), the steps to it in the second, and its
/// JSON.
private struct Absent {
    let place: [String]
    let steps: [PathComponent]
    let node: CodedNode
}

/// Collects the members of one tree, `earlier`, other than `null`, that another, `now`,
/// lacks, looking into the members both hold and into the array elements paired.
private struct AbsentMembers {
    /// Reads `now`, where the model's keys are read from it.
    let decoder: JSONDecoder
    private(set) var found: [Absent] = []
    /// The place in `earlier`, and the steps in `now`, of the trees being walked.
    private var place: [String] = []
    private var steps: [PathComponent] = []

    init(decoder: JSONDecoder) { self.decoder = decoder }

    /// Walks `earlier` beside `now`, `keys` being the model's type there (which says the key
    /// elements store their id under); `aligned` when the two are one element paired by what
    /// it holds, whose arrays pair by position.
    mutating func collect(_ earlier: CodedNode, in now: CodedNode, keys: CodingKeyTree, aligned: Bool) {
        switch (earlier, now) {
        case (.object(let earlierMembers), .object(let nowMembers)):
            for (key, node) in earlierMembers where node != .null {
                place.append(key)
                steps.append(.property(key))
                if let counterpart = nowMembers[key] {
                    collect(
                        node, in: counterpart, keys: keys.member(underKey: key, in: now, decoder: decoder),
                        aligned: aligned)
                } else {
                    found.append(Absent(place: place, steps: steps, node: node))
                }
                place.removeLast()
                steps.removeLast()
            }
        case (.array(let earlierElements), .array(let nowElements)):
            let elementKeys = keys[.index(0)]
            let (pairs, byContent) =
                aligned
                ? (zip(earlierElements.indices, nowElements.indices).map { ($0, $1) }, true)
                : Self.pairs(
                    earlierElements, nowElements,
                    idKey: elementKeys.idKey(ofElementsIn: nowElements, decoder: decoder))
            for (position, counterpart) in pairs {
                place.append("[\(position)]")
                steps.append(.index(counterpart))
                collect(
                    earlierElements[position], in: nowElements[counterpart], keys: elementKeys,
                    aligned: byContent)
                place.removeLast()
                steps.removeLast()
            }
        default:
            break
        }
    }

    /// The elements of `earlier` paired with their counterparts in `now`, by position in
    /// each, and whether they were paired by what they hold: by their id, the member `idKey`,
    /// where the elements have ids; otherwise by what they hold — an element of `earlier`
    /// equal to one of `now` in every member, at every depth, but those no element of `now`
    /// holds there (what the model does not write, or only `nil`s of): what the two hold is
    /// then one tree, and arrays inside them pair by position. Elements sharing an id, or
    /// alike so, are not paired: nothing says which is which. An element the earlier release
    /// edited is not paired by what it holds.
    private static func pairs(_ earlier: [CodedNode], _ now: [CodedNode], idKey: String) -> (
        [(Int, Int)], byContent: Bool
    ) {
        var pairing = ElementPairing { StoredForm.id(of: $0, key: idKey) }
        var counterparts = pairing.unique(in: now)
        let byContent = counterparts.isEmpty
        if byContent {
            // The new elements are their own projections: they hold only what they write.
            counterparts = ElementPairing { WrittenKeys.isContainer($0) ? $0 : nil }.unique(in: now)
            let written = WrittenKeys(now)
            pairing = ElementPairing { written.projection(of: $0) }
        }
        let pairs = pairing.unique(in: earlier).compactMap { key, position in
            counterparts[key].map { (position, $0) }
        }
        return (pairs, byContent)
    }
}

/// The keys the elements of an array hold, at every depth: an object's keys by place, the
/// elements of an array (an element itself, or inside one) taken as one.
private final class WrittenKeys {
    private var keys: Set<String> = []
    private var members: [String: WrittenKeys] = [:]
    private var elements: WrittenKeys?

    /// The keys of `elements`' objects.
    init(_ elements: [CodedNode]) {
        for element in elements { note(element) }
    }

    private init() {}

    private func note(_ node: CodedNode) {
        switch node {
        case .object(let object):
            for (key, value) in object {
                keys.insert(key)
                let child = members[key] ?? WrittenKeys()
                members[key] = child
                child.note(value)
            }
        case .array(let array):
            let child = elements ?? WrittenKeys()
            elements = child
            for element in array { child.note(element) }
        case .null, .bool, .integer, .double, .numeral, .string:
            break
        }
    }

    /// `node` with only the keys these hold, at every depth; `nil` for an element that is not
    /// an object or an array (a row of a grid).
    func projection(of node: CodedNode) -> CodedNode? {
        Self.isContainer(node) ? projected(node) : nil
    }

    /// Whether `node` is an object or an array, an element that may hold what a model does
    /// not read.
    static func isContainer(_ node: CodedNode) -> Bool {
        switch node {
        case .object, .array: true
        case .null, .bool, .integer, .double, .numeral, .string: false
        }
    }

    private func projected(_ node: CodedNode) -> CodedNode {
        switch node {
        case .object(let object):
            var kept: [String: CodedNode] = [:]
            for (key, value) in object where keys.contains(key) {
                kept[key] = members[key]?.projected(value) ?? value
            }
            return .object(kept)
        case .array(let array):
            guard let elements else { return node }
            return .array(array.map { elements.projected($0) })
        case .null, .bool, .integer, .double, .numeral, .string:
            return node
        }
    }
}

/// What pairs an array's elements in two versions of it: a key each element may have.
private struct ElementPairing {
    let key: (CodedNode) -> CodedNode?

    /// The position of each element of `array` by its key, for the keys only one element
    /// has.
    func unique(in array: [CodedNode]) -> [CodedNode: Int] {
        var positions: [CodedNode: Int?] = [:]
        for (position, element) in array.enumerated() {
            guard let key = key(element) else { continue }
            // A second element with this key: neither is paired.
            positions.updateValue(positions.keys.contains(key) ? nil : position, forKey: key)
        }
        return positions.compactMapValues { $0 }
    }
}
