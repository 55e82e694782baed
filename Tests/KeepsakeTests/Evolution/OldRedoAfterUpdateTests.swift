import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// The old app undid versions and was killed; after an app update, the new app redoes them.
/// The first open stored the value it read at the top, in today's encoding, which the old
/// versions above it need not fit.
@MainActor @Suite struct OldRedoAfterUpdateTests {
    let directory = TemporaryDirectory()

    struct Doc: Versionable, Equatable, Codable {
        var tags: [String] = []
    }

    /// After the update its tags are a set: the old array's changes do not read, and are redone
    /// on the stored JSON, where a set is written in an order of its own.
    struct UpdatedDoc: Versionable, Equatable, Codable {
        var tags: Set<String> = []
    }

    /// Version 1 adds twenty tags; version 2 removes the first five, which names their
    /// positions, and is undone; the app stops without closing. Opening after the update
    /// stores version 1 in the set's order; redoing version 2 on it found other tags at those
    /// positions: until 2026-11 the redo failed (all but never, for twenty tags, did the order
    /// agree), and kept failing. Now the replay starts from the checkpoint below, which the
    /// old app wrote; so do the next open and a read of the version by number.
    @Test func anOldVersionUndoneBeforeTheUpdateRedoesOnTheOldAppsJSON() throws {
        let path = directory.path("doc.keepsake")
        let tags = (0..<20).map { "tag \($0)" }
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc())
            try history.append(Doc(tags: tags))
            try history.append(Doc(tags: Array(tags.dropFirst(5))))
            try history.undo()
            let store = try KeepsakeStore(path: path)
            let records = try #require(try store.changes(ofVersion: 2, in: "doc"))
            #expect(records.map(\.path.description) == ["tags"] && records.map(\.kind) == ["elements"])
        }
        let history = try KeepsakeStore(path: path).history("doc", initialValue: UpdatedDoc())
        #expect(history.value == UpdatedDoc(tags: Set(tags)))
        // Read by number, as a version browser does, with the model and without it.
        let store = try KeepsakeStore(path: path)
        #expect(try store.value(ofHistory: "doc", atVersion: 2) == UpdatedDoc(tags: Set(tags.dropFirst(5))))
        let json = try #require(try store.valueJSON(ofHistory: "doc", atVersion: 2))
        #expect(
            try JSONDecoder().decode(Doc.self, from: Data(json.utf8)) == Doc(tags: Array(tags.dropFirst(5))))
        #expect(try history.redo() == UpdatedDoc(tags: Set(tags.dropFirst(5))))
        try history.checkInvariants()
        // The new app stops without closing: the version it redid lies above the checkpoint
        // it stored, and the next open passes over that one too (until 2026-11 it did not
        // open, at random).
        let reopened = try KeepsakeStore(path: path).history("doc", initialValue: UpdatedDoc())
        #expect(reopened.value == UpdatedDoc(tags: Set(tags.dropFirst(5))))
        #expect(try reopened.undo() == UpdatedDoc(tags: Set(tags)))
        #expect(try reopened.undo() == UpdatedDoc())
        try reopened.checkInvariants()
        let third = try KeepsakeStore(path: path).history("doc", initialValue: UpdatedDoc())
        #expect(third.value == UpdatedDoc())
        #expect(try third.redo() == UpdatedDoc(tags: Set(tags)))
        #expect(try third.redo() == UpdatedDoc(tags: Set(tags.dropFirst(5))))
        try third.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }

    struct Item: Codable, Equatable, Identifiable {
        var id: Int
        var text: String
    }

    struct Note: Versionable, Equatable, Codable {
        var title = ""
        var items: [Item] = []
    }

    /// An item after the update: no longer `Identifiable`.
    struct UpdatedItem: Codable, Equatable {
        var id: Int
        var text: String
    }

    /// After the update `title` is `name`, and items are told by position.
    struct UpdatedNote: Versionable, Equatable, Codable {
        var name = ""
        var items: [UpdatedItem] = []

        static let propertyEvolution: [PropertyEvolution] = [.renamed("title", to: "name")]
    }

    /// Version 2 changes the title beside an item, which it names by id (`items[id: 1].text`),
    /// as today's model cannot read: redoing it after the update makes both on the JSON the
    /// open stored, where today's model keeps the title as `"name"`. Until 2026-11 the title's
    /// change was made under `"title"`, beside it, which the model does not read: the redo
    /// reached the title of version 1, without an error, and so did every later open (found by
    /// an app written from outside: a `@Versioned` note whose `"!"` never became `"!!"` again).
    @Test func aRenamedPropertysChangeRedoneOnJSONTodaysModelWroteIsMadeUnderItsNewKey() throws {
        let path = directory.path("note.keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("note", initialValue: Note())
            try history.append(Note(title: "!", items: [Item(id: 1, text: "one")]))
            try history.append(Note(title: "!!", items: [Item(id: 1, text: "one, edited")]))
            try history.undo()
            let store = try KeepsakeStore(path: path)
            let records = try #require(try store.changes(ofVersion: 2, in: "note"))
            #expect(Set(records.map(\.path.description)) == ["title", "items[id: 1].text"])
        }
        let (one, edited) = (
            UpdatedNote(name: "!", items: [UpdatedItem(id: 1, text: "one")]),
            UpdatedNote(name: "!!", items: [UpdatedItem(id: 1, text: "one, edited")])
        )
        let history = try KeepsakeStore(path: path).history("note", initialValue: UpdatedNote())
        #expect(history.value == one)
        #expect(try history.redo() == edited)
        try history.checkInvariants()
        for closing in [false, true] {
            let reopened = try KeepsakeStore(path: path).history("note", initialValue: UpdatedNote())
            #expect(reopened.value == edited)
            #expect(try reopened.undo() == one)
            #expect(try reopened.undo() == UpdatedNote())
            #expect(try reopened.redo() == one)
            #expect(try reopened.redo() == edited)
            try reopened.checkInvariants()
            if closing { try reopened.close() }
        }
        let store = try KeepsakeStore(path: path)
        #expect(try store.value(ofHistory: "note", atVersion: 2) == edited)
        #expect(try store.integrityCheck() == ["ok"])
    }

    struct Price: Versionable, Equatable, Codable {
        var cents = 0
        var items: [Item] = []
    }

    /// After the update `cents` is `dollars`, a `Double`, converted; items are told by position.
    struct UpdatedPrice: Versionable, Equatable, Codable {
        var dollars = 0.0
        var items: [UpdatedItem] = []

        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("cents", to: "dollars"),
            .converted("dollars", from: Int.self) { Double($0) / 100 },
        ]
    }

    /// Version 2 sets `cents` from 0 to 250 beside an item change today's model cannot read.
    /// The JSON the open stored holds `"dollars": 0`, which the change's old side, `0`, matches:
    /// made there, it read 250 dollars. A change of a converted property's old name does not
    /// fit today's JSON: the redo starts from the old app's JSON, where it is converted.
    @Test func aConvertedPropertysOldChangeIsNeverMadeOnTodaysConvertedValue() throws {
        let path = directory.path("price.keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("price", initialValue: Price())
            try history.append(Price(cents: 0, items: [Item(id: 1, text: "one")]))
            try history.append(Price(cents: 250, items: [Item(id: 1, text: "one, edited")]))
            try history.undo()
        }
        let (one, edited) = (
            UpdatedPrice(dollars: 0, items: [UpdatedItem(id: 1, text: "one")]),
            UpdatedPrice(dollars: 2.5, items: [UpdatedItem(id: 1, text: "one, edited")])
        )
        let history = try KeepsakeStore(path: path).history("price", initialValue: UpdatedPrice())
        #expect(history.value == one)
        #expect(try history.redo() == edited)
        try history.checkInvariants()
        let reopened = try KeepsakeStore(path: path).history("price", initialValue: UpdatedPrice())
        #expect(reopened.value == edited)
        #expect(try reopened.undo() == one)
        #expect(try reopened.redo() == edited)
        try reopened.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}

