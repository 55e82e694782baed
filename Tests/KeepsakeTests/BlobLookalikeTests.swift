import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// Keepsake keeps `Data` of 1 KiB or more in the `blob` table, and the JSON holds
/// `{"$blob": id}` in its place; a snapshot property of 1 KiB or more is kept there as text,
/// its row holding `{"$json": id}`. An app's own object can have the same form: a dictionary
/// whose one key is `"$blob"`, an object in a JSON document an editor keeps. Only the model's
/// type tells them apart, so the app's objects are read as the app stored them wherever a
/// model reads them.
@MainActor @Suite struct BlobLookalikeTests {
    let directory = TemporaryDirectory()

    /// A JSON document, as an editor of JSON keeps it: its objects have any keys.
    enum JSONValue: Codable, Equatable {
        case number(Double)
        case text(String)
        case object([String: JSONValue])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let text = try? container.decode(String.self) {
                self = .text(text)
            } else {
                self = .object(try container.decode([String: JSONValue].self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .number(let number): try container.encode(number)
            case .text(let text): try container.encode(text)
            case .object(let object): try container.encode(object)
            }
        }
    }

    struct File: Codable, Equatable {
        var name: String
        var bytes: Data
    }

    struct Sheet: Versionable, Equatable, Codable {
        var tags: [String] = []
        var document = JSONValue.object([:])
        var counts: [String: Int] = [:]
        var files: [File] = []
    }

    /// The same sheet after an app update: its tags are a set, so the array's insertions the
    /// first release stored no longer read, and the history is replayed on its stored JSON.
    struct UpdatedSheet: Versionable, Equatable, Codable {
        var tags: Set<String> = []
        var document = JSONValue.object([:])
        var counts: [String: Int] = [:]
        var files: [File] = []

        init(_ sheet: Sheet) {
            (tags, document, counts, files) = (Set(sheet.tags), sheet.document, sheet.counts, sheet.files)
        }
    }

    static let bytes = Data((0..<2_000).map { UInt8($0 % 251) })
    static let otherBytes = Data(repeating: 7, count: 3_000)

    /// The first release's versions, as it appended them: the app's objects that look like
    /// the reference to the first file's bytes (blob 1), and a file whose bytes change within
    /// them (base64 where that change is redone on the JSON) before it is removed (a change
    /// whose file holds them as the blob reference it was stored as).
    static let versions: [Sheet] = {
        var sheet = Sheet()
        var versions = [sheet]
        func edit(_ change: (inout Sheet) -> Void) {
            change(&sheet)
            versions.append(sheet)
        }
        edit { $0.files.append(File(name: "a", bytes: bytes)) }
        edit { $0.counts = ["$blob": 1] }
        edit { $0.document = .object(["$blob": .number(1), "title": .text("Sheet")]) }
        edit { $0.document = .object(["$blob": .number(1)]) }
        edit { $0.files.append(File(name: "b", bytes: otherBytes)) }
        edit { $0.files[0].bytes[5] ^= 0xFF }
        edit { $0.files.remove(at: 0) }
        edit { $0.tags.append("draft") }
        return versions
    }()

    /// A store the first release wrote, closed (its value stored whole) or not (a crash).
    func firstReleaseStore(closing: Bool) throws -> String {
        let path = directory.path("sheet-\(closing).keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("sheet", initialValue: Self.versions[0])
        for version in Self.versions.dropFirst() { try history.append(version) }
        // The app's objects name blob 1, the first file's bytes.
        let blobs = try store.database.read {
            try $0.query("SELECT id, size FROM blob ORDER BY id") { [$0.int64(0), $0.int64(1)] }
        }
        #expect(blobs.first == [1, 2_000])
        if closing { try history.close() }
        return path
    }

    /// Until 2026-11, every object of one member `"$blob"` holding a number was replaced by
    /// that blob's bytes in base64 before the versions were redone on the stored JSON: the
    /// dictionary's change did not apply (the history did not open after the update, nor did
    /// `keepsake value` show it), and without it the document's object read as text, 2,668
    /// characters of it, and was stored as the value.
    @Test(arguments: [false, true])
    func anAppsObjectLikeABlobReferenceIsReadAsStoredAfterAnUpdate(closing: Bool) throws {
        let path = try firstReleaseStore(closing: closing)
        let expected = Self.versions.map(UpdatedSheet.init)
        for pass in 0..<2 {
            let store = try KeepsakeStore(path: path)
            let history = try store.history("sheet", initialValue: expected[0])
            #expect(history.value == expected[8], "pass \(pass)")
            try ModelEvolutionTests.expectUndoAndRedo(history, through: expected)
            // Read without opening the history, each version through the model.
            for index in 0...8 {
                #expect(
                    try store.value(ofHistory: "sheet", atVersion: index, as: UpdatedSheet.self)
                        == expected[index], "pass \(pass), version \(index)")
            }
            // Closed, the value is stored whole, blob references and all (checked to be
            // stored still when it is), and opened again it reads the same.
            try history.close()
            #expect(try store.integrityCheck() == ["ok"])
            #expect(try store.verify().problems == [])
        }
    }

