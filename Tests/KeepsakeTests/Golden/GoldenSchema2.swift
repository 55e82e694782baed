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

    /// Writes the golden store (and, by the same script, those of schemas 3 and later): run once, with
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

/// The golden stores of schemas 3 and later, `schema-N.keepsake`, each written once by the
/// release that brought its schema, by the schema-2 script (``GoldenSchema2/write(to:)``); never
/// regenerated. Schema 3 brought the views; 4, changes held in their version's row; 5, the held
/// change's digest; 6, snapshots' property counts; 7, tags' digests; 8, history ids never used
/// twice; 9, the version each scope started from; 10, the version the base value is; 11, a
/// limit of 0 (no undo).
enum GoldenStores {
    /// The golden store of `schema`.
    nonisolated static func url(schema: Int) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "schema-\(schema).keepsake")
    }

    /// Those of every schema from 3 on, to the one this code writes: a schema without its
    /// golden store fails the tests.
    nonisolated static let fromSchema3 = (3...KeepsakeStore.schemaVersion).map { url(schema: $0) }
}
