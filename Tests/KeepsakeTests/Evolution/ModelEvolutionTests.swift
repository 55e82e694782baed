import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// The model an app shipped first. Its stores are written in a child process, as the old app
/// would have, then reopened by each changed model below.
enum OldApp {
    enum Kind: String, Codable, VersionableLeaf { case a, b }

    struct Doc: Versionable, Equatable, Codable {
        var title: String
        var count: Int
        var tags: [String]
        var note: String
        var kind: Kind
    }

    /// The versions the old app recorded, oldest first.
    static let versions: [Doc] = {
        var doc = Doc(title: "", count: 0, tags: [], note: "", kind: .a)
        var versions = [doc]
        func record(_ change: (inout Doc) -> Void) {
            change(&doc)
            versions.append(doc)
        }
        record { $0.title = "Draft" }
        record { $0.count = 3 }
        record { $0.tags = ["x"] }
        record { $0.note = "n1" }
        record { $0.kind = .b }
        record {
            $0.title = "Final"
            $0.count = 5
        }
        record { $0.tags = ["x", "y"] }
        record { $0.note = "n2" }
        return versions
    }()

    /// Writes history "doc" (every version), history "other", and snapshot "v4"; `closing`
    /// closes the history, which stores a checkpoint, as an app closing a document does.
    static func write(path: String, closing: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: versions[0])
        for version in versions.dropFirst() { try history.append(version) }
        try store.history("other", initialValue: versions[3]).append(versions[4])
        try Caretaker(store: store).save(versions[4], as: "v4")
        if closing { try history.close() }
    }

    /// Writes history "doc" (every version), then holds back a change by debouncing (a tag
    /// added) and stops without closing it, as an app killed while the user typed.
    @MainActor static func writeHolding(path: String) throws {
        let history = try KeepsakeStore(path: path).history("doc", initialValue: versions[0])
        for version in versions.dropFirst() { try history.append(version) }
        history.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        var held = versions[8]
        held.tags.append("z")
        try history.append(held)
        #expect(history.versionCount == 8)
    }
}

/// What each kind of model change does to a store the old app wrote.
@MainActor @Suite struct ModelEvolutionTests {
    let directory = TemporaryDirectory()

    /// A store written by the old app in a child process.
    func oldStore(closing: Bool) async throws -> String {
        let path = directory.path("old-\(closing).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, closing = closing as Bool] in
            try OldApp.write(path: path, closing: closing)
        }
        return path
    }

    /// Snapshot namespaces are type names, and the models here are different types; in an app
    /// update the type keeps its name. Moves the old app's snapshots to `Value`'s namespace,
    /// digests included.
    func moveSnapshots<Value>(at path: String, to _: Value.Type) throws {
        let store = try KeepsakeStore(path: path)
        let namespace = Caretaker(store: store).namespace(for: Value.self)
        try store.database.write { connection in
            try connection.execute("UPDATE snapshot SET namespace = ?", [.text(namespace)])
            let rows = try connection.query(
                "SELECT p.snapshot_id, p.path, p.value, s.name FROM snapshot_property p JOIN snapshot s ON s.id = p.snapshot_id"
            ) { (id: $0.int64(0)!, path: $0.text(1)!, value: $0.text(2)!, name: $0.text(3)!) }
            for row in rows {
                try connection.execute(
                    "UPDATE snapshot_property SET digest = ? WHERE snapshot_id = ? AND path = ?",
                    [
                        .integer(Caretaker.digest(namespace, row.name, row.path, row.value)),
                        .integer(row.id),
                        .text(row.path),
                    ])
            }
        }
    }

    /// Opens history "doc" with today's `Value`, then checks each version read without opening
    /// the history (what it lacks filled from `initialValue`), the value, every undo back to the
    /// start and every redo to the end against `expected` (oldest first), and the invariants.
    /// `stored` gives what of a value is compared (all of it unless told).
    static func expectHistory<Value: Versionable & Codable & Equatable & SendableMetatype>(
        at path: String, named name: String = "doc", initialValue: Value, expected: [Value],
        comparing stored: (Value) -> Value = { $0 }
    ) throws {
        let store = try KeepsakeStore(path: path)
        for (version, value) in expected.enumerated() {
            let read = try store.value(ofHistory: name, atVersion: version, fillingMissingFrom: initialValue)
            #expect(read.map(stored) == value, "version \(version)")
        }
        let history = try store.history(name, initialValue: initialValue)
        #expect(stored(history.value) == expected.last)
        #expect(history.versionCount == expected.count - 1)
        try expectUndoAndRedo(history, through: expected, comparing: stored)
    }