/// How a replay passes over checkpoints its versions do not fit
/// (``HistoryRows/passingOverUnfit(from:at:below:_:)``): each one below in turn, at most
/// ``HistoryRows/checkpointsPassedOver`` of them, the first one's error when none fits.
@Suite struct CheckpointPassingOverTests {
    /// A replay from a start, failing as `fits` says: a `.reversion` naming the start's version.
    struct Replay {
        var fits: (Int) -> Bool
        var tried: [Int] = []

        mutating func run(from first: Int, spacing: Int = 2) throws -> Int {
            let fits = self.fits
            var tried: [Int] = []
            defer { self.tried += tried }
            return try HistoryRows.passingOverUnfit(
                from: first, at: { $0 }, below: { $0 >= spacing ? $0 - spacing : nil },
                { start in
                    tried.append(start)
                    guard fits(start) else {
                        throw KeepsakeError.reversion(
                            history: "doc", version: start, error: .wrongVersion(path: [], reason: "unfit"))
                    }
                    return start
                })
        }
    }

    @Test func noFittingCheckpointTriesTheFirstAndFourBelowItAndSaysWhyTheFirstFailed() {
        var replay = Replay(fits: { _ in false })
        #expect(HistoryRows.checkpointsPassedOver == 4)
        #expect {
            try replay.run(from: 20)
        } throws: { error in
            guard case KeepsakeError.reversion(_, let version, _) = error else { return false }
            return version == 20
        }
        #expect(replay.tried == [20, 18, 16, 14, 12])
    }

    @Test func theFirstCheckpointBelowThatFitsIsTheStart() throws {
        var replay = Replay(fits: { $0 <= 16 })
        #expect(try replay.run(from: 20) == 16)
        #expect(replay.tried == [20, 18, 16])
    }

    /// The base value (version 0) has nothing below it; an error other than a `.reversion`
    /// (a damaged row) is thrown at once.
    @Test func theBaseValueAndOtherErrorsEndTheSearch() {
        var replay = Replay(fits: { _ in false })
        #expect(throws: KeepsakeError.self) { try replay.run(from: 2) }
        #expect(replay.tried == [2, 0])
        var damaged: [Int] = []
        #expect(throws: KeepsakeError.self) {
            try HistoryRows.passingOverUnfit(
                from: 20, at: { $0 }, below: { $0 - 2 },
                { (start: Int) -> Int in
                    damaged.append(start)
                    throw KeepsakeError.damaged(history: "doc", reason: "a row does not match its digest")
                })
        }
        #expect(damaged == [20])
    }
}
