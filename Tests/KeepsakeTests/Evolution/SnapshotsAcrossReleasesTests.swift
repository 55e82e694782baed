import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// An earlier release of an app that saves a snapshot again over one a later release saved
/// (the same store on an older device, or after a downgrade) keeps what the later release
/// added, which it does not know: the later release restores its own values there, not its
/// defaults. Until 2026-11 the replaced snapshot's rows were deleted whole, and the later
/// release found no `color`: restoring threw, and filling it gave the app's default.
///
/// The earlier release's types are in `SnapshotsEarlierRelease.swift`: private there as the
/// later release's are private here, both are named `KeepsakeTests.(private).Note`
/// (``Caretaker/stableName(of:)``) and share one namespace, as one app's type does across
/// releases.
@Suite struct SnapshotsAcrossReleasesTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("notes.keepsake") }

    static let attachment = Data((0..<2_000).map { UInt8($0 % 251) })

    /// The note the later release saves: every property the earlier one lacks set.
    fileprivate static let saved = Note(
        title: "Trip", subtitle: "packing", color: "red", attachment: attachment,
        meta: .init(author: "Ann", words: 12),
        items: [
            .init(id: 1, text: "one", done: true), .init(id: 2, text: "two", done: false),
            .init(id: 3, text: "three", done: true),
        ])

    /// Appends `suffix` to the title and the author, reverses the items, deletes item 2 and
    /// appends `suffix` to the first item's text.
    static func edit(appending suffix: String) -> SnapshotsEarlierRelease.Edit {
        { title, author, items in
            title += suffix
            author += suffix
            items.reverse()
            items.removeAll { $0.id == 2 }
            if !items.isEmpty { items[0].text += suffix }
        }
    }

    @Test func anEarlierReleaseReplacingASnapshotKeepsWhatTheLaterOneAdded() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Self.saved, as: "s")

        try SnapshotsEarlierRelease.edit("s", in: caretaker, Self.edit(appending: "!"))

        var expected = Self.saved
        expected.title = "Trip!"
        expected.meta.author = "Ann!"
        expected.items = [
            .init(id: 3, text: "three!", done: true), .init(id: 1, text: "one", done: true),
        ]
        #expect(try caretaker.restore("s", as: Note.self) == expected)
        // The kept attachment is a reference to its blob, which compacting keeps.
        try caretaker.store.compact()
        let reopened = Caretaker(store: try KeepsakeStore(path: path))
        #expect(try reopened.restore("s", as: Note.self) == expected)
        #expect(try reopened.store.verify().isOK)
    }

    @Test func whatTheLaterReleaseSavesAgainIsItsOwn() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Self.saved, as: "s")
        try SnapshotsEarlierRelease.edit("s", in: caretaker, Self.edit(appending: "!"))
        var note = try #require(try caretaker.restore("s", as: Note.self))
        note.color = "blue"
        note.subtitle = nil
        note.items[0].done = false
        try caretaker.save(note, as: "s", replacingExisting: true)
        try SnapshotsEarlierRelease.edit("s", in: caretaker, Self.edit(appending: "?"))

        note.title = "Trip!?"
        note.meta.author = "Ann!?"
        note.items = [.init(id: 1, text: "one?", done: true), .init(id: 3, text: "three!", done: false)]
        #expect(try caretaker.restore("s", as: Note.self) == note)
        #expect(try caretaker.store.verify().isOK)
    }

    /// A value saved whole, as one row (an array of items), keeps what its elements hold.
    @Test func aValueSavedWholeKeepsWhatItHolds() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Self.saved.items, as: "items")

        try SnapshotsEarlierRelease.editItems("items", in: caretaker)

        #expect(
            try caretaker.restore("items", as: [Note.Item].self) == [
                .init(id: 3, text: "three!", done: true), .init(id: 2, text: "two", done: false),
                .init(id: 1, text: "one", done: true),
            ])
        #expect(try caretaker.store.verify().isOK)
    }

    /// Elements are paired by their id wherever their type stores it: under a key its
    /// `CodingKeys` give (`"isbn"`), or one its own `encode(to:)` names otherwise (`"ident"`),
    /// in an array stored under a key of its own (`"music"`).
    /// Until 2026-11 only `"id"` was looked up, and every book's `read` and track's `plays`
    /// were lost when the earlier release saved the shelf (or books saved whole) again.
    @Test func elementsArePairedByTheKeyTheirIDIsStoredUnder() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(
            Shelf(
                books: [
                    .init(id: "b1", title: "Emma", read: true),
                    .init(id: "b2", title: "Ulysses", read: false),
                    .init(id: "b3", title: "Dubliners", read: true),
                ],
                tracks: [.init(id: 7, title: "Intro", plays: 3), .init(id: 8, title: "Outro", plays: 9)]),
            as: "shelf")

        try SnapshotsEarlierRelease.editShelf("shelf", in: caretaker)

        #expect(
            try caretaker.restore("shelf", as: Shelf.self)
                == Shelf(
                    books: [
                        .init(id: "b3", title: "Dubliners!", read: true),
                        .init(id: "b1", title: "Emma", read: true),
                    ],
                    tracks: [.init(id: 8, title: "Outro!", plays: 9), .init(id: 7, title: "Intro", plays: 3)])
        )

        try caretaker.save(
            [Shelf.Book(id: "b4", title: "Persuasion", read: true), .init(id: "b5", title: "", read: false)],
            as: "books")
        try SnapshotsEarlierRelease.editBooks("books", in: caretaker)
        #expect(
            try caretaker.restore("books", as: [Shelf.Book].self) == [
                .init(id: "b5", title: "", read: false), .init(id: "b4", title: "Persuasion", read: true),
            ])
        #expect(try caretaker.store.verify().isOK)
    }

    /// Elements without ids are paired by what they hold: a stroke the earlier release left as
    /// it was keeps its `width`. One it edited, one it added, and two alike but for their
    /// widths (nothing says which is which) read the element type's defaults. Until 2026-11
    /// every stroke's width was lost.
    @Test func elementsWithoutIDsArePairedByWhatTheyHold() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(
            Drawing(strokes: [
                .init(points: [1, 2], color: "black", width: 3), .init(points: [3], color: "blue", width: 5),
                .init(points: [4], color: "black", width: 2), .init(points: [4], color: "black", width: 7),
                .init(points: [5, 6], color: "blue", width: 4),
            ]), as: "drawing")

        try SnapshotsEarlierRelease.editDrawing("drawing", in: caretaker)

        #expect(
            try caretaker.restore("drawing", as: Drawing.self)
                == Drawing(strokes: [
                    .init(points: [5, 6], color: "blue", width: 4),
                    .init(points: [4], color: "black", width: 1),
                    .init(points: [4], color: "black", width: 1),
                    .init(points: [3], color: "green", width: 1),
                    .init(points: [1, 2], color: "black", width: 3),
                    .init(points: [9], color: "red", width: 1),
                ]))
        #expect(try caretaker.store.verify().isOK)
    }

    /// Elements without ids are paired by what they hold at every depth: a line the earlier
    /// release left as it was keeps its style's `dash` and each point's `pressure`, its points
    /// paired by position (two alike, pressed differently, keep their own). One it edited, or
    /// added, reads the defaults. Until 2026-11 only the elements' own members were compared,
    /// and a line holding anything the later release added deeper paired with none.
    @Test func elementsWithoutIDsArePairedByWhatTheyHoldAtEveryDepth() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        typealias Line = Sketch.Line
        try caretaker.save(
            Sketch(lines: [
                Line(
                    points: [
                        .init(x: 0, y: 0, pressure: 0.25), .init(x: 1, y: 1, pressure: 0.75),
                        .init(x: 0, y: 0, pressure: 1),
                    ],
                    style: .init(color: "black", dash: true)),
                Line(points: [.init(x: 2, y: 2, pressure: 0.125)], style: .init(color: "blue", dash: false)),
                Line(points: [.init(x: 5, y: 5, pressure: 0.875)], style: .init(color: "red", dash: true)),
            ]), as: "sketch")

        try SnapshotsEarlierRelease.editSketch("sketch", in: caretaker)

        #expect(
            try caretaker.restore("sketch", as: Sketch.self)
                == Sketch(lines: [
                    Line(
                        points: [.init(x: 5, y: 5, pressure: 0.5)], style: .init(color: "green", dash: false)),
                    Line(
                        points: [.init(x: 2, y: 2, pressure: 0.125)], style: .init(color: "blue", dash: false)
                    ),
                    Line(
                        points: [
                            .init(x: 0, y: 0, pressure: 0.25), .init(x: 1, y: 1, pressure: 0.75),
                            .init(x: 0, y: 0, pressure: 1),
                        ],
                        style: .init(color: "black", dash: true)),
                    Line(
                        points: [.init(x: 9, y: 9, pressure: 0.5)], style: .init(color: "gray", dash: false)),
                ]))
        #expect(try caretaker.store.verify().isOK)
    }

    /// The rows of a grid, arrays without ids, are paired by what they hold too: a row the
    /// earlier release left as it was keeps each cell's `note`. Until 2026-11 only objects
    /// were paired so, and every note was lost.
    @Test func rowsOfAGridArePairedByWhatTheyHold() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(
            Board(rows: [
                [.init(mark: "x", note: "first"), .init(mark: "o", note: "")],
                [.init(mark: "o", note: "second"), .init(mark: "o", note: "third")],
            ]), as: "board")

        try SnapshotsEarlierRelease.editBoard("board", in: caretaker)

        #expect(
            try caretaker.restore("board", as: Board.self)
                == Board(rows: [
                    [.init(mark: "o", note: "second"), .init(mark: "o", note: "third")],
                    [.init(mark: "x", note: "?"), .init(mark: "x", note: "?")],
                    [.init(mark: "", note: "?")],
                ]))
        #expect(try caretaker.store.verify().isOK)
    }

    /// A set's members, stored in no fixed order, are paired by what they hold: the tags the
    /// earlier release kept keep their `color`; the one it added reads the default.
    @Test func membersOfASetArePairedByWhatTheyHold() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(
            Labels(tags: [
                .init(name: "a", color: "red"), .init(name: "b", color: "green"),
                .init(name: "c", color: "blue"),
            ]),
            as: "labels")

        try SnapshotsEarlierRelease.editLabels("labels", in: caretaker)

        #expect(
            try caretaker.restore("labels", as: Labels.self)
                == Labels(tags: [
                    .init(name: "a", color: "red"), .init(name: "c", color: "blue"),
                    .init(name: "new", color: "gray"),
                ]))
        #expect(try caretaker.store.verify().isOK)
    }

    /// The two releases edit a drawing in turn at random, its strokes often alike: each
    /// restores exactly what a reference says — a stroke keeps its width where it is the one
    /// stroke of its points and color both in the snapshot the earlier release replaced and in
    /// what it saved, the element type's default width elsewhere. Never another stroke's width.
    @Test(arguments: Soak.batches(usually: 3))
    func strokesWithoutIDsKeepTheirOwnWidthsOrTheDefault(batch: UInt64) throws {
        var random = SeededGenerator(seed: batch)
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        func stroke() -> Drawing.Stroke {
            Drawing.Stroke(
                points: [Int.random(in: 0..<3, using: &random)],
                color: ["red", "blue"].randomElement(using: &random)!,
                width: Double(Int.random(in: 2..<50, using: &random)))
        }
        var reference = Drawing(strokes: (0..<6).map { _ in stroke() })
        try caretaker.save(reference, as: "d")
        for step in 0..<30 {
            if Bool.random(using: &random) {
                var drawing = try #require(try caretaker.restore("d", as: Drawing.self))
                #expect(drawing == reference, "batch \(batch), step \(step)")
                for index in drawing.strokes.indices where Bool.random(using: &random) {
                    drawing.strokes[index].width = Double(Int.random(in: 2..<50, using: &random))
                }
                if Bool.random(using: &random) { drawing.strokes.append(stroke()) }
                try caretaker.save(drawing, as: "d", replacingExisting: true)
                reference = drawing
            } else {
                // The choices are drawn first: the same edit is made on the reference.
                let (operation, index, point) = (
                    Int.random(in: 0..<5, using: &random), Int.random(in: 0..<100, using: &random),
                    Int.random(in: 0..<3, using: &random)
                )
                let edit = { (strokes: inout [(points: [Int], color: String)]) in
                    guard !strokes.isEmpty else { return strokes.append((points: [point], color: "red")) }
                    let index = index % strokes.count
                    switch operation {
                    case 0: strokes.reverse()
                    case 1: strokes.remove(at: index)
                    case 2: strokes[index].color = strokes[index].color == "red" ? "blue" : "red"
                    case 3: strokes.insert(strokes[index], at: index)
                    default: strokes.append((points: [point], color: "blue"))
                    }
                }
                try SnapshotsEarlierRelease.editDrawing("d", in: caretaker, edit)
                let replaced = reference.strokes
                var strokes = replaced.map { (points: $0.points, color: $0.color) }
                edit(&strokes)
                func alike(_ a: (points: [Int], color: String), _ b: (points: [Int], color: String)) -> Bool {
                    a.points == b.points && a.color == b.color
                }
                reference.strokes = strokes.map { stroke in
                    let before = replaced.filter { alike((points: $0.points, color: $0.color), stroke) }
                    let width =
                        before.count == 1 && strokes.count(where: { alike($0, stroke) }) == 1
                        ? before[0].width : 1
                    return Drawing.Stroke(points: stroke.points, color: stroke.color, width: width)
                }
            }
        }
        #expect(try caretaker.restore("d", as: Drawing.self) == reference, "batch \(batch)")
        #expect(try caretaker.store.verify().isOK)
    }

    /// The two releases restore, edit and save one snapshot in turn at random: each restores
    /// exactly what a reference holding the later release's whole note says — the earlier
    /// release's edits made on it, every value the later one added kept (`done` by item id).
    @Test(arguments: Soak.batches(usually: 3))
    func releasesSavingInTurnKeepEachOthersValues(batch: UInt64) throws {
        var random = SeededGenerator(seed: batch)
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        var reference = Self.saved
        var nextID = 4
        try caretaker.save(reference, as: "s")
        for step in 0..<40 {
            if Bool.random(using: &random) {
                var note = try #require(try caretaker.restore("s", as: Note.self))
                #expect(note == reference, "batch \(batch), step \(step)")
                note.color = ["red", "green", "blue"].randomElement(using: &random)!
                note.subtitle = Bool.random(using: &random) ? nil : "sub \(step)"
                note.meta.words = Int.random(in: 0..<100, using: &random)
                if !note.items.isEmpty {
                    note.items[Int.random(in: note.items.indices, using: &random)].done.toggle()
                    note.items[Int.random(in: note.items.indices, using: &random)].note =
                        Bool.random(using: &random) ? nil : "later \(step)"
                }
                if Bool.random(using: &random) {
                    note.items.insert(
                        .init(id: nextID, text: "item \(nextID)", done: Bool.random(using: &random)),
                        at: Int.random(in: 0...note.items.count, using: &random))
                    nextID += 1
                }
                try caretaker.save(note, as: "s", replacingExisting: true)
                reference = note
            } else {
                // The choices are drawn first: the same edit is made on the reference.
                let (rotation, removal, renamed) = (
                    Int.random(in: 0..<8, using: &random), Int.random(in: 0..<4, using: &random),
                    Int.random(in: 0..<4, using: &random)
                )
                let edit: SnapshotsEarlierRelease.Edit = { title, author, items in
                    title = "title \(step)"
                    if removal == 0 { author += "." }
                    guard !items.isEmpty else { return }
                    items = Array(items[(rotation % items.count)...] + items[..<(rotation % items.count)])
                    items[renamed % items.count].text += " \(step)"
                    // A note set to `nil` is left out of the JSON: it must stay `nil`.
                    items[rotation % items.count].note = removal == 2 ? nil : "note \(step)"
                    if removal == 1 { items.remove(at: renamed % items.count) }
                }
                try SnapshotsEarlierRelease.edit("s", in: caretaker, edit)
                var items = reference.items.map { (id: $0.id, text: $0.text, note: $0.note) }
                edit(&reference.title, &reference.meta.author, &items)
                let done = Dictionary(uniqueKeysWithValues: reference.items.map { ($0.id, $0.done) })
                reference.items = items.map {
                    Note.Item(id: $0.id, text: $0.text, done: done[$0.id]!, note: $0.note)
                }
            }
        }
        #expect(try caretaker.restore("s", as: Note.self) == reference)
        #expect(try caretaker.store.verify().isOK)
    }

    /// A replaced snapshot is read through its model only when its keys' places are not all
    /// among the new one's: array elements are taken as one, and text in values is no key.
    @Test func keyPlacesTakeAnArraysElementsAsOneAndSkipText() throws {
        var places = KeyPlaces()
        let read = [
            #"{"items":[{"id":1,"done":true},{"id":2}],"t":"{\"x\":[1]}"}"#,
            #"{"items":[{"id":2},{"done":false,"id":3}]}"#, #"{"items":[{"id":1}],"done":true}"#,
            #"{"a":[1,2"#,
        ].map { places.places(in: $0, under: "p") }
        let (earlier, fewer, other) = (try #require(read[0]), try #require(read[1]), try #require(read[2]))
        #expect(earlier.count == 4)  // items, items[].id, items[].done, t
        #expect(fewer.count == 3)
        #expect(fewer.isSubset(of: earlier))
        #expect(!other.isSubset(of: earlier))  // "done" outside the items
        #expect(read[3] == nil)
    }

    /// An optional set to `nil` is left out of the JSON, as a property the type lacks is: the
    /// model reads it, so it is not kept — under its own key or one its `CodingKeys` give.
    @Test func anOptionalSetToNilStaysNil() throws {
        struct Card: Codable, Equatable {
            var title: String
            var subtitle: String?
            var note: String?

            enum CodingKeys: String, CodingKey {
                case title, subtitle
                case note = "n"
            }
        }
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Card(title: "a", subtitle: "b", note: "c"), as: "card")
        try caretaker.save(Card(title: "a2", subtitle: nil, note: nil), as: "card", replacingExisting: true)

        #expect(try caretaker.restore("card", as: Card.self) == Card(title: "a2", subtitle: nil, note: nil))
        #expect(try caretaker.properties(of: Card.self, named: "card")?.names == ["title"])
        #expect(try caretaker.store.verify().isOK)
    }

    struct WithLegacy: Codable {
        var title: String
        var legacy: Int
    }

    /// Today's type, whose snapshots `WithLegacy` saved; `declaresRemoval` declares `legacy`
    /// gone for good.
    struct WithoutLegacy: Versionable, Codable, SnapshotTypeEvolution {
        var title: String
        static let formerTypeNames = [Caretaker.stableName(of: WithLegacy.self)]
        nonisolated(unsafe) static var declaresRemoval = false
        static var propertyEvolution: [PropertyEvolution] { declaresRemoval ? [.removed("legacy")] : [] }
    }

    @Test(.serialized, arguments: [false, true])
    func aPropertyDeclaredRemovedIsLetGo(declared: Bool) throws {
        WithoutLegacy.declaresRemoval = declared
        defer { WithoutLegacy.declaresRemoval = false }
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(WithLegacy(title: "a", legacy: 7), as: "s")
        try caretaker.save(WithoutLegacy(title: "b"), as: "s", replacingExisting: true)

        let properties = try #require(try caretaker.properties(of: WithoutLegacy.self, named: "s"))
        #expect(properties.names == (declared ? ["title"] : ["legacy", "title"]))
        #expect(try caretaker.restore("s", as: WithoutLegacy.self)?.title == "b")
    }

    /// A property the earlier release's class lacks (`rank3`), and a member its property's
    /// type lacks (`settings.size`).
    @Test func aRestorableObjectKeepsWhatAnEarlierReleaseLacks() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        let favorites = Favorites()
        favorites.rank3 = "Fig"
        favorites.settings.size = 16
        try favorites.takeSnapshot(withKey: "k", in: caretaker)

        try SnapshotsEarlierRelease.editFavorites("k", rank1: "Kiwi", theme: "dark", in: caretaker)

        let restored = Favorites()
        restored.rank3 = "Plum"
        restored.settings.size = 10
        try restored.restore(withKey: "k", from: caretaker)
        #expect([restored.rank1, restored.rank2, restored.rank3] == ["Kiwi", "Banana", "Fig"])
        #expect(restored.settings == .init(theme: "dark", size: 16))
        #expect(try caretaker.store.verify().isOK)
    }

    /// A class that renamed `rank2` to `second` and removed `rank3`, whose snapshots
    /// `Favorites` took.
    final class RenamedFavorites: RestorableObject, SnapshotTypeEvolution {
        @Restorable var rank1 = "Apple"
        @Restorable var second = "Banana"
        static let formerTypeNames = [Caretaker.stableName(of: Favorites.self)]
        static let propertyEvolution: [PropertyEvolution] = [
            .renamed("rank2", to: "second"), .removed("rank3"),
        ]
    }

    @Test func aRestorableObjectLetsItsRenamedAndRemovedPropertiesGo() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        let favorites = Favorites()
        favorites.rank2 = "Fig"
        try favorites.takeSnapshot(withKey: "k", in: caretaker)

        let renamed = RenamedFavorites()
        try renamed.restore(withKey: "k", from: caretaker)
        #expect([renamed.rank1, renamed.second] == ["Apple", "Fig"])
        try renamed.takeSnapshot(withKey: "k", in: caretaker)

        // `settings`, which it lacks and does not declare removed, is kept.
        #expect(
            try renamed.properties(withKey: "k", from: caretaker).names == ["rank1", "second", "settings"])
    }

    /// A replaced snapshot that no longer reads keeps nothing, and replacing it still works:
    /// that is how an app repairs one.
    @Test func aDamagedSnapshotIsReplacedWhole() throws {
        let caretaker = Caretaker(store: try KeepsakeStore(path: path))
        try caretaker.save(Self.saved, as: "s")
        let file = try SQLiteConnection(path: path)
        try file.execute("UPDATE snapshot_property SET value = '\"green\"' WHERE path = 'color'")

        // The earlier release cannot restore it either: it saves a new note over it.
        try SnapshotsEarlierRelease.saveNote(titled: "New", as: "s", in: caretaker)

        #expect(
            throws: KeepsakeError.undecodableSnapshot(
                name: "s", path: [.property("color")],
                reason: """
                    no value for "color"; if "color" was added since the snapshot was saved, restore it with \
                    fillingMissingFrom: a value of today's type to take it from (or conform the type that \
                    declares it to DecodingDefaults, or make it optional)
                    """)
        ) { try caretaker.restore("s", as: Note.self) }
        #expect(try caretaker.store.verify().isOK)
    }
}

