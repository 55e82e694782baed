import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// `valueJSON(ofHistory:atVersion:)` — what `keepsake value` prints — computes every version's
/// value from the stored records alone, and it is the value the Swift side had.
@MainActor @Suite struct StoredValueTests {
    let directory = TemporaryDirectory()

    @Test(arguments: 0..<2)
    func everyVersionOfTheRandomizedDocumentMatchesTheSwiftValue(batch: UInt64) throws {
        let path = directory.path("values-\(batch).keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var generator = SeededGenerator(seed: 0x7A1E_0000 + batch)
        // The value after each version, by version number.
        var expected: [Int: Doc] = [0: .empty]
        var doc = history.value
        func appendRandomEdit() throws {
            let before = history.versionCount
            DocEdits.edit(&doc, using: &generator)
            try history.append(doc)
            if history.versionCount > before { expected[history.versionCount] = doc }
        }
        for _ in 0..<80 { try appendRandomEdit() }
        let root = history.versionCount
        // Five versions on the redo stack, then an inner scope with versions of its own.
        for _ in 0..<5 { doc = try history.undo() }
        try history.pushNewScope()
        var inner = root
        for _ in 0..<6 {
            let before = history.versionCount
            DocEdits.edit(&doc, using: &generator)
            try history.append(doc)
            if history.versionCount > before {
                inner += 1
                expected[inner] = doc
            }
        }
        let decoder = JSONDecoder()
        for (version, value) in expected.sorted(by: { $0.key < $1.key }) {
            let json = try #require(
                try store.valueJSON(ofHistory: "doc", atVersion: version), "version \(version)")
            #expect(try decoder.decode(Doc.self, from: Data(json.utf8)) == value, "version \(version)")
        }
        // The current version by default; unknown histories and versions are nil.
        let current = try #require(try store.valueJSON(ofHistory: "doc"))
        #expect(try decoder.decode(Doc.self, from: Data(current.utf8)) == history.value)
        #expect(try store.valueJSON(ofHistory: "doc", atVersion: inner + 1) == nil)
        #expect(try store.valueJSON(ofHistory: "nope") == nil)
    }

    struct Attached: Versionable, Equatable, Codable {
        var attachment: Data?
    }

    /// Large `Data` is stored as a blob, and written whole or by a range of bytes: each version's
    /// value matches, whichever patch last wrote the bytes.
    @Test func largeDataWrittenWholeAndByRangeGivesEveryVersion() throws {
        let store = try KeepsakeStore(path: directory.path("attached.keepsake"))
        let history = try store.history("doc", initialValue: Attached(attachment: nil))
        var bytes = Data((0..<2_048).map { UInt8(truncatingIfNeeded: $0) })
        var expected = [Attached(attachment: nil), Attached(attachment: bytes)]
        bytes[100] = 0xFF
        expected += [Attached(attachment: bytes), Attached(attachment: nil), Attached(attachment: bytes)]
        for value in expected.dropFirst() { try history.append(value) }
        #expect(history.versionCount == 4)
        for (version, value) in expected.enumerated() {
            let json = try #require(try store.valueJSON(ofHistory: "doc", atVersion: version))
            #expect(
                try JSONDecoder().decode(Attached.self, from: Data(json.utf8)) == value, "version \(version)")
        }
    }

    @Test func aChangeOfAnAppsOwnPatchKindSaysItNeedsTheType() throws {
        let path = directory.path("custom.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty)
        var doc = history.value
        doc.title = "one"
        try history.append(doc)
        try store.database.read {
            try editStoredChanges($0) { _, entries in
                for index in entries.indices {
                    (entries[index].kind, entries[index].digest) = ("vector", nil)
                }
            }
        }
        #expect {
            try store.valueJSON(ofHistory: "doc", atVersion: 1)
        } throws: { error in
            guard
                case .reversion("doc", 1, .undecodable(let path, "JSON", let reason)) = error
                    as? KeepsakeError
            else { return false }
            return path == [.property("title")] && reason.contains("needs that type")
        }
    }
}
