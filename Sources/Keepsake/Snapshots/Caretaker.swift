public import Foundation

/// Saves, restores and deletes named snapshots of values in a ``KeepsakeStore``.
///
/// Names are scoped by the value's type (and by an optional scope, such as a document id), so
/// two types — or two documents — never overwrite each other's snapshots by accident. Names and
/// scopes compare as Swift strings do (`é` composed or as `e` and an accent), and are stored
/// composed (NFC):
///
/// ```swift
/// let caretaker = Caretaker(store: store)
/// try caretaker.save(user, as: "default")
/// try caretaker.save(animal, as: "default")       // another namespace: no collision
/// let restored: User? = try caretaker.restore("default")
/// if let user = caretaker.default as User? { … }  // dynamic member lookup, as in the seed
/// ```
///
/// Each top-level property is stored as its own row (`snapshot_property`: path, JSON value), so
/// one property can be read without decoding the rest, and the `sqlite3` shell shows one row
/// per property. A property whose JSON is 1 KiB or more, and `Data` of 1 KiB or more, is
/// stored once by content in the `blob` table (the row then holds `{"$json": id}`): a large
/// property unchanged between snapshots takes no space the second time.
@dynamicMemberLookup
public struct Caretaker: Sendable {
    /// The store holding the snapshots.
    public let store: KeepsakeStore
    /// The scope prepended to every namespace, or `nil`.
    public let scope: String?

    /// A caretaker on `store`.
    ///
    /// - Parameters:
    ///   - store: The store.
    ///   - scope: Keeps these snapshots apart from other scopes' (a document id, say).
    public init(store: KeepsakeStore, scope: String? = nil) {
        self.store = store
        self.scope = scope
    }

    /// Where snapshots of `Value` live: the scope, then the type's name (``stableName(of:)``).
    public func namespace<Value>(for _: Value.Type) -> String {
        scoped(Self.stableName(of: Value.self))
    }

    /// Where snapshots of `Value` may live, in the order they are looked for: its namespace,
    /// then those of the names it declares it had (``SnapshotTypeEvolution/formerTypeNames``).
    func namespaces<Value>(for _: Value.Type) -> [String] {
        let former = (Value.self as? any SnapshotTypeEvolution.Type)?.formerTypeNames ?? []
        return [namespace(for: Value.self)] + former.map(scoped)
    }

    /// The namespace of the type named `type`: the scope, then the name.
    private func scoped(_ type: String) -> String {
        scope.map { "\($0)/\(type)" } ?? type
    }

    /// `type`'s qualified name, the same in every process: `String(reflecting:)`, with the
    /// context of a `private`, `fileprivate` or local type — which Swift names by an address in
    /// memory, `(unknown context at $5623266c13b4)`, different at every launch — written
    /// `(private)`, as in `App.(private).Draft`.
    ///
    /// Two `private` types of one name in one module therefore share a namespace: give one of
    /// them a scope (``init(store:scope:)``).
    ///
    /// - Parameter type: The type.
    /// - Returns: Its name, such as `App.Doc` or `App.(private).Draft`.
    public static func stableName(of type: Any.Type) -> String {
        var name = Substring(String(reflecting: type))
        var stable = ""
        while let start = name.range(of: Self.anonymousContext) {
            guard let end = name[start.upperBound...].firstIndex(of: ")") else { break }
            stable += name[..<start.lowerBound] + Self.privateContext
            name = name[name.index(after: end)...]
        }
        return stable + name
    }

    /// How `String(reflecting:)` begins an anonymous context, and what ``stableName(of:)``
    /// writes for one.
    private static let (anonymousContext, privateContext) = ("(unknown context at $", "(private)")

