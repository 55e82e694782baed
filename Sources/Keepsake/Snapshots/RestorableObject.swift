import Foundation

/// A class whose marked properties can be saved under a key and restored in place, as in the
/// Restore seed, with the snapshots kept in a ``Caretaker``'s store.
///
/// Mark stored properties with ``Restorable``; list computed ones in ``references``:
///
/// ```swift
/// final class FavoriteFruits: RestorableObject {
///     @Restorable var rank1 = "Apple"
///     @Restorable var rank2 = "Banana"
/// }
/// try favorites.takeSnapshot(withKey: "BackupResults", in: caretaker)
/// favorites.rank1 = "Banana"
/// try favorites.restore(withKey: "BackupResults", from: caretaker)   // rank1 == "Apple"
/// ```
public protocol RestorableObject: AnyObject {
    /// Properties to include that cannot carry ``Restorable``, such as computed properties.
    @ReferenceBuilder<Self> var references: [Reference<Self>] { get }

    /// How the marked properties changed since snapshots were taken: renames, and new types
    /// with a conversion from the old (see `PropertyEvolution`). None by default. A property
    /// added since keeps its value when an older snapshot is restored; one removed is skipped.
    static var propertyEvolution: [PropertyEvolution] { get }
}

extension RestorableObject {
    /// No references by default.
    public var references: [Reference<Self>] { [] }

    /// No renamed or converted properties.
    public static var propertyEvolution: [PropertyEvolution] { [] }

    /// Saves the marked properties and references under `key`, replacing an earlier snapshot
    /// with that key. Its properties this class lacks — a later release's, taken again by this
    /// earlier one — are kept for that release to restore, unless ``propertyEvolution``
    /// declares them renamed or removed; so is what a property holds that its type here does
    /// not read (a member a later release added to it).
    ///
    /// - Parameters:
    ///   - key: The snapshot's key.
    ///   - caretaker: Where snapshots are kept (its namespace includes this class's name).
    /// - Throws: ``KeepsakeError``.
    public func takeSnapshot(withKey key: String, in caretaker: Caretaker) throws(KeepsakeError) {
        let properties = restorableProperties
        let references = self.references
        // Each property's type reads what a replaced snapshot holds inside it (a member of a
        // struct a later release added).
        let types = Dictionary(
            properties.map { ($0.0, $0.1.valueType) } + references.map { ($0.name, $0.valueType) },
            uniquingKeysWith: { first, _ in first })
        try caretaker.saveProperties(of: Self.self, as: key, replacingExisting: true, propertyTypes: types) {
            encoder in
            let refused = { KeepsakeError.unencodableSnapshot(name: key, reason: $0) }
            var rows: [(PathDescriptor, String)] = []
            for (name, property) in properties {
                let json = try KeepsakeError.encoding(
                    { try property.json(encoder) }, property: name, refusedAs: refused)
                rows.append(([.property(name)], json))
            }
            for reference in references {
                let json = try KeepsakeError.encoding(
                    { try reference.json(self, encoder) }, property: reference.name, refusedAs: refused)
                rows.append(([.property(reference.name)], json))
            }
            return rows
        }
    }

    /// Sets every marked property and writable reference back to its value in snapshot `key`.
    ///
    /// - Throws: ``KeepsakeError/snapshotNotFound(namespace:name:)`` when there is no such
    ///   snapshot; ``KeepsakeError/undecodableSnapshot(name:path:reason:)`` naming a property that
    ///   no longer decodes (nothing is changed then).
    public func restore(withKey key: String, from caretaker: Caretaker) throws(KeepsakeError) {
        let stored = try properties(withKey: key, from: caretaker)
        var assignments: [() -> Void] = []
        let evolution = Self.propertyEvolution
        for (name, property) in restorableProperties {
            // As stored: decoded with the type, `Data` read from the blobs read.
            let currentJSON = stored.rows[name]
            let oldJSON =
                currentJSON == nil ? evolution.storedName(of: name).flatMap { stored.rows[$0] } : nil
            guard let json = currentJSON ?? oldJSON else {
                continue  // added since the snapshot: it keeps its value
            }
            assignments.append(
                try Self.decoding(key, name) {
                    try property.prepare(
                        json, stored.decoder, conversion: evolution.conversion(for: name),
                        underOldName: oldJSON != nil)
                })
        }
        for reference in references {
            guard let json = stored.rows[reference.name], let restore = reference.restore else { continue }
            assignments.append(
                try Self.decoding(key, reference.name) { try restore(self, json, stored.decoder) })
        }
        // Every property decoded: only now is anything changed.
        for assign in assignments { assign() }
    }

