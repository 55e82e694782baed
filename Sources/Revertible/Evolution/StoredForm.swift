package import Foundation

/// A value's stored form — its JSON, as a tree — that stored change records are replayed on
/// without the value's type: how a change an app's model can no longer read (one made to an
/// array that is now a `Set`, say) still reaches the value it was made to, which is then decoded
/// with today's model.
///
/// Each record is applied as its kind says, at its path read as a place in the JSON: a property
/// names an object's key, an index an array's element, a dictionary key an entry (an object's
/// key, or a pair in the array a dictionary with other keys encodes as), an element id the
/// array element whose `"id"` is that id. As ``Reversion/revert(_:)`` does, every record is
/// checked against the tree first — the side it expects is there, counts and identities agree —
/// and nothing changes unless all of them match.
///
/// A property is found under its JSON key: its own name, or the key the model's `CodingKeys`
/// give it, as `keys` finds them (see ``CodingKeyTree``).
package struct StoredForm: Equatable {
    private var root: CodedNode
    /// Where the model's properties lie in the JSON.
    private let keys: CodingKeyTree
    /// Reads `Data` and the range patches of `String` and `Data` values, as the records' writer
    /// encoded them.
    private let decoder: JSONDecoder
    /// Where elements were found by id, so that replaying a thousand changes inside one large
    /// array does not search it a thousand times.
    private let positions = ElementPositions()

    /// Parses `json`.
    ///
    /// - Parameters:
    ///   - json: A stored whole value.
    ///   - decoder: Reads the records' patches.
    ///   - keys: The model's type, whose `CodingKeys` are read where they are not its
    ///     properties' names; without it (read with no model, as `keepsake value` does), every
    ///     property is its own key.
    /// - Throws: ``ReversionError/undecodable(path:type:reason:)`` when it is not JSON.
    package init(
        json: String, decoder: JSONDecoder = RecordCoding.decoder, keys: CodingKeyTree = CodingKeyTree()
    ) throws(ReversionError) {
        guard let root = CodedNode.parsing(Data(json.utf8)) else {
            throw .undecodable(path: [], type: "JSON", reason: "the stored value is not JSON")
        }
        (self.root, self.decoder, self.keys) = (root, decoder, keys)
    }

    /// Whether both hold the same JSON value (numbers compared by value, keys in any order).
    package static func == (a: Self, b: Self) -> Bool { a.root == b.root }

    /// Replaces every object whose one member is `key`, holding an integer, with the text
    /// `text` gives for that integer: how a storage puts back what it keeps apart from the JSON
    /// (Keepsake's `{"$blob": id}`, with the blob's bytes in base64).
    ///
    /// - Parameters:
    ///   - key: The member that marks such an object.
    ///   - text: The text for the integer it holds.
    /// - Throws: What `text` throws; the tree is then partly replaced.
    package mutating func inline(_ key: String, _ text: (Int64) throws -> String) rethrows {
        try root.inline(key, text)
    }

    /// The tree as JSON text, keys sorted.
    package var json: String { root.jsonText }

    /// The tree as pretty-printed JSON, keys sorted as `JSONSerialization` sorts them: what
    /// the JSON view of a stored value shows.
    package var prettyJSON: String { String(decoding: root.prettyJSON, as: UTF8.self) }

    /// Reverts the tree by one reversion's records (as ``Reversion/init(records:resolvingAgainst:inverted:decoder:)``
    /// reads them, then ``Reversion/revert(_:)`` applies them): toward each record's old side,
    /// or its new side when `inverted`.
    ///
    /// - Throws: ``ReversionError/wrongVersion(path:reason:)`` when the tree is not at the side a
    ///   record expects, ``ReversionError/pathNotFound(path:type:)`` when its path names no place
    ///   in the tree, ``ReversionError/undecodable(path:type:reason:)`` when its patch does not
    ///   read or its kind has no stored-form meaning. The tree is then unchanged.
    package mutating func revert(_ records: [ChangeRecord], inverted: Bool) throws(ReversionError) {
        let expected: PatchSide = inverted ? .old : .new
        var edits: [Edit] = []
        edits.reserveCapacity(records.count)
        for record in records { edits.append(try Edit(record, decoder: decoder)) }
        for edit in edits {
            if let reason = try mismatch(edit, expecting: expected) {
                throw .wrongVersion(path: edit.path, reason: reason)
            }
        }
        // Applied in place, each edit's previous node kept to put back should a later one
        // fail. The tree is taken out of `root` meanwhile, so that no other reference makes a
        // change copy the containers on its path (`apply` reads `self`): with a copy of the
        // tree, a value of 500,000 items took 67 s to replay 1,000 versions on.
        var tree = root
        root = .null
        defer { root = tree }
        var undone: [(steps: [PathComponent], previous: CodedNode?)] = []
        do throws(ReversionError) {
            for edit in inverted ? edits.reversed() : edits {
                undone.append(try apply(edit, toward: expected.other, to: &tree))
            }
        } catch {
            for (steps, previous) in undone.reversed() {
                _ = tree.replace(at: steps[...], with: previous)
                positions.forget(after: steps)
            }
            throw error
        }
    }

    // MARK: - Edits

    /// One record, read.
    private struct Edit {
        enum Patch {
            /// A whole value (or a part of a coded value): each side, `nil` where it is absent.
            case replace(old: CodedNode?, new: CodedNode?)
            case text(RangePatch<String>)
            case bytes(RangePatch<Data>)
            case elements(ArrayPatch<CodedNode>)
            case members(SetPatch<CodedNode>)
            case entries(DictionaryPatch<CodedNode, CodedNode>)
        }

        let path: PathDescriptor
        let patch: Patch

        init(_ record: ChangeRecord, decoder: JSONDecoder) throws(ReversionError) {
            path = record.path
            func undecodable(_ reason: String) -> ReversionError {
                .undecodable(path: record.path, type: "JSON", reason: reason)
            }
            func decoded<T: Decodable>(_ type: T.Type) throws(ReversionError) -> T {
                do {
                    return try decoder.decode(T.self, from: record.payload)
                } catch {
                    throw undecodable(RecordCoding.describe(error))
                }
            }
            switch record.kind {
            case String.rangePatchKind:
                patch = .text(try decoded(RangePatch<String>.self))
                return
            case Data.rangePatchKind:
                patch = .bytes(try decoded(RangePatch<Data>.self))
                return
            default: break
            }
            guard case .object(let fields)? = CodedNode.parsing(record.payload) else {
                throw undecodable("its \"\(record.kind)\" patch is not a JSON object")
            }
            func count(_ key: String) throws(ReversionError) -> Int {
                guard case .integer(let count)? = fields[key], count >= 0, let exact = Int(exactly: count)
                else {
                    throw undecodable("its \"\(record.kind)\" patch has no count \"\(key)\"")
                }
                return exact
            }
            switch record.kind {
            case "replace":
                patch = .replace(old: fields["old"], new: fields["new"])
            case "elements":
                func entries(_ key: String, fitting count: Int) throws(ReversionError) -> [ArrayPatch<
                    CodedNode
                >.Entry] {
                    guard case .array(let list)? = fields[key] else {
                        throw undecodable("it has no \"\(key)\"")
                    }
                    var entries: [ArrayPatch<CodedNode>.Entry] = []
                    for item in list {
                        guard case .object(let entry) = item, case .integer(let offset)? = entry["offset"],
                            let element = entry["element"], offset >= 0, offset < count,
                            offset > Int64(entries.last?.offset ?? -1)
                        else { throw undecodable("its \"\(key)\" do not fit its counts") }
                        entries.append(.init(offset: Int(offset), element: element))
                    }
                    return entries
                }
                let (oldCount, newCount) = (try count("oldCount"), try count("newCount"))
                let removals = try entries("removals", fitting: oldCount)
                let insertions = try entries("insertions", fitting: newCount)
                guard oldCount - removals.count == newCount - insertions.count else {
                    throw undecodable("its entries do not fit its counts")
                }
                patch = .elements(
                    ArrayPatch(
                        removals: removals, insertions: insertions, oldCount: oldCount, newCount: newCount))
            case "members":
                guard case .array(let removed)? = fields["removed"],
                    case .array(let inserted)? = fields["inserted"]
                else { throw undecodable("its members are not lists") }
                patch = .members(
                    SetPatch(
                        removed: Set(removed), inserted: Set(inserted), oldCount: try count("oldCount"),
                        newCount: try count("newCount")))
            case "entries":
                guard let removed = fields["removed"].flatMap(Entries.init),
                    let inserted = fields["inserted"].flatMap(Entries.init)
                else { throw undecodable("its entries are not a dictionary's") }
                patch = .entries(
                    DictionaryPatch(
                        removed: removed.entries, inserted: inserted.entries, oldCount: try count("oldCount"),
                        newCount: try count("newCount")))
            default:
                throw undecodable(
                    "a \"\(record.kind)\" change is a patch of the app's own type: applying it needs that type"
                )
            }
        }
    }

    /// A dictionary's entries as its JSON holds them: an object (`String` and `Int` keys, the
    /// key as text) or an array of keys and values in turn (any other key).
    private struct Entries {
        var entries: [CodedNode: CodedNode]
        var isObject: Bool

        /// The entries of `node`, or `nil` when it is no dictionary's JSON (a key twice in it).
        init?(_ node: CodedNode) {
            switch node {
            case .object(let object):
                entries = Dictionary(
                    uniqueKeysWithValues: object.map { (CodedNode.string($0.key), $0.value) })
                isObject = true
            case .array(let array) where array.count.isMultiple(of: 2):
                let pairs = stride(from: 0, to: array.count, by: 2).map { (array[$0], array[$0 + 1]) }
                guard Set(pairs.map(\.0)).count == pairs.count else { return nil }
                entries = Dictionary(uniqueKeysWithValues: pairs)
                isObject = false
            default:
                return nil
            }
        }

        /// The entries in their form (pairs by their keys' text), or `nil` when an object's would
        /// need a key that is not text.
        var node: CodedNode? {
            guard isObject else {
                let keys = entries.keys.sorted { $0.abbreviatedText < $1.abbreviatedText }
                return .array(keys.flatMap { [$0, entries[$0]!] })
            }
            var object: [String: CodedNode] = [:]
            for (key, value) in entries {
                guard case .string(let text) = key else { return nil }
                object[text] = value
            }
            return .object(object)
        }
    }

    private func mismatch(_ edit: Edit, expecting side: PatchSide) throws(ReversionError) -> String? {
        let place = try locate(edit.path, in: root)
        let node = place.node ?? .null
        switch edit.patch {
        case .replace(let old, let new):
            let expected = (side == .old ? old : new) ?? .null
            return expected == node
                ? nil : "expected \(expected.abbreviatedText), found \(node.abbreviatedText)"
        case .text(let patch):
            guard case .string(let string) = node else {
                return "expected text, found \(node.abbreviatedText)"
            }
            return patch.mismatch(in: string, expecting: side)
        case .bytes(let patch):
            guard let data = bytes(node) else { return "expected bytes, found \(node.abbreviatedText)" }
            return patch.mismatch(in: data, expecting: side)
        case .elements(let patch):
            guard case .array(let array) = node else {
                return "expected an array, found \(node.abbreviatedText)"
            }
            let (count, entries) =
                side == .new ? (patch.newCount, patch.insertions) : (patch.oldCount, patch.removals)
            guard array.count == count else { return "expected \(count) elements, found \(array.count)" }
            let idKey = place.keys[.index(0)].idKey(ofElementsIn: array, decoder: decoder)
            for entry in entries where !Self.sameIdentity(array[entry.offset], entry.element, idKey: idKey) {
                return "the element at \(entry.offset) differs"
            }
            return nil
        case .members(let patch):
            guard case .array(let array) = node, Set(array).count == array.count else {
                return "expected a set's members, found \(node.abbreviatedText)"
            }
            return patch.mismatch(in: Set(array), expecting: side)
        case .entries(let patch):
            guard let entries = Entries(node) else {
                return "expected a dictionary, found \(node.abbreviatedText)"
            }
            return patch.mismatch(in: entries.entries, expecting: side)
        }
    }

    /// Applies one edit to `tree`, which is unchanged when it throws; returns the steps to the
    /// place it changed and the node that was there (`nil`: none), which put back there undo it.
    private func apply(_ edit: Edit, toward side: PatchSide, to tree: inout CodedNode) throws(ReversionError)
        -> (steps: [PathComponent], previous: CodedNode?)
    {
        let (steps, found, _) = try locate(edit.path, in: tree)
        let node = found ?? .null
        let changed: CodedNode?
        switch edit.patch {
        case .replace(let old, let new):
            changed = side == .old ? old : new
        case .text(let patch):
            guard case .string(var string) = node else {
                throw .wrongVersion(path: edit.path, reason: "expected text")
            }
            patch.apply(to: &string, toward: side)
            changed = .string(string)
        case .bytes(let patch):
            guard var data = bytes(node) else {
                throw .wrongVersion(path: edit.path, reason: "expected bytes")
            }
            patch.apply(to: &data, toward: side)
            changed = .string(data.base64EncodedString())
        case .elements(let patch):
            guard case .array(var array) = node,
                array.count == (side == .new ? patch.oldCount : patch.newCount)
            else {
                throw .wrongVersion(path: edit.path, reason: "expected an array of the stored length")
            }
            patch.apply(to: &array, toward: side)
            changed = .array(array)
        case .members(let patch):
            guard case .array(let array) = node else {
                throw .wrongVersion(path: edit.path, reason: "expected a set")
            }
            var members = Set(array)
            patch.apply(to: &members, toward: side)
            changed = .array(members.sorted { $0.abbreviatedText < $1.abbreviatedText })
        case .entries(let patch):
            guard var entries = Entries(node) else {
                throw .wrongVersion(path: edit.path, reason: "expected a dictionary")
            }
            patch.apply(to: &entries.entries, toward: side)
            guard let node = entries.node else {
                throw .undecodable(
                    path: edit.path, type: "JSON", reason: "its keys do not fit the dictionary's form")
            }
            changed = node
        }
        guard tree.replace(at: steps[...], with: changed) else {
            throw .pathNotFound(path: edit.path, type: "JSON")
        }
        positions.forget(after: steps)
        return (steps, found)
    }

    // MARK: - Places

    /// The steps `path` takes through `tree` — an object's key or an array's position each, as
    /// ``CodedNode/replace(at:with:)`` takes them — the node there (`nil`: the last step
    /// names a key its object lacks, as an optional left out of the JSON), and the model's keys
    /// there.
    private func locate(_ path: PathDescriptor, in tree: CodedNode) throws(ReversionError)
        -> (steps: [PathComponent], node: CodedNode?, keys: CodingKeyTree)
    {
        switch Self.place(path.components[...], in: tree, keys: keys, decoder: decoder, positions: positions)
        {
        case .success(let place): return place
        case .failure: throw .pathNotFound(path: path, type: "JSON")
        }
    }

    /// The steps `path` takes through `tree`, the node there (`nil`: absent) and the model's
    /// keys there, or why it names no place. A property is looked up under its key in `keys`.
    private static func place(
        _ path: ArraySlice<PathComponent>, in tree: CodedNode, keys: CodingKeyTree, decoder: JSONDecoder,
        positions: ElementPositions? = nil
    ) -> Result<
        (steps: [PathComponent], node: CodedNode?, keys: CodingKeyTree), Unplaced
    > {
        var steps: [PathComponent] = []
        var node = tree
        var keys = keys
        for (offset, component) in zip(path.indices, path) {
            let step: PathComponent
            switch (node, component) {
            case (.object(let object), .property(let name)):
                let key = keys.key(of: name, in: node, decoder: decoder)
                guard object[key] != nil else {
                    guard offset == path.indices.last else {
                        return .failure(Unplaced(reason: "the object has no \(PathText.quoted(key))"))
                    }
                    return .success((steps + [.property(key)], nil, keys[component]))
                }
                step = .property(key)
            case (.object(let object), .key(let json)):
                guard let key = CodedNode.parsing(Data(json.utf8)).flatMap(objectKey), object[key] != nil
                else {
                    return .failure(Unplaced(reason: "the dictionary has no key \(json)"))
                }
                step = .property(key)
            case (.array(let array), .index(let index)):
                guard array.indices.contains(index) else {
                    return .failure(Unplaced(reason: "the array has no element \(index)"))
                }
                step = .index(index)
            case (.array(let array), .id(let json)):
                let idKey = keys[component].idKey(ofElementsIn: array, decoder: decoder)
                guard let id = CodedNode.parsing(Data(json.utf8)),
                    let index = positions?.position(of: id, in: array, at: steps, idKey: idKey)
                        ?? array.firstIndex(where: { Self.id(of: $0, key: idKey) == id })
                else { return .failure(Unplaced(reason: "the array has no element with id \(json)")) }
                step = .index(index)
            case (.array(let array), .key(let json)):
                // A dictionary whose keys are neither text nor integers: [key, value, key, value, …].
                let key = CodedNode.parsing(Data(json.utf8))
                guard array.count.isMultiple(of: 2),
                    let pair = stride(from: 0, to: array.count, by: 2).first(where: { array[$0] == key })
                else { return .failure(Unplaced(reason: "the dictionary has no key \(json)")) }
                step = .index(pair + 1)
            default:
                return .failure(Unplaced(reason: "\(component) does not name a place in the stored value"))
            }
            steps.append(step)
            keys = keys[component]
            switch (node, step) {
            case (.object(let object), .property(let key)): node = object[key]!
            case (.array(let array), .index(let index)): node = array[index]
            default: break
            }
        }
        return .success((steps, node, keys))
    }

    /// The positions of an array's elements by id, remembered per array: a hint, checked
    /// before use — an element found there with another id (the array changed since) has them
    /// found again. An id names the first element that has it. Where elements share an id (an
    /// app's bug), the one at a remembered position may no longer be the first once the array
    /// changed: such an array's positions are found again at every use, and an array's are
    /// forgotten when an edit may have given it a shared id (``forget(after:)``).
    private final class ElementPositions {
        private var byArray: [[PathComponent]: (positions: [CodedNode: Int], shared: Bool, idKey: String)] =
            [:]

        /// Forgets the positions of the arrays an edit at `steps` may have given other ids: the
        /// arrays at or inside `steps`, and an array whose element it replaced, or whose
        /// element's id. (An edit deeper inside an element changes no id.)
        func forget(after steps: [PathComponent]) {
            guard !byArray.isEmpty else { return }
            byArray = byArray.filter { path, remembered in
                if steps.count <= path.count { return !path.starts(with: steps) }
                guard steps.starts(with: path) else { return true }
                switch steps.count - path.count {
                case 1: return false
                case 2: return steps.last != .property(remembered.idKey)
                default: return true
                }
            }
        }

        /// Where the first element with `id` is in `array`, which lies at `path`; `nil` when none
        /// has it.
        func position(of id: CodedNode, in array: [CodedNode], at path: [PathComponent], idKey: String)
            -> Int?
        {
            if let remembered = byArray[path], !remembered.shared, remembered.idKey == idKey,
                let position = remembered.positions[id], array.indices.contains(position),
                StoredForm.id(of: array[position], key: idKey) == id
            {
                return position
            }
            var positions: [CodedNode: Int] = [:]
            var shared = false
            for (position, element) in zip(array.indices, array) {
                guard let elementID = StoredForm.id(of: element, key: idKey) else { continue }
                if positions[elementID] == nil {
                    positions[elementID] = position
                } else {
                    shared = true
                }
            }
            byArray[path] = (positions, shared, idKey)
            return positions[id]
        }
    }

    /// Why a path names no place.
    private struct Unplaced: Error {
        let reason: String
    }

    /// What lies at a path, as ``lookup(_:)`` finds it.
    package enum Lookup: Equatable {
        /// A value, as JSON text.
        case found(String)
        /// Nothing: the last step names a key its object lacks (an optional left out of the JSON).
        case absent
        /// The path leads nowhere, for this reason.
        case invalid(String)
    }

    /// What lies at `path`: property names are keys, dictionary keys entries, indices and ids
    /// elements, as stored changes name them.
    ///
    /// - Parameter path: The components from the root.
    package func lookup(_ path: ArraySlice<PathComponent>) -> Lookup {
        switch Self.place(path, in: root, keys: keys, decoder: decoder) {
        case .success((_, let node?, _)):
            return .found(node.jsonText)
        case .success: return .absent
        case .failure(let unplaced): return .invalid(unplaced.reason)
        }
    }

    // MARK: - Nodes

    /// The text an object keys an entry by: a `String` key itself, an `Int` key in decimal.
    private static func objectKey(_ key: CodedNode) -> String? {
        switch key {
        case .string(let text): text
        case .integer(let integer): String(integer)
        default: nil
        }
    }

    /// Whether two array elements are the same one, as reverting an array's change asks: by
    /// their id (`idKey`, `"id"` unless the model's keys say otherwise) when both have one
    /// (`Identifiable` elements), else by equality.
    private static func sameIdentity(_ a: CodedNode, _ b: CodedNode, idKey: String) -> Bool {
        if let first = id(of: a, key: idKey), let second = id(of: b, key: idKey) { return first == second }
        return a == b
    }

    /// An element's id, under `key`, when it is an object with one.
    private static func id(of element: CodedNode, key: String) -> CodedNode? {
        guard case .object(let object) = element else { return nil }
        return object[key]
    }

    /// The bytes a `Data` node holds (base64, or a storage's own form such as a blob reference),
    /// read by the records' decoder.
    private func bytes(_ node: CodedNode) -> Data? {
        var json: [UInt8] = [UInt8(ascii: "[")]
        node.write(into: &json)
        json.append(UInt8(ascii: "]"))
        return (try? decoder.decode([Data].self, from: Data(json)))?.first
    }

}

extension CodedNode {
    /// See ``StoredForm/inline(_:_:)``: in place, a container this tree alone holds not copied.
    fileprivate mutating func inline(_ key: String, _ text: (Int64) throws -> String) rethrows {
        switch self {
        case .object(var object):
            if object.count == 1, case .integer(let id)? = object[key] {
                self = .string(try text(id))
                return
            }
            self = .null
            defer { self = .object(object) }
            var index = object.startIndex
            while index != object.endIndex {
                try object.values[index].inline(key, text)
                object.formIndex(after: &index)
            }
        case .array(var array):
            self = .null
            defer { self = .array(array) }
            for index in array.indices { try array[index].inline(key, text) }
        default:
            break
        }
    }
}
