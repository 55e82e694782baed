import Foundation
import Testing

@testable import Keepsake

/// Swift compares strings by canonical equivalence: `"Café"` with its `é` as one code point is
/// `==` to `"Café"` with `e` and a combining accent, as file names on some disks spell it, and
/// the Kelvin sign is `K`. A history or snapshot name is found the same way, so an app that
/// opens a history by another form of its name gets the history it wrote, not a new empty one
/// beside it. New names are stored composed (NFC); names an earlier release stored in another
/// form are still found.
@MainActor @Suite struct NameFormTests {
    let directory = TemporaryDirectory()

    struct Note: Versionable, Equatable, Codable {
        var title = ""
    }

    nonisolated static let composed = "Caf\u{E9} \u{C5}"
    nonisolated static let decomposed = "Cafe\u{301} A\u{30A}"
    /// Written with the Kelvin sign, which is `K`.
    nonisolated static let kelvin = "\u{212A}elvin"

    /// Pairs of one name's forms: the one a history or snapshot was created with, the one it is
    /// then opened by.
    nonisolated static let forms: [(String, String)] = [
        (composed, decomposed), (decomposed, composed), (decomposed, decomposed), (kelvin, "Kelvin"),
    ]

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test(arguments: forms)
    func aHistoryIsFoundByEveryFormOfItsName(created: String, opened: String) throws {
        let path = directory.path("names.keepsake")
        let store = try KeepsakeStore(path: path)
        let written = try store.history(created, initialValue: Note())
        try written.append(Note(title: "written"))
        try written.close()

        let again = try store.history(opened, initialValue: Note())
        #expect(again.value.title == "written")
        try again.append(Note(title: "again"))
        #expect(try store.historyNames().map(bytes) == [bytes(KeepsakeStore.canonicalName(created))])
        #expect(try store.timeline(of: opened)?.count == 3)
        #expect(try store.changes(ofVersion: 2, in: opened)?.map(\.path.description) == ["title"])
        #expect(try store.valueJSON(ofHistory: opened, atVersion: 1)?.contains(#""written""#) == true)
        #expect(try store.value(ofHistory: opened, atVersion: 1, as: Note.self)?.title == "written")
        try again.checkInvariants()
        try again.close()
        #expect(try store.deleteHistory(opened))
        #expect(try store.historyNames() == [])
        #expect(try store.integrityCheck() == ["ok"])
    }

    /// A store an earlier release wrote, with names in the form the app gave them: found by
    /// another form, and by their own.
    @Test func aNameAnEarlierReleaseStoredDecomposedIsFound() throws {
        let path = directory.path("earlier.keepsake")
        do {
            let store = try KeepsakeStore(path: path)
            try store.history("plain", initialValue: Note(title: "plain")).close()
            try store.history(Self.composed, initialValue: Note(title: "accented")).close()
            // As the earlier release saved it: under the forms the app gave.
            let type = Caretaker.stableName(of: Note.self)
            try store.write { connection, blobs in
                try Caretaker.insertSnapshot(
                    namespace: "\(Self.decomposed)/\(type)", name: Self.decomposed, valueType: type,
                    properties: [(path: "title", json: #""saved""#)], in: connection, blobs: blobs)
            }
            store.close()
            let earlier = try SQLiteConnection(path: path)
            try earlier.execute(
                "UPDATE history SET name = ? WHERE name = ?", [.text(Self.decomposed), .text(Self.composed)])
            earlier.close()
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.historyNames().map(bytes).contains(bytes(Self.decomposed)))
        for name in [Self.composed, Self.decomposed] {
            #expect(try store.history(name, initialValue: Note()).value.title == "accented")
            let caretaker = Caretaker(store: store, scope: name)
            #expect(try caretaker.restore(name, as: Note.self)?.title == "saved")
            #expect(try caretaker.snapshots().map(\.name).map(bytes) == [bytes(Self.decomposed)])
        }
        #expect(try store.historyNames().count == 2)
        #expect(try store.history("plain", initialValue: Note()).value.title == "plain")
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test(arguments: forms)
    func aSnapshotIsFoundByEveryFormOfItsNameAndScope(created: String, opened: String) throws {
        let store = try KeepsakeStore(path: directory.path("snapshots.keepsake"))
        try Caretaker(store: store, scope: created).save(Note(title: "saved"), as: created)
        let caretaker = Caretaker(store: store, scope: opened)
        #expect(try caretaker.restore(opened, as: Note.self)?.title == "saved")
        #expect(throws: KeepsakeError.self) { try caretaker.save(Note(title: "again"), as: opened) }
        try caretaker.save(Note(title: "replaced"), as: opened, replacingExisting: true)
        #expect(
            try caretaker.snapshots().map { [bytes($0.namespace), bytes($0.name)] } == [
                [
                    bytes(KeepsakeStore.canonicalName("\(created)/") + Caretaker.stableName(of: Note.self)),
                    bytes(KeepsakeStore.canonicalName(created)),
                ]
            ])
        #expect(try caretaker.restore(created, as: Note.self)?.title == "replaced")
        #expect(try caretaker.delete(opened, of: Note.self))
        #expect(try caretaker.snapshots() == [])
        #expect(try store.integrityCheck() == ["ok"])
    }
}
