import Foundation
import Testing

@testable import Keepsake

// The earlier release of the app in SnapshotsAcrossReleasesTests: its `Note` and `Favorites`
// are private to this file, as the later release's are to that one, so both are named
// `KeepsakeTests.(private).Note` (``Caretaker/stableName(of:)``) and share a namespace, as
// one type of one app does across releases.

/// The earlier release: restores a snapshot, edits it and saves it again over itself.
enum SnapshotsEarlierRelease {
    /// An edit of the note's title, author, and items (each an id, a text and an optional
    /// note) as the earlier release has them. It may reorder and delete items, not insert them.
    typealias Edit = (
        _ title: inout String, _ author: inout String, _ items: inout [(id: Int, text: String, note: String?)]
    )
        ->
        Void

    /// Restores snapshot `name`, makes `edit`, and saves it again under `name`.
    static func edit(_ name: String, in caretaker: Caretaker, _ edit: Edit) throws {
        try resave(name, as: Note.self, in: caretaker) { note in
            var items = note.items.map { (id: $0.id, text: $0.text, note: $0.note) }
            edit(&note.title, &note.meta.author, &items)
            note.items = items.map { Note.Item(id: $0.id, text: $0.text, note: $0.note) }
        }
    }

    /// Restores the items saved whole as snapshot `name`, reverses them, appends `!` to the
    /// first one's text, and saves them again under `name`.
    static func editItems(_ name: String, in caretaker: Caretaker) throws {
        try resave(name, as: [Note.Item].self, in: caretaker) { items in
            items.reverse()
            if !items.isEmpty { items[0].text += "!" }
        }
    }

    /// Restores the shelf in snapshot `name`, reverses its books and tracks, deletes book
    /// `"b2"`, appends `!` to the first book's and track's titles, and saves it again under
    /// `name`.
    static func editShelf(_ name: String, in caretaker: Caretaker) throws {
        try resave(name, as: Shelf.self, in: caretaker) { shelf in
            shelf.books.reverse()
            shelf.books.removeAll { $0.id == "b2" }
            shelf.books[0].title += "!"
            shelf.tracks.reverse()
            shelf.tracks[0].title += "!"
        }
    }

    /// Restores the books saved whole as snapshot `name`, reverses them, and saves them again
    /// under `name`.
    static func editBooks(_ name: String, in caretaker: Caretaker) throws {
        try resave(name, as: [Shelf.Book].self, in: caretaker) { $0.reverse() }
    }

    /// Restores the drawing in snapshot `name`, reverses its strokes, makes the blue one of
    /// one point green, adds a red one, and saves it again under `name`.
    static func editDrawing(_ name: String, in caretaker: Caretaker) throws {
        try editDrawing(name, in: caretaker) { strokes in
            strokes.reverse()
            for index in strokes.indices where strokes[index].points == [3] { strokes[index].color = "green" }
            strokes.append((points: [9], color: "red"))
        }
    }

    /// Restores the drawing in snapshot `name`, makes `edit` on its strokes (points and a
    /// color each, as the earlier release has them), and saves it again under `name`.
    static func editDrawing(
        _ name: String, in caretaker: Caretaker, _ edit: (inout [(points: [Int], color: String)]) -> Void
    ) throws {
        try resave(name, as: Drawing.self, in: caretaker) { drawing in
            var strokes = drawing.strokes.map { (points: $0.points, color: $0.color) }
            edit(&strokes)
            drawing.strokes = strokes.map { Drawing.Stroke(points: $0.points, color: $0.color) }
        }
    }

    /// Restores the sketch in snapshot `name`, reverses its lines, makes the first one green,
    /// adds a gray one, and saves it again under `name`.
    static func editSketch(_ name: String, in caretaker: Caretaker) throws {
        try resave(name, as: Sketch.self, in: caretaker) { sketch in
            sketch.lines.reverse()
            sketch.lines[0].style.color = "green"
            sketch.lines.append(.init(points: [.init(x: 9, y: 9)], style: .init(color: "gray")))
        }
    }

