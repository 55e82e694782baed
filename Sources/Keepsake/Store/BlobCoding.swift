import Foundation
import Revertible

/// JSON coding that keeps large `Data` out of the JSON: bytes of 1 KiB or more go to the `blob`
/// table, stored once by content, and the JSON holds `{"$blob": id}`. Smaller `Data` stays
/// base64 in the JSON, where it is still readable.
///
/// The encoder and decoder call back into the connection while encoding, so they are used only
/// synchronously, inside the database lock, by the thread that holds it.
final class BlobCoding: @unchecked Sendable {
    static let threshold = 1024

    private let connection: SQLiteConnection
    /// Bytes of `Data` this coder has put in blobs (new or already stored): the real size of
    /// what it encoded, beyond the JSON text.
    private(set) var blobBytesEncoded = 0
    /// The blobs this coder's JSON refers to (new or already stored), for JSON stored in a
    /// later transaction than the one that wrote them (``isStored(_:)``).
    private(set) var referenced: Set<Reference> = []

    /// A blob as JSON refers to it, with what tells it from another blob given its id later.
    struct Reference: Hashable {
        let id: Int64
        let digest: String
        let size: Int
    }

    /// Where in the value ``encoder`` encoded the last `Data` it refused as longer than SQLite
    /// stores in one was, for a message that says so (SQLite's names no place).
    private(set) var tooLongAt: PathDescriptor?

    init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    var encoder: JSONEncoder {
        let encoder = ChangeRecord.makeEncoder()
        encoder.dataEncodingStrategy = .custom { [self] data, encoder in
            if data.count >= Self.threshold {
                blobBytesEncoded += data.count
                let id: Int64
                do {
                    id = try store(data)
                } catch let error as SQLiteError where error.code == .tooBig {
                    tooLongAt = PathDescriptor(codingPath: encoder.codingPath)
                    throw error
                }
                var container = encoder.container(keyedBy: BlobReferenceKey.self)
                try container.encode(id, forKey: BlobReferenceKey())
            } else {
                var container = encoder.singleValueContainer()
                try container.encode(data.base64EncodedString())
            }
        }
        return encoder
    }

    var decoder: JSONDecoder {
        Self.decoder { [self] id, codingPath in try load(id, codingPath: codingPath) }
    }

    /// A records' decoder that reads `Data` as base64, or `{"$blob": id}` as the bytes `blob`
    /// gives for that id (at that coding path).
    static func decoder(
        readingBlobs blob: @escaping @Sendable (Int64, [any CodingKey]) throws -> Data
    ) -> JSONDecoder {
        let decoder = ChangeRecord.makeDecoder()
        decoder.dataDecodingStrategy = .custom { decoder in
            guard let container = try? decoder.container(keyedBy: BlobReferenceKey.self) else {
                return try base64(decoder)
            }
            return try blob(try container.decode(Int64.self, forKey: BlobReferenceKey()), decoder.codingPath)
        }
        return decoder
    }

    /// The blobs `jsons` may refer to, read now, for JSON decoded after the connection is
    /// released: every object whose one member is `"$blob"` holding a number. An app's own
    /// such object is read as stored: its number is taken for a blob's id only where the
    /// model reads `Data` (a blob of that id, if there is one, is read for nothing).
    func detached(for jsons: some Sequence<String>) -> DetachedBlobs {
        var loaded: [Int64: Data] = [:]
        var failures: [Int64: String] = [:]
        for json in jsons where json.contains("\"$blob\"") {
            guard let form = try? StoredForm(json: json) else { continue }
            for id in form.integers(under: "$blob") where loaded[id] == nil && failures[id] == nil {
                do {
                    loaded[id] = try load(id, codingPath: [])
                } catch DecodingError.dataCorrupted(let context) {
                    failures[id] = context.debugDescription
                } catch {
                    failures[id] = "\(error)"
                }
            }
        }
        return DetachedBlobs(loaded: loaded, failures: failures)
    }