    /// Undoes `history`, at the last of `expected` (oldest first), back to the first, checking
    /// each value (what `stored` gives of it), then redoes it to the end; checks the invariants.
    static func expectUndoAndRedo<Value: Versionable & Equatable>(
        _ history: VersioningController<Value, Value, KeepsakeError>, through expected: [Value],
        comparing stored: (Value) -> Value = { $0 }
    ) throws {
        for value in expected.dropLast().reversed() { #expect(stored(try history.undo()) == value) }
        #expect(!history.hasUndo)
        for value in expected.dropFirst() { #expect(stored(try history.redo()) == value) }
        try history.checkInvariants()
    }

    // MARK: No code

    enum Added {
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var count: Int
            var tags: [String]
            var note: String
            var kind: OldApp.Kind
            var pinned = false
        }
    }

    @Test(arguments: [true, false])
    func anAddedPropertyTakesTheAppsValueWhereNothingIsStored(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let initial = Added.Doc(title: "", count: 0, tags: [], note: "", kind: .a, pinned: true)
        let expected = OldApp.versions.map {
            Added.Doc(
                title: $0.title, count: $0.count, tags: $0.tags, note: $0.note, kind: $0.kind, pinned: true)
        }
        try Self.expectHistory(at: path, initialValue: initial, expected: expected)
        try moveSnapshots(at: path, to: Added.Doc.self)
        let store = try KeepsakeStore(path: path)
        #expect(
            try Caretaker(store: store).restore("v4", as: Added.Doc.self, fillingMissingFrom: initial)
                == expected[4])
        // Without a value to fill it from, the snapshot names what it lacks.
        #expect {
            try Caretaker(store: store).restore("v4", as: Added.Doc.self)
        } throws: { error in
            guard case .undecodableSnapshot("v4", let path, _) = error as? KeepsakeError else { return false }
            return path == [.property("pinned")]
        }
    }

    enum Removed {
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var tags: [String]
            var note: String
            var kind: OldApp.Kind
        }
    }

    @Test(arguments: [true, false])
    func aRemovedPropertysChangesAreSkippedAndEveryOtherOneStillUndoes(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let expected = OldApp.versions.map {
            Removed.Doc(title: $0.title, tags: $0.tags, note: $0.note, kind: $0.kind)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
        try moveSnapshots(at: path, to: Removed.Doc.self)
        #expect(
            try Caretaker(store: KeepsakeStore(path: path)).restore("v4", as: Removed.Doc.self) == expected[4]
        )
    }

    enum AddedCase {
        enum Kind: String, Codable, VersionableLeaf { case a, b, c }

        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var count: Int
            var tags: [String]
            var note: String
            var kind: Kind
        }
    }

    @Test func anAddedEnumCaseNeedsNothing() async throws {
        let path = try await oldStore(closing: false)
        let expected = OldApp.versions.map {
            AddedCase.Doc(
                title: $0.title, count: $0.count, tags: $0.tags, note: $0.note,
                kind: .init(rawValue: $0.kind.rawValue)!)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
        let history = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        var doc = history.value
        doc.kind = .c
        try history.append(doc)
        #expect(try history.undo() == expected.last)
    }

    enum MadeOptional {
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var count: Int
            var tags: [String]
            var note: String?
            var kind: OldApp.Kind
        }
    }

    @Test(arguments: [true, false])
    func aPropertyMadeOptionalReadsItsStoredValuesAndChanges(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let expected = OldApp.versions.map {
            MadeOptional.Doc(title: $0.title, count: $0.count, tags: $0.tags, note: $0.note, kind: $0.kind)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
    }

    enum WithOptional {
        struct Old: Versionable, Equatable, Codable {
            var title: String
            var subtitle: String?
        }

        /// An update that added a property: stored JSON is read property by property.
        struct New: Versionable, Equatable, Codable {
            var title: String
            var subtitle: String?
            var pinned = false
        }

        static let versions = [
            Old(title: "", subtitle: nil), Old(title: "", subtitle: "first"),
            Old(title: "Final", subtitle: nil),
        ]
    }

    /// An optional stored as `nil` is left out of the JSON, as synthesized `Codable` writes it,
    /// and reads as `nil` again: the app's value in its place (a new document's default
    /// subtitle) would change what the user stored. Before, a closed history opened with the
    /// app's "Untitled" in place of the stored `nil`, and the base value and the snapshot read
    /// "Untitled" whether it was closed or not.
    @Test(arguments: [true, false])
    func anOptionalStoredAsNilStaysNilWhenTheModelChanges(closing: Bool) async throws {
        let path = directory.path("optional-\(closing).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, closing = closing as Bool] in
            let store = try KeepsakeStore(path: path)
            let history = try store.history("doc", initialValue: WithOptional.versions[0])
            for version in WithOptional.versions.dropFirst() { try history.append(version) }
            try Caretaker(store: store).save(WithOptional.versions[2], as: "final")
            if closing { try history.close() }
        }
        let expected = WithOptional.versions.map { WithOptional.New(title: $0.title, subtitle: $0.subtitle) }
        let appDefault = WithOptional.New(title: "", subtitle: "Untitled")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: appDefault)
        #expect(history.value == expected[2])
        #expect(try history.undo() == expected[1])
        #expect(try history.undo() == expected[0])
        #expect(try history.redo() == expected[1])
        #expect(try history.redo() == expected[2])
        try history.checkInvariants()
        #expect(
            try store.value(ofHistory: "doc", atVersion: 0, fillingMissingFrom: appDefault) == expected[0])
        try moveSnapshots(at: path, to: WithOptional.New.self)
        #expect(
            try Caretaker(store: KeepsakeStore(path: path)).restore(
                "final", as: WithOptional.New.self, fillingMissingFrom: appDefault) == expected[2])
    }

    // MARK: One declaration

    enum Renamed {
        struct Doc: Versionable, Equatable, Codable {
            var name: String
            var count: Int
            var tags: [String]
            var note: String
            var kind: OldApp.Kind

            static let propertyEvolution: [PropertyEvolution] = [.renamed("title", to: "name")]
        }

        /// The same, with its properties registered by hand.
        struct RegisteredDoc: Versionable, Equatable, Codable {
            var name: String
            var count: Int
            var tags: [String]
            var note: String
            var kind: OldApp.Kind

            static let propertyEvolution = Doc.propertyEvolution

            func addReversions(into reverter: inout some Reverter<RegisteredDoc>) {
                reverter.appendReversion(at: \.name)
                reverter.appendReversion(at: \.count)
                reverter.appendReversion(at: \.tags)
                reverter.appendReversion(at: \.note, named: "note")
                reverter.appendReversion(at: \.kind)
            }
        }
    }

    @Test(arguments: [true, false])
    func aRenamedPropertyIsReadUnderItsOldNameEverywhere(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let expected = OldApp.versions.map {
            Renamed.Doc(name: $0.title, count: $0.count, tags: $0.tags, note: $0.note, kind: $0.kind)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
        try moveSnapshots(at: path, to: Renamed.Doc.self)
        #expect(
            try Caretaker(store: KeepsakeStore(path: path)).restore("v4", as: Renamed.Doc.self) == expected[4]
        )
        // New changes are stored under the new name, and still undo.
        let history = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        var doc = history.value
        doc.name = "Renamed"
        try history.append(doc)
        let paths = try KeepsakeStore(path: path).changes(ofVersion: 9, in: "doc")?.map(\.path)
        #expect(paths == ["name"])
        #expect(try history.undo() == expected.last)
    }

    /// Undo resolves each stored change through the type's own registrations, passing over
    /// those that cannot take it: a property registered by hand is still found under its old name.
    @Test(arguments: [true, false])
    func aRenamedPropertyRegisteredByHandIsReadUnderItsOldName(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let expected = OldApp.versions.map {
            Renamed.RegisteredDoc(
                name: $0.title, count: $0.count, tags: $0.tags, note: $0.note, kind: $0.kind)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
    }

    enum Converted {
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var count: String
            var tags: [String]
            var note: String
            var kind: OldApp.Kind

            static let propertyEvolution: [PropertyEvolution] = [
                .converted("count", from: Int.self) { "\($0) items" }
            ]
        }

        /// The same, the conversion not declared.
        struct UndeclaredDoc: Versionable, Equatable, Codable {
            var title: String
            var count: String
            var tags: [String]
            var note: String
            var kind: OldApp.Kind
        }
    }

    /// Undeclared, the conversion is what the errors say to declare: opening the history and
    /// restoring a snapshot.
    @Test(arguments: [true, false])
    func aPropertyWhoseTypeChangedUndeclaredSaysWhatToDeclare(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let hint = """
            if the app changed the type of "count" since, declare .converted("count", from: TheOldType.self) \
            { … } in the propertyEvolution of the type that declares it (adopting Versionable)
            """
        let initial = Converted.UndeclaredDoc(title: "", count: "", tags: [], note: "", kind: .a)
        // Not closed, the changes replayed on the stored form reach a value that does not
        // decode either: its error is the one reported.
        let opening = KeepsakeError.undecodableValue(
            history: "doc", reason: "Expected to decode String but found number instead (at count); " + hint)
        #expect(throws: opening) { try KeepsakeStore(path: path).history("doc", initialValue: initial) }
        try moveSnapshots(at: path, to: Converted.UndeclaredDoc.self)
        #expect(
            throws: KeepsakeError.undecodableSnapshot(
                name: "v4", path: [.property("count")],
                reason: "Expected to decode String but found number instead; " + hint)
        ) { try Caretaker(store: KeepsakeStore(path: path)).restore("v4", as: Converted.UndeclaredDoc.self) }
        // Nothing was written: declared, the conversion opens every version.
        let expected = OldApp.versions.map {
            Converted.Doc(
                title: $0.title, count: "\($0.count) items", tags: $0.tags, note: $0.note, kind: $0.kind)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
    }

    enum RemovedCase {
        /// `b` removed, `c` added.
        enum Kind: String, Codable, VersionableLeaf { case a, c }

        struct UndeclaredDoc: Versionable, Equatable, Codable {
            var title: String
            var count: Int
            var tags: [String]
            var note: String
            var kind: Kind
        }

        /// The same, with the conversion the error says to declare.
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var count: Int
            var tags: [String]
            var note: String
            var kind: Kind

            static let propertyEvolution: [PropertyEvolution] = [
                .converted("kind", from: String.self) { Kind(rawValue: $0) ?? Kind.c }
            ]
        }
    }

    /// An enum case removed: the stored raw value no case has says to convert the property
    /// from the raw type, and that declaration opens every version.
    @Test(arguments: [true, false])
    func aRemovedEnumCaseSaysToConvertFromTheRawType(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let hint = """
            if the app removed or renamed a case of Kind since, declare .converted("kind", from: String.self) \
            { … } in the propertyEvolution of the type that declares it (adopting Versionable)
            """
        let initial = RemovedCase.UndeclaredDoc(title: "", count: 0, tags: [], note: "", kind: .a)
        // Closed, the stored value holds the old case; not closed, version 5's change does.
        let opening =
            closing
            ? KeepsakeError.undecodableValue(
                history: "doc",
                reason: "Cannot initialize Kind from invalid String value b (at kind); " + hint)
            : KeepsakeError.reversion(
                history: "doc", version: 5,
                error: .undecodable(
                    path: [.property("kind")], type: "Kind",
                    reason: "Cannot initialize Kind from invalid String value b (at new); " + hint))
        #expect(throws: opening) { try KeepsakeStore(path: path).history("doc", initialValue: initial) }
        let expected = OldApp.versions.map {
            RemovedCase.Doc(
                title: $0.title, count: $0.count, tags: $0.tags, note: $0.note, kind: $0.kind == .a ? .a : .c)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
    }

    @Test(arguments: [true, false])
    func aPropertyWhoseTypeChangedIsConvertedFromItsStoredForm(closing: Bool) async throws {
        let path = try await oldStore(closing: closing)
        let expected = OldApp.versions.map {
            Converted.Doc(
                title: $0.title, count: "\($0.count) items", tags: $0.tags, note: $0.note, kind: $0.kind)
        }
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
        try moveSnapshots(at: path, to: Converted.Doc.self)
        #expect(
            try Caretaker(store: KeepsakeStore(path: path)).restore("v4", as: Converted.Doc.self)
                == expected[4])
    }

    // MARK: Anything else

    enum Incompatible {
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var count: Int
            var tags: Set<String>
            var note: String
            var kind: OldApp.Kind
        }

        /// The old app's versions, as this model has them.
        static let versions = OldApp.versions.map {
            Doc(title: $0.title, count: $0.count, tags: Set($0.tags), note: $0.note, kind: $0.kind)
        }
    }

    /// Versions 3 and 7 changed the array this model keeps as a set: their stored changes are
    /// an array's, which the model cannot read. Undoing and redoing them computes the value on
    /// the stored form (the newest checkpoint below them and the versions after it, redone on
    /// its JSON) and decodes it: every version undoes and redoes exactly.
    @Test func anUndeclaredChangeIsUndoneAndRedoneOnTheStoredForm() async throws {
        let path = try await oldStore(closing: true)
        let expected = Incompatible.versions
        try Self.expectHistory(at: path, initialValue: expected[0], expected: expected)
        // Every other history and snapshot keep working.
        try moveSnapshots(at: path, to: Incompatible.Doc.self)
        let store = try KeepsakeStore(path: path)
        #expect(try store.history("other", initialValue: expected[0]).undo() == expected[3])
        #expect(try Caretaker(store: store).restore("v4", as: Incompatible.Doc.self) == expected[4])
    }

    /// The check walks down from the current value as undo does; at a version the model cannot
    /// read, redoing it on the stored form must reach the value above it, and says where not.
    @Test func checkingFindsAValueTheStoredFormDoesNotReach() async throws {
        let path = try await oldStore(closing: true)
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Incompatible.versions[0])
        try history.checkInvariants()
        let storage = try #require(history.storage as? KeepsakeHistoryStorage<Incompatible.Doc>)
        storage.current.tags.insert("never stored")
        // Without the closing's checkpoint of version 8, which the check would find first to
        // differ from the value it starts from.
        try store.write { connection, _ in
            try connection.execute(
                "DELETE FROM checkpoint WHERE history_id = ? AND position IS NOT NULL", [.integer(storage.id)]
            )
        }
        #expect(
            throws: ReversionError.storage(
                StorageFailure(
                    KeepsakeError.undecodableValue(
                        history: "doc",
                        reason:
                            "invariant: redoing version 7 on the stored form does not reach the value above it"
                    )))
        ) { try history.checkInvariants() }
    }

    /// A history the old app did not close (it crashed, or was killed) is opened by replaying
    /// the changes stored since its newest checkpoint — here all of them, from its base value.
    /// When the new model cannot read one, they are replayed on the checkpoint's stored form, as
    /// the old model wrote both, and the result is decoded with the new model: the history
    /// opens as it would have had the old app closed it, and stores a checkpoint so that the
    /// next open replays nothing old.
    @Test func anUndeclaredChangeSinceTheNewestCheckpointIsReplayedOnTheStoredForm() async throws {
        let path = try await oldStore(closing: false)
        let expected = Incompatible.versions
        let checkpoints = {
            try KeepsakeStore(path: path).database.read {
                try $0.query(
                    "SELECT c.position FROM checkpoint c JOIN history h ON h.id = c.history_id WHERE h.name = 'doc' ORDER BY c.position"
                ) { $0.int64(0) }
            }
        }
        #expect(try checkpoints() == [nil])
        // Read-only, it opens without writing anything.
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let readOnly = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try readOnly.history("doc", initialValue: expected[0]).value == expected[8])
        readOnly.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let history = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        #expect(history.value == expected[8] && history.versionCount == 8)
        #expect(try checkpoints() == [nil, 8])
        // Undo and redo then behave as after a close: every version, on the stored form where
        // the model cannot read it.
        try Self.expectUndoAndRedo(history, through: expected)
        var next = expected[8]
        next.tags.insert("z")
        try history.append(next)
        try history.close()
        // Reopened, nothing old is replayed: the new model reads the checkpoint and its own change.
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        #expect(reopened.value == next && reopened.versionCount == 9)
        #expect(try reopened.undo() == expected[8])
        let store = try KeepsakeStore(path: path)
        let other = try store.history("other", initialValue: expected[0])
        #expect(other.value.tags == ["x"] && other.value.note == "n1")
        #expect(try store.verify().problems == [])
    }

    /// A change the old app held back by debouncing when it stopped is replayed the same way,
    /// and recorded as a version of the new model.
    @Test func aHeldChangeTheNewModelCannotReadIsReplayedOnTheStoredForm() async throws {
        let path = directory.path("held.keepsake")
        await #expect(processExitsWith: .success) { [path = path as String] in
            try await OldApp.writeHolding(path: path)
        }
        let expected = Incompatible.versions
        var held = expected[8]
        held.tags.insert("z")
        let history = try KeepsakeStore(path: path).history("doc", initialValue: expected[0])
        #expect(history.value == held && history.versionCount == 9)
        #expect(try history.undo() == expected[8])
        #expect(try history.redo() == held)
        #expect(try history.durableStorage!.store.verify().problems == [])
    }

    /// When the stored form does not help either — its result does not decode as the new model
    /// — opening fails with the error of the first change the new model could not read, and
    /// every other history and snapshot keeps working.
    @Test func aChangeNeitherTheModelNorItsStoredFormCanReadFailsTheOpenNamingIt() async throws {
        let path = try await oldStore(closing: false)
        let initial = Retyped.Doc(title: "", count: 0, tags: [], note: "", kind: .a)
        #expect {
            try KeepsakeStore(path: path).history("doc", initialValue: initial)
        } throws: { error in
            guard case .reversion("doc", 3, .undecodable(let path, _, _)) = error as? KeepsakeError else {
                return false
            }
            return path == [.property("tags")]
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.history("new", initialValue: initial).value == initial)
        #expect(try store.verify().problems == [])
    }

    enum Retyped {
        struct Doc: Versionable, Equatable, Codable {
            var title: String
            var count: Int
            var tags: [Int]
            var note: String
            var kind: OldApp.Kind
        }
    }
}

