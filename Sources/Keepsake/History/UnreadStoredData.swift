import Foundation
import Revertible

/// Whether a history's stored values hold what the app's model does not read: properties a
/// later release of the app added, read by an earlier one (the same store opened by an older
/// app, on another device or after a downgrade), or properties removed since.
///
/// A checkpoint stores a value whole, in the form the model encodes it: from a model that
/// lacks a property, it would lack that property's values, and the later app would read its
/// defaults there — the user's values gone without a word. Where the stored values hold what
/// the model does not read, a checkpoint is stored as the stored JSON reaches it instead
/// (``HistoryRows/checkpointJSON(of:position:history:unread:)``).
///
/// Finding out costs a replay of the changes on the stored JSON: it is done once, at the first
/// checkpoint a history writes after opening, and again after the history moved over versions
/// it did not write itself (they may carry such properties). Shared by the history's
/// committing thread and its background builds.
final class UnreadStoredData: @unchecked Sendable {
    // Sound because `state` and `checks` are touched only while `lock` is held.
    private let lock = NSLock()
    private var state = State.unknown
    private var checks = 0

    enum State: Equatable {
        /// Not found out since the history opened, or since it moved over versions it did not
        /// write.
        case unknown
        /// The model reads every stored value.
        case none
        /// The stored values hold what the model does not read, at these places.
        case held([String])
        /// The stored values may hold what the model does not read, and the stored JSON the
        /// changes reach cannot be built: the change of the version at `position` is within a
        /// `String` or `Data` value the JSON does not hold, a property the later release fills
        /// from its defaults, on an element this one inserted, say
        /// (``StoredForm/unstoredReason(_:)``). No checkpoint is stored: only the changes keep
        /// that value.
        case unreached(position: Int)
    }

    /// What was found last, and a ticket that ``settle(_:ticket:)`` takes.
    var current: (state: State, ticket: Int) { lock.withLock { (state, checks) } }

    /// Takes what a check found, unless the history moved over versions it did not write
    /// since the check began (it read the rows before).
    func settle(_ found: State, ticket: Int) {
        lock.withLock { if checks == ticket { state = found } }
    }

    /// Forgets what was found: the history moved over versions it did not write, or opened
    /// again.
    func forget() {
        lock.withLock {
            checks += 1
            state = .unknown
        }
    }
}

extension HistoryRows {
    /// The JSON to store as the checkpoint of `value`, the value right after the version at
    /// `position` (the base value when `nil`), and its size, blobs included; `nil` when none
    /// may be stored.
    ///
    /// The model's own encoding, when the stored values hold nothing it does not read (found
    /// out once, see ``UnreadStoredData``). When they do, the stored JSON the changes reach at
    /// `position` — the newest checkpoint at or below it with the applied versions after it
    /// redone on its JSON — which holds those values still, once it is checked to decode to
    /// `value`; when it does not (the model and the stored JSON disagree), no checkpoint is
    /// stored: reopening replays the changes, which keep every value. Large byte strings keep
    /// the blob references the stored JSON holds, noted to be checked when it is stored (bytes
    /// changed on the stored form are base64, as a change made there writes them).
    ///
    /// Where the changes cannot be redone on the stored JSON (the app changed the model since
    /// they were stored, and the new model's changes do not fit the old JSON), the model's
    /// encoding is stored, as before; except where the stored values may hold what the model
    /// does not read and a change within text or bytes finds no value in the JSON to change
    /// (``UnreadStoredData/State/unreached(position:)``): then none is.
    ///
    /// - Parameter encoded: The model's encoding of `value` (``encodeCheckpoint(_:)``), when
    ///   made already: outside a read transaction, since it stores large byte strings.
    func checkpointJSON<Value: Versionable & Codable>(
        of value: Value, encoded: (json: String, size: Int)? = nil, position: Int?, history name: String,
        unread: UnreadStoredData
    ) throws -> (json: String, size: Int)? {
        if case .unreached = unread.current.state { return nil }
        let encoded = try encoded ?? encodeCheckpoint(value)
        let found: (form: StoredForm, value: Value)?
        do {
            found = try storedFormHoldingUnread(
                Value.self, encoded: encoded.json, position: position, history: name, unread: unread)
        } catch is Unreached {
            return nil
        }
        guard let (form, stored) = found else { return encoded }
        guard stored.reversion(to: value) == nil else { return nil }
        let json = form.json
        return (json, json.utf8.count + (try blobs.noteReferences(in: form)))
    }

