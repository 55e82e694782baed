import Foundation
import Keepsake
import TestSupport

// The golden store of schema 2: `schema-2.keepsake`, written once by the release that brought
// schema 2 (held changes, digests, record formats) and committed; never regenerated. It holds
// what the schema-1 store holds, written by the same frozen script, plus a history whose
// debounced change was held (written as it was held) and never recorded.

enum GoldenSchema2 {
    nonisolated static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-2.keepsake")
    }

    /// The title typed into history "typing" and left held.
    static let heldTitle = "Typed, and held when the app stopped"

    /// Writes the golden store (and, by the same script, those of schemas 3 to 7): run once, with
    /// `KEEPSAKE_WRITE_GOLDEN_2=/tmp/schema-2.keepsake swift test --filter writeGoldenStore2`.
    @MainActor static func write(to path: String) throws {
        try GoldenSchema1.write(to: path)
        let store = try KeepsakeStore(path: path)
        let typing = try store.history("typing", initialValue: GoldenDocument.initial)
        var doc = typing.value
        doc.title = "Recorded"
        try typing.append(doc)
        typing.withDebouncing(clock: ManualClock(), interval: .seconds(1))
        doc.title = ""
        for character in heldTitle {
            doc.title.append(character)
            try typing.append(doc)
        }
        store.close()
    }
}

// The golden store of schema 3 (the views): `schema-3.keepsake`, written once by the release
// that brought schema 3, by the schema-2 script; never regenerated.
enum GoldenSchema3 {
    nonisolated static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-3.keepsake")
    }
}

// The golden store of schema 4 (changes held in their version's row): `schema-4.keepsake`,
// written once by the release that brought schema 4, by the schema-2 script; never regenerated.
enum GoldenSchema4 {
    nonisolated static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-4.keepsake")
    }
}

// The golden store of schema 5 (the held change's digest): `schema-5.keepsake`, written once by
// the release that brought schema 5, by the schema-2 script; never regenerated.
enum GoldenSchema5 {
    nonisolated static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-5.keepsake")
    }
}

// The golden store of schema 6 (snapshots' property counts): `schema-6.keepsake`, written once
// by the release that brought schema 6, by the schema-2 script; never regenerated.
enum GoldenSchema6 {
    nonisolated static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-6.keepsake")
    }
}

// The golden store of schema 7 (tags' digests): `schema-7.keepsake`, written once by the
// release that brought schema 7, by the schema-2 script; never regenerated.
enum GoldenSchema7 {
    nonisolated static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-7.keepsake")
    }
}