    /// `json` with every `{"$blob": id}` replaced by the blob's bytes in base64, so that it
    /// decodes with a plain decoder after the connection is released.
    func inliningBlobs(in json: String) throws -> String {
        guard json.contains("\"$blob\"") else { return json }
        var form = try StoredForm(json: json)
        try inlineBlobs(in: &form)
        return form.json
    }

    /// `form` with every `{"$blob": id}` replaced by the blob's bytes in base64.
    func inlineBlobs(in form: inout StoredForm) throws {
        try form.inline("$blob") { try load($0, codingPath: []).base64EncodedString() }
    }

    /// `records` with every blob in their patches inlined (``inliningBlobs(in:)-(String)``), for
    /// replaying them on a stored form whose blobs are inlined too: a `Data` value then has one
    /// form wherever it is, whichever patch last wrote it.
    func inliningBlobs(in records: [ChangeRecord]) throws -> [ChangeRecord] {
        try records.map { record in
            guard record.payload.range(of: Data("\"$blob\"".utf8)) != nil else { return record }
            let payload = try inliningBlobs(in: String(decoding: record.payload, as: UTF8.self))
            return ChangeRecord(path: record.path, kind: record.kind, payload: Data(payload.utf8))
        }
    }

    /// Notes the stored blobs `form` refers to in ``referenced``, for JSON built from stored
    /// JSON that is stored in a later transaction (a checkpoint made on the stored form), and
    /// returns their size in bytes. An object of the app's own that looks like a reference
    /// (one member, `"$blob"`, holding a stored blob's id) is noted too: a check the more.
    func noteReferences(in form: StoredForm) throws -> Int {
        var size = 0
        for id in Set(form.integers(under: "$blob")) {
            let rows = try connection.query("SELECT digest, size FROM blob WHERE id = ?", [.integer(id)]) {
                (digest: $0.text(0) ?? "", size: Int($0.int64(1) ?? 0))
            }
            guard let stored = rows.first else { continue }
            referenced.insert(Reference(id: id, digest: stored.digest, size: stored.size))
            size += stored.size
        }
        return size
    }

    /// A snapshot property's JSON as stored: itself when short, else `{"$json": id}` pointing
    /// at the text stored once by content in the blob table, so that a large property that did
    /// not change between snapshots is not stored again.
    ///
    /// A property whose own JSON has that form (a dictionary `["$json": 1]`) is stored in the
    /// blob table too, however short: a row of that form is then always a reference. Until
    /// 2026-11 it was stored as itself, and read as blob 1's text.
    func storedText(_ json: String) throws -> String {
        guard json.utf8.count >= Self.threshold || Self.textReference(json) != nil else { return json }
        return "{\"$json\":\(try store(Data(json.utf8)))}"
    }

    /// The JSON a stored snapshot property stands for (see ``storedText(_:)``).
    func resolvedText(_ stored: String) throws -> String {
        guard let id = Self.textReference(stored) else { return stored }
        return String(decoding: try load(id, codingPath: []), as: UTF8.self)
    }

    /// The blob a snapshot property's stored text refers to, when it is `{"$json": id}`.
    static func textReference(_ stored: String) -> Int64? {
        guard stored.hasPrefix("{\"$json\":"), stored.hasSuffix("}") else { return nil }
        return Int64(stored.dropFirst("{\"$json\":".count).dropLast())
    }

