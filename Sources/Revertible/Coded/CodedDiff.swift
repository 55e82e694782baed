/// Diffs `Codable` values that register no properties of their own — an enum with associated
/// values, above all — through their encoded form: when the case is unchanged, only the changed
/// parts of the payload are recorded, each at its own path (`kind.circle.radius`).
enum CodedDiff {
    /// One changed part: where it is below the value, and both sides (`nil`: absent, such as an
    /// optional left out of the JSON).
    struct Change {
        var path: [PathComponent]
        var old: CodedNode?
        var new: CodedNode?
    }

    /// More changed parts than this in one value are recorded as one replacement.
    static let maximumChanges = 16

    /// The parts that differ between `old` and `new`, or `nil` when the whole value should be
    /// replaced: another enum case (a different set of keys at the top), a value that is not an
    /// object or array, a value that does not encode or decode back as itself, or parts that
    /// would take more bytes than both whole values.
    ///
    /// Every change is checked to decode on its own, in the order reverting and redoing apply
    /// them, so that applying one never meets a value that does not decode.
    ///
    /// - Complexity: O(*n*) in the encoded size of the values, times the number of changes
    ///   (at most ``maximumChanges``).
    static func changes<Value: Codable & Equatable>(from old: Value, to new: Value) -> [Change]? {
        guard let (oldNode, oldSize) = CodedNode.encoding(old),
            let (newNode, newSize) = CodedNode.encoding(new)
        else { return nil }
        switch (oldNode, newNode) {
        case (.object(let a), .object(let b))
        where a.keys.count == b.keys.count && a.keys.allSatisfy({ b[$0] != nil }):
            break
        case (.array(let a), .array(let b)) where a.count == b.count:
            break
        default:
            return nil
        }
        var changes: [Change] = []
        guard collect(oldNode, newNode, path: [], into: &changes), !changes.isEmpty else { return nil }
        let size = changes.reduce(0) { total, change in
            total + PathDescriptor(change.path).description.utf8.count + (change.old?.size ?? 0)
                + (change.new?.size ?? 0) + 16
        }
        guard size < oldSize + newSize,
            replays(changes, from: newNode, toward: \.old, reaching: old),
            replays(changes.reversed(), from: oldNode, toward: \.new, reaching: new)
        else { return nil }
        return changes
    }

    /// Appends the differing parts below `path`; `false` when there are too many.
    private static func collect(
        _ old: CodedNode, _ new: CodedNode, path: [PathComponent], into changes: inout [Change]
    )
        -> Bool
    {
        if old == new { return true }
        switch (old, new) {
        case (.object(let a), .object(let b)):
            for key in Set(a.keys).union(b.keys).sorted() {
                let child = path + [.property(key)]
                switch (a[key], b[key]) {
                case (let x?, let y?):
                    guard collect(x, y, path: child, into: &changes) else { return false }
                case (let x, let y) where x != y:
                    changes.append(Change(path: child, old: x, new: y))
                default: break
                }
            }
        case (.array(let a), .array(let b)) where a.count == b.count:
            for index in a.indices {
                guard collect(a[index], b[index], path: path + [.index(index)], into: &changes) else {
                    return false
                }
            }
        default:
            changes.append(Change(path: path, old: old, new: new))
        }
        return changes.count <= maximumChanges
    }

    /// Whether applying `changes` one by one to `start` decodes at every step and ends at `target`.
    private static func replays<Value: Codable & Equatable>(
        _ changes: some Sequence<Change>, from start: CodedNode, toward side: KeyPath<Change, CodedNode?>,
        reaching target: Value
    ) -> Bool {
        var node = start
        var last: Value?
        for change in changes {
            guard node.replace(at: change.path[...], with: change[keyPath: side]),
                let value = node.decoded(as: Value.self)
            else { return false }
            last = value
        }
        return last.map { Equality.same($0, target) } ?? false
    }
}

/// A change to one part of a `Codable` value's encoded form, stored like a whole-value change
/// (`{"old": …, "new": …}`, a side left out when the part is absent there) at the part's path.
struct CodedPatch<Value: Codable & Equatable>: LeafPatch, PartPatch {
    /// Where the part is below the value.
    var path: [PathComponent]
    var sides: CodedSides

    static var kind: String { Replacement<Value>.kind }

    func mismatch(in value: Value, expecting side: PatchSide) -> String? {
        guard let (node, _) = CodedNode.encoding(value) else { return "the value does not encode" }
        let expected = sides[side]
        switch node.lookup(path[...]) {
        case .invalid(let reason): return reason
        case .absent where expected != nil: return "expected a value, found none"
        case .found(let found) where expected != found:
            return expected.map { "expected \($0.abbreviatedText), found \(found.abbreviatedText)" }
                ?? "expected none, found a value"
        default: break
        }
        // Check now that the other side decodes, since applying cannot fail.
        var changed = node
        guard changed.replace(at: path[...], with: sides[side.other]), changed.decoded(as: Value.self) != nil
        else {
            return "the value with this change does not decode as \(Value.self)"
        }
        return nil
    }

    func apply(to value: inout Value, toward side: PatchSide) {
        guard var (node, _) = CodedNode.encoding(value), node.replace(at: path[...], with: sides[side]),
            let changed = node.decoded(as: Value.self)
        else { return }
        value = changed
    }
}

extension CodedPatch: Codable {
    init(from decoder: any Decoder) throws {
        path = []
        sides = try CodedSides(from: decoder)
    }

    func encode(to encoder: any Encoder) throws { try sides.encode(to: encoder) }
}

/// Both sides of a ``CodedPatch``: `{"old": …, "new": …}`, a side left out when absent (a JSON
/// `null` is a value, not an absence).
struct CodedSides: Codable, Hashable, Sendable {
    var old: CodedNode?
    var new: CodedNode?

    subscript(side: PatchSide) -> CodedNode? { side == .old ? old : new }

    private enum CodingKeys: String, CodingKey { case old, new }

    init(old: CodedNode?, new: CodedNode?) {
        self.old = old
        self.new = new
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        old = try container.contains(.old) ? container.decode(CodedNode.self, forKey: .old) : nil
        new = try container.contains(.new) ? container.decode(CodedNode.self, forKey: .new) : nil
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try old.map { try container.encode($0, forKey: .old) }
        try new.map { try container.encode($0, forKey: .new) }
    }
}

extension PatchSide {
    var other: PatchSide { self == .old ? .new : .old }
}