    /// Saves `value` under `name`.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - name: The snapshot's name, unique per type (and scope).
    ///   - replacingExisting: Overwrite a snapshot of the same name; by default saving refuses,
    ///     so that nothing is lost by accident. What the replaced snapshot holds that `Value`
    ///     does not read — a property a later release of the app added, saved by this earlier
    ///     one — is kept for that release to restore; an optional set to `nil` is read, and
    ///     stays `nil`.
    /// - Throws: ``KeepsakeError/snapshotExists(namespace:name:)``, or another ``KeepsakeError``.
    public func save<Value: Encodable>(_ value: Value, as name: String, replacingExisting: Bool = false)
        throws(KeepsakeError)
    {
        try saveProperties(of: Value.self, as: name, replacingExisting: replacingExisting) { encoder in
            try SnapshotCoding.properties(of: value, name: name, encoder: encoder)
        }
    }

    /// The value saved under `name`, or `nil` when there is none.
    ///
    /// - Parameters:
    ///   - name: The snapshot's name.
    ///   - type: The value type (usually inferred).
    /// - Throws: ``KeepsakeError/undecodableSnapshot(name:path:reason:)`` naming the property that
    ///   no longer decodes; nothing is deleted. A property added to `Value` since the snapshot was
    ///   saved, outside any array, is named there with what to do: pass a template to
    ///   ``restore(_:as:fillingMissingFrom:)``.
    public func restore<Value: Decodable>(_ name: String, as type: Value.Type = Value.self)
        throws(KeepsakeError) -> Value?
    {
        try restore(name, as: type, template: { nil }, templateCouldFill: true)
    }

    /// The value saved under `name`, with what it lacks — properties added to `Value` since it
    /// was saved — taken from `template`, or `nil` when there is no such snapshot.
    ///
    /// ```swift
    /// // Doc gained `var pinned = false` since "v1" was saved:
    /// let doc = try caretaker.restore("v1", as: Doc.self, fillingMissingFrom: Doc())
    /// ```
    ///
    /// - Parameters:
    ///   - name: The snapshot's name.
    ///   - type: The value type (usually inferred).
    ///   - template: A value of today's type whose properties fill those the snapshot lacks.
    /// - Throws: ``KeepsakeError/undecodableSnapshot(name:path:reason:)`` naming the property that
    ///   does not decode; nothing is deleted.
    public func restore<Value: Codable>(
        _ name: String, as type: Value.Type = Value.self, fillingMissingFrom template: Value
    ) throws(KeepsakeError) -> Value? {
        try restore(name, as: type, template: { try? ChangeRecord.makeEncoder().encode(template) })
    }

    /// The snapshot called `name` in `namespaces` (those of `Value` by default) as a `Value`.
    private func restore<Value: Decodable>(
        _ name: String, as type: Value.Type, namespaces: [String]? = nil, template: () -> Data?,
        templateCouldFill: Bool = false
    ) throws(KeepsakeError) -> Value? {
        let namespaces = namespaces ?? self.namespaces(for: Value.self)
        return try store.read { connection, blobs in
            guard let (id, stored, storedName) = try Self.id(connection, namespaces, name) else { return nil }
            let rows = try connection.query(
                "SELECT path, value, \(connection.column("digest", since: 2)) FROM snapshot_property WHERE snapshot_id = ? ORDER BY path",
                [.integer(id)]
            ) {
                (
                    path: $0.text(0) ?? "",
                    json: try Self.checkedJSON($0, blobs, namespace: stored, name: storedName)
                )
            }
            try Self.checkPropertyCount(connection, id: id, read: rows.count, name: name)
            return try SnapshotCoding.value(
                Value.self, from: rows, name: name, decoder: blobs.decoder, template: template,
                templateCouldFill: templateCouldFill)
        }
    }

    /// The value saved under `name`, or `nil` when there is none or it does not decode (use
    /// ``restore(_:as:)`` to see the error). As in the seed:
    /// `if let user = caretaker.defaultUser as User? { … }`.
    public subscript<Value: Decodable>(dynamicMember name: String) -> Value? {
        try? restore(name, as: Value.self)
    }