    /// Deletes snapshot `key`.
    ///
    /// - Returns: Whether there was one.
    /// - Throws: ``KeepsakeError``.
    @discardableResult
    public func removeSnapshot(withKey key: String, from caretaker: Caretaker) throws(KeepsakeError) -> Bool {
        try caretaker.delete(key, of: Self.self)
    }

    /// The properties saved in snapshot `key`, readable one by one:
    /// `let rank1: String? = try favorites.properties(withKey: "BackupResults", from: caretaker).rank1`.
    ///
    /// - Throws: ``KeepsakeError/snapshotNotFound(namespace:name:)``.
    public func properties(withKey key: String, from caretaker: Caretaker) throws(KeepsakeError)
        -> SnapshotProperties
    {
        guard let properties = try caretaker.properties(of: Self.self, named: key) else {
            throw .snapshotNotFound(namespace: caretaker.namespace(for: Self.self), name: key)
        }
        return properties
    }

    /// The ``Restorable`` properties, by name, found by reflection.
    private var restorableProperties: [(String, any RestorableProperty)] {
        var result: [(String, any RestorableProperty)] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, let property = child.value as? any RestorableProperty else {
                    continue
                }
                result.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, property))
            }
            mirror = current.superclassMirror
        }
        return result
    }

    private static func decoding<T>(_ key: String, _ name: String, _ body: () throws -> T)
        throws(KeepsakeError) -> T
    {
        do {
            return try body()
        } catch {
            throw .undecodableSnapshot(name: key, path: [.property(name)], reason: "\(error)")
        }
    }
}

/// Marks a property of a ``RestorableObject`` for snapshots.
@propertyWrapper
public final class Restorable<Value: Codable>: RestorableProperty {
    /// The property's value.
    public var wrappedValue: Value

    /// Wraps the property's initial value.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }

    func json(_ encoder: JSONEncoder) throws -> String {
        String(decoding: try encoder.encode(wrappedValue), as: UTF8.self)
    }

    var valueType: any Decodable.Type { Value.self }

    func prepare(
        _ json: String, _ decoder: JSONDecoder, conversion: PropertyEvolution.Conversion?, underOldName: Bool
    ) throws -> () -> Void {
        /// The stored value read as the old type and converted; `error` (or one saying so) when
        /// the conversion gives no `Value`.
        func converted(_ conversion: PropertyEvolution.Conversion, else error: (any Error)?) throws -> Value {
            let node = try FoundationJSON.object(decoding: Data(json.utf8))
            guard
                let value = try conversion.convert(EvolvingDecoding.decoder(for: node, base: decoder))
                    as? Value
            else {
                throw error
                    ?? DecodingError.typeMismatch(
                        Value.self,
                        .init(
                            codingPath: [],
                            debugDescription:
                                "The conversion from \(conversion.oldType) does not give a \(Value.self)"))
            }
            return value
        }
        let value: Value
        if let conversion, underOldName {
            // Under its old name the value is certainly of the old type: converted even when it
            // reads as the new one too.
            value = try converted(conversion, else: nil)
        } else {
            do {
                // What the stored value lacks (properties added since) keeps today's values.
                let current = wrappedValue
                value = try EvolvingDecoding.decode(
                    Value.self, from: Data(json.utf8),
                    template: { try? ChangeRecord.makeEncoder().encode(current) },
                    decoder: decoder)
            } catch {
                guard let conversion else { throw error }
                value = try converted(conversion, else: error)
            }
        }
        return { self.wrappedValue = value }
    }
}

