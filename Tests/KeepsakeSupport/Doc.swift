public import Foundation
import Keepsake
public import Revertible
public import TestSupport

/// A document with every kind of tracked value.
public struct Doc: Versionable, Equatable, Codable, Sendable {
    public struct Item: Identifiable, Versionable, Equatable, Codable, Sendable {
        public let id: Int
        public var title: String
        public var done: Bool
        /// An enum with payloads, diffed by payload with no code.
        public var shape: Shape = .dot

        public init(id: Int, title: String, done: Bool, shape: Shape = .dot) {
            self.id = id
            self.title = title
            self.done = done
            self.shape = shape
        }
    }

    public enum Status: String, Codable, Sendable, VersionableLeaf { case draft, review, final }

    public var title: String
    public var status: Status
    public var items: [Item]
    public var blob: Data
    public var scores: [String: Int]
    public var note: String?

    public init(
        title: String, status: Status, items: [Item], blob: Data, scores: [String: Int], note: String?
    ) {
        self.title = title
        self.status = status
        self.items = items
        self.blob = blob
        self.scores = scores
        self.note = note
    }

    public static let empty = Doc(title: "", status: .draft, items: [], blob: Data(), scores: [:], note: nil)

    /// Equal with the same bytes of `title` and of each item's title and shape's text, which
    /// the random edits set to text in either Unicode normalization: `String`'s `==` takes both as equal, a
    /// history must tell them apart (every property compared; a property added must be added
    /// here).
    public static func == (a: Doc, b: Doc) -> Bool {
        a.title.utf8.elementsEqual(b.title.utf8) && a.status == b.status && a.items == b.items
            && zip(a.items, b.items).allSatisfy {
                $0.title.utf8.elementsEqual($1.title.utf8) && $0.shape.textBytes == $1.shape.textBytes
            }
            && a.blob == b.blob && a.scores == b.scores && a.note == b.note
    }

    /// 1 MiB of data and 10,000 items: the benchmark's big document.
    public static func big() -> Doc {
        Doc(
            title: "Big", status: .draft,
            items: (0..<10_000).map { Item(id: $0, title: "Item \($0)", done: false) },
            blob: Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }), scores: [:], note: nil)
    }
}