/// A property that held a struct, which an app update turned into an optional text (declared,
/// with a conversion): the old app's changes inside it (`note.text`) name a property that a
/// `String` does not have.
enum Flattened {
    struct Note: Versionable, Equatable, Codable { var text: String }

    struct OldDoc: Versionable, Equatable, Codable {
        var title: String
        var note: Note?
    }

    struct Doc: Versionable, Equatable, Codable {
        var title: String
        var note: String?

        static let propertyEvolution: [PropertyEvolution] = [
            .converted("note", from: Note?.self) { $0?.text }
        ]
    }

    /// The same change of type, undeclared.
    struct UndeclaredDoc: Versionable, Equatable, Codable {
        var title: String
        var note: String?
    }

    /// Version 1 changes inside the note, version 2 the title; the history is closed, which
    /// stores a checkpoint.
    static func write(path: String) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: OldDoc(title: "", note: Note(text: "a")))
        try history.append(OldDoc(title: "", note: Note(text: "b")))
        try history.append(OldDoc(title: "T", note: Note(text: "b")))
        try history.close()
    }
}

extension ModelEvolutionTests {
    /// A version row lost below one the new model cannot read (found by fuzzing): undo reaches
    /// the value on the stored form, redoing the versions from the checkpoint below, and redid
    /// them without the lost one: the title undo gave was version 1's, with no error.
    @Test func aVersionLostBelowOneUndoneOnTheStoredFormIsDamageNotLeftOut() async throws {
        let path = directory.path("flattened-lost.keepsake")
        await #expect(processExitsWith: .success) { [path = path as String] in
            let store = try KeepsakeStore(path: path)
            let history = try store.history(
                "doc", initialValue: Flattened.OldDoc(title: "", note: Flattened.Note(text: "a")))
            try history.append(Flattened.OldDoc(title: "1", note: Flattened.Note(text: "a")))
            try history.append(Flattened.OldDoc(title: "2", note: Flattened.Note(text: "a")))
            try history.append(Flattened.OldDoc(title: "2", note: Flattened.Note(text: "b")))
            try history.close()
        }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("DELETE FROM version WHERE position = 2")
        connection.close()
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Flattened.Doc(title: "", note: nil))
        #expect(history.value == Flattened.Doc(title: "2", note: "b"))
        #expect {
            try history.undo()
        } throws: { error in
            guard case .damaged("doc", let reason) = error as? KeepsakeError else { return false }
            return reason == "version 2 is missing"
        }
        #expect(history.value == Flattened.Doc(title: "2", note: "b"))
    }

    /// Version 1 changed `note.text`, a path a `String` does not have: undoing and redoing it
    /// computes the value on the stored form, where the old note is converted as declared.
    @Test func aChangeInsideAPropertyThatBecameTextIsUndoneOnTheStoredForm() async throws {
        let path = directory.path("flattened.keepsake")
        await #expect(processExitsWith: .success) { [path = path as String] in
            try Flattened.write(path: path)
        }
        // Undeclared, the checkpoint itself no longer decodes: opening says where and what to
        // declare, and writes nothing.
        #expect(
            throws: KeepsakeError.undecodableValue(
                history: "doc",
                reason: """
                    Expected to decode String but found a dictionary instead (at note); if the app changed the \
                    type of "note" since, declare .converted("note", from: TheOldType.self) { … } in the \
                    propertyEvolution of the type that declares it (adopting Versionable)
                    """)
        ) {
            try KeepsakeStore(path: path).history(
                "doc", initialValue: Flattened.UndeclaredDoc(title: "", note: nil))
        }
        let history = try KeepsakeStore(path: path).history(
            "doc", initialValue: Flattened.Doc(title: "", note: nil))
        #expect(history.value == Flattened.Doc(title: "T", note: "b"))
        #expect(try history.undo() == Flattened.Doc(title: "", note: "b"))
        #expect(try history.undo() == Flattened.Doc(title: "", note: "a"))
        #expect(try history.redo() == Flattened.Doc(title: "", note: "b"))
        #expect(try history.redo() == Flattened.Doc(title: "T", note: "b"))
        // The invariant check, reverting every version, does the same.
        try history.checkInvariants()
        // Opening with the conversion stored the value converted: the next open reads it with
        // the standard decoder, and so does a model without the declaration.
        let json = try #require(try KeepsakeStore(path: path).valueJSON(ofHistory: "doc"))
        #expect(
            try JSONDecoder().decode(Flattened.UndeclaredDoc.self, from: Data(json.utf8))
                == Flattened.UndeclaredDoc(title: "T", note: "b"))
    }

    /// A model whose titles are only "" and "Final": the value before version 6, titled
    /// "Draft", is one it cannot hold, read by the model or on the stored form. Undoing version
    /// 6 is refused naming it, and the value stays.
    enum NarrowTitles {
        enum Title: String, Codable, VersionableLeaf {
            case none = ""
            case final = "Final"
        }

        struct Doc: Versionable, Equatable, Codable {
            var title: Title
            var count: Int
            var tags: [String]
            var note: String
            var kind: OldApp.Kind
        }
    }

    @Test func aVersionNeitherTheModelNorItsStoredFormCanReadIsRefusedNamingIt() async throws {
        let path = try await oldStore(closing: true)
        let initial = NarrowTitles.Doc(title: .none, count: 0, tags: [], note: "", kind: .a)
        let history = try KeepsakeStore(path: path).history("doc", initialValue: initial)
        #expect(try history.undo().note == "n1")
        #expect(try history.undo().tags == ["x"])
        let before = history.value
        #expect {
            try history.undo()
        } throws: { error in
            guard case .reversion("doc", 6, .undecodable(let path, _, _)) = error as? KeepsakeError else {
                return false
            }
            return path == [.property("title")]
        }
        #expect(history.value == before && history.durableStorage!.undoCount == 6)
        #expect(try history.redo().note == "n1")
        #expect(try history.durableStorage!.store.verify().problems == [])
    }
}