    /// Whether the stored values hold what the model does not read, found out at `position`
    /// where it is not known yet, `value` being the value there.
    func holdsUnread<Value: Versionable & Codable>(
        _ value: Value, position: Int?, history name: String, unread: UnreadStoredData
    ) throws -> Bool {
        switch unread.current.state {
        case .none: return false
        case .unreached: return true
        case .unknown, .held: break
        }
        do {
            return try storedFormHoldingUnread(
                Value.self, encoded: encodeCheckpoint(value).json, position: position, history: name,
                unread: unread)
                != nil
        } catch is Unreached {
            return true
        }
    }

    /// The stored form at `position`, and the value the model reads from it, when it holds
    /// what the model does not read (found out unless known to hold nothing such, and noted in
    /// `unread`); `nil` when it holds nothing such, or when the changes cannot be redone on the
    /// stored JSON. `encoded` is the model's JSON of the value there, filling what the stored
    /// JSON lacks (properties added since).
    ///
    /// The value's shape is built first, without the bytes of its `Data` (a few MiB of them
    /// changed sixteen times took over a second to redo), and walked beside the model's own
    /// form: that rules out most histories. Only one whose shape may hold more is read through
    /// the merge, and only one that does is redone whole.
    private func storedFormHoldingUnread<Value: Versionable & Codable>(
        _: Value.Type, encoded: String, position: Int?, history name: String, unread: UnreadStoredData
    ) throws -> (form: StoredForm, value: Value)? {
        let (known, ticket) = unread.current
        if known == .none { return nil }
        let keys = CodingKeyTree(for: Value.self)
        // The template (the model's JSON as Foundation objects, a parse of the whole value) is
        // made only for a history the walk did not rule out.
        guard let own = try? StoredForm(json: encoded),
            let shape = try? storedForm(at: position, history: name, keys: keys, shapeOnly: true),
            shape.mayHoldMore(than: own),
            let template = FoundationJSON.object(Data(encoded.utf8)),
            let form = try fullStoredForm(
                at: position, history: name, keys: keys, unread: unread, ticket: ticket),
            let read = try? form.decodeNotingUnread(Value.self, template: template),
            !read.unread.isEmpty
        else {
            unread.settle(.none, ticket: ticket)
            return nil
        }
        unread.settle(.held(read.unread), ticket: ticket)
        return (form, read.value)
    }

    /// The stored form at `position`, every value in it; `nil` when the changes cannot be
    /// redone on it (the model's encoding is stored then). When what stops them is a change
    /// within text or bytes the JSON does not hold, that is noted in `unread` and ``Unreached``
    /// thrown: the stored values may hold what the model does not read (its shape said so),
    /// which its encoding would lose, and the stored JSON cannot be built: no checkpoint may be
    /// stored.
    private func fullStoredForm(
        at position: Int?, history name: String, keys: CodingKeyTree, unread: UnreadStoredData, ticket: Int
    ) throws -> StoredForm? {
        do {
            return try storedForm(at: position, history: name, keys: keys, shapeOnly: false)
        } catch KeepsakeError.reversion(_, let version?, let error) where StoredForm.isUnstored(error) {
            unread.settle(.unreached(position: version), ticket: ticket)
            throw Unreached()
        } catch {
            return nil
        }
    }

    /// The stored JSON a checkpoint would hold cannot be built, and the model's encoding
    /// would lose what it does not read: no checkpoint is stored.
    private struct Unreached: Error {}

    /// The stored form of the value right after the version at `position` (the base value when
    /// `nil`): the newest checkpoint at or below it, with the applied versions after it redone
    /// (its shape only, with `shapeOnly`).
    private func storedForm(at position: Int?, history name: String, keys: CodingKeyTree, shapeOnly: Bool)
        throws
        -> StoredForm?
    {
        guard let position else {
            return try baseCheckpoint().map {
                try storedForm($0, redoing: [], history: name, keys: keys, atLeast: 0, shapeOnly: shapeOnly)
                    .form
            }
        }
        guard let source = try bestCheckpoint(below: position + 1) else { return nil }
        let versions = try appliedVersions(after: source.position, upTo: position)
        guard versions.last?.position ?? source.position == position,
            try firstGap(redoing: versions, after: source.position) == nil
        else { return nil }
        return try storedForm(
            source.json, redoing: versions, history: name, keys: keys, atLeast: versions.count,
            shapeOnly: shapeOnly
        ).form
    }
}