protocol RestorableProperty: AnyObject {
    func json(_ encoder: JSONEncoder) throws -> String
    /// The type of the property's value.
    var valueType: any Decodable.Type { get }
    /// Decodes the stored `json` (or converts it from the old type, where it does not decode
    /// or is stored under the property's old name) and gives the assignment of it.
    func prepare(
        _ json: String, _ decoder: JSONDecoder, conversion: PropertyEvolution.Conversion?, underOldName: Bool
    ) throws -> () -> Void
}

/// A property of `Owner` included in its snapshots by name, such as a computed property.
///
/// A reference through a writable key path is restored; one through a read-only key path is
/// saved (and readable with ``RestorableObject/properties(withKey:from:)``) but not written back.
public struct Reference<Owner: AnyObject> {
    /// The name the property is saved under; use the property's own name.
    public let name: String
    let json: (Owner, JSONEncoder) throws -> String
    let restore: ((Owner, String, JSONDecoder) throws -> () -> Void)?
    /// The type of the property's value.
    let valueType: any Decodable.Type

    /// A property that is saved and restored.
    ///
    /// - Parameters:
    ///   - owner: Ignored; accepted for the seed's spelling `Reference(owner: self, …)`.
    ///   - name: The name to save it under.
    ///   - keyPath: The property.
    public init<Value: Codable>(
        owner: Owner? = nil, name: String, keyPath: ReferenceWritableKeyPath<Owner, Value>
    ) {
        (self.name, valueType) = (name, Value.self)
        json = { owner, encoder in
            String(decoding: try encoder.encode(owner[keyPath: keyPath]), as: UTF8.self)
        }
        restore = { owner, json, decoder in
            // Read as a `@Restorable` property is: what the stored value lacks keeps today's.
            let current = owner[keyPath: keyPath]
            let value = try EvolvingDecoding.decode(
                Value.self, from: Data(json.utf8),
                template: { try? ChangeRecord.makeEncoder().encode(current) }, decoder: decoder)
            return { owner[keyPath: keyPath] = value }
        }
    }

    /// A read-only property that is saved but not restored.
    ///
    /// - Parameters:
    ///   - owner: Ignored; accepted for the seed's spelling.
    ///   - name: The name to save it under.
    ///   - keyPath: The property.
    public init<Value: Codable>(owner: Owner? = nil, name: String, keyPath: KeyPath<Owner, Value>) {
        (self.name, valueType) = (name, Value.self)
        json = { owner, encoder in
            String(decoding: try encoder.encode(owner[keyPath: keyPath]), as: UTF8.self)
        }
        restore = nil
    }
}

/// Builds ``RestorableObject/references`` from a list of ``Reference`` values.
@resultBuilder
public enum ReferenceBuilder<Owner: AnyObject> {
    /// Collects the references.
    public static func buildBlock(_ references: Reference<Owner>...) -> [Reference<Owner>] { references }
    /// An empty list.
    public static func buildBlock() -> [Reference<Owner>] { [] }
    /// Passes an explicit array through.
    public static func buildExpression(_ reference: Reference<Owner>) -> Reference<Owner> { reference }
}

/// The properties of one snapshot, as stored JSON, decoded on demand.
@dynamicMemberLookup
public struct SnapshotProperties {
    /// Each property's JSON as stored, `Data` of 1 KiB or more as `{"$blob": id}`.
    let rows: [String: String]
    /// The blobs the rows refer to, and what reads `Data` from them.
    let blobs: DetachedBlobs
    let decoder: JSONDecoder
    /// The snapshot's name.
    public let name: String