/// A restorable object as the old app had it, and as the new one has it.
final class OldSettings: RestorableObject {
    @Restorable var theme = "dark"
    @Restorable var size = 12
    @Restorable var beta = false
}

final class NewSettings: RestorableObject {
    @Restorable var colorScheme = "dark"
    @Restorable var size = "12pt"
    @Restorable var sound = true

    static let propertyEvolution: [PropertyEvolution] = [
        .renamed("theme", to: "colorScheme"),
        .converted("size", from: Int.self) { "\($0)pt" },
    ]
}

extension ModelEvolutionTests {
    @Test func restorableObjectsFollowTheSameRules() throws {
        let path = directory.path("settings.keepsake")
        let old = OldSettings()
        (old.theme, old.size, old.beta) = ("light", 14, true)
        try old.takeSnapshot(withKey: "saved", in: Caretaker(store: KeepsakeStore(path: path)))
        try moveSnapshots(at: path, to: NewSettings.self)

        let settings = NewSettings()
        settings.sound = false
        try settings.restore(withKey: "saved", from: Caretaker(store: KeepsakeStore(path: path)))
        // Renamed and converted as declared; the added property keeps its value; the removed
        // one is skipped.
        #expect(settings.colorScheme == "light" && settings.size == "14pt" && settings.sound == false)
    }
}