/// Random edits of a ``Doc``, each of one kind of tracked value.
public enum DocEdits {
    /// Makes one random edit of `doc`.
    public static func edit(_ doc: inout Doc, using generator: inout SeededGenerator) {
        switch Int.random(in: 0..<9, using: &generator) {
        case 0:
            // "héllo" in both Unicode normalizations, short and over the 256 bytes a change
            // keeps whole: `==` takes each pair as equal, though their bytes differ.
            doc.title = [
                "", "a", "h\u{E9}llo", "he\u{301}llo", "Final", String(repeating: "long ", count: 80),
                String(repeating: "long ", count: 80) + "h\u{E9}llo",
                String(repeating: "long ", count: 80) + "he\u{301}llo",
            ].randomElement(using: &generator)!
        case 1: doc.status = [.draft, .review, .final].randomElement(using: &generator)!
        case 2:
            let id = Int.random(in: 0..<8, using: &generator)
            if !doc.items.contains(where: { $0.id == id }) {
                doc.items.insert(
                    .init(id: id, title: "item \(id)", done: false),
                    at: Int.random(in: 0...doc.items.count, using: &generator))
            } else {
                doc.items.removeAll { $0.id == id }
            }
        case 3:
            if !doc.items.isEmpty {
                let index = Int.random(in: 0..<doc.items.count, using: &generator)
                // Chosen by the id, drawing nothing more from the generator: the rich store's
                // walks keep their shape.
                if doc.items[index].id.isMultiple(of: 2) {
                    doc.items[index].done.toggle()
                    doc.items[index].title += "!"
                } else {
                    // Its "héllo" in the other Unicode normalization, or "héllo" added: the
                    // first alone leaves an item `==` finds equal to the one before.
                    doc.items[index].title = otherForm(of: doc.items[index].title)
                }
            }
        case 4:
            if doc.blob.count < 4096 || Bool.random(using: &generator) {
                doc.blob.append(
                    contentsOf: (0..<Int.random(in: 1...2000, using: &generator)).map { UInt8($0 % 256) })
            } else {
                doc.blob[doc.blob.startIndex + Int.random(in: 0..<doc.blob.count, using: &generator)] &+= 1
            }
        case 5:
            doc.scores[["a", "b"].randomElement(using: &generator)!] =
                Bool.random(using: &generator) ? nil : Int.random(in: 0..<3, using: &generator)
        case 6:
            doc.note =
                Bool.random(using: &generator) ? nil : "note \(Int.random(in: 0..<3, using: &generator))"
        case 7:
            if !doc.items.isEmpty {
                doc.items[Int.random(in: 0..<doc.items.count, using: &generator)].shape.edit(
                    using: &generator)
            }
        default:
            // Reorderings: all reversed, one item moved, all shuffled (with fewer than two
            // items, the title changed instead, so that every edit is a change).
            guard doc.items.count > 1 else {
                doc.title += "."
                break
            }
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: doc.items.reverse()
            case 1:
                let item = doc.items.remove(at: Int.random(in: 0..<doc.items.count, using: &generator))
                doc.items.insert(item, at: Int.random(in: 0...doc.items.count, using: &generator))
            default: doc.items.shuffle(using: &generator)
            }
        }
    }

    /// `title` with the "héllo" it ends with in the other Unicode normalization (bytes
    /// compared: `hasSuffix` takes both forms as one), or with " héllo" added.
    static func otherForm(of title: String) -> String {
        let (composed, decomposed) = ("h\u{E9}llo", "he\u{301}llo")
        for (form, other) in [(composed, decomposed), (decomposed, composed)]
        where title.utf8.reversed().starts(with: form.utf8.reversed()) {
            return String(decoding: title.utf8.dropLast(form.utf8.count), as: UTF8.self) + other
        }
        return title + " " + composed
    }

    /// A refusal that was not a step's wrong version, or an acceptance where a step changes
    /// the property.
    public struct UnexpectedUntrackedOutcome: Error, CustomStringConvertible {
        public let description: String
    }

    /// Makes a change without tracking through `controller` (a server's), to one property of
    /// `doc`, the value as the app reads it (the title, note or status), and checks the outcome
    /// against `model`: accepted only when no step changes that property, that is, when every
    /// version the model keeps holds one value there (then every version gets the new one);
    /// else refused with the wrong version of the step that changes it (durably, naming the
    /// version), and nothing changes. Half the time a property no step changes is picked, when
    /// one is left: most are changed.
    ///
    /// - Throws: What accepting it threw, or ``UnexpectedUntrackedOutcome``.
    public static func changeWithoutTracking<Root>(
        of doc: Doc, through controller: VersioningController<Root, Doc, ReversionError>,
        model: inout FullCopyHistory<Doc>, named name: String, using generator: inout SeededGenerator
    ) throws {
        var doc = doc
        let versions = model.versions
        // Text by its bytes: a step changing the title only in its Unicode normalization
        // changes it (a `Set` of `String`s holds the two forms as one).
        let distinct = [
            Set(versions.map { Array($0.title.utf8) }).count,
            Set(versions.map { $0.note.map { Array($0.utf8) } }).count,
            Set(versions.map(\.status)).count,
        ]
        let unchanged = distinct.indices.filter { distinct[$0] == 1 }
        let property =
            Bool.random(using: &generator) && !unchanged.isEmpty
            ? unchanged.randomElement(using: &generator)! : Int.random(in: 0..<3, using: &generator)
        let change: (inout Doc) -> Void
        switch property {
        case 0: change = { $0.title = name }
        case 1: change = { $0.note = name }
        default:
            let status = [Doc.Status.draft, .review, .final].filter { $0 != doc.status }.randomElement(
                using: &generator)!
            change = { $0.status = status }
        }
        change(&doc)
        guard distinct[property] > 1 else {
            try controller.setWithoutTracking(doc)
            model.changeEveryVersion(change)
            return
        }
        do {
            try controller.setWithoutTracking(doc)
        } catch {
            var refusal = error
            if case .storage(let failure) = error,
                case .reversion(_, _, let stepError)? = failure.error as? KeepsakeError
            {
                refusal = stepError
            }
            guard case .wrongVersion = refusal else {
                throw UnexpectedUntrackedOutcome(description: "refused, but not as a wrong version: \(error)")
            }
            return
        }
        throw UnexpectedUntrackedOutcome(description: "accepted, though a step changes the property")
    }
}