    init(rows: [String: String], blobs: DetachedBlobs, name: String) {
        (self.rows, self.blobs, self.decoder, self.name) = (rows, blobs, blobs.decoder, name)
    }

    /// The property names.
    public var names: [String] { rows.keys.sorted() }

    /// A property's stored JSON, `Data` in base64 as `JSONEncoder` writes it, or `nil`.
    ///
    /// Without the property's type, every object whose one member is `"$blob"` holding the
    /// id of a stored blob is taken for Keepsake's reference to it, an app's own dictionary of
    /// that one key too; ``value(_:as:)`` reads it as stored.
    public func json(_ property: String) -> String? { rows[property].map(blobs.inlining(in:)) }

    /// A property's value decoded as `type`, or `nil` when there is no such property.
    ///
    /// It is read as a restore reads it: a property renamed since (declared in
    /// ``Versionable/propertyEvolution``) from its old name, one added since from its type's
    /// ``DecodingDefaults``.
    ///
    /// - Throws: ``KeepsakeError/undecodableSnapshot(name:path:reason:)``.
    public func value<T: Decodable>(_ property: String, as type: T.Type = T.self) throws(KeepsakeError) -> T?
    {
        guard let json = rows[property] else { return nil }
        do {
            return try EvolvingDecoding.decode(
                T.self, from: Data(json.utf8), template: { nil }, decoder: decoder)
        } catch {
            throw .undecodableSnapshot(name: name, path: [.property(property)], reason: "\(error)")
        }
    }

    /// A property's value, or `nil` when it is missing or does not decode as `T`.
    public subscript<T: Decodable>(dynamicMember property: String) -> T? {
        try? value(property, as: T.self)
    }
}

extension Caretaker {
    /// Saves the rows `properties` makes (path, JSON) as snapshot `name` of `Value`, in one
    /// transaction; large values go to the blob table once by content.
    ///
    /// - Parameter propertyTypes: The type of each property's value, where `Value` is not
    ///   `Decodable` (a ``RestorableObject``): what a replaced snapshot holds inside a property
    ///   and its type does not read is kept (``keepingUnread(of:in:replacing:propertyTypes:_:_:)``).
    func saveProperties<Value>(
        of _: Value.Type, as name: String, replacingExisting: Bool,
        propertyTypes: [String: any Decodable.Type] = [:],
        _ properties: (JSONEncoder) throws -> [(PathDescriptor, String)]
    ) throws(KeepsakeError) {
        let namespaces = self.namespaces(for: Value.self)
        let namespace = namespaces[0]
        try store.write { connection, blobs in
            var rows: [(PathDescriptor, String)]
            do {
                rows = try properties(blobs.encoder)
            } catch let error as SQLiteError where error.code == .tooBig {
                // SQLite's message names neither the snapshot nor the place in the value.
                let place = blobs.tooLongAt.map { ", the value at \($0.displayText)" } ?? ""
                throw error.saying("in snapshot \"\(name)\"\(place)")
            }
            if let (existing, stored, storedName) = try Self.id(connection, namespaces, name) {
                guard replacingExisting else {
                    throw KeepsakeError.snapshotExists(namespace: namespace, name: name)
                }
                rows = Self.keepingUnread(
                    of: Value.self, in: rows, replacing: (existing, namespace: stored, name: storedName),
                    propertyTypes: propertyTypes, connection, blobs)
                try connection.execute("DELETE FROM snapshot WHERE id = ?", [.integer(existing)])
            }
            try Self.insertSnapshot(
                namespace: KeepsakeStore.canonicalName(namespace), name: KeepsakeStore.canonicalName(name),
                valueType: Self.stableName(of: Value.self),
                properties: rows.map { ($0.0.description, $0.1) }, in: connection, blobs: blobs)
        }
    }

