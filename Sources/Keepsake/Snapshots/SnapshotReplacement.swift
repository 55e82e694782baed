import Foundation
import Revertible

// Replacing a snapshot keeps what the replaced one holds and the saving model does not read:
// an earlier release of the app saving again over a later release's snapshot.

extension Caretaker {
    /// `rows`, a snapshot of `Value` about to replace snapshot `existing`, with what that one
    /// holds and `Value` does not read: a property a later release of the app added, which an
    /// earlier release replacing the snapshot would otherwise drop, and the later release
    /// would restore its default. Histories keep such values the same way
    /// (``HistoryRows/checkpointJSON(of:position:history:unread:)``).
    ///
    /// For a `Decodable` value, the places of the replaced snapshot's JSON the new one lacks
    /// and that decoding it as a `Value` does not read
    /// (``StoredForm/membersKeepingUnread(of:as:)``): in its properties, and in
    /// array elements paired by id. For a ``RestorableObject``, which saves every property
    /// (`nil` too), the properties the class lacks, but for those its
    /// ``RestorableObject/propertyEvolution`` declares renamed or removed, and inside each
    /// property what its type (`propertyTypes`) does not read, found the same way; for a value
    /// saved whole, as one row (an array), what is inside it. A replaced snapshot that cannot
    /// be read (damaged) keeps nothing: replacing it is how an app repairs it.
    static func keepingUnread<Value>(
        of _: Value.Type, in rows: [(PathDescriptor, String)],
        replacing existing: (id: Int64, namespace: String, name: String),
        propertyTypes: [String: any Decodable.Type], _ connection: SQLiteConnection, _ blobs: BlobCoding
    ) -> [(PathDescriptor, String)] {
        let stored = try? connection.query(
            "SELECT path, value, \(connection.column("digest", since: 2)) FROM snapshot_property WHERE snapshot_id = ?",
            [.integer(existing.id)]
        ) {
            (
                try PathDescriptor(parsing: $0.text(0) ?? ""),
                try Self.checkedJSON($0, blobs, namespace: existing.namespace, name: existing.name)
            )
        }
        var places = KeyPlaces()
        if let root = Self.rootJSON(of: rows), let replaced = stored.flatMap(Self.rootJSON) {
            guard places.mayHoldUnread(replaced, beside: root, under: ""),
                let decodable = Value.self as? any Decodable.Type,
                let json = Self.keepingUnread(of: decodable, in: root, replacing: replaced, blobs)
            else { return rows }
            return [([], json)]
        }
        guard let saved = SnapshotCoding.members(of: rows),
            let replaced = stored.flatMap(SnapshotCoding.members)
        else { return rows }
        let savedJSON = Dictionary(saved, uniquingKeysWith: { first, _ in first })
        // Only the replaced properties that may hold what the new ones lack are read: one saved
        // as it was, or whose keys' places are all among the new one's, holds nothing more.
        let candidates = replaced.filter {
            places.mayHoldUnread($0.json, beside: savedJSON[$0.key], under: $0.key)
        }
        guard !candidates.isEmpty else { return rows }
        let kept: [(key: String, json: String)]
        if let restorable = Value.self as? any RestorableObject.Type {
            let evolution = restorable.propertyEvolution
            let gone = Set(evolution.removedKeys + evolution.formerNames)
            kept = candidates.compactMap { member in
                guard let json = savedJSON[member.key] else {
                    return gone.contains(member.key) ? nil : member
                }
                return propertyTypes[member.key].flatMap {
                    Self.keepingUnread(of: $0, in: json, replacing: member.json, blobs)
                }.map { (member.key, $0) }
            }
        } else if let decodable = Value.self as? any Decodable.Type {
            kept = Self.membersKeepingUnread(
                as: decodable, now: SnapshotCoding.object(saved), earlier: SnapshotCoding.object(candidates),
                blobs)
        } else {
            return rows
        }
        guard !kept.isEmpty else { return rows }
        let keptJSON = Dictionary(kept, uniquingKeysWith: { first, _ in first })
        return rows.map { row in
            guard let key = row.0.propertyName, let json = keptJSON[key] else { return row }
            return (row.0, json)
        } + kept.filter { savedJSON[$0.key] == nil }.map { ([.property($0.key)], $0.json) }
    }

    /// The JSON of a value saved whole, as one row at the root path (an array, say).
    private static func rootJSON(of rows: [(PathDescriptor, String)]) -> String? {
        guard rows.count == 1, rows[0].0.components.isEmpty else { return nil }
        return rows[0].1
    }

    /// `json`, a property's value of type `type`, with what `replaced`, the value it replaces,
    /// holds and `type` does not read; `nil` when that is nothing.
    private static func keepingUnread(
        of type: any Decodable.Type, in json: String, replacing replaced: String, _ blobs: BlobCoding
    ) -> String? {
        func keeping<T: Decodable>(_: T.Type) -> String? {
            membersKeepingUnread(
                as: PropertyValue<T>.self, now: "{\"value\":\(json)}", earlier: "{\"value\":\(replaced)}",
                blobs
            ).first?.json
        }
        return keeping(type)
    }

