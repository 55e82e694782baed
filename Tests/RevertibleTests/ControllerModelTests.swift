import Foundation
import Revertible
import TestSupport
import Testing

@MainActor @Suite struct ControllerModelTests {
    @Test(arguments: 0..<4)
    func thousandsOfRandomOperationsMatchTheFullCopyModel(batch: UInt64) throws {
        let seed = 0xC0DE_0000 + batch
        var generator = SeededGenerator(seed: seed)
        let controller = VersioningController(Document.empty, maximumVersions: nil)
        var model = FullCopyHistory(Document.empty, same: RandomEdits.same)
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