    /// Deletes the snapshot of `Value` called `name`.
    ///
    /// - Returns: Whether there was one.
    /// - Throws: ``KeepsakeError``.
    @discardableResult
    public func delete<Value>(_ name: String, of type: Value.Type) throws(KeepsakeError) -> Bool {
        let namespaces = self.namespaces(for: Value.self)
        return try store.write { connection, _ in
            guard let (id, _, _) = try Self.id(connection, namespaces, name) else { return false }
            try connection.execute("DELETE FROM snapshot WHERE id = ?", [.integer(id)])
            return connection.changes > 0
        }
    }

    /// The value at `path` inside a snapshot, decoded alone: only the row of the top-level
    /// property the path starts with is read.
    ///
    /// ```swift
    /// let name: String? = try caretaker.value(at: "name", in: "default", of: User.self)
    /// let title = try caretaker.value(at: "items[id: 7].title", in: "v1", of: Doc.self, as: String.self)
    /// ```
    ///
    /// A path into an enum's payload (`shape.circle.radius`) reads the payload's encoded form.
    /// A path names properties, as Swift declares them; one that the stored JSON lacks (a
    /// property `Value`'s `CodingKeys` store under another key) is read from the whole snapshot.
    ///
    /// - Parameters:
    ///   - path: Where the value is: a top-level property's name, or any path such as
    ///     `items[id: 7].title`, `scores[key: "alice"]` or `points[2].x`.
    ///   - name: The snapshot's name.
    ///   - type: The snapshot's value type, which selects the namespace.
    ///   - propertyType: The type of the value at `path` (usually inferred).
    /// - Returns: The value, or `nil` when there is no snapshot called `name`, or when the path
    ///   names an optional property that was `nil`. A path the stored JSON lacks — a `nil`
    ///   optional, or a property stored under its name before a rename declared in
    ///   ``Versionable/propertyEvolution`` — is looked up in the whole snapshot read as today's
    ///   type.
    /// - Throws: ``KeepsakeError/snapshotPathNotFound(name:path:reason:)`` when the path names
    ///   nothing in the snapshot (no such property, element, key or position);
    ///   ``KeepsakeError/undecodableSnapshot(name:path:reason:)`` when the value there does not
    ///   decode as `propertyType`.
    public func value<Property: Decodable, Value: Decodable>(
        at path: PathDescriptor, in name: String, of type: Value.Type,
        as propertyType: Property.Type = Property.self
    ) throws(KeepsakeError) -> Property? {
        let namespaces = self.namespaces(for: Value.self)
        // The root: the whole snapshot, read as a restore reads it.
        if path.isRoot {
            return try restore(name, as: Property.self, namespaces: namespaces, template: { nil })
        }
        let found: Result<Property, Missing>? = try store.read { connection, blobs in
            guard let (id, stored, storedName) = try Self.id(connection, namespaces, name) else { return nil }
            // A value stored as one row at the root (not an object) holds every path; otherwise
            // the first component names the row to read. One query reads whichever exists.
            let top: PathDescriptor? =
                if case .property(let key)? = path.components.first { [.property(key)] } else { nil }
            let rows = try connection.query(
                "SELECT path, value, \(connection.column("digest", since: 2)) FROM snapshot_property "
                    + "WHERE snapshot_id = ? AND path IN ('', ?) ORDER BY path",
                [.integer(id), .text(top?.description ?? "")]
            ) {
                (
                    path: $0.text(0) ?? "",
                    json: try Self.checkedJSON($0, blobs, namespace: stored, name: storedName)
                )
            }
            let lookup: StoredForm.Lookup
            if let root = rows.first(where: { $0.path.isEmpty }) {
                lookup = try Self.parsed(root.json, name: name, path: []).lookup(path.components[...])
            } else if let top {
                if let row = rows.first {
                    lookup = try Self.parsed(row.json, name: name, path: top).lookup(
                        path.components.dropFirst())
                } else {
                    // No such row: a property the snapshot was saved without, or a row lost.
                    try Self.checkPropertyCount(connection, id: id, read: nil, name: name)
                    lookup = path.components.count == 1 ? .absent : .invalid("no \(top) in the snapshot")
                }
            } else {
                lookup = .invalid("\(path.components[0]) does not name a property")
            }
            switch lookup {
            case .found(let json):
                do {
                    // Read as a restore reads it: a property of an element type renamed since
                    // is read from its old name.
                    return .success(
                        try EvolvingDecoding.decode(
                            Property.self, from: Data(json.utf8), template: { nil }, decoder: blobs.decoder))
                } catch {
                    throw KeepsakeError.undecodableSnapshot(
                        name: name, path: path, reason: RecordCoding.describe(error))
                }
            case .absent: return .failure(.absent)
            case .invalid(let reason): return .failure(.invalid(reason))
            }
        }
        switch found {
        case nil: return nil
        case .success(let value)?: return value
        case .failure(let missing)?:
            // Not in the stored JSON as the path names it: an optional that was nil, a property
            // stored under the name it had before a rename or under a key of its own
            // (`CodingKeys`), or no such property at all. The whole snapshot, read as today's
            // type, tells which.
            guard let whole = try restore(name, as: Value.self) else { return nil }
            guard let value = MirrorProbe.value(at: path.components[...], in: whole) else {
                let reason =
                    if case .invalid(let reason) = missing { reason } else {
                        "\(Value.self) has no property there"
                    }
                throw .snapshotPathNotFound(name: name, path: path, reason: reason)
            }
            if MirrorProbe.isNil(value) { return nil }
            guard let property = MirrorProbe.unwrapped(value) as? Property else {
                throw .undecodableSnapshot(
                    name: name, path: path,
                    reason: "the value there is a \(Swift.type(of: value)), not a \(Property.self)")
            }
            return property
        }
    }

