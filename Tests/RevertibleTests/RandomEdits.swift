import Foundation
import Revertible
import TestSupport

/// Random edits to a ``Document``, shared by the randomized tests.
enum RandomEdits {
    /// Text of every kind: empty, short, over the 256 bytes a change keeps whole, and the same
    /// text in both Unicode normalizations ("é" as one scalar, or "e" and a combining accent),
    /// which `==` takes as equal though their bytes differ.
    static let words = [
        "", "a", "h\u{E9}llo", "he\u{301}llo", "wörld 👋🏽", "x", "same",
        String(repeating: "long text ", count: 40),
        String(repeating: "long text ", count: 40) + "caf\u{E9}",
        String(repeating: "long text ", count: 40) + "cafe\u{301}",
    ]

    static func edit(_ document: inout Document, using generator: inout SeededGenerator) {
        switch Int.random(in: 0..<18, using: &generator) {
        case 0: document.title = words.randomElement(using: &generator)!
        case 1: document.title.insert(contentsOf: "+", at: document.title.startIndex)
        case 2: document.count = Int.random(in: -3...3, using: &generator)
        case 3: document.ratio = [0, 1.5, -0.25, .nan, .infinity].randomElement(using: &generator)!
        case 4: document.color = [.red, .green, .blue].randomElement(using: &generator)!
        case 5: document.note = Bool.random(using: &generator) ? nil : words.randomElement(using: &generator)!
        case 6:
            if document.blob.isEmpty || Bool.random(using: &generator) {
                document.blob.append(
                    contentsOf: (0..<Int.random(in: 1...300, using: &generator)).map { UInt8($0 % 251) })
            } else {
                document.blob[
                    document.blob.startIndex + Int.random(in: 0..<document.blob.count, using: &generator)] &+=
                    1
            }
        case 7:
            // Now and then an id an item already has: an app's bug (ids counted from zero again
            // in a new process), which must not make an undo give a wrong value.
            let id = Int.random(in: 0..<12, using: &generator)
            let shared = Int.random(in: 0..<4, using: &generator) == 0
            if shared || !document.items.contains(where: { $0.id == id }) {
                let at = Int.random(in: 0...document.items.count, using: &generator)
                document.items.insert(.init(id: id, name: "item \(id)", done: false, tags: []), at: at)
            }
        case 8:
            if !document.items.isEmpty {
                document.items.remove(at: Int.random(in: 0..<document.items.count, using: &generator))
            }
        case 9:
            if !document.items.isEmpty {
                let i = Int.random(in: 0..<document.items.count, using: &generator)
                document.items[i].name = words.randomElement(using: &generator)!
                // Half the time the name alone: in the other Unicode normalization, an item
                // `==` finds equal to the one before.
                if Bool.random(using: &generator) { document.items[i].done.toggle() }
            }
        case 10:
            // Reorderings: the ends swapped, a run reversed, one item moved, all shuffled.
            let count = document.items.count
            guard count > 1 else { break }
            let (a, b) = (
                Int.random(in: 0..<count, using: &generator), Int.random(in: 0..<count, using: &generator)
            )
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: document.items.swapAt(0, count - 1)
            case 1: document.items[min(a, b)...max(a, b)].reverse()
            case 2: document.items.insert(document.items.remove(at: a), at: b)
            default: document.items.shuffle(using: &generator)
            }
        case 11:
            if !document.items.isEmpty {
                let i = Int.random(in: 0..<document.items.count, using: &generator)
                document.items[i].tags.formSymmetricDifference([words.randomElement(using: &generator)!])
            }
        case 12:
            if Bool.random(using: &generator) || document.numbers.isEmpty {
                document.numbers.insert(
                    Int.random(in: 0..<5, using: &generator),
                    at: Int.random(in: 0...document.numbers.count, using: &generator))
            } else {
                document.numbers[Int.random(in: 0..<document.numbers.count, using: &generator)] += 1
            }
        case 13:
            let key = ["a", "b", "c"].randomElement(using: &generator)!
            document.scores[key] =
                Bool.random(using: &generator) ? nil : Int.random(in: 0..<3, using: &generator)
        case 14:
            let key = ["p", "q"].randomElement(using: &generator)!
            if document.nested[key] == nil {
                document.nested[key] = .init(id: 99, name: key, done: false, tags: [])
            } else if Bool.random(using: &generator) {
                if Bool.random(using: &generator) {
                    document.nested[key]?.name += "!"
                } else {
                    document.nested[key]?.name = words.randomElement(using: &generator)!
                }
            } else {
                document.nested[key] = nil
            }
        case 15:
            if !document.items.isEmpty {
                document.items[Int.random(in: 0..<document.items.count, using: &generator)].shape.edit(
                    using: &generator)
            }
        case 16:
            switch (document.tint, Int.random(in: 0..<3, using: &generator)) {
            case (.rgb(let r, let g, let b), 0): document.tint = .rgb(r: r, g: g + 1, b: b)
            case (.rgb(let r, let g, let b), 1): document.tint = .rgb(r: r + 1, g: g, b: b - 1)
            case (.named(let name), 0): document.tint = .named(name + "!")
            case (.named(let name), 1): document.tint = .named(Shape.otherForm(of: name))
            default:
                document.tint = [.none, .rgb(r: 0, g: 0, b: 0), .named("h\u{E9}llo teal")].randomElement(
                    using: &generator)!
            }
        default:
            document.lastOpened = Date(
                timeIntervalSince1970: Double(Int.random(in: 0..<100, using: &generator)))
        }
    }

    /// Walks `steps` random steps from ``Document/empty``, each of 1 to `maximumEdits` random
    /// edits, calling `body` with the step's number and the document before and after it.
    static func walk(
        seed: UInt64, steps: Int, maximumEdits: Int,
        _ body: (_ step: Int, _ original: Document, _ edited: Document) throws -> Void
    ) rethrows {
        var generator = SeededGenerator(seed: seed)
        var document = Document.empty
        for step in 0..<steps {
            let original = document
            for _ in 0..<Int.random(in: 1...maximumEdits, using: &generator) {
                edit(&document, using: &generator)
            }
            try body(step, original, document)
        }
    }

    /// Equality that treats NaN as equal to itself, and ignores what is not tracked.
    static func same(_ a: Document, _ b: Document) -> Bool {
        var a = a
        var b = b
        if a.ratio.isNaN && b.ratio.isNaN { (a.ratio, b.ratio) = (0, 0) }
        a.lastOpened = b.lastOpened
        return a == b && texts(of: a) == texts(of: b)
    }

    /// The bytes of a document's text: `==` takes text in either normalization as equal.
    static func texts(of document: Document) -> [[UInt8]] {
        [Array(document.title.utf8), Array((document.note ?? "").utf8)]
            + document.items.flatMap { [Array($0.name.utf8)] + $0.shape.textBytes }
            + [document.tint].compactMap { if case .named(let name) = $0 { Array(name.utf8) } else { nil } }
            + document.nested.sorted { $0.key < $1.key }.map { Array($0.value.name.utf8) }
    }
}