    /// A snapshot property of 1 KiB or more is stored as text in the blob table, its row
    /// holding `{"$json": id}`. Until 2026-11, a smaller property whose own JSON was just that
    /// (a dictionary `["$json": 1]`) was read as the text of blob 1: here a file's bytes, which
    /// are not JSON, so the snapshot did not restore; had blob 1 been another property's
    /// JSON, it would have restored as that. Such a property is now stored in the blob table
    /// too, so a row of that form is always one.
    @Test func aSnapshotPropertyLikeALargeTextsReferenceRestoresAsSaved() throws {
        let store = try KeepsakeStore(path: directory.path("snapshots.keepsake"))
        let caretaker = Caretaker(store: store)
        var sheet = Sheet(files: [File(name: "a", bytes: Self.bytes)])
        sheet.counts = ["$json": 1]
        sheet.document = .object(["$blob": .number(1)])
        try caretaker.save(sheet, as: "saved")
        #expect(try caretaker.restore("saved", as: Sheet.self) == sheet)
        #expect(
            try caretaker.value(at: "counts", in: "saved", of: Sheet.self, as: [String: Int].self) == [
                "$json": 1
            ])
        #expect(
            try caretaker.value(at: "document", in: "saved", of: Sheet.self, as: JSONValue.self)
                == sheet.document)
        // Blob 1 holds the file's bytes; the dictionary's JSON is blob 2, which compacting keeps.
        try store.compact()
        #expect(try caretaker.restore("saved", as: Sheet.self) == sheet)
        #expect(try store.verify().problems == [])
    }

    final class Settings: RestorableObject {
        @Restorable var avatar = Data((0..<2_000).map { UInt8($0 % 251) })
        @Restorable var counts: [String: Int] = [:]
        @Restorable var document = JSONValue.object([:])
    }

    /// A restorable object's properties are read in one transaction and decoded after it.
    /// Until 2026-11 their blobs were inlined for that, every object of one member `"$blob"`
    /// holding a number replaced by that blob's bytes in base64: the dictionary did not
    /// restore, and the JSON document restored as text.
    @Test func aRestorableObjectsPropertyLikeABlobReferenceRestoresAsSaved() throws {
        let store = try KeepsakeStore(path: directory.path("objects.keepsake"))
        let caretaker = Caretaker(store: store)
        let settings = Settings()
        try settings.takeSnapshot(withKey: "first", in: caretaker)
        let avatarBlob = try #require(
            try store.database.read { try $0.scalarInt("SELECT id FROM blob WHERE size = 2000") }.map(
                Int.init))
        settings.counts = ["$blob": avatarBlob]
        settings.document = .object(["$blob": .number(Double(avatarBlob))])
        try settings.takeSnapshot(withKey: "saved", in: caretaker)
        (settings.avatar, settings.counts, settings.document) = (Data(), [:], .text(""))
        try settings.restore(withKey: "saved", from: caretaker)
        #expect(settings.avatar == Self.bytes)
        #expect(settings.counts == ["$blob": avatarBlob])
        #expect(settings.document == .object(["$blob": .number(Double(avatarBlob))]))
        let properties = try settings.properties(withKey: "saved", from: caretaker)
        #expect(properties.counts == ["$blob": avatarBlob])
        // The JSON, read without the type, writes `Data` as `JSONEncoder` does.
        #expect(properties.json("avatar") == "\"\(Self.bytes.base64EncodedString())\"")
    }

    /// `verify` checks that every blob reference names a stored blob, without the app's
    /// types. Until 2026-11 it took any `"$blob"` key for one: a sound store whose values hold
    /// an app's object with that key among others, or text under it, was reported damaged
    /// ("blob x is referred to but missing"). Only an object of that one member holding a
    /// number is read as a reference, in changes and checkpoints alike — an app's own such
    /// object that names no blob too, as its DocC says.
    @Test func verifyReadsOnlyWhatKeepsakeReadsAsABlobReference() throws {
        let store = try KeepsakeStore(path: directory.path("verify.keepsake"))
        let history = try store.history("sheet", initialValue: Sheet())
        var sheet = history.value
        sheet.counts = ["$blob": 7, "n": 1]
        try history.append(sheet)
        sheet.document = .object(["$blob": .text("x")])
        try history.append(sheet)
        try history.close()
        #expect(try store.verify().problems == [])
        sheet.document = .object(["$blob": .number(99)])
        try history.append(sheet)
        #expect(try store.verify().problems == ["blob 99 is referred to but missing"])
    }
}
