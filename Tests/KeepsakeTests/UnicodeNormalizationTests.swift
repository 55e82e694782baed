import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// Text changed only in its Unicode normalization ("é" as one scalar, or as "e" and a
/// combining accent, as a macOS file name holds it) is a version of its own: `String`'s `==`
/// takes both as equal, and a change that compared them with it was not recorded. The value
/// then held other bytes than its history; undoing an earlier change of the text, made and
/// checked by bytes, was refused ("expected 305 bytes, found 306") or, on text kept whole,
/// made text that was neither version.
@MainActor @Suite struct UnicodeNormalizationTests {
    let directory = TemporaryDirectory()

    struct Note: Versionable, Equatable, Codable {
        var text = ""
        var count = 0
    }

    /// The versions, oldest first: text over 256 bytes (kept as a changed range and digests)
    /// ending in "café" composed, then decomposed with another change beside it, then edited.
    static let versions: [Note] = {
        let words = String(repeating: "word ", count: 60)
        return [
            Note(), Note(text: words + "caf\u{E9}"), Note(text: words + "cafe\u{301}", count: 1),
            Note(text: words + "cafe\u{301}!", count: 1),
        ]
    }()

    /// The bytes of each version's text, which `==` does not compare.
    static func bytes(_ note: Note) -> [UInt8] { Array(note.text.utf8) }

    @Test(arguments: StorageKind.allCases)
    func textInTheOtherNormalizationUndoesAndRedoesToItsOwnBytes(kind: StorageKind) throws {
        let path = directory.path("normalization.keepsake")
        func open() throws -> VersioningController<Note, Note, ReversionError> {
            try VersioningController(Note(), storage: try kind.storage(path: path, history: "note"))
        }
        var controller = try open()
        for version in Self.versions.dropFirst() { try controller.append(version) }
        #expect(controller.versionCount == 3)
        #expect(Self.versions.map { $0.text.utf8.count } == [0, 305, 306, 307])
        for index in [2, 1, 0] {
            #expect(Self.bytes(try controller.undo()) == Self.bytes(Self.versions[index]), "undo to \(index)")
        }
        for index in [1, 2, 3] {
            #expect(Self.bytes(try controller.redo()) == Self.bytes(Self.versions[index]), "redo to \(index)")
        }
        try controller.checkInvariants()
        guard kind == .durable else { return }
        try controller.undo()
        controller = try open()
        #expect(Self.bytes(controller.value) == Self.bytes(Self.versions[2]))
        #expect(Self.bytes(try controller.undo()) == Self.bytes(Self.versions[1]))
        try controller.checkInvariants()
        #expect(try KeepsakeStore(path: path).integrityCheck() == ["ok"])
    }
}
