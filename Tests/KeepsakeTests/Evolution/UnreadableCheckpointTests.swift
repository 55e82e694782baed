import Foundation
import Keepsake
import Testing

/// An app that has a `legacy` kind, which its next version drops.
enum OldKindApp {
    enum Kind: String, Codable { case plain, fancy, legacy }

    struct Doc: Versionable, Equatable, Codable {
        var title = ""
        var kind = Kind.plain
        /// Enough text that small changes never outweigh a checkpoint: the one written after
        /// version 2 stays the newest.
        var body = String(repeating: "text ", count: 100)
    }

    /// Version 1 picks the `legacy` kind, version 3 leaves it.
    static let versions: [Doc] = {
        var doc = Doc()
        var versions = [doc]
        for step in 1...5 {
            switch step {
            case 1: doc.kind = .legacy
            case 3: doc.kind = .fancy
            default: doc.title += "\(step)"
            }
            versions.append(doc)
        }
        return versions
    }()

    /// Writes the versions, with a checkpoint of version 2 (the `legacy` kind), and
    /// closes the history (a checkpoint of the newest version) or leaves it as a killed app does.
    static func write(path: String, closing: Bool) throws {
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: versions[0])
        for (index, version) in versions.enumerated().dropFirst() {
            try history.append(version)
            if index == 2 { try history.writeCheckpoint() }
        }
        if closing { try history.close() }
    }
}

/// A checkpoint that today's model no longer reads (it holds a case the update removed) keeps
/// no history from opening, and no version from being
/// read, when the value reached reads: that value is replayed on the stored JSON instead, as it
/// was already for a change the model could not read. Before, a killed app's store (whose
/// newest checkpoint was older than its current value) failed to open with the checkpoint's
/// error, and reading a version by number failed wherever the way to it passed such a
/// checkpoint. The versions that themselves do not read still give a typed error, and an undo
/// to one is refused, leaving the history where it was.
@Suite struct UnreadableCheckpointTests {
    let directory = TemporaryDirectory()

    enum Kind: String, Codable { case plain, fancy }

    struct Doc: Versionable, Equatable, Codable {
        var title = ""
        var kind = Kind.plain
        var body = ""
    }

    /// An old version as this model reads it, or `nil` where it cannot.
    static func read(_ old: OldKindApp.Doc) -> Doc? {
        Kind(rawValue: old.kind.rawValue).map { Doc(title: old.title, kind: $0, body: old.body) }
    }

    @Test(arguments: [true, false])
    func theValueReachedIsReplayedOnTheStoredJSON(closing: Bool) async throws {
        let path = directory.path("kinds-\(closing).keepsake")
        await #expect(processExitsWith: .success) { [path = path as String, closing = closing as Bool] in
            try OldKindApp.write(path: path, closing: closing)
        }
        let expected = OldKindApp.versions.map(Self.read)
        #expect(expected.map { $0 != nil } == [true, false, false, true, true, true])

        let store = try KeepsakeStore(path: path)
        for (version, value) in expected.enumerated() {
            if let value {
                #expect(try store.value(ofHistory: "doc", atVersion: version, as: Doc.self) == value)
            } else {
                #expect(throws: KeepsakeError.self, "version \(version)") {
                    try store.value(ofHistory: "doc", atVersion: version, as: Doc.self)
                }
            }
        }

        let history = try store.history("doc", initialValue: Doc())
        #expect(history.value == expected[5])
        #expect(try history.undo() == expected[4])
        #expect(try history.undo() == expected[3])
        // Version 3 left the `legacy` kind: undoing it reaches a value this model cannot hold.
        // The undo is refused, and the history stays where it was.
        let refused = #expect(throws: KeepsakeError.self) { try history.undo() }
        #expect(
            refused?.description
                == #"History "doc", version 3: The stored change at `kind` does not decode as Kind: Cannot initialize Kind from invalid String value legacy (at old); "#
                + #"if the app removed or renamed a case of Kind since, declare .converted("kind", from: String.self) { … } "#
                + "in the propertyEvolution of the type that declares it (adopting Versionable).")
        #expect(history.value == expected[3])
        #expect(history.hasUndo)
        #expect(try history.redo() == expected[4])
        #expect(try history.redo() == expected[5])
        try history.checkInvariants()
        try history.close()
        #expect(try store.integrityCheck() == ["ok"])
    }
}