    /// The members of `now`, a whole value's JSON (an object), that gain what `earlier` holds
    /// and `T` does not read (``StoredForm/membersKeepingUnread(of:as:)``), `[]` when either
    /// is not JSON: `now` whole, which fills what `earlier` lacks for the decode, and shows
    /// `T`'s keys.
    private static func membersKeepingUnread<T: Decodable>(
        as _: T.Type, now: String, earlier: String, _ blobs: BlobCoding
    ) -> [(key: String, json: String)] {
        guard let nowForm = try? StoredForm(json: now, decoder: blobs.decoder),
            let earlierForm = try? StoredForm(json: earlier, decoder: blobs.decoder)
        else { return [] }
        return nowForm.membersKeepingUnread(of: earlierForm, as: T.self)
    }

    /// A property's value as the one member of an object, which
    /// ``StoredForm/membersKeepingUnread(of:as:)`` reads.
    private struct PropertyValue<T: Decodable>: Decodable {
        let value: T
    }
}

/// The places of the keys of JSON objects, elements of an array taken as one (`items[].done`),
/// each given a number, the same in every text read by one `KeyPlaces`: a text whose places are
/// all among another's holds no key the other's writer does not write somewhere alike.
struct KeyPlaces {
    /// A key's place: the place of its object, and the key as written (escapes kept), by its
    /// length and 64-bit FNV-1a hash (no text is made for each of a large array's keys; two
    /// property names of one type alike in both are not a concern); or an array's elements
    /// (`key` `nil`).
    private struct Step: Hashable {
        let parent: Int
        let key: (length: Int, hash: UInt64)?

        static func == (a: Step, b: Step) -> Bool {
            a.parent == b.parent && a.key?.length == b.key?.length && a.key?.hash == b.key?.hash
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(parent)
            hasher.combine(key?.length ?? -1)
            hasher.combine(key?.hash ?? 0)
        }

        init(parent: Int, key: String) {
            self.parent = parent
            var key = key
            self.key = key.withUTF8 { (length: $0.count, hash: Self.hash($0)) }
        }

        init(parent: Int, bytes: UnsafeBufferPointer<UInt8>?) {
            self.parent = parent
            key = bytes.map { (length: $0.count, hash: Self.hash($0)) }
        }

        private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
    }

    private var numbers: [Step: Int] = [:]

    /// The place of `step`, numbered the first time it is seen.
    private mutating func number(_ step: Step) -> Int {
        if let number = numbers[step] { return number }
        let number = numbers.count
        numbers[step] = number
        return number
    }

    /// The places of the keys in `json`, a top-level property's value, `root` being its name;
    /// `nil` when it is not JSON this reads (a container left open).
    mutating func places(in json: String, under root: String) -> Set<Int>? {
        var json = json
        let rootPlace = number(Step(parent: -1, key: root))
        return json.withUTF8 { bytes in places(in: bytes, rootPlace: rootPlace) }
    }

    /// Whether `replaced`, a property's JSON in a snapshot being replaced, may hold what the
    /// model does not read beside `saved`, its JSON in the new one (`nil`: the new one lacks
    /// it): a key at a place `saved` has no key at. One whose keys' places are all among
    /// `saved`'s holds nothing its model does not write, hence read (an array's elements being
    /// one type), and is not parsed: an autosave of 10,000 items replaced with every changed
    /// row parsed and decoded took 1.7–4.8 times a save (bench scenario 5).
    mutating func mayHoldUnread(_ replaced: String, beside saved: String?, under name: String) -> Bool {
        guard replaced != saved else { return false }
        guard let saved, let replacedPlaces = places(in: replaced, under: name),
            let savedPlaces = places(in: saved, under: name)
        else { return true }
        return !replacedPlaces.isSubset(of: savedPlaces)
    }

    private mutating func places(in bytes: UnsafeBufferPointer<UInt8>, rootPlace: Int) -> Set<Int>? {
        var places: Set<Int> = []
        // Each container open: whether it is an object, and its place.
        var open: [(object: Bool, place: Int)] = []
        // The place of the value about to begin, and whether a key comes first.
        var next = rootPlace
        var keyFirst = false
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                open.append((true, next))
                keyFirst = true
            case UInt8(ascii: "["):
                open.append((false, next))
                next = number(Step(parent: next, bytes: nil))
                keyFirst = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard open.popLast() != nil else { return nil }
                keyFirst = false
            case UInt8(ascii: ","):
                guard let container = open.last else { return nil }
                if container.object {
                    keyFirst = true
                } else {
                    next = number(Step(parent: container.place, bytes: nil))
                }
            case UInt8(ascii: "\""):
                guard let end = JSONMembers.stringEnd(bytes, index) else { return nil }
                if keyFirst, let container = open.last, container.object {
                    next = number(
                        Step(
                            parent: container.place,
                            bytes: UnsafeBufferPointer(rebasing: bytes[index + 1..<end - 1])))
                    places.insert(next)
                    keyFirst = false
                }
                index = end
                continue
            default:
                break
            }
            index += 1
        }
        return open.isEmpty ? places : nil
    }
}
