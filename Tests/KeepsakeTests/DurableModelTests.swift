import Foundation
import TestSupport
import Testing

@testable import Keepsake

@MainActor @Suite struct DurableModelTests {
    let directory = TemporaryDirectory()

    @Test(arguments: 0..<2)
    func randomOperationsWithReopensMatchTheFullCopyModel(batch: UInt64) throws {
        let seed = 0xD15C_0000 + batch
        var generator = SeededGenerator(seed: seed)
        let path = directory.path("model-\(batch).keepsake")
        func open() throws -> KeepsakeHistory<Doc> {
            try KeepsakeStore(path: path).history("model", initialValue: Doc.empty, maximumVersions: nil)
        }
        var history = try open()
        var model = FullCopyHistory(Doc.empty, same: ==)
        let tagNames = ["a", "b", "c"]
        for step in 0..<1_500 {
            let operation = Int.random(in: 0..<13, using: &generator)
            switch operation {
            case 0...3:
                var doc = history.value
                DocEdits.edit(&doc, using: &generator)
                let tag =
                    Int.random(in: 0..<6, using: &generator) == 0
                    ? tagNames.randomElement(using: &generator) : nil
                try history.append(doc, tag: tag)
                model.append(doc, tag: tag)
            case 4:
                try history.undo()
                model.undo()
            case 5:
                try history.redo()
                model.redo()
            case 6:
                let tag = tagNames.randomElement(using: &generator)!
                try history.tag(tag)
                model.tag(tag)
            case 7:
                let tag = tagNames.randomElement(using: &generator)!
                try history.undo(to: tag)
                model.undo(to: tag)
            case 8:
                let tag = tagNames.randomElement(using: &generator)!
                try history.redo(to: tag)
                model.redo(to: tag)
            case 9:
                if Bool.random(using: &generator) {
                    try history.pushNewScope()
                    model.push()
                } else {
                    try history.popCurrentScope()
                    model.pop()
                }
            case 10:
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    try history.undoAndPopCurrentScope()
                    model.undoAndPop()
                }
            case 11:
                var edits = generator
                let value = try history.setWithTransaction { doc in
                    for _ in 0..<3 { DocEdits.edit(&doc, using: &edits) }
                }
                generator = edits
                model.append(value, tag: nil)
            default:
                history = try open()
            }
            let context = "seed \(seed) step \(step) operation \(operation)"
            try #require(history.value == model.current, "\(context): value")
            try #require(history.hasUndo == model.hasUndo, "\(context): hasUndo")
            try #require(history.hasRedo == model.hasRedo, "\(context): hasRedo")
            try #require(history.scopeLevel == model.level, "\(context): scopeLevel")
            let tags = try history.tags()
            try #require(tags.undo == model.tags.undo, "\(context): undo tags")
            try #require(tags.redo == model.tags.redo, "\(context): redo tags")
            if step % 250 == 0 { try history.checkInvariants() }
        }
        try history.checkInvariants()
        try open().checkInvariants()
    }
}