    /// Base64 `Data`, as `JSONEncoder` writes it.
    static func base64(_ decoder: any Decoder) throws -> Data {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "Invalid base64"))
        }
        return data
    }

    /// The id of a blob holding `data`, inserted unless an identical one exists.
    func store(_ data: Data) throws -> Int64 {
        let digest = Self.digest(data)
        let candidates = try connection.query(
            "SELECT id, bytes FROM blob WHERE digest = ? AND size = ?",
            [.text(digest), .integer(Int64(data.count))]
        ) { (id: $0.int64(0) ?? 0, bytes: $0.blob(1)) }
        let id: Int64
        if let match = candidates.first(where: { $0.bytes == data }) {
            id = match.id
        } else {
            try connection.execute(
                "INSERT INTO blob (digest, size, bytes) VALUES (?, ?, ?)",
                [.text(digest), .integer(Int64(data.count)), .blob(data)])
            id = connection.lastInsertRowID
        }
        referenced.insert(Reference(id: id, digest: digest, size: data.count))
        return id
    }

    /// Whether the blob `reference` names is still stored as it was. JSON encoded outside the
    /// transaction that stores it refers to blobs committed before it: ``KeepsakeStore/compact()``
    /// may delete them in between (nothing stored refers to them yet), and SQLite gives a
    /// deleted blob's id to the next one stored, whose bytes the JSON would then read.
    func isStored(_ reference: Reference) throws -> Bool {
        try connection.scalarInt(
            "SELECT count(*) FROM blob WHERE id = ? AND digest = ? AND size = ?",
            [.integer(reference.id), .text(reference.digest), .integer(Int64(reference.size))]) == 1
    }

    /// The bytes of blob `id`, checked against the size and digest stored with them, and
    /// against the digest index: damaged bytes, or another blob's row answering to `id`, are an
    /// error, never a wrong value.
    private func load(_ id: Int64, codingPath: [any CodingKey]) throws -> Data {
        guard
            let row = try connection.query(
                "SELECT bytes, size, digest FROM blob WHERE id = ?", [.integer(id)],
                row: { (bytes: $0.blob(0), size: $0.int64(1), digest: $0.text(2)) }
            ).first
        else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "Blob \(id) is missing: the store is damaged")
            )
        }
        let data = row.bytes ?? Data()
        guard row.size == Int64(data.count), row.digest == Self.digest(data) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath,
                    debugDescription:
                        "Blob \(id) is damaged: \(data.count) bytes whose digest does not match the stored size and digest"
                ))
        }
        // A row whose key damage changed in place (another blob's row now found under `id`)
        // holds bytes that match its own digest. The digest index, a b-tree of its own, still
        // names the id they were stored under.
        let indexed = try connection.query(
            "SELECT id FROM blob INDEXED BY blob_by_digest WHERE digest = ? AND size = ?",
            [.text(row.digest ?? ""), .integer(Int64(data.count))]
        ) { $0.int64(0) }
        guard indexed.contains(id) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath,
                    debugDescription:
                        "Blob \(id) is damaged: the bytes found under its id are indexed under \(indexed.isEmpty ? "no id" : "id \(indexed.compactMap { $0.map(String.init) }.joined(separator: ", "))")"
                ))
        }
        return data
    }

    static func digest(_ data: Data) -> String {
        let digest = data.withUnsafeBytes { StableDigest.of($0) }
        let hex = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// The member of `{"$blob": id}`, the JSON in place of `Data` kept in the blob table.
private struct BlobReferenceKey: CodingKey {
    var stringValue: String { "$blob" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { guard stringValue == "$blob" else { return nil } }
    init?(intValue: Int) { nil }
}

/// Blobs read from the store for JSON decoded after the connection is released
/// (``BlobCoding/detached(for:)``).
struct DetachedBlobs: Sendable {
    let loaded: [Int64: Data]
    /// Why a blob the JSON refers to could not be read: said only where the model reads it.
    let failures: [Int64: String]

    /// Reads `Data` as ``BlobCoding/decoder`` does: base64, or `{"$blob": id}` from the
    /// blobs read.
    var decoder: JSONDecoder {
        BlobCoding.decoder { [loaded, failures] id, codingPath in
            guard let data = loaded[id] else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: codingPath,
                        debugDescription: failures[id] ?? "Blob \(id) is missing: the store is damaged"))
            }
            return data
        }
    }

    /// `json` with every `{"$blob": id}` of a blob read replaced by its bytes in base64, as
    /// ``BlobCoding/inliningBlobs(in:)-(String)`` writes it.
    func inlining(in json: String) -> String {
        guard json.contains("\"$blob\""), var form = try? StoredForm(json: json) else { return json }
        form.inline("$blob") { id in loaded[id]?.base64EncodedString() }
        return form.json
    }
}
