import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// The seed's Memento example (002) and Restore example (004), durable.
@MainActor @Suite struct CaretakerTests {
    struct User: Codable, Equatable {
        var name: String
        var age: Int
        var address: String
    }

    struct Animal: Codable, Equatable {
        var name: String
        var age: Int
    }

    struct Photo: Codable, Equatable {
        var caption: String
        var bytes: Data
    }

    let directory = TemporaryDirectory()
    var path: String { directory.path("snapshots.keepsake") }

    @Test func eachNameRestoresItsOwnStateEvenAfterReopening() throws {
        var user = User(name: "John", age: 26, address: "New Ave, 456")
        var animal = Animal(name: "Monkey", age: 8)
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(user, as: "defaultUser")
        try caretaker.save(animal, as: "defaultAnimal")
        user.age = 32
        animal.age = 10
        try caretaker.save(user, as: "defaultUser01")
        try caretaker.save(animal, as: "defaultAnimal01")
        user.name = "Alex"
        animal.name = "Cat"

        let reopened = Caretaker(store: try KeepsakeStore(path: path))
        #expect(reopened.defaultUser as User? == User(name: "John", age: 26, address: "New Ave, 456"))
        #expect(reopened.defaultUser01 as User? == User(name: "John", age: 32, address: "New Ave, 456"))
        #expect(reopened.defaultAnimal as Animal? == Animal(name: "Monkey", age: 8))
        #expect(reopened.defaultAnimal01 as Animal? == Animal(name: "Monkey", age: 10))
        #expect(reopened.defaultAnimal02 as Animal? == nil)
        #expect(try reopened.restore("defaultUser", as: Animal.self) == nil)
        #expect(
            try reopened.snapshots().map(\.name) == [
                "defaultAnimal", "defaultAnimal01", "defaultUser", "defaultUser01",
            ])
        #expect(try reopened.snapshots().first?.propertyCount == 2)
    }

    @Test func twoTypesOrTwoScopesNeverShareANamespace() throws {
        let store = try KeepsakeStore(path: path)
        let caretaker = Caretaker(store: store)
        try caretaker.save(User(name: "U", age: 1, address: ""), as: "default")
        try caretaker.save(Animal(name: "A", age: 2), as: "default")
        #expect(try caretaker.restore("default", as: User.self)?.name == "U")
        #expect(try caretaker.restore("default", as: Animal.self)?.name == "A")
        let documentA = Caretaker(store: store, scope: "doc-a")
        try documentA.save(User(name: "in A", age: 3, address: ""), as: "default")
        #expect(try caretaker.restore("default", as: User.self)?.name == "U")
        #expect(try documentA.restore("default", as: User.self)?.name == "in A")
        #expect(try documentA.snapshots().count == 1)
        #expect(try caretaker.snapshots().count == 3)
    }

    @Test func anExistingNameIsRefusedUnlessReplacingIsAskedFor() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Animal(name: "A", age: 1), as: "pet")
        #expect(
            throws: KeepsakeError.snapshotExists(
                namespace: caretaker.namespace(for: Animal.self), name: "pet")
        ) {
            try caretaker.save(Animal(name: "B", age: 2), as: "pet")
        }
        #expect(try caretaker.restore("pet", as: Animal.self)?.name == "A")
        try caretaker.save(Animal(name: "B", age: 2), as: "pet", replacingExisting: true)
        #expect(try caretaker.restore("pet", as: Animal.self)?.name == "B")
        #expect(try caretaker.delete("pet", of: Animal.self))
        #expect(try !caretaker.delete("pet", of: Animal.self))
        #expect(try caretaker.restore("pet", as: Animal.self) == nil)
    }

    @Test func aPropertyThatNoLongerDecodesIsNamedAndNothingIsDeleted() throws {
        let store = try KeepsakeStore(path: path)
        let caretaker = Caretaker(store: store)
        try caretaker.save(User(name: "John", age: 26, address: "x"), as: "old")
        try store.database.read {
            try $0.execute(#"UPDATE snapshot_property SET value = '"twenty"' WHERE path = 'age'"#)
        }
        #expect {
            try caretaker.restore("old", as: User.self)
        } throws: { error in
            guard case .undecodableSnapshot("old", let path, _) = error as? KeepsakeError else {
                return false
            }
            return path == [.property("age")]
        }
        #expect(
            try caretaker.value(at: [.property("name")], in: "old", of: User.self, as: String.self) == "John")
        #expect(try store.database.read { try $0.scalarInt("SELECT count(*) FROM snapshot_property") } == 3)
    }

    @Test func aLargePropertySavedUnderTwoNamesIsStoredOnce() throws {
        let store = try KeepsakeStore(path: path)
        let caretaker = Caretaker(store: store)
        let bytes = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try caretaker.save(Photo(caption: "first", bytes: bytes), as: "one")
        let before = try store.database.read { try $0.scalarInt("SELECT sum(length(bytes)) FROM blob") }
        try caretaker.save(Photo(caption: "second", bytes: bytes), as: "two")
        let after = try store.database.read { try $0.scalarInt("SELECT sum(length(bytes)) FROM blob") }
        #expect(before == 1 << 20 && after == 1 << 20)
        let addedRows = try store.database.read {
            try $0.scalarInt(
                "SELECT sum(length(value)) FROM snapshot_property JOIN snapshot ON id = snapshot_id WHERE name = 'two'"
            )
        }
        #expect(addedRows! < 1024)
        #expect(try caretaker.restore("two", as: Photo.self) == Photo(caption: "second", bytes: bytes))
        try caretaker.delete("one", of: Photo.self)
        try caretaker.delete("two", of: Photo.self)
        try store.compact()
        #expect(try store.database.read { try $0.scalarInt("SELECT count(*) FROM blob") } == 0)
    }

    @Test func aLargeUnchangedPropertyOfAnyTypeIsStoredOnce() throws {
        struct Catalog: Codable, Equatable {
            var title: String
            var entries: [String]
        }
        let store = try KeepsakeStore(path: path)
        let caretaker = Caretaker(store: store)
        var catalog = Catalog(title: "v1", entries: (0..<500).map { "entry number \($0)" })
        try caretaker.save(catalog, as: "one")
        let stored = {
            try store.database.read { try $0.scalarInt("SELECT coalesce(sum(size), 0) FROM blob") }
        }
        let once = try stored()
        catalog.title = "v2"
        try caretaker.save(catalog, as: "two")
        #expect(try stored() == once)
        #expect(try caretaker.restore("two", as: Catalog.self) == catalog)
        #expect(
            try caretaker.value(at: "entries", in: "one", of: Catalog.self, as: [String].self)?.count == 500)
        try caretaker.delete("one", of: Catalog.self)
        try store.compact()
        #expect(try stored() == once)  // still used by "two"
        try caretaker.delete("two", of: Catalog.self)
        try store.compact()
        #expect(try stored() == 0)
    }

    @Test func aHistoryIsSavedAsASnapshotAndASnapshotRestoresAsOneUndoableVersion() throws {
        let store = try KeepsakeStore(path: path)
        let caretaker = Caretaker(store: store)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "Saved"
        try history.append(doc)
        try caretaker.save(history, as: "checkpoint")
        doc.title = "Changed"
        doc.items = [.init(id: 1, title: "x", done: false)]
        try history.append(doc)
        try caretaker.restore("checkpoint", into: history)
        #expect(history.value.title == "Saved" && history.value.items.isEmpty)
        #expect(try history.undo().title == "Changed")
        #expect(
            throws: KeepsakeError.snapshotNotFound(
                namespace: caretaker.namespace(for: Doc.self), name: "missing")
        ) {
            try caretaker.restore("missing", into: history)
        }
    }

    func titled(_ title: String) -> Doc {
        var doc = Doc.empty
        doc.title = title
        return doc
    }

    /// An app's own error type, from a controller's `.throwing(transform)` mode.
    struct AppError: Error {
        let underlying: ReversionError
    }

    /// A restore whose append fails says what failed, as the append itself would: before, a
    /// controller throwing an app's own error type made it *SQLite error 1: AppError(…)*.
    @Test func aRestoreWhoseAppendFailsSaysWhyWhateverTheControllersErrorType() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(titled("Saved"), as: "checkpoint")
        let closed = try KeepsakeStore(path: directory.path("closed.keepsake"))
        let controller = try VersioningController(
            titled("Open"), storage: .keepsake(closed, history: "doc"),
            errorMode: .throwing { AppError(underlying: $0) })
        closed.close()
        // What the append itself fails with: the closed store's error.
        let appended = #expect(throws: AppError.self) { try controller.append(titled("Edited")) }
        let expected = try #require(appended?.underlying.keepsakeError)
        #expect(throws: expected) { try caretaker.restore("checkpoint", into: controller) }
        #expect(controller.value == titled("Open") && controller.versionCount == 0)
    }
}