/// The note as the later release has it.
private struct Note: Codable, Equatable {
    struct Meta: Codable, Equatable {
        var author: String
        var words: Int
    }

    struct Item: Codable, Equatable, Identifiable {
        var id: Int
        var text: String
        var done: Bool
        var note: String? = nil
    }

    var title: String
    var subtitle: String?
    var color: String
    var attachment: Data
    var meta: Meta
    var items: [Item]
}

/// A shelf as the later release has it: books with a `read` flag, tracks with `plays`.
private struct Shelf: Codable, Equatable {
    struct Book: Codable, Equatable, Identifiable {
        var id: String
        var title: String
        var read: Bool

        enum CodingKeys: String, CodingKey {
            case id = "isbn"
            case title, read
        }
    }

    var books: [Book]
    var tracks: [Track]

    enum CodingKeys: String, CodingKey {
        case books
        case tracks = "music"
    }
}

/// A drawing as the later release has it: its strokes, which have no id, have a `width`.
private struct Drawing: Codable, Equatable {
    struct Stroke: Codable, Equatable, DecodingDefaults {
        var points: [Int]
        var color: String
        var width: Double

        static var decodingDefaults: Stroke { Stroke(points: [], color: "black", width: 1) }
    }

    var strokes: [Stroke]
}

/// A sketch as the later release has it: its lines' points have a `pressure`, their styles a
/// `dash`.
private struct Sketch: Codable, Equatable {
    struct Point: Codable, Equatable, DecodingDefaults {
        var x: Int
        var y: Int
        var pressure: Double