    /// Why ``value(at:in:of:as:)`` found no stored value: nothing there, or no such place.
    private enum Missing: Error {
        case absent
        case invalid(String)
    }

    private static func parsed(_ json: String, name: String, path: PathDescriptor) throws -> StoredForm {
        do {
            return try StoredForm(json: json)
        } catch {
            throw KeepsakeError.undecodableSnapshot(
                name: name, path: path, reason: "the stored JSON does not parse")
        }
    }

    /// The snapshots of every type in this caretaker's scope (or all, without a scope).
    ///
    /// - Throws: ``KeepsakeError``.
    public func snapshots() throws(KeepsakeError) -> [SnapshotInfo] {
        let prefix = scope.map { "\($0)/" } ?? ""
        return try store.read { connection, _ in try Self.snapshotInfos(connection, prefix: prefix) }
    }

    /// The snapshots whose namespace starts with `prefix` as Swift compares text (all of them
    /// for `""`), sorted: in the composed form snapshots are saved in, in the form given, or in
    /// another an earlier release saved.
    static func snapshotInfos(_ connection: SQLiteConnection, prefix: String) throws -> [SnapshotInfo] {
        let canonical = KeepsakeStore.canonicalName(prefix)
        let infos = try connection.query(
            """
            SELECT namespace, name, value_type, created_at,
                   (SELECT count(*) FROM snapshot_property WHERE snapshot_id = snapshot.id)
            FROM snapshot
            WHERE substr(namespace, 1, length(?1)) = ?1 OR substr(namespace, 1, length(?2)) = ?2
               OR length(CAST(namespace AS BLOB)) != length(namespace)
            ORDER BY namespace, name
            """, [.text(prefix), .text(canonical)]
        ) { row in
            SnapshotInfo(
                namespace: row.text(0) ?? "", name: row.text(1) ?? "", valueType: row.text(2) ?? "",
                date: Date(timeIntervalSince1970: row.double(3) ?? 0), propertyCount: Int(row.int64(4) ?? 0))
        }
        let wanted = Array(canonical.utf8)
        return infos.filter {
            $0.namespace.utf8.starts(with: prefix.utf8)
                || KeepsakeStore.canonicalName($0.namespace).utf8.starts(with: wanted)
        }
    }