    /// Restores the board in snapshot `name`, reverses its rows, marks the last cell of the
    /// second `x`, adds a row of one empty cell, and saves it again under `name`.
    static func editBoard(_ name: String, in caretaker: Caretaker) throws {
        try resave(name, as: Board.self, in: caretaker) { board in
            board.rows.reverse()
            board.rows[1][1].mark = "x"
            board.rows.append([.init(mark: "")])
        }
    }

    /// Restores the labels in snapshot `name`, removes tag `b`, adds tag `new`, and saves them
    /// again under `name`.
    static func editLabels(_ name: String, in caretaker: Caretaker) throws {
        try resave(name, as: Labels.self, in: caretaker) { labels in
            labels.tags.remove(.init(name: "b"))
            labels.tags.insert(.init(name: "new"))
        }
    }

    /// Restores snapshot `name` as the earlier release's `T`, makes `edit` on it, and saves it
    /// again under `name`, as the earlier release does.
    private static func resave<T: Codable>(
        _ name: String, as _: T.Type, in caretaker: Caretaker, _ edit: (inout T) -> Void
    ) throws {
        var value = try #require(try caretaker.restore(name, as: T.self))
        edit(&value)
        try caretaker.save(value, as: name, replacingExisting: true)
    }

    /// Saves a note titled `title`, by no one and without items, under `name`, replacing the
    /// snapshot there without reading it.
    static func saveNote(titled title: String, as name: String, in caretaker: Caretaker) throws {
        try caretaker.save(
            Note(title: title, meta: .init(author: ""), items: []), as: name, replacingExisting: true)
    }

    /// Restores the favorites in snapshot `key`, changes the first rank and the theme, and
    /// takes the snapshot again.
    static func editFavorites(_ key: String, rank1: String, theme: String, in caretaker: Caretaker) throws {
        let favorites = Favorites()
        try favorites.restore(withKey: key, from: caretaker)
        favorites.rank1 = rank1
        favorites.settings.theme = theme
        try favorites.takeSnapshot(withKey: key, in: caretaker)
    }
}

/// The note as the earlier release has it: no color, no item flags, no meta's `words`.
private struct Note: Codable {
    struct Meta: Codable {
        var author: String
    }

    struct Item: Codable, Identifiable {
        var id: Int
        var text: String
        var note: String?
    }

    var title: String
    var meta: Meta
    var items: [Item]
}

/// The shelf as the earlier release has it: no book's `read`, no track's `plays`.
private struct Shelf: Codable {
    struct Book: Codable, Identifiable {
        var id: String
        var title: String

        enum CodingKeys: String, CodingKey {
            case id = "isbn"
            case title
        }
    }

    var books: [Book]
    var tracks: [Track]

    enum CodingKeys: String, CodingKey {
        case books
        case tracks = "music"
    }
}

/// The drawing as the earlier release has it: strokes without a `width`.
private struct Drawing: Codable {
    struct Stroke: Codable {
        var points: [Int]
        var color: String
    }

    var strokes: [Stroke]
}

/// The sketch as the earlier release has it: points without a `pressure`, styles without a
/// `dash`.
private struct Sketch: Codable {
    struct Point: Codable {
        var x: Int
        var y: Int
    }

    struct Style: Codable {
        var color: String
    }

    struct Line: Codable {
        var points: [Point]
        var style: Style
    }

    var lines: [Line]
}

/// The board as the earlier release has it: cells without a `note`.
private struct Board: Codable {
    struct Cell: Codable {
        var mark: String
    }

    var rows: [[Cell]]
}

/// The labels as the earlier release has them: tags without a `color`.
private struct Labels: Codable {
    struct Tag: Codable, Hashable {
        var name: String
    }

    var tags: Set<Tag>
}

/// A track coded by hand, its id under a key of another name.
private struct Track: Codable, Identifiable {
    var id: Int
    var title: String

    private enum Keys: String, CodingKey { case ident, title }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(Int.self, forKey: .ident)
        title = try container.decode(String.self, forKey: .title)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .ident)
        try container.encode(title, forKey: .title)
    }
}

/// The favorites as the earlier release has them: no `rank3`, and settings without a `size`.
private final class Favorites: RestorableObject {
    struct Settings: Codable {
        var theme = "light"
    }

    @Restorable var rank1 = "Apple"
    @Restorable var rank2 = "Banana"
    @Restorable var settings = Settings()
}
