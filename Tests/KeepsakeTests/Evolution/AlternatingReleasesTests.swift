import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// One store opened in turn by a later release of an app and by an earlier one (a document
/// synced between two devices), each editing, undoing and redoing, closing the document or
/// not, against a full copy of every version as the later release sees it: whatever the
/// earlier release does, the later one finds its own properties' values, at every version.
@MainActor @Suite struct AlternatingReleasesTests {
    let directory = TemporaryDirectory()

    /// An edit either release can make, applied to each one's model alike.
    enum SharedEdit {
        case title(String)
        case note(String)
        case renameTag(Int, String)
        case appendTag(Int)

        func apply(to doc: inout LaterApp.Doc) {
            switch self {
            case .title(let title): doc.title = title
            case .note(let note): doc.note = note
            case .renameTag(let index, let name): doc.tags[index].name = name
            case .appendTag(let id): doc.tags.append(LaterApp.Tag(id: id, name: "t\(id)"))
            }
        }

        func apply(to doc: inout Earlier) {
            switch self {
            case .title(let title): doc.title = title
            case .note(let note): doc.note = note
            case .renameTag(let index, let name): doc.tags[index].name = name
            case .appendTag(let id): doc.tags.append(EarlierApp.Tag(id: id, name: "t\(id)"))
            }
        }
    }

    /// The earlier release's model: it lacks what the later one added, and has an `archived`
    /// flag the later one removed (undeclared), which the stored JSON lacks until the earlier
    /// release sets it: it reads its default there.
    struct Earlier: Versionable, Equatable, Codable {
        var title = ""
        var note = ""
        var tags: [EarlierApp.Tag] = []
        var archived = false
    }

    /// What the earlier release shows of a later release's value, `archived` as last set.
    static func earlier(_ doc: LaterApp.Doc, archived: Bool) -> Earlier {
        Earlier(
            title: doc.title, note: doc.note, tags: doc.tags.map { EarlierApp.Tag(id: $0.id, name: $0.name) },
            archived: archived)
    }

    @Test(arguments: Soak.batches(usually: 3))
    func sessionsOfBothReleasesKeepTheLaterOnesValues(batch: UInt64) throws {
        var random = SeededGenerator(seed: 0xA17E_0000 + batch)
        let path = directory.path("alternating-\(batch).keepsake")
        // The full copies: every version kept (with the flag only the earlier release reads),
        // and the current one.
        var versions = [LaterApp.Doc()]
        var archived = [false]
        var current = 0
        var nextID = 1
        var earlierSessions = 0

        func sharedEdit(of doc: LaterApp.Doc) -> SharedEdit {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .title("title \(Int.random(in: 0..<1000, using: &random))")
            case 1: return .note("note \(Int.random(in: 0..<1000, using: &random))")
            case 2 where !doc.tags.isEmpty:
                return .renameTag(Int.random(in: 0..<doc.tags.count, using: &random), "n\(nextID)")
            default:
                defer { nextID += 1 }
                return .appendTag(nextID)
            }
        }

        /// A new version, unless `doc` changes nothing (the same color again): appending it
        /// records none. The later release's own versions carry the flag as it was.
        func record(_ doc: LaterApp.Doc, archiving flag: Bool? = nil) {
            let flag = flag ?? archived[current]
            guard doc != versions[current] || flag != archived[current] else { return }
            versions = Array(versions[...current]) + [doc]
            archived = Array(archived[...current]) + [flag]
            current += 1
        }

        for session in 0..<10 {
            let store = try KeepsakeStore(path: path)
            // The earlier release opens the store at least once.
            let later = Bool.random(using: &random) && (session < 9 || earlierSessions > 0)
            if later {
                let history = try store.history("doc", initialValue: LaterApp.Doc())
                #expect(history.value == versions[current])
                #expect(history.versionCount == versions.count - 1)
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0 where current > 0:
                        current -= 1
                        #expect(try history.undo() == versions[current])
                    case 1 where current < versions.count - 1:
                        current += 1
                        #expect(try history.redo() == versions[current])
                    case 2:
                        var doc = versions[current]
                        doc.pinned = doc.pinned == true ? nil : true
                        record(doc)
                        try history.append(doc)
                    case 3 where !versions[current].tags.isEmpty:
                        // A tag the earlier release inserted is stored without its color, which
                        // the later release reads from its defaults: the change is redone on
                        // the stored JSON without the color it replaces.
                        var doc = versions[current]
                        let index = doc.tags.indices.randomElement(using: &random)!
                        doc.tags[index].color = ["red", "green", "blue"].randomElement(using: &random)!
                        record(doc)
                        try history.append(doc)
                    default:
                        var doc = versions[current]
                        sharedEdit(of: doc).apply(to: &doc)
                        record(doc)
                        try history.append(doc)
                    }
                }
                try history.checkInvariants()
                if Bool.random(using: &random) { try history.close() }
            } else {
                earlierSessions += 1
                let history = try store.history("doc", initialValue: Earlier())
                #expect(history.value == Self.earlier(versions[current], archived: archived[current]))
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0 where current > 0:
                        current -= 1
                        #expect(
                            try history.undo() == Self.earlier(versions[current], archived: archived[current])
                        )
                    case 1 where current < versions.count - 1:
                        current += 1
                        #expect(
                            try history.redo() == Self.earlier(versions[current], archived: archived[current])
                        )
                    case 2:
                        try history.writeCheckpoint()
                    case 3:
                        // A property the later release removed: until 2026-11 its change did
                        // not fit the stored JSON, which lacks it, and a checkpoint the earlier
                        // release stored then was its own encoding, the later release's values
                        // lost.
                        var shown = history.value
                        shown.archived.toggle()
                        record(versions[current], archiving: shown.archived)
                        try history.append(shown)
                    default:
                        var doc = versions[current]
                        let edit = sharedEdit(of: doc)
                        edit.apply(to: &doc)
                        record(doc)
                        var shown = history.value
                        edit.apply(to: &shown)
                        try history.append(shown)
                    }
                }
                try history.checkInvariants()
                if Bool.random(using: &random) { try history.close() }
            }
        }

        // The later release reads every version the copies hold, down and up again.
        let history = try KeepsakeStore(path: path).history("doc", initialValue: LaterApp.Doc())
        #expect(history.value == versions[current])
        for index in stride(from: current - 1, through: 0, by: -1) {
            #expect(try history.undo() == versions[index])
        }
        #expect(!history.hasUndo)
        for index in 1..<versions.count { #expect(try history.redo() == versions[index]) }
        try history.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
