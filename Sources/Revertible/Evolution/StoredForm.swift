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
/// give it, as `keys` finds them (see ``CodingKeyTree``); a property the model declares renamed
/// where the merge reads it, under its new key or its old name, whichever the JSON holds.
package struct StoredForm: Equatable {
    private(set) var root: CodedNode
    /// Where the model's properties lie in the JSON.
    private let keys: CodingKeyTree
    /// Reads `Data` and the range patches of `String` and `Data` values, as the records' writer
    /// encoded them.
    let decoder: JSONDecoder
    /// Where elements were found by id, so that replaying a thousand changes inside one large
    /// array does not search it a thousand times.
    private let positions = ElementPositions()
    /// Whether a replay builds the tree's shape only — which keys and elements it holds where,
    /// for ``mayHoldMore(than:)`` — and not its every value: a change within a `Data` value's
    /// bytes is passed over, not even read, leaving the bytes as they were, and a whole value
    /// is not checked against the one it replaces (a `Data` value passed over before is not
    /// the one it expects). A change of a few MiB of bytes is read from base64 and written
    /// back: sixteen of them took over a second.
    package var shapeOnly = false

    /// Whether a change of a property today's model no longer has but whose decoding may read
    /// it (moved into a struct, read from an earlier form by the type's `init(from:)`) is made
    /// where the JSON lacks its key and the JSON's form does not read it there: `false` unless
    /// set, and the change is refused (``unreadHereReason``), so that a replay passes over
    /// such a checkpoint (one today's model stored, holding the struct) for an older one, in
    /// the form the change was made on. A replay no checkpoint fits makes it all the same, as
    /// it made every such change before: the value then does not show it.
    @TaskLocal package static var makesChangesWhereUnread = false

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
    ///   - text: The text for the integer it holds; `nil` leaves the object.
    /// - Throws: What `text` throws; the tree is then partly replaced.
    package mutating func inline(_ key: String, _ text: (Int64) throws -> String?) rethrows {
        try root.inline(key, text)
    }

    /// The integers of the objects whose one member is `key`, as ``inline(_:_:)`` would find
    /// them: what a storage's references may be (an app's object of that one key is found too).
    package func integers(under key: String) -> [Int64] {
        var found: [Int64] = []
        root.collectIntegers(under: key, into: &found)
        return found
    }

    /// The tree as JSON text, keys sorted.
    package var json: String { root.jsonText }

    /// Whether this tree may hold what `encoded` (the model's encoding of the same value)
    /// lacks: a member, other than `null`, of an object whose counterpart there lacks it; or
    /// a place where the two do not line up (an object or array against anything else, arrays
    /// of different lengths). `false` is certain: the model writes every property it reads,
    /// so the tree then holds nothing it does not read. `true` is what
    /// ``decodeNotingUnread(_:template:)`` tells apart (a property under its name before a
    /// rename is read; a set's members in another order line up otherwise).
    ///
    /// - Complexity: One walk of the two trees, decoding nothing: much less than that read.
    package func mayHoldMore(than encoded: StoredForm) -> Bool {
        Self.mayHoldMore(root, than: encoded.root)
    }

    private static func mayHoldMore(_ stored: CodedNode, than encoded: CodedNode) -> Bool {
        switch (stored, encoded) {
        case (.object(let stored), .object(let encoded)):
            for (key, node) in stored {
                guard let counterpart = encoded[key] else {
                    if node == .null { continue }
                    return true
                }
                if mayHoldMore(node, than: counterpart) { return true }
            }
            return false
        case (.array(let stored), .array(let encoded)):
            guard stored.count == encoded.count else { return true }
            return zip(stored, encoded).contains { mayHoldMore($0, than: $1) }
        case (.object, _), (.array, _): return true
        default: return false
        }
    }

    /// The value this JSON holds, decoded as a `T` by the merge that reads stored data (see
    /// ``EvolvingDecoding``), and the places of the JSON `T` does not read
    /// (``EvolvingDecoding/decodeNotingUnread(_:from:template:decoder:)``).
    ///
    /// - Parameter template: A value's JSON, parsed, filling what the tree lacks.
    package func decodeNotingUnread<T: Decodable>(_ type: T.Type, template: Any?) throws -> (
        value: T, unread: [String]
    ) {
        try EvolvingDecoding.decodeNotingUnread(
            T.self, from: root.foundationObject, template: template, decoder: decoder)
    }

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
        for record in records {
            if keys.knowsType { try learnKeys(on: record.path, from: record, inverted: inverted) }
            edits.append(try Edit(record, decoder: decoder, passingOverBytes: shapeOnly))
        }
        for index in edits.indices {
            guard let reason = try mismatch(edits[index], expecting: expected) else { continue }
            // A property wrapper's storage, `_title`, lies in the JSON under its property's
            // key, `title`: where no type says so (``CodingKeyTree/key(of:in:decoder:)``), the
            // change fits there and not under its own name (a property `_title` beside a
            // `title`, left out while `nil`, fits under its own).
            if let storage = edits[index].wrappedPropertysEdit,
                try mismatch(storage, expecting: expected) == nil
            {
                edits[index] = storage
                continue
            }
            // An earlier release's change of a property a later one renamed (the store went
            // back and forth between them) expects the earlier release's default, not the value
            // under the new key: made there, it does not fit, and the store would not open in
            // the later release. It is made under its old name, where the merge reads it only
            // without the new key, as the earlier release's own checkpoint keeps it: the later
            // release does not see it, as when the earlier release closed the document.
            if let stored = edits[index].underStoredNames, try mismatch(stored, expecting: expected) == nil {
                edits[index] = stored
                continue
            }
            throw .wrongVersion(path: edits[index].path, reason: reason)
        }
        // Applied in place, each edit's previous node kept to put back should a later one
        // fail. The tree is taken out of `root` meanwhile, so that no other reference makes a
        // change copy the containers on its path (`apply` reads `self`): with a copy of the
        // tree, a value of 500,000 items took 67 s to replay 1,000 versions on.
        var tree = root
        root = .null
        defer { root = tree }
        var undone: [Undo] = []
        do throws(ReversionError) {
            for edit in inverted ? edits.reversed() : edits {
                undone.append(try apply(edit, toward: expected.other, to: &tree))
            }
        } catch {
            for undo in undone.reversed() {
                switch undo {
                case .put(let steps, let previous):
                    _ = tree.replace(at: steps[...], with: previous)
                    positions.forget(after: steps)
                case .change(let steps, let edit, let side):
                    // What was applied in place, applied back.
                    _ = try? tree.modify(at: steps[...]) { node throws(ReversionError) in
                        _ = try Self.change(&node, by: edit, toward: side)
                    }
                    positions.forget(after: steps)
                }
            }
            throw error
        }
    }

    /// Finds the keys of the properties on `path` that the model's type encodes under keys of
    /// its own making (``CodingKeyTree/learnKeyPath(of:in:from:inverted:decoder:)``), from
    /// `record`, the change at `path`.
    ///
    /// Without them, such a change was made under the property's name, a key the model does
    /// not read: until 2026-11, a model whose `encode(to:)` stores `title` under `case name`
    /// opened after an app update with the title its last checkpoint held, every change of it
    /// since lost without a word.
    ///
    /// - Throws: ``ReversionError/undecodable(path:type:reason:)`` when the key is not found
    ///   that way, saying how the model can name it.
    private func learnKeys(on path: PathDescriptor, from record: ChangeRecord, inverted: Bool)
        throws(ReversionError)
    {
        var learned: Set<Int> = []
        while case .failure(let unplaced) = Self.place(
            path.components[...], in: root, keys: keys, decoder: decoder, positions: positions),
            let (offset, object, keys) = unplaced.unknownKey,
            case .property(let stored) = path.components[offset]
        {
            let name = keys.currentName(of: stored)
            let suffix = ChangeRecord(
                path: PathDescriptor(Array(path.components[offset...])), kind: record.kind,
                payload: record.payload)
            // Each step once: a key found is known at that step from then on.
            guard learned.insert(offset).inserted,
                keys.learnKeyPath(of: name, in: object, from: suffix, inverted: inverted, decoder: decoder)
                    != nil
            else {
                throw .undecodable(
                    path: path, type: keys.typeName,
                    reason:
                        "the model stores \(PathText.quoted(name)) where its change shows no one place for it "
                        + "(in two places, or transformed): if it stores it as it is under one key, name that "
                        + "key's case after the property (case \(name) = \"…\", the key's text kept), and its "
                        + "stored changes are found there"
                )
            }
        }
    }

    /// Gives each of `paths` that names a key its object lacks here (its last step: the object
    /// itself is here) the node `other` holds there, if it holds one: a property an old model's
    /// JSON lacks, added since, as `other` — today's model's reading of it — has it.
    ///
    /// - Parameters:
    ///   - paths: The paths of the records about to be applied.
    ///   - other: The same value as today's model reads and writes it.
    package mutating func fill(absentAt paths: [PathDescriptor], from other: StoredForm) {
        for path in paths {
            guard
                case .success(let here) = Self.place(
                    path.components[...], in: root, keys: keys, decoder: decoder),
                here.node == nil,
                case .success(let there) = Self.place(
                    path.components[...], in: other.root, keys: other.keys, decoder: other.decoder),
                let node = there.node, root.replace(at: here.steps[...], with: node)
            else { continue }
            positions.forget(after: here.steps)
        }
    }

    // MARK: - Edits

    /// One record, read.
    private struct Edit {
        enum Patch {
            /// A whole value (or a part of a coded value): each side, `nil` where it is absent.
            case replace(old: CodedNode?, new: CodedNode?)
            case text(RangePatch<String>)
            /// `nil` when passed over (``StoredForm/shapeOnly``), not even read.
            case bytes(RangePatch<Data>?)
            case elements(ArrayPatch<CodedNode>)
            case members(SetPatch<CodedNode>)
            case entries(DictionaryPatch<CodedNode, CodedNode>)
        }

        let path: PathDescriptor
        let patch: Patch
        /// Whether a property the model declares renamed is made where the merge reads it
        /// (``StoredForm/place(_:in:keys:decoder:positions:followingRenames:)``); else under
        /// the name the path gives it.
        private(set) var followsRenames = true

        private init(path: PathDescriptor, patch: Patch) { (self.path, self.patch) = (path, patch) }

        /// This edit made under the names its path gives, as an earlier release wrote it: one
        /// that lacks a property a later release renamed reads its default there, and its
        /// change of it expects that default, not the value the JSON holds under the new key.
        var underStoredNames: Edit? {
            guard followsRenames else { return nil }
            var edit = self
            edit.followsRenames = false
            return edit
        }

        /// This edit at its path with each property named `_name` named `name`, as synthesized
        /// `Codable` keys a property wrapper's storage; `nil` when it names none.
        var wrappedPropertysEdit: Edit? {
            var renamed = false
            let components = path.components.map { component -> PathComponent in
                guard case .property(let name) = component, name.hasPrefix("_"), name.count > 1 else {
                    return component
                }
                renamed = true
                return .property(String(name.dropFirst()))
            }
            return renamed ? Edit(path: PathDescriptor(components), patch: patch) : nil
        }

        init(_ record: ChangeRecord, decoder: JSONDecoder, passingOverBytes: Bool = false)
            throws(ReversionError)
        {
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
                patch = .bytes(passingOverBytes ? nil : try decoded(RangePatch<Data>.self))
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

        /// The entries of `node`, or `nil` when it is no dictionary's JSON (a key twice in it).
        init?(_ node: CodedNode) {
            switch node {
            case .object(let object):
                entries = Dictionary(
                    uniqueKeysWithValues: object.map { (CodedNode.string($0.key), $0.value) })
            case .array(let array) where array.count.isMultiple(of: 2):
                let pairs = stride(from: 0, to: array.count, by: 2).map { (array[$0], array[$0 + 1]) }
                guard Set(pairs.map(\.0)).count == pairs.count else { return nil }
                entries = Dictionary(uniqueKeysWithValues: pairs)
            default:
                return nil
            }
        }
    }

    private func mismatch(_ edit: Edit, expecting side: PatchSide) throws(ReversionError) -> String? {
        let place = try locate(edit, in: root)
        if place.node == nil, !shapeOnly, !Self.makesChangesWhereUnread, notReadHere(edit) {
            return Self.unreadHereReason
        }
        let node = place.node ?? .null
        switch edit.patch {
        case .replace where shapeOnly:
            return nil
        case .replace(let old, let new):
            let expected = (side == .old ? old : new) ?? .null
            guard !same(expected, node), place.node != nil || !readsOwnValueWhereAbsent(edit) else {
                return nil
            }
            return "expected \(expected.abbreviatedText), found \(node.abbreviatedText)"
        case .text(let patch):
            guard case .string(let string) = node else {
                guard node == .null else { return "expected text, found \(node.abbreviatedText)" }
                return unstoredMismatch(patch.whole(side.other) != nil, kind: "text")
            }
            return patch.mismatch(in: string, expecting: side)
        case .bytes(nil):
            return nil
        case .bytes(let patch?):
            guard let data = bytes(node) else {
                guard node == .null else { return "expected bytes, found \(node.abbreviatedText)" }
                return unstoredMismatch(patch.whole(side.other) != nil, kind: "bytes")
            }
            return patch.mismatch(in: data, expecting: side)
        case .elements(let patch):
            guard case .array(let array) = node else {
                return "expected an array, found \(node.abbreviatedText)"
            }
            let (count, entries) =
                side == .new ? (patch.newCount, patch.insertions) : (patch.oldCount, patch.removals)
            guard array.count == count else { return "expected \(count) elements, found \(array.count)" }
            let idKey = place.keys[.index(0)].idKey(ofElementsIn: array, decoder: decoder)
            for entry in entries where !sameIdentity(array[entry.offset], entry.element, idKey: idKey) {
                return "the element at \(entry.offset) differs"
            }
            return nil
        case .members(let patch):
            let (count, present, absent) =
                side == .new
                ? (patch.newCount, patch.inserted, patch.removed)
                : (patch.oldCount, patch.removed, patch.inserted)
            guard case .array(let array) = node else {
                return "expected a set's members, found \(node.abbreviatedText)"
            }
            guard present.count + absent.count > Self.fewMembers else {
                // A few members, each looked for: a set's JSON holds each member once (a `Set`
                // encoded it, and every change since inserted only members it lacked), and its
                // length is the count the change was made at.
                guard array.count == count else { return "expected \(count) members, found \(array.count)" }
                guard present.allSatisfy(array.contains), !absent.contains(where: array.contains) else {
                    return "the members differ"
                }
                return nil
            }
            let members = Set(array)
            guard members.count == array.count else {
                return "expected a set's members, found \(node.abbreviatedText)"
            }
            return patch.mismatch(in: members, expecting: side)
        case .entries(let patch):
            let (count, present, absent) =
                side == .new
                ? (patch.newCount, patch.inserted, patch.removed)
                : (patch.oldCount, patch.removed, patch.inserted)
            // The entries looked up one by one, as `DictionaryPatch.mismatch(in:expecting:)`
            // checks them, in an object by key; in keys and values in turn, by a search each
            // when they are a few.
            let entry: (CodedNode) -> CodedNode?
            let found: Int
            switch node {
            case .object(let object):
                entry = { key in
                    guard case .string(let text) = key else { return nil }
                    return object[text]
                }
                found = object.count
            case .array(let array)
            where array.count.isMultiple(of: 2) && present.count + absent.count <= Self.fewMembers:
                entry = { key in Self.pairOffset(of: key, in: array).map { array[$0 + 1] } }
                found = array.count / 2
            default:
                guard let entries = Entries(node) else {
                    return "expected a dictionary, found \(node.abbreviatedText)"
                }
                return patch.mismatch(in: entries.entries, expecting: side)
            }
            guard found == count else { return "expected \(count) entries, found \(found)" }
            for (key, expected) in present where !(entry(key).map { same($0, expected) } ?? false) {
                return "the entry for \(RecordCoding.canonicalJSON(key)) differs"
            }
            for key in absent.keys where entry(key) != nil {
                return "unexpected entry for \(RecordCoding.canonicalJSON(key))"
            }
            return nil
        }
    }

    /// How to take back one applied edit.
    private enum Undo {
        /// The node that was at these steps (`nil`: none), put back.
        case put([PathComponent], CodedNode?)
        /// The edit, applied in place at these steps toward this side.
        case change([PathComponent], Edit, PatchSide)
    }

    /// Applies one edit to `tree`, which is unchanged when it throws; returns how to take it
    /// back.
    ///
    /// An array, a set or a dictionary is changed in place, at the cost of what the edit
    /// touches: replaying a thousand versions of a value of 100,000 elements copied them all
    /// at each one (15 s where the model's replay takes 0.5 s).
    private func apply(_ edit: Edit, toward side: PatchSide, to tree: inout CodedNode) throws(ReversionError)
        -> Undo
    {
        switch edit.patch {
        case .elements, .members, .entries:
            // Only the steps: a second reference to the container would make it a copy.
            let steps = try locate(edit, in: tree).steps
            var moves: Moves?
            let found = try tree.modify(at: steps[...]) { node throws(ReversionError) in
                moves = try Self.change(&node, by: edit, toward: side)
            }
            guard found else { throw .pathNotFound(path: edit.path, type: "JSON") }
            if let moves {
                positions.moved(at: steps, removed: moves.removed, inserted: moves.inserted)
            } else {
                positions.forget(after: steps)
            }
            return .change(steps, edit, side.other)
        case .replace, .text, .bytes:
            break
        }
        let (steps, found, _) = try locate(edit, in: tree)
        let node = found ?? .null
        let changed: CodedNode?
        switch edit.patch {
        case .replace(let old, let new):
            changed = side == .old ? old : new
        case .text(let patch):
            let current: String? = if case .string(let string) = node { string } else { nil }
            changed = try Self.changed(
                node, holding: current, by: patch, toward: side, edit: edit, shapeOnly: shapeOnly
            ) {
                .string($0)
            }
        case .bytes(nil):
            changed = node == .null ? Self.unstoredPlaceholder : node
        case .bytes(let patch?):
            changed = try Self.changed(
                node, holding: bytes(node), by: patch, toward: side, edit: edit, shapeOnly: shapeOnly
            ) {
                .string($0.base64EncodedString())
            }
        case .elements, .members, .entries:
            preconditionFailure("changed in place above")
        }
        guard tree.replace(at: steps[...], with: changed) else {
            throw .pathNotFound(path: edit.path, type: "JSON")
        }
        positions.replaced(at: steps, from: found, to: changed)
        return .put(steps, found)
    }

    /// Whether the model reads a value of its own for the property `edit` changes, whose key
    /// the JSON lacks there: one it does not have (a property removed or renamed since, whose
    /// stored change this is), or one that is not optional (its own encoding always writes it),
    /// which it read from its defaults — the JSON was written by a release without it. The
    /// change's old side is what the model read, which the JSON cannot confirm: a whole value
    /// replacing it is made all the same. Until 2026-11 it was refused: an earlier release
    /// (a synced document opened by an older app) that set a property the later one had
    /// removed stored its own encoding as the checkpoint instead of the stored JSON, and the
    /// later release's values were lost (a tag's color read its default, at every version). An
    /// optional's key is missing where it is `nil`: checked as before.
    private func readsOwnValueWhereAbsent(_ edit: Edit) -> Bool {
        guard keys.knowsType, case .property(let stored)? = edit.path.components.last,
            case .success(let parent) = Self.place(
                edit.path.components.dropLast(), in: root, keys: keys, decoder: decoder, positions: positions,
                followingRenames: edit.followsRenames)
        else { return false }
        return parent.keys.readsOwnValue(
            whereAbsent: edit.followsRenames ? parent.keys.currentName(of: stored) : stored)
    }

    /// Whether `edit` changes a property today's model does not have, whose key the JSON lacks,
    /// which the decoding of the type holding it, or of a type holding that through properties,
    /// may read from an earlier form (see
    /// ``EvolvingDecoding/mayRead(_:at:decoding:template:decoder:)``: moved into a struct, or
    /// out of one) but none reads from the JSON here: the JSON is in another form (today's),
    /// where the change cannot show.
    private func notReadHere(_ edit: Edit) -> Bool {
        guard keys.knowsType, case .property(let stored)? = edit.path.components.last else { return false }
        let above = edit.path.components.dropLast()
        func holder(_ end: Int) -> (node: CodedNode, keys: CodingKeyTree)? {
            guard
                case .success(let place) = Self.place(
                    above[..<end], in: root, keys: keys, decoder: decoder, positions: positions,
                    followingRenames: edit.followsRenames),
                let node = place.node
            else { return nil }
            return (node, place.keys)
        }
        guard let parent = holder(above.endIndex), parent.keys.lacksProperty(stored) else { return false }
        var (end, place, mayRead) = (above.endIndex, [String](), false)
        while let (node, keys) = holder(end) {
            switch keys.reads(stored, at: place, in: node, decoder: decoder) {
            case .here?: return false
            case .elsewhere?: mayRead = true
            case nil: break
            }
            // Up through properties only: an element's place is its own type's to read.
            guard end > above.startIndex, case .property(let name) = above[end - 1] else { break }
            (end, place) = (end - 1, [name] + place)
        }
        return mayRead
    }

    /// Why a change is refused where ``notReadHere(_:)``.
    package static let unreadHereReason =
        "the stored JSON is in a form that does not read this property (today's model stored it)"

    /// Whether `error` is a refusal for the reason ``unreadHereReason`` gives.
    package static func isUnreadHere(_ error: ReversionError) -> Bool {
        guard case .wrongVersion(_, let reason) = error else { return false }
        return reason == unreadHereReason
    }

    /// Where the JSON holds no value (`null`, or the key missing) for a change of a `String`
    /// or `Data` value, the model read one there from its defaults: a property added since
    /// the JSON was written, on an element an earlier release inserted, which only the model
    /// knows. A change that keeps the side it makes whole (values up to 256 bytes) makes it
    /// without the one it replaces: no mismatch. A change of a range within a longer value
    /// needs that value: refused, with ``unstoredReason(_:)`` — except where only the shape is
    /// built (``shapeOnly``), which puts ``unstoredPlaceholder`` there: a value, whichever.
    private func unstoredMismatch(_ makesWhole: Bool, kind: String) -> String? {
        makesWhole || shapeOnly ? nil : Self.unstoredReason(kind)
    }

    /// `node`, which holds `current` as a `String` or `Data` value (`nil`: not one), changed by
    /// `patch` toward `side`: where the JSON holds no value, the side the patch keeps whole, or
    /// ``unstoredPlaceholder`` in a shape-only replay (see ``unstoredMismatch(_:kind:)``).
    private static func changed<Value>(
        _ node: CodedNode, holding current: Value?, by patch: RangePatch<Value>, toward side: PatchSide,
        edit: Edit, shapeOnly: Bool, written: (Value) -> CodedNode
    ) throws(ReversionError) -> CodedNode {
        if var value = current {
            patch.apply(to: &value, toward: side)
            return written(value)
        }
        if node == .null, let whole = patch.whole(side) { return written(whole) }
        if node == .null, shapeOnly { return unstoredPlaceholder }
        throw .wrongVersion(path: edit.path, reason: "expected \(Value.rangePatchKind)")
    }

    /// What a shape-only replay puts where a change of a `String` or `Data` value finds no
    /// value: the tree's shape holds one there, as the full replay's would.
    private static let unstoredPlaceholder = CodedNode.string("")

    /// Why a change of a range within a `kind` value ("text" or "bytes") is refused where the
    /// JSON holds none: its model filled the value when reading, and the JSON cannot tell which.
    package static func unstoredReason(_ kind: String) -> String {
        "a change within \(kind) the stored JSON does not hold (the model filled it when reading)"
    }

    /// Whether `error` is a refusal for the reason ``unstoredReason(_:)`` gives: the stored
    /// JSON cannot reach the value the model read, which only the stored changes keep.
    package static func isUnstored(_ error: ReversionError) -> Bool {
        guard case .wrongVersion(_, let reason) = error else { return false }
        return reason == unstoredReason("text") || reason == unstoredReason("bytes")
    }

    /// The elements an array's change removed (at their offsets before it) and inserted (at
    /// their offsets after it).
    private typealias Moves = (
        removed: [ArrayPatch<CodedNode>.Entry], inserted: [ArrayPatch<CodedNode>.Entry]
    )

    /// Changes a container by an edit of an array, a set or a dictionary toward `side`, in
    /// place (its mismatch was checked first); returns an array's moves.
    private static func change(_ node: inout CodedNode, by edit: Edit, toward side: PatchSide)
        throws(ReversionError)
        -> Moves?
    {
        switch edit.patch {
        case .elements(let patch):
            guard case .array(var array) = node,
                array.count == (side == .new ? patch.oldCount : patch.newCount)
            else {
                throw .wrongVersion(path: edit.path, reason: "expected an array of the stored length")
            }
            node = .null
            defer { node = .array(array) }
            let (remove, insert) =
                side == .new ? (patch.removals, patch.insertions) : (patch.insertions, patch.removals)
            let removed = remove.map { ArrayPatch.Entry(offset: $0.offset, element: array[$0.offset]) }
            patch.apply(to: &array, toward: side)
            return (removed, insert)
        case .members(let patch):
            guard case .array(var array) = node else {
                throw .wrongVersion(path: edit.path, reason: "expected a set")
            }
            node = .null
            defer { node = .array(array) }
            let (remove, insert) =
                side == .new ? (patch.removed, patch.inserted) : (patch.inserted, patch.removed)
            // The members keep their order, and new ones follow in the order of their JSON.
            if remove.count <= Self.fewMembers {
                for member in remove {
                    if let index = array.firstIndex(of: member) { array.remove(at: index) }
                }
            } else {
                array.removeAll { remove.contains($0) }
            }
            array.append(contentsOf: insert.sorted { $0.jsonText < $1.jsonText })
            return nil
        case .entries(let patch):
            let (remove, insert) =
                side == .new ? (patch.removed, patch.inserted) : (patch.inserted, patch.removed)
            // `if case`, not `switch`: a switch would hold the node while its container changes,
            // which would then be copied.
            if case .object(var object) = node {
                // An object's keys are text: checked before anything changes.
                var (removing, inserting): ([String], [(String, CodedNode)]) = ([], [])
                for key in remove.keys {
                    guard case .string(let text) = key else { throw Self.keysDoNotFit(edit) }
                    removing.append(text)
                }
                for (key, value) in insert {
                    guard case .string(let text) = key else { throw Self.keysDoNotFit(edit) }
                    inserting.append((text, value))
                }
                node = .null
                defer { node = .object(object) }
                for key in removing { object[key] = nil }
                for (key, value) in inserting { object[key] = value }
            } else if case .array(var array) = node, array.count.isMultiple(of: 2) {
                node = .null
                defer { node = .array(array) }
                // Keys and values in turn: the pairs keep their order, and new ones follow in
                // the order of their keys' JSON.
                if remove.count <= Self.fewMembers {
                    for key in remove.keys {
                        if let offset = Self.pairOffset(of: key, in: array) {
                            array.removeSubrange(offset...offset + 1)
                        }
                    }
                } else {
                    array = stride(from: 0, to: array.count, by: 2).flatMap { offset in
                        remove[array[offset]] == nil ? [array[offset], array[offset + 1]] : []
                    }
                }
                for (key, value) in insert.sorted(by: { $0.key.jsonText < $1.key.jsonText }) {
                    array.append(key)
                    array.append(value)
                }
            } else {
                throw .wrongVersion(path: edit.path, reason: "expected a dictionary")
            }
            return nil
        case .replace, .text, .bytes:
            preconditionFailure("only a collection's change is applied in place")
        }
    }

    /// Up to how many members or entries a change finds one by one (each a search of the
    /// collection) rather than by hashing the whole collection once.
    private static let fewMembers = 8

    private static func keysDoNotFit(_ edit: Edit) -> ReversionError {
        .undecodable(path: edit.path, type: "JSON", reason: "its keys do not fit the dictionary's form")
    }

    /// Where the pair whose key is `key` starts in a dictionary's keys and values in turn.
    private static func pairOffset(of key: CodedNode, in array: [CodedNode]) -> Int? {
        stride(from: 0, to: array.count - 1, by: 2).first { array[$0] == key }
    }

    // MARK: - Places

    /// The steps `edit`'s path takes through `tree` — an object's key or an array's position
    /// each, as ``CodedNode/replace(at:with:)`` takes them — the node there (`nil`: the last
    /// step names a key its object lacks, as an optional left out of the JSON), and the model's
    /// keys there.
    private func locate(_ edit: Edit, in tree: CodedNode) throws(ReversionError)
        -> (steps: [PathComponent], node: CodedNode?, keys: CodingKeyTree)
    {
        switch Self.place(
            edit.path.components[...], in: tree, keys: keys, decoder: decoder, positions: positions,
            followingRenames: edit.followsRenames)
        {
        case .success(let place): return place
        case .failure: throw .pathNotFound(path: edit.path, type: "JSON")
        }
    }

    /// The steps `path` takes through `tree`, the node there (`nil`: absent) and the model's
    /// keys there, or why it names no place. A property is looked up under its key in `keys`;
    /// one the model declares renamed, where the merge reads it unless not `followingRenames`.
    private static func place(
        _ path: ArraySlice<PathComponent>, in tree: CodedNode, keys: CodingKeyTree, decoder: JSONDecoder,
        positions: ElementPositions? = nil, followingRenames: Bool = true
    ) -> Result<
        (steps: [PathComponent], node: CodedNode?, keys: CodingKeyTree), Unplaced
    > {
        var steps: [PathComponent] = []
        var node = tree
        var keys = keys
        for (offset, component) in zip(path.indices, path) {
            let step: PathComponent
            // The component as today's model names it (a property renamed since, its new name).
            var property = component
            switch (node, component) {
            case (.object(var object), .property(let stored)):
                // A property renamed since is today's, made where the merge reads it: under
                // its key where the JSON holds that, else under its old name. Until 2026-11 a
                // change at the old name was made under that name wherever the JSON lacked it:
                // on JSON today's model wrote (`"name"`), a `"title"` beside it, which the
                // merge does not read, and the change was lost without a word (redoing a
                // version the old app had undone, after an update).
                let name = followingRenames ? keys.currentName(of: stored) : stored
                property = .property(name)
                guard var keyPath = keys.keyPath(of: name, in: node, decoder: decoder),
                    var key = keyPath.popLast()
                else {
                    return .failure(
                        Unplaced(
                            reason: "the model encodes \(PathText.quoted(name)) under a key of its own",
                            unknownKey: (offset, object: node, keys: keys)))
                }
                // A nested container's keys (`"meta"` of `"meta": {"author": …}`), then the
                // property's own.
                for outer in keyPath {
                    guard case .object(let inner)? = object[outer] else {
                        return .failure(Unplaced(reason: "the object has no \(PathText.quoted(outer))"))
                    }
                    steps.append(.property(outer))
                    object = inner
                    node = .object(inner)
                }
                let renamedSince = name != stored
                if object[key] != nil {
                    // Today's model wrote it, converted where a conversion is declared: a change
                    // the old model stored holds the old type's values, which do not fit.
                    if renamedSince, keys.convertsValues(of: name) {
                        return .failure(
                            Unplaced(
                                reason: "the JSON holds \(PathText.quoted(name)) as today's model writes it, "
                                    + "converted from the \(PathText.quoted(stored)) the change was made to"))
                    }
                } else if followingRenames, let former = renamedSince ? stored : keys.formerName(of: name),
                    renamedSince || (object[former] != nil && !keys.convertsValues(of: name))
                {
                    // The merge reads the old name where the JSON lacks the new key: a change the
                    // old model stored goes there (converted when read), as does one of today's
                    // model where the JSON holds it there, unconverted.
                    key = former
                }
                guard object[key] != nil else {
                    guard offset == path.indices.last else {
                        return .failure(Unplaced(reason: "the object has no \(PathText.quoted(key))"))
                    }
                    return .success((steps + [.property(key)], nil, keys[property]))
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
                // An optional id that is `nil` is left out of the JSON, as synthesized `Codable`
                // leaves out every `nil` (`var id: Int64?` of a row not inserted yet): the
                // path names it `[id: null]`. Until 2026-11 no element was found for it, and a
                // store holding such a change did not open after an app update.
                guard let id = CodedNode.parsing(Data(json.utf8)),
                    let index = positions?.position(of: id, in: array, at: steps, idKey: idKey)
                        ?? array.firstIndex(where: {
                            Self.id(of: $0, key: idKey, absentAsNull: id == .null) == id
                        })
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
            keys = keys[property]
            switch (node, step) {
            case (.object(let object), .property(let key)): node = object[key]!
            case (.array(let array), .index(let index)): node = array[index]
            default: break
            }
        }
        return .success((steps, node, keys))
    }

    /// The positions of an array's elements by id, remembered per array and kept up as the
    /// replay changes it, so that replaying a thousand versions of a large array finds each
    /// element without building the positions again: an edit that inserts or removes elements
    /// moves the remembered positions (integers only), and one that replaces an element or its
    /// id changes that element's alone. An edit that could change ids another way — the array
    /// replaced whole, an edit inside a compound id — forgets them, and the next lookup finds
    /// them all again.
    ///
    /// A position is a hint, checked before use: an element found there with another id has
    /// them found again. An id names the first element that has it; where elements share an id
    /// (an app's bug), no position names the first one for long, and the array is searched at
    /// every use.
    private final class ElementPositions {
        private struct Remembered {
            /// Every id in the array, at its position.
            var positions: [CodedNode: Int]
            /// Whether two elements share an id.
            var shared: Bool
            /// The elements' id key.
            let idKey: String

            /// Moves the positions as removing the elements `removed` and inserting `inserted`
            /// moved the elements; `false` when they cannot be kept up (an id shared, or not
            /// where it was remembered).
            mutating func move(
                removed: [ArrayPatch<CodedNode>.Entry], inserted: [ArrayPatch<CodedNode>.Entry]
            )
                -> Bool
            {
                guard !shared else { return false }
                for entry in removed {
                    guard let id = StoredForm.id(of: entry.element, key: idKey) else { continue }
                    guard positions[id] == entry.offset else { return false }
                    positions[id] = nil
                }
                if !removed.isEmpty || !inserted.isEmpty {
                    // A kept element's position among the kept ones is its old position less the
                    // removed elements before it; its new position adds the inserted ones before
                    // it: the t-th inserted one (offset o) comes before every kept one from the
                    // (o - t)-th on.
                    let removedOffsets = removed.map(\.offset)
                    let keptBefore = zip(inserted, 0...).map { $0.offset - $1 }
                    // Indexed by hand: `values.indices` would hold a second reference, and the
                    // first change would copy them all.
                    var index = positions.values.startIndex
                    while index != positions.values.endIndex {
                        let position = positions.values[index]
                        let kept = position - Self.count(of: removedOffsets, below: position)
                        positions.values[index] = kept + Self.count(of: keptBefore, below: kept + 1)
                        positions.values.formIndex(after: &index)
                    }
                }
                for entry in inserted {
                    guard let id = StoredForm.id(of: entry.element, key: idKey) else { continue }
                    guard positions[id] == nil else { return false }
                    positions[id] = entry.offset
                }
                return true
            }

            /// Gives the element at `index` the id `new` in place of `old` (`nil`: none); `false`
            /// when they cannot be kept up (an id shared, or not where it was remembered).
            mutating func replace(_ old: CodedNode?, with new: CodedNode?, at index: Int) -> Bool {
                guard !shared else { return false }
                guard old != new else { return true }
                if let old {
                    guard positions[old] == index else { return false }
                    positions[old] = nil
                }
                if let new {
                    guard positions[new] == nil else { return false }
                    positions[new] = index
                }
                return true
            }

            /// How many of `sorted` (ascending) are less than `bound`.
            private static func count(of sorted: [Int], below bound: Int) -> Int {
                var (low, high) = (0, sorted.count)
                while low < high {
                    let middle = (low + high) / 2
                    if sorted[middle] < bound { low = middle + 1 } else { high = middle }
                }
                return low
            }
        }

        private var byArray: [[PathComponent]: Remembered] = [:]

        /// Forgets the positions of the arrays an edit at `steps` may have given other ids: the
        /// arrays at or inside `steps`, and an array whose element it replaced, or whose
        /// element's id. (An edit deeper inside an element changes no id.)
        func forget(after steps: [PathComponent]) {
            guard !byArray.isEmpty else { return }
            byArray = byArray.filter { path, remembered in
                if steps.count <= path.count { return !path.starts(with: steps) }
                guard steps.starts(with: path) else { return true }
                return !Self.reachesID(steps[path.count...], idKey: remembered.idKey)
            }
        }

        /// Whether an edit at `steps`, inside an array, is at one of its elements or inside
        /// that element's id.
        private static func reachesID(_ steps: ArraySlice<PathComponent>, idKey: String) -> Bool {
            steps.count == 1 || steps.dropFirst().first == .property(idKey)
        }

        /// Keeps the positions of the array at `steps` up after a change removed and inserted
        /// elements (`removed` at their offsets before it, ascending; `inserted` at theirs
        /// after it), and forgets the others' as ``forget(after:)`` does.
        func moved(
            at steps: [PathComponent], removed: [ArrayPatch<CodedNode>.Entry],
            inserted: [ArrayPatch<CodedNode>.Entry]
        ) {
            guard !byArray.isEmpty else { return }
            // Taken out, so that its positions are changed in place, not copied.
            let remembered = byArray.removeValue(forKey: steps)
            forget(after: steps)
            if var remembered, remembered.move(removed: removed, inserted: inserted) {
                byArray[steps] = remembered
            }
        }

        /// Keeps the positions up after an edit at `steps` replaced `previous` (`nil`: nothing)
        /// with `changed`: an array's element replaced whole, or its id, has its new id
        /// remembered; the rest is forgotten as ``forget(after:)`` does.
        func replaced(at steps: [PathComponent], from previous: CodedNode?, to changed: CodedNode?) {
            guard !byArray.isEmpty else { return }
            var kept: [(path: [PathComponent], remembered: Remembered)] = []
            for path in Array(byArray.keys) where path.count < steps.count && steps.starts(with: path) {
                let inside = steps[path.count...]
                guard inside.count <= 2, case .index(let index) = inside.first,
                    let idKey = byArray[path]?.idKey, Self.reachesID(inside, idKey: idKey),
                    var remembered = byArray.removeValue(forKey: path)
                else { continue }
                let id = { (node: CodedNode?) in
                    inside.count == 1 ? node.flatMap { StoredForm.id(of: $0, key: remembered.idKey) } : node
                }
                if remembered.replace(id(previous), with: id(changed), at: index) {
                    kept.append((path, remembered))
                }
            }
            forget(after: steps)
            for (path, remembered) in kept { byArray[path] = remembered }
        }

        /// Where the first element with `id` is in `array`, which lies at `path`; `nil` when none
        /// has it.
        func position(of id: CodedNode, in array: [CodedNode], at path: [PathComponent], idKey: String)
            -> Int?
        {
            if let remembered = byArray[path], remembered.idKey == idKey {
                if remembered.shared { return array.firstIndex { StoredForm.id(of: $0, key: idKey) == id } }
                guard let position = remembered.positions[id] else { return nil }
                if array.indices.contains(position), StoredForm.id(of: array[position], key: idKey) == id {
                    return position
                }
            }
            var remembered = Remembered(positions: [:], shared: false, idKey: idKey)
            remembered.positions.reserveCapacity(array.count)
            for (position, element) in zip(array.indices, array) {
                guard let elementID = StoredForm.id(of: element, key: idKey) else { continue }
                if remembered.positions[elementID] == nil {
                    remembered.positions[elementID] = position
                } else {
                    remembered.shared = true
                }
            }
            byArray[path] = remembered
            return remembered.positions[id]
        }
    }

    /// Why a path names no place.
    private struct Unplaced: Error {
        let reason: String
        /// Where the path names a property whose key the model's type does not show
        /// (``CodingKeyTree/key(of:in:decoder:)``): the step's offset in the path, the object
        /// there and the model's keys there.
        var unknownKey: (offset: Int, object: CodedNode, keys: CodingKeyTree)?
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
    private func sameIdentity(_ a: CodedNode, _ b: CodedNode, idKey: String) -> Bool {
        if let first = Self.id(of: a, key: idKey), let second = Self.id(of: b, key: idKey) {
            return first == second
        }
        return same(a, b)
    }

    /// Whether two nodes hold the same value, where `Data` may be written two ways: as a
    /// storage keeps it (Keepsake's `{"$blob": id}` for 1 KiB or more) and as base64, which a
    /// change made on this tree within the bytes writes back. The tree keeps a storage's form
    /// as it reads it: which object is one and which is the app's own (a dictionary whose one
    /// key is `"$blob"`, say) only the model's type tells, and replacing every such object by
    /// bytes turned the app's objects into text (`BlobLookalikeTests`). Two nodes whose
    /// JSON differs are read as bytes only where one is text and the other an object, or both
    /// objects of one member: a check, never a value written.
    private func same(_ a: CodedNode, _ b: CodedNode) -> Bool {
        if a == b { return true }
        switch (a, b) {
        case (.object(let first), .object(let second)) where first.count == second.count:
            if first.count == 1, let x = bytes(a), let y = bytes(b) { return x == y }
            return first.allSatisfy { key, node in second[key].map { same(node, $0) } ?? false }
        case (.array(let first), .array(let second)) where first.count == second.count:
            return zip(first, second).allSatisfy { same($0, $1) }
        case (.string, .object), (.object, .string):
            guard let x = bytes(a), let y = bytes(b) else { return false }
            return x == y
        default:
            return false
        }
    }

    /// An element's id, under `key`, when it is an object with one; with `absentAsNull`, an
    /// object without one has the id `null` (an optional id that is `nil`, left out).
    static func id(of element: CodedNode, key: String, absentAsNull: Bool = false) -> CodedNode? {
        guard case .object(let object) = element else { return nil }
        return object[key] ?? (absentAsNull ? .null : nil)
    }

    /// The bytes a `Data` node holds (base64, or a storage's own form such as a blob reference),
    /// read by the records' decoder.
    private func bytes(_ node: CodedNode) -> Data? {
        // Base64, as a change made here writes bytes back: read straight from the text, where
        // writing it out as JSON for the decoder took seconds for a few MiB.
        if case .string(let text) = node, let data = Data(base64Encoded: text) { return data }
        var json: [UInt8] = [UInt8(ascii: "[")]
        node.write(into: &json)
        json.append(UInt8(ascii: "]"))
        return (try? decoder.decode([Data].self, from: Data(json)))?.first
    }

}

extension CodedNode {
    /// The integer of an object whose one member is `key`: a storage's reference, as
    /// ``StoredForm/inline(_:_:)`` and ``StoredForm/integers(under:)`` find them.
    fileprivate func integer(under key: String) -> Int64? {
        guard case .object(let object) = self, object.count == 1, case .integer(let id)? = object[key] else {
            return nil
        }
        return id
    }

    /// See ``StoredForm/integers(under:)``.
    fileprivate func collectIntegers(under key: String, into found: inout [Int64]) {
        if let id = integer(under: key) {
            found.append(id)
            return
        }
        switch self {
        case .object(let object):
            for node in object.values { node.collectIntegers(under: key, into: &found) }
        case .array(let array):
            for node in array { node.collectIntegers(under: key, into: &found) }
        default:
            break
        }
    }

    /// See ``StoredForm/inline(_:_:)``: in place, a container this tree alone holds not copied.
    fileprivate mutating func inline(_ key: String, _ text: (Int64) throws -> String?) rethrows {
        if let id = integer(under: key) {
            if let text = try text(id) { self = .string(text) }
            return
        }
        switch self {
        case .object(var object):
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