    /// Checks that snapshot `id` holds as many property rows as it was saved with (schema 6's
    /// `property_count`): a row lost to damage would otherwise restore as a property the
    /// snapshot never had (`nil`, or the template's value).
    ///
    /// - Parameter read: The rows the caller read, all of the snapshot's; `nil` to count them.
    /// - Throws: ``KeepsakeError/undecodableSnapshot(name:path:reason:)`` when the numbers
    ///   differ; ``SQLiteError`` from the queries.
    static func checkPropertyCount(_ connection: SQLiteConnection, id: Int64, read: Int?, name: String) throws
    {
        // Snapshots of a store older than schema 6, opened read-only, have no count; every
        // snapshot of a later one has.
        guard connection.schemaVersion >= 6 else { return }
        let saved = try connection.scalarInt(
            "SELECT property_count FROM snapshot WHERE id = ?", [.integer(id)])
        let held =
            try read.map(Int64.init)
            ?? connection.scalarInt(
                "SELECT count(*) FROM snapshot_property WHERE snapshot_id = ?", [.integer(id)]) ?? 0
        guard let saved, held == saved else {
            throw KeepsakeError.undecodableSnapshot(
                name: name, path: [],
                reason:
                    "it holds \(held) of the \(saved.map(String.init) ?? "NULL") property rows it was saved with: "
                    + "the file is damaged")
        }
    }

    /// The row id of snapshot `name` in the first of `namespaces` that holds one, and the
    /// namespace its row holds, or `nil` when none does, with the name's index checked against
    /// the table: a damaged index page reads as damage, not as another snapshot or as one
    /// never saved.
    ///
    /// A namespace with a `private` type (``stableName(of:)``) also finds a snapshot an earlier
    /// release saved under the address its type had then: the newest such one.
    ///
    /// - Throws: ``KeepsakeError/undecodableSnapshot(name:path:reason:)`` when the index and the
    ///   table disagree; ``SQLiteError`` from the queries.
    static func id(_ connection: SQLiteConnection, _ namespaces: [String], _ name: String) throws -> (
        id: Int64, namespace: String, name: String
    )? {
        func damaged(_ reason: String) -> KeepsakeError {
            .undecodableSnapshot(
                name: name, path: [], reason: "the index of snapshot names \(reason): the file is damaged")
        }
        func row(_ namespace: String, _ name: String) throws -> Int64? {
            switch try connection.keyedRow(
                in: "snapshot", columns: ["namespace", "name"], key: [namespace, name])
            {
            case .found(let id): return id
            case .missing: return nil
            case .lostFromIndex: throw damaged("has lost it while the table holds it")
            case .misdirected: throw damaged("points it at another row")
            }
        }
        for namespace in namespaces {
            if let id = try row(namespace, name) { return (id, namespace, name) }
        }
        // The names as Swift compares them (`é` as one code point, or as `e` and an accent): in
        // the composed form snapshots are saved in, then, saved by an earlier release in
        // another, by one pass over the snapshots whose names are not ASCII.
        let canonicalName = KeepsakeStore.canonicalName(name)
        for namespace in namespaces {
            let canonical = KeepsakeStore.canonicalName(namespace)
            guard
                !canonical.utf8.elementsEqual(namespace.utf8) || !canonicalName.utf8.elementsEqual(name.utf8)
            else { continue }
            if let id = try row(canonical, canonicalName) { return (id, canonical, canonicalName) }
        }
        // ASCII names and scopes, as most are, cost no pass.
        let spelledOtherwise: [(id: Int64, namespace: String, name: String)] =
            if !([name] + namespaces).contains(where: KeepsakeStore.hasOtherForms) {
                []
            } else {
                try connection.query(
                    """
                    SELECT id, namespace, name FROM snapshot NOT INDEXED
                    WHERE length(CAST(namespace || name AS BLOB)) != length(namespace || name) ORDER BY id
                    """
                ) { (id: try $0.requiredInt64(0), namespace: $0.text(1) ?? "", name: $0.text(2) ?? "") }
            }
        for namespace in namespaces {
            if let found = spelledOtherwise.first(where: { $0.namespace == namespace && $0.name == name }) {
                return found
            }
        }
        for namespace in namespaces where namespace.contains(privateContext) {
            // GLOB's own characters in the name match only themselves; each private context,
            // any address.
            let pattern = namespace.components(separatedBy: privateContext).map { part in
                part.map { "*?[".contains($0) ? "[\($0)]" : String($0) }.joined()
            }.joined(separator: anonymousContext + "*)")
            if let found = try connection.query(
                "SELECT id, namespace FROM snapshot WHERE name = ? AND namespace GLOB ? ORDER BY created_at DESC, id DESC LIMIT 1",
                [.text(name), .text(pattern)],
                row: { (id: try $0.requiredInt64(0), namespace: $0.text(1) ?? "", name: name) }
            ).first {
                return found
            }
        }
        return nil
    }
}

