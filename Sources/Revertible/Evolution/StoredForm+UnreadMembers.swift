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
    /// by what they hold (an element the earlier release left as it was; elements sharing an
    /// id, or alike, are not looked into: nothing says which is which); and only where
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
        var (absent, place, steps): ([Absent], [String], [PathComponent]) = ([], [], [])
        Self.collectAbsent(
            earlier.root, in: root, keys: CodingKeyTree(for: T.self), decoder: decoder, place: &place,
            steps: &steps, into: &absent)
        guard !absent.isEmpty,
            let read = try? EvolvingDecoding.decodeNotingUnreadPlaces(
                T.self, from: earlier.root.foundationObject, template: root.foundationObject,
                decoder: earlier.decoder)
        else { return [] }
        let unread = Set(read.unread)
        var tree = root
        var gained: Set<String> = []
        for member in absent where unread.contains(member.place) {
            guard tree.replace(at: member.steps[...], with: member.node),
                case .property(let key)? = member.steps.first
            else { continue }
            gained.insert(key)
        }
        guard case .object(let members) = tree else { return [] }
        return gained.sorted().compactMap { key in members[key].map { (key, $0.jsonText) } }
    }

    /// A member one tree holds and the other lacks: its place in the first as a decode's
    /// unread places name it (keys, and indices written `[0]`), the steps to it in the
    /// second, and its JSON.
    private struct Absent {
        let place: [String]
        let steps: [PathComponent]
        let node: CodedNode
    }

    /// Collects the members of `earlier`, other than `null`, that `now` lacks, looking into
    /// the members both hold and into the array elements paired (``pairs(_:_:idKey:)``);
    /// `keys` is the model's type at this place (which says the key elements store their id
    /// under), `decoder` reads `now` as it; `place` and `steps` lead to both (copied only for
    /// a member found).
    private static func collectAbsent(
        _ earlier: CodedNode, in now: CodedNode, keys: CodingKeyTree, decoder: JSONDecoder,
        place: inout [String], steps: inout [PathComponent], into absent: inout [Absent]
    ) {
        switch (earlier, now) {
        case (.object(let earlier), .object(let nowMembers)):
            for (key, node) in earlier where node != .null {
                place.append(key)
                steps.append(.property(key))
                if let counterpart = nowMembers[key] {
                    collectAbsent(
                        node, in: counterpart, keys: keys.member(underKey: key, in: now, decoder: decoder),
                        decoder: decoder, place: &place, steps: &steps, into: &absent)
                } else {
                    absent.append(Absent(place: place, steps: steps, node: node))
                }
                place.removeLast()
                steps.removeLast()
            }
        case (.array(let earlier), .array(let now)):
            let elementKeys = keys[.index(0)]
            for (position, counterpart) in pairs(
                earlier, now, idKey: elementKeys.idKey(ofElementsIn: now, decoder: decoder))
            {
                place.append("[\(position)]")
                steps.append(.index(counterpart))
                collectAbsent(
                    earlier[position], in: now[counterpart], keys: elementKeys, decoder: decoder,
                    place: &place,
                    steps: &steps, into: &absent)
                place.removeLast()
                steps.removeLast()
            }
        default:
            break
        }
    }

    /// The elements of `earlier` paired with their counterparts in `now`, by position in
    /// each: by their id, the member `idKey`, where the elements have ids; otherwise, where
    /// they are objects, by what they hold — an element of `earlier` equal to one of `now` in
    /// every member but those no element of `now` holds (what the model does not write, or
    /// only `nil`s of). Elements sharing an id, or alike so, are not paired: nothing says
    /// which is which. An element the earlier release edited is not paired by what it holds.
    private static func pairs(_ earlier: [CodedNode], _ now: [CodedNode], idKey: String) -> [(Int, Int)] {
        var pairing = ElementPairing { id(of: $0, key: idKey) }
        var counterparts = pairing.unique(in: now)
        if counterparts.isEmpty {
            var written: Set<String> = []
            for case .object(let members) in now { written.formUnion(members.keys) }
            guard !written.isEmpty else { return [] }
            pairing = ElementPairing { element in
                guard case .object(let members) = element else { return nil }
                return .object(members.filter { written.contains($0.key) })
            }
            counterparts = pairing.unique(in: now)
        }
        return pairing.unique(in: earlier).compactMap { key, position in
            counterparts[key].map { (position, $0) }
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