        static var decodingDefaults: Point { Point(x: 0, y: 0, pressure: 0.5) }
    }

    struct Style: Codable, Equatable, DecodingDefaults {
        var color: String
        var dash: Bool

        static var decodingDefaults: Style { Style(color: "black", dash: false) }
    }

    struct Line: Codable, Equatable {
        var points: [Point]
        var style: Style
    }

    var lines: [Line]
}

/// A board as the later release has it: its cells have a `note`.
private struct Board: Codable, Equatable {
    struct Cell: Codable, Equatable, DecodingDefaults {
        var mark: String
        var note: String

        static var decodingDefaults: Cell { Cell(mark: "", note: "?") }
    }

    var rows: [[Cell]]
}

/// Labels as the later release has them: each tag has a `color`.
private struct Labels: Codable, Equatable {
    struct Tag: Codable, Hashable, DecodingDefaults {
        var name: String
        var color: String

        static var decodingDefaults: Tag { Tag(name: "", color: "gray") }
    }

    var tags: Set<Tag>
}

/// A track coded by hand, its id under a key of another name.
private struct Track: Codable, Equatable, Identifiable {
    var id: Int
    var title: String
    var plays: Int

    private enum Keys: String, CodingKey { case ident, title, plays }

    init(id: Int, title: String, plays: Int) { (self.id, self.title, self.plays) = (id, title, plays) }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(Int.self, forKey: .ident)
        title = try container.decode(String.self, forKey: .title)
        plays = try container.decode(Int.self, forKey: .plays)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .ident)
        try container.encode(title, forKey: .title)
        try container.encode(plays, forKey: .plays)
    }
}

/// The favorites as the later release has them.
private final class Favorites: RestorableObject {
    struct Settings: Codable, Equatable {
        var theme = "light"
        var size = 12
    }

    @Restorable var rank1 = "Apple"
    @Restorable var rank2 = "Banana"
    @Restorable var rank3 = "Cherry"
    @Restorable var settings = Settings()
}
