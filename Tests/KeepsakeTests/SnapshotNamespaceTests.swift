import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// A `private` type: Swift names its context by an address that differs at every launch.
private struct Draft: Codable, Equatable {
    var title: String
    var words: Int
}

/// A `private` restorable object.
private final class PrivateSettings: RestorableObject {
    @Restorable var theme = "dark"
}

/// Snapshot namespaces are the same in every process, so that a snapshot saved by one run of
/// the app restores in the next.
@MainActor @Suite struct SnapshotNamespaceTests {
    let directory = TemporaryDirectory()

    @Test func aPrivateTypesNameIsTheSameInEveryProcess() {
        struct Local {}
        enum Outer { fileprivate struct Inner {} }
        #expect(Caretaker.stableName(of: Draft.self) == "KeepsakeTests.(private).Draft")
        #expect(Caretaker.stableName(of: Outer.Inner.self).hasSuffix(".(private).Outer.Inner"))
        #expect(Caretaker.stableName(of: Local.self).hasSuffix(".(private).Local"))
        #expect(!Caretaker.stableName(of: Local.self).contains("$"))
        #expect(Caretaker.stableName(of: Doc.self) == "KeepsakeTestSupport.Doc")
        #expect(Caretaker.stableName(of: [Draft].self) == "Swift.Array<KeepsakeTests.(private).Draft>")
        let caretaker = Caretaker(
            store: try! KeepsakeStore(path: directory.path("names.keepsake")), scope: "d1")
        #expect(caretaker.namespace(for: Draft.self) == "d1/KeepsakeTests.(private).Draft")
    }