/// The Restore seed: objects with marked properties and references.
@MainActor @Suite struct RestorableObjectTests {
    final class FavoriteFruits: RestorableObject {
        @Restorable var rank1 = "Apple"
        @Restorable var rank2 = "Banana"
        @Restorable var rank3 = "Watermelon"
    }

    final class Counter {
        var rank1 = "Apple"
        var rank2 = "Banana"
    }

    final class CountedFruits: RestorableObject {
        let counter = Counter()
        var rank1: String {
            get { counter.rank1 }
            set { counter.rank1 = newValue }
        }
        var rank2: String { counter.rank2 }

        var references: [Reference<CountedFruits>] {
            Reference(owner: self, name: "rank1", keyPath: \.rank1)
            Reference(owner: self, name: "rank2", keyPath: \.rank2)
        }
    }

    let directory = TemporaryDirectory()

    @Test func aSnapshotRestoresEveryMarkedProperty() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: directory.path("fruits.keepsake")))
        let favorites = FavoriteFruits()
        try favorites.takeSnapshot(withKey: "BackupResults", in: caretaker)
        favorites.rank1 = "Banana"
        favorites.rank2 = "Apple"
        try favorites.restore(withKey: "BackupResults", from: caretaker)
        #expect(favorites.rank1 == "Apple")
        #expect(favorites.rank2 == "Banana")
        let properties = try favorites.properties(withKey: "BackupResults", from: caretaker)
        #expect(properties.rank1 as String? == "Apple")
        #expect(properties.names == ["rank1", "rank2", "rank3"])
        #expect(
            throws: KeepsakeError.snapshotNotFound(
                namespace: caretaker.namespace(for: FavoriteFruits.self), name: "Nope")
        ) {
            try favorites.restore(withKey: "Nope", from: caretaker)
        }
        #expect(try favorites.removeSnapshot(withKey: "BackupResults", from: caretaker))
        #expect(throws: KeepsakeError.self) {
            try favorites.properties(withKey: "BackupResults", from: caretaker)
        }
    }

    @Test func referencesIncludeComputedProperties() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: directory.path("counted.keepsake")))
        let fruits = CountedFruits()
        try fruits.takeSnapshot(withKey: "Backup", in: caretaker)
        fruits.counter.rank1 = "Cherry"
        fruits.counter.rank2 = "Date"
        try fruits.restore(withKey: "Backup", from: caretaker)
        #expect(fruits.rank1 == "Apple")
        #expect(fruits.rank2 == "Date")  // read-only: saved, not written back
        #expect(try fruits.properties(withKey: "Backup", from: caretaker).rank2 as String? == "Banana")
    }
}