    /// Inserts a snapshot's row and one row per property (`path` as stored, its JSON), each
    /// with its digest; large JSON goes to the blob table.
    ///
    /// - Parameter createdAt: When it was saved (now, unless it is copied).
    static func insertSnapshot(
        namespace: String, name: String, valueType: String, createdAt: Double = RowClock.shared.next(),
        properties: [(path: String, json: String)], in connection: SQLiteConnection, blobs: BlobCoding
    ) throws {
        try connection.execute(
            "INSERT INTO snapshot (namespace, name, value_type, created_at, property_count) VALUES (?, ?, ?, ?, ?)",
            [
                .text(namespace), .text(name), .text(valueType), .real(createdAt),
                .integer(Int64(properties.count)),
            ])
        let id = connection.lastInsertRowID
        for (path, json) in properties {
            do {
                let stored = try blobs.storedText(json)
                try connection.execute(
                    "INSERT INTO snapshot_property (snapshot_id, path, value, digest) VALUES (?, ?, ?, ?)",
                    [
                        .integer(id), .text(path), .text(stored),
                        .integer(digest(namespace, name, path, stored)),
                    ])
            } catch let error as SQLiteError where error.code == .tooBig {
                // SQLite's message names neither the snapshot nor the property.
                throw error.saying("in snapshot \"\(name)\", the value at `\(path)`")
            }
        }
    }

    /// The stored properties of snapshot `name` of `Value`, or `nil` when there is none.
    func properties<Value>(of _: Value.Type, named name: String) throws(KeepsakeError) -> SnapshotProperties?
    {
        let namespaces = self.namespaces(for: Value.self)
        return try store.read { connection, blobs in
            guard let (id, stored, storedName) = try Caretaker.id(connection, namespaces, name) else {
                return nil
            }
            let rows = try connection.query(
                "SELECT path, value, \(connection.column("digest", since: 2)) FROM snapshot_property WHERE snapshot_id = ?",
                [.integer(id)]
            ) { row -> (String, String) in
                let path = try PathDescriptor(parsing: row.text(0) ?? "")
                let json = try Self.checkedJSON(row, blobs, namespace: stored, name: storedName)
                guard case .property(let property)? = path.components.first else {
                    return (row.text(0) ?? "", json)
                }
                return (property, json)
            }
            try Self.checkPropertyCount(connection, id: id, read: rows.count, name: name)
            // The blobs are read now: the properties decode later, without the connection.
            // Until 2026-11 they were inlined, and an app's dictionary whose one key was
            // "$blob" read as text.
            return SnapshotProperties(
                rows: Dictionary(rows, uniquingKeysWith: { first, _ in first }),
                blobs: blobs.detached(for: rows.map(\.1)), name: name)
        }
    }

    /// The digest of a stored snapshot property: it covers where the row belongs.
    static func digest(_ namespace: String, _ name: String, _ path: String, _ stored: String) -> Int64 {
        HistoryRows.digest(position: 0, namespace, name, path, stored)
    }

    /// The JSON of a `SELECT path, value, digest FROM snapshot_property` row, checked against
    /// its digest, with large text (and, when asked, blobs) resolved: a damaged row or a
    /// missing blob is ``KeepsakeError/undecodableSnapshot(name:path:reason:)`` naming it.
    static func checkedJSON(
        _ row: SQLiteStatement, _ blobs: BlobCoding, namespace: String, name: String,
        inliningBlobs: Bool = false
    ) throws -> String {
        let (path, stored) = (row.text(0) ?? "", row.text(1) ?? "null")
        let descriptor = (try? PathDescriptor(parsing: path)) ?? []
        if let digest = row.int64(2), digest != Self.digest(namespace, name, path, stored) {
            throw KeepsakeError.undecodableSnapshot(
                name: name, path: descriptor,
                reason: "the stored property does not match its digest: it is damaged")
        }
        do {
            let json = try blobs.resolvedText(stored)
            return inliningBlobs ? try blobs.inliningBlobs(in: json) : json
        } catch {
            throw KeepsakeError.undecodableSnapshot(
                name: name, path: descriptor, reason: "\(error)")
        }
    }
}
