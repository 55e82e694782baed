import Foundation
import Revertible
import Testing

/// The simplest possible history: every version kept whole. The controller must agree with it
/// after every operation.
struct FullCopyHistory {
    struct Scope {
        var versions: [(value: Document, tag: String?)]
        var position: Int
    }

    var scopes: [Scope]

    init(_ value: Document) { scopes = [Scope(versions: [(value, nil)], position: 0)] }

    var level: Int { scopes.count - 1 }
    var current: Document { scopes[level].versions[scopes[level].position].value }
    var hasUndo: Bool { scopes[level].position > 0 }
    var hasRedo: Bool { scopes[level].position < scopes[level].versions.count - 1 }
    var tags: (undo: [String?], redo: [String?]) {
        let scope = scopes[level]
        return (
            scope.versions[...scope.position].map(\.tag), scope.versions[(scope.position + 1)...].map(\.tag)
        )
    }

    mutating func append(_ value: Document, tag: String?) {
        if RandomEdits.same(value, current) {
            if let tag { self.tag(tag) }
            return
        }
        scopes[level].versions.removeSubrange((scopes[level].position + 1)...)
        scopes[level].versions.append((value, tag))
        scopes[level].position += 1
    }

    mutating func tag(_ tag: String) { scopes[level].versions[scopes[level].position].tag = tag }
    mutating func undo() { if hasUndo { scopes[level].position -= 1 } }
    mutating func redo() { if hasRedo { scopes[level].position += 1 } }

    mutating func undo(to tag: String) {
        if let index = scopes[level].versions[...scopes[level].position].lastIndex(where: { $0.tag == tag }) {
            scopes[level].position = index
        }
    }

    mutating func redo(to tag: String) {
        let scope = scopes[level]
        if let index = scope.versions[(scope.position + 1)...].firstIndex(where: { $0.tag == tag }) {
            scopes[level].position = index
        }
    }

    mutating func push() { scopes.append(Scope(versions: [(current, nil)], position: 0)) }

    mutating func pop() {
        guard level > 0 else { return }
        let scope = scopes.removeLast()
        let value = scope.versions[scope.position].value
        if !RandomEdits.same(value, current) {
            append(value, tag: scope.position > 0 ? scope.versions[scope.position].tag : nil)
        }
    }

    mutating func undoAndPop() {
        guard level > 0 else { return }
        scopes.removeLast()
    }
}

@MainActor @Suite struct ControllerModelTests {
    @Test(arguments: 0..<4)
    func thousandsOfRandomOperationsMatchTheFullCopyModel(batch: UInt64) throws {
        let seed = 0xC0DE_0000 + batch
        var generator = SeededGenerator(seed: seed)
        let controller = VersioningController(Document.empty, maximumVersions: nil)
        var model = FullCopyHistory(.empty)
        var working = Document.empty
        let tagNames = ["a", "b", "c"]
        for step in 0..<2_000 {
            let operation = Int.random(in: 0..<12, using: &generator)
            switch operation {
            case 0...3:
                RandomEdits.edit(&working, using: &generator)
                let tag =
                    Int.random(in: 0..<6, using: &generator) == 0
                    ? tagNames.randomElement(using: &generator) : nil
                controller.append(working, tag: tag)
                model.append(working, tag: tag)
            case 4:
                working = try controller.undo()
                model.undo()
            case 5:
                working = try controller.redo()
                model.redo()
            case 6:
                let tag = tagNames.randomElement(using: &generator)!
                controller.tag(tag)
                model.tag(tag)
            case 7:
                let tag = tagNames.randomElement(using: &generator)!
                working = try controller.undo(to: tag)
                model.undo(to: tag)
            case 8:
                let tag = tagNames.randomElement(using: &generator)!
                working = try controller.redo(to: tag)
                model.redo(to: tag)
            case 9:
                if Bool.random(using: &generator) {
                    controller.pushNewScope()
                    model.push()
                } else {
                    controller.popCurrentScope()
                    model.pop()
                }
                working = controller.value
            case 10:
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    working = controller.undoAndPopCurrentScope()
                    model.undoAndPop()
                }
            default:
                var edits = generator
                working = controller.setWithTransaction { value in
                    for _ in 0..<3 { RandomEdits.edit(&value, using: &edits) }
                }
                generator = edits
                model.append(working, tag: nil)
            }
            let context = "seed \(seed) step \(step) operation \(operation)"
            try #require(RandomEdits.same(controller.value, model.current), "\(context): value")
            try #require(RandomEdits.same(working, model.current), "\(context): returned value")
            try #require(controller.hasUndo == model.hasUndo, "\(context): hasUndo")
            try #require(controller.hasRedo == model.hasRedo, "\(context): hasRedo")
            try #require(controller.scopeLevel == model.level, "\(context): scopeLevel")
            let tags = controller.tags()
            try #require(tags.undo.map { $0?.base as? String } == model.tags.undo, "\(context): undo tags")
            try #require(tags.redo.map { $0?.base as? String } == model.tags.redo, "\(context): redo tags")
        }
        try controller.versionHistory.checkInvariants()
    }
}
