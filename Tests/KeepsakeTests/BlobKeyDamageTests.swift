import Foundation
import Keepsake
import KeepsakeTestSupport
import Testing

/// A blob row whose key damage changed where it lies (a flipped bit in its row id) answers to
/// another blob's id, with bytes that match its own size and digest: a value reading that id
/// got the other blob's bytes, silently, where `verify` saw the damage. Every read now checks
/// the id against the digest index, a b-tree of its own, and a blob found under the wrong id is
/// a typed error. Found by the rich store's damage tests once its random edits reordered items.
@MainActor @Suite struct BlobKeyDamageTests {
    let directory = TemporaryDirectory()

    struct Attachment: Versionable, Equatable, Codable {
        var name = ""
        var bytes = Data()
    }

    /// Versions 1 to 4 each hold a blob of their own, all of one size.
    static let versions: [Attachment] =
        [Attachment()]
        + (1...4).map { Attachment(name: "v\($0)", bytes: Data(repeating: UInt8($0), count: 2_000)) }

    /// What each reader gets from the store at `path`: each version by number (typed and as
    /// JSON), and each value undoing from the newest to the start; `nil` where it was refused.
    func reads(_ path: String) -> [String: Attachment?] {
        var reads: [String: Attachment?] = [:]
        guard let store = try? KeepsakeStore(path: path) else { return ["open": nil] }
        defer { store.close() }
        for version in Self.versions.indices {
            reads["typed \(version)"] = try? store.value(
                ofHistory: "doc", atVersion: version, as: Attachment.self)
            reads["json \(version)"] = (try? store.valueJSON(ofHistory: "doc", atVersion: version)).flatMap {
                try? JSONDecoder().decode(Attachment.self, from: Data($0.utf8))
            }
        }
        guard let history = try? store.history("doc", initialValue: Attachment()) else {
            reads["history"] = .some(nil)
            return reads
        }
        reads["opened"] = history.value
        var version = Self.versions.count - 1
        while history.hasUndo, let value = try? history.undo() {
            version -= 1
            reads["undo to \(version)"] = value
        }
        return reads
    }

    @Test func aBlobFoundUnderAnotherIDIsATypedErrorNeverTheOtherBytes() throws {
        let path = directory.path("blobs.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Self.versions[0])
        for version in Self.versions.dropFirst() { try history.append(version) }
        try history.close()
        store.close()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let expected = reads(path)
        #expect(expected.count == 2 * Self.versions.count + 5)
        #expect(expected.values.allSatisfy { $0 != nil })

        let blobs = try #require(try RichStore.trees(ofStoreAt: path).first { $0.name == "blob" })
        let cells = BTreeCells(original, root: blobs.root).cells
        #expect(cells.count == 4)
        var damages = 0
        for cell in cells {
            for damage in RichStore.keyDamages(cell, in: original) where damage.what.hasPrefix("row id") {
                damages += 1
                let damaged = directory.path("damaged.keepsake")
                for suffix in ["", "-wal", "-shm"] {
                    try? FileManager.default.removeItem(atPath: damaged + suffix)
                }
                var bytes = original
                bytes[damage.offset] = damage.byte
                try bytes.write(to: URL(fileURLWithPath: damaged))
                for (read, value) in reads(damaged) {
                    guard let value else { continue }
                    #expect(value == expected[read] ?? nil, "\(damage.what), \(read)")
                }
            }
        }
        #expect(damages == 8)
    }
}