/// What the store knows of one snapshot.
public struct SnapshotInfo: Hashable, Sendable, Codable {
    /// The namespace: the caretaker's scope and the value's type.
    public var namespace: String
    /// The snapshot's name.
    public var name: String
    /// The Swift type saved.
    public var valueType: String
    /// When it was saved.
    public var date: Date
    /// How many property rows it has.
    public var propertyCount: Int
}

extension Caretaker {
    /// Saves the current value of a versioning controller — durable or in memory — as a
    /// snapshot. A change held back by debouncing is recorded first and is part of the
    /// snapshot: what the user typed is what is saved.
    ///
    /// ```swift
    /// try caretaker.save(history, as: "before-import")
    /// ```
    ///
    /// - Parameters:
    ///   - controller: The controller whose ``VersioningController/value`` is saved.
    ///   - name: The snapshot's name.
    ///   - replacingExisting: Overwrite a snapshot of the same name.
    /// - Throws: ``KeepsakeError``.
    public func save<Root, Value: Encodable, Failure>(
        _ controller: VersioningController<Root, Value, Failure>, as name: String,
        replacingExisting: Bool = false
    ) throws(KeepsakeError) {
        controller.recordPendingInBackground()
        try save(controller.value, as: name, replacingExisting: replacingExisting)
    }

    /// Restores a snapshot into a versioning controller as one new version, which undo reverts.
    ///
    /// - Parameters:
    ///   - name: The snapshot's name.
    ///   - controller: The controller to append it to.
    /// - Throws: ``KeepsakeError/snapshotNotFound(namespace:name:)``, or another ``KeepsakeError``
    ///   (a failed append included, in the controller's throwing modes; in its assigning modes
    ///   that error goes to its ``VersioningController/error``).
    public func restore<Root, Value: Codable, Failure>(
        _ name: String, into controller: VersioningController<Root, Value, Failure>
    ) throws(KeepsakeError) {
        // Properties added since the snapshot keep the controller's current values.
        guard let value = try restore(name, as: Value.self, fillingMissingFrom: controller.value) else {
            throw .snapshotNotFound(namespace: namespace(for: Value.self), name: name)
        }
        // The append's own error, not a throwing mode's transform of it (an app's error type,
        // which was reported as SQLite error 1).
        do throws(ReversionError) {
            try controller.appendReportingReversionError(value)
        } catch {
            throw KeepsakeError(error)
        }
    }
}
