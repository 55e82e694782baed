import Foundation
import Testing

@testable import Keepsake

/// An app shows an error as `error.localizedDescription` (in an alert, a log line, SwiftUI's
/// `.alert(isPresented:error:)`): every error of Keepsake's reads there as its own sentence,
/// saying what and where, not "The operation could not be completed. (Keepsake.KeepsakeError
/// error 7.)", which is what Foundation makes of an error that is not a `LocalizedError`.
@MainActor @Suite struct ErrorDescriptionTests {
    let directory = TemporaryDirectory()

    func expectShown(
        _ error: (any Error)?, startingWith start: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error else {
            Issue.record("no error", sourceLocation: sourceLocation)
            return
        }
        #expect(error.localizedDescription == "\(error)", sourceLocation: sourceLocation)
        #expect(
            error.localizedDescription.hasPrefix(start), "\(error.localizedDescription)",
            sourceLocation: sourceLocation)
        // One sentence: a decoder's description ends with a full stop of its own.
        #expect(
            !error.localizedDescription.contains(".."), "\(error.localizedDescription)",
            sourceLocation: sourceLocation)
    }

    /// A store that a later model no longer reads, opened through the controller an app uses.
    @Test func aStoreTheModelNoLongerReads() throws {
        let path = directory.path("doc.keepsake")
        let written = try KeepsakeStore(path: path).history("doc", initialValue: 5)
        try written.append(6)
        try written.close()

        let store = try KeepsakeStore(path: path)
        let opening = #expect(throws: ReversionError.self) {
            try VersioningController("", storage: .keepsake(store, history: "doc"))
        }
        expectShown(opening, startingWith: #"The stored value of history "doc" does not decode: "#)
        if case .storage(let failure)? = opening {
            expectShown(failure, startingWith: #"The stored value of history "doc" does not decode: "#)
        } else {
            Issue.record("not a storage failure: \(String(describing: opening))")
        }
        let direct = #expect(throws: KeepsakeError.self) { try store.history("doc", initialValue: "") }
        expectShown(direct, startingWith: #"The stored value of history "doc" does not decode: "#)
    }

    @Test func aStoreThatCannotBeOpened() {
        let path = directory.path("missing/doc.keepsake")
        let error = #expect(throws: KeepsakeError.self) { try KeepsakeStore(path: path) }
        expectShown(error, startingWith: "Cannot open \(path): ")
        let sqlite = SQLiteError(code: .busy, message: "database is locked", sql: "BEGIN IMMEDIATE")
        expectShown(sqlite, startingWith: "SQLite error ")
        expectShown(KeepsakeError.sqlite(sqlite), startingWith: "SQLite error ")
    }

    struct Note: Versionable, Equatable, Codable {
        var title: String
        var body: String
        var tags: Set<String>
    }

    @Test func aWrongVersionAndAPathThatDoesNotParse() throws {
        var note = Note(title: "Draft", body: "", tags: [])
        let original = note
        note.title = "Final"
        let reversion = try #require(note.reversion(to: original))
        note.title = "Final, really"
        let wrong = #expect(throws: ReversionError.self) { try reversion.revert(&note) }
        expectShown(
            wrong, startingWith: "The value at `title` is not the version this reversion was made from: ")
        let parse = #expect(throws: PathDescriptor.ParseError.self) { try PathDescriptor(parsing: "items[") }
        expectShown(parse, startingWith: #"invalid path "items[" at byte 6: expected "#)
    }
}