    static func savePrivateSnapshots(path: String) throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Draft(title: "Saved by the first run", words: 5), as: "v1")
        let settings = PrivateSettings()
        settings.theme = "light"
        try settings.takeSnapshot(withKey: "mine", in: caretaker)
    }

    /// Saved by another process (the app's previous launch), every snapshot of a `private` type
    /// restores. Before, its namespace held the type's address at that launch, and no later
    /// launch found it.
    @Test func aPrivateTypesSnapshotsRestoreInTheNextProcess() async throws {
        let path = directory.path("private.keepsake")
        await #expect(processExitsWith: .success) { [path = path as String] in
            try await Self.savePrivateSnapshots(path: path)
        }
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        #expect(
            try caretaker.restore("v1", as: Draft.self) == Draft(title: "Saved by the first run", words: 5))
        #expect(try caretaker.value(at: "words", in: "v1", of: Draft.self) == 5)
        let settings = PrivateSettings()
        try settings.restore(withKey: "mine", from: caretaker)
        #expect(settings.theme == "light")
        #expect(
            try caretaker.snapshots().map(\.namespace).sorted() == [
                "KeepsakeTests.(private).Draft", "KeepsakeTests.(private).PrivateSettings",
            ])
    }

    /// Moves snapshot `saved` to `namespace` — as an earlier release wrote it, say — renamed
    /// `name`, saved at `date`, with its digests.
    func move(
        at path: String, _ saved: String, as name: String, to namespace: String, savedAt date: Double = 0
    )
        throws
    {
        let store = try KeepsakeStore(path: path)
        try store.database.write { connection in
            try connection.execute(
                "UPDATE snapshot SET namespace = ?, name = ?, created_at = ? WHERE name = ?",
                [.text(namespace), .text(name), .real(date), .text(saved)])
            let rows = try connection.query(
                """
                SELECT p.snapshot_id, p.path, p.value FROM snapshot_property p
                JOIN snapshot s ON s.id = p.snapshot_id WHERE s.namespace = ? AND s.name = ?
                """, [.text(namespace), .text(name)]
            ) { (id: $0.int64(0)!, path: $0.text(1)!, value: $0.text(2)!) }
            for row in rows {
                try connection.execute(
                    "UPDATE snapshot_property SET digest = ? WHERE snapshot_id = ? AND path = ?",
                    [
                        .integer(Caretaker.digest(namespace, name, row.path, row.value)), .integer(row.id),
                        .text(row.path),
                    ])
            }
        }
    }

    /// Snapshots an earlier release saved under an address — one per launch that saved them —
    /// are found by the name they were saved under: the newest one, until it is deleted or
    /// replaced.
    @Test func snapshotsAnEarlierReleaseSavedUnderAnAddressAreFound() throws {
        let path = directory.path("legacy.keepsake")
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        let (older, newer) = (Draft(title: "older", words: 1), Draft(title: "newer", words: 2))
        try caretaker.save(older, as: "a")
        try caretaker.save(newer, as: "b")
        try caretaker.save(older, as: "c")
        try move(
            at: path, "a", as: "v1", to: "KeepsakeTests.(unknown context at $5623266c13b4).Draft",
            savedAt: 100)
        try move(
            at: path, "b", as: "v1", to: "KeepsakeTests.(unknown context at $55e2d911f49c).Draft",
            savedAt: 200)
        // A type of another name in the same private context is not matched.
        try move(
            at: path, "c", as: "v2", to: "KeepsakeTests.(unknown context at $55e2d911f49c).Drafts",
            savedAt: 300)

        let reopened = Caretaker(store: try KeepsakeStore(path: path))
        #expect(try reopened.restore("v1", as: Draft.self) == newer)
        #expect(try reopened.value(at: "title", in: "v1", of: Draft.self) == "newer")
        #expect(try reopened.restore("v2", as: Draft.self) == nil)
        #expect(throws: KeepsakeError.snapshotExists(namespace: "KeepsakeTests.(private).Draft", name: "v1"))
        {
            try reopened.save(older, as: "v1")
        }
        #expect(try reopened.delete("v1", of: Draft.self))
        #expect(try reopened.restore("v1", as: Draft.self) == older)
        try reopened.save(newer, as: "v1", replacingExisting: true)
        #expect(try reopened.restore("v1", as: Draft.self) == newer)
        #expect(try reopened.snapshots().map(\.name) == ["v1", "v2"])
        #expect(try reopened.store.verify().problems == [])
    }

    /// `Draft` after an update that moved it into the module `NotesModel` and renamed it.
    struct MovedDraft: Codable, Equatable, SnapshotTypeEvolution {
        static let formerTypeNames = ["NotesApp.Draft", "NotesApp.(private).Draft"]
        var title: String
        var words: Int
    }

    /// The same, undeclared.
    struct UndeclaredDraft: Codable, Equatable {
        var title: String
        var words: Int
    }

    final class MovedSettings: RestorableObject, SnapshotTypeEvolution {
        static let formerTypeNames = ["NotesApp.Settings"]
        @Restorable var theme = "dark"
    }

    /// Snapshots saved under the names a type declares it had are found under today's: read,
    /// deleted, refused and replaced by a save.
    @Test(arguments: [nil, "d1"])
    func snapshotsSavedUnderAFormerTypeNameAreFound(scope: String?) throws {
        let path = directory.path("moved-\(scope ?? "none").keepsake")
        let caretaker = Caretaker(store: try KeepsakeStore(path: path), scope: scope)
        let prefix = scope.map { "\($0)/" } ?? ""
        let (first, second) = (MovedDraft(title: "first", words: 1), MovedDraft(title: "second", words: 2))
        try caretaker.save(first, as: "a")
        try caretaker.save(second, as: "b")
        try move(at: path, "a", as: "v1", to: prefix + "NotesApp.Draft")
        // The second name, with an earlier release's address for its private context.
        try move(at: path, "b", as: "v2", to: prefix + "NotesApp.(unknown context at $55e2d911f49c).Draft")
        let settings = MovedSettings()
        settings.theme = "light"
        try settings.takeSnapshot(withKey: "mine", in: caretaker)
        try move(at: path, "mine", as: "mine", to: prefix + "NotesApp.Settings")

        let reopened = Caretaker(store: try KeepsakeStore(path: path), scope: scope)
        #expect(try reopened.restore("v1", as: MovedDraft.self) == first)
        #expect(try reopened.restore("v2", as: MovedDraft.self) == second)
        #expect(try reopened.value(at: "words", in: "v2", of: MovedDraft.self) == 2)
        #expect(try reopened.restore("v1", as: UndeclaredDraft.self) == nil)
        let restored = MovedSettings()
        try restored.restore(withKey: "mine", from: reopened)
        #expect(restored.theme == "light")

        let namespace = reopened.namespace(for: MovedDraft.self)
        #expect(throws: KeepsakeError.snapshotExists(namespace: namespace, name: "v1")) {
            try reopened.save(second, as: "v1")
        }
        try reopened.save(second, as: "v1", replacingExisting: true)
        #expect(try reopened.restore("v1", as: MovedDraft.self) == second)
        #expect(try reopened.delete("v2", of: MovedDraft.self))
        #expect(try reopened.restore("v2", as: MovedDraft.self) == nil)
        #expect(
            try reopened.snapshots().map { "\($0.namespace) \($0.name)" }.sorted()
                == [
                    prefix + "NotesApp.Settings mine", "\(namespace) v1",
                ].sorted())
        #expect(try reopened.store.verify().problems == [])
    }
}
