import Foundation
import Testing

@testable import Keepsake

/// Stores written by earlier releases open, read and undo with today's code. Each is opened
/// from a copy: opening may upgrade a store in place, and the committed file never changes.
@Suite struct GoldenStoreTests {
    let directory = TemporaryDirectory()

    /// A writable copy of a committed golden store.
    func copy(of url: URL) throws -> String {
        let path = directory.path(url.lastPathComponent)
        try FileManager.default.copyItem(atPath: url.path, toPath: path)
        return path
    }

    @MainActor @Test(.enabled(if: ProcessInfo.processInfo.environment["KEEPSAKE_WRITE_GOLDEN"] != nil))
    func writeGoldenStore() throws {
        let path = try #require(ProcessInfo.processInfo.environment["KEEPSAKE_WRITE_GOLDEN"])
        try GoldenSchema1.write(to: path)
    }

    /// Writes schema 2's (and, by the same script, schema 3's and later ones') golden store, once.
    @MainActor @Test(.enabled(if: ProcessInfo.processInfo.environment["KEEPSAKE_WRITE_GOLDEN_2"] != nil))
    func writeGoldenStore2() throws {
        let path = try #require(ProcessInfo.processInfo.environment["KEEPSAKE_WRITE_GOLDEN_2"])
        try GoldenSchema2.write(to: path)
    }

    /// Every golden store: each holds the schema-1 script's histories and snapshots.
    nonisolated static let stores =
        [
            GoldenSchema1.url, GoldenSchema2.url,
        ] + GoldenStores.fromSchema3

    @Test(arguments: stores)
    func storeIsCommittedWhole(url: URL) throws {
        #expect(FileManager.default.fileExists(atPath: url.path))
        // Closed cleanly when written: the log was checkpointed into the file and removed.
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
    }

    @Test(
        arguments: [
            GoldenSchema2.url
        ] + GoldenStores.fromSchema3)
    func heldChangeBecomesAVersionOnOpen(url: URL) throws {
        let path = try copy(of: url)
        let history = try KeepsakeStore(path: path).history("typing", initialValue: GoldenDocument.initial)
        #expect(history.value.title == GoldenSchema2.heldTitle)
        #expect(history.versionCount == 2)
        #expect(try history.undo().title == "Recorded")
        #expect(try history.undo() == GoldenDocument.initial)
        #expect(try KeepsakeStore(path: path).verify().problems == [])
    }

    /// Migration 0004 moves every `change` row into its version's `changes`, in order, with
    /// its digest; a read-only open of the old store (not upgraded) reads the same changes.
    @Test(arguments: [GoldenSchema1.url, GoldenSchema2.url, GoldenStores.url(schema: 3)])
    func changesMoveIntoTheirVersionsWithTheirDigests(url: URL) throws {
        let path = try copy(of: url)
        let file = try SQLiteConnection(path: path, readOnly: true)
        let digest = url == GoldenSchema1.url ? "NULL" : "c.digest"
        let old = try file.query(
            """
            SELECT h.name, v.position, c.path, c.kind, c.patch, \(digest) FROM change c
            JOIN version v ON v.id = c.version_id JOIN history h ON h.id = v.history_id
            ORDER BY h.name, v.position, c.ordinal
            """
        ) {
            "\($0.text(0)!) \($0.int64(1)!) \($0.text(2)!) \($0.text(3)!) \($0.text(4)!) \($0.int64(5) ?? 0)"
        }
        file.close()
        #expect(old.count > 400)

        func changes(_ store: KeepsakeStore) throws -> [String] {
            var changes: [String] = []
            for name in try store.historyNames() {
                for version in try store.timeline(of: name)!.dropFirst() {
                    changes += try store.changes(ofVersion: version.version, in: name)!.map {
                        "\(name) \(version.version) \($0.path) \($0.kind) \($0.patch)"
                    }
                }
            }
            return changes
        }
        let withoutDigests = old.map { String($0[..<$0.lastIndex(of: " ")!]) }
        let readOnly = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try changes(readOnly) == withoutDigests)
        #expect(try readOnly.verify().problems == [])
        readOnly.close()

        let store = try KeepsakeStore(path: path)
        #expect(try store.summary().schemaVersion == Schema.currentVersion)
        #expect(try changes(store) == withoutDigests)
        let migrated = try store.database.read { connection in
            try connection.query(
                "SELECT h.name, v.position, v.changes FROM version v JOIN history h ON h.id = v.history_id "
                    + "ORDER BY h.name, v.position"
            ) { row in
                try StoredChanges.entries(row.text(2)!).map {
                    "\(row.text(0)!) \(row.int64(1)!) \($0.path) \($0.kind) \($0.patch) \($0.digest ?? 0)"
                }
            }.flatMap { $0 }
        }
        #expect(migrated == old)
        #expect(try store.verify().problems == [])
        // A migrated change that keeps its digest but not its bytes is caught.
        if url != GoldenSchema1.url {
            try store.database.read { connection in
                try editStoredChanges(connection) { position, entries in
                    if position == 3 {
                        entries[0].patch = entries[0].patch.replacingOccurrences(
                            of: "Untitled", with: "Untitlex")
                    }
                }
            }
            #expect(
                try store.verify().problems == [
                    "history golden, version 3: change 0 does not match its digest"
                ])
        }
    }

    @Test func schema1OpensReadOnlyAsItIsAndUpgradesWhenWritten() throws {
        let path = try copy(of: GoldenSchema1.url)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let readOnly = try KeepsakeStore(path: path, options: .init(readOnly: true))
        #expect(try readOnly.summary().schemaVersion == 1)
        #expect(try readOnly.verify().problems == [])
        #expect(try readOnly.history("golden", initialValue: GoldenDocument.initial).value.count == 143)
        readOnly.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try KeepsakeStore(path: path).summary().schemaVersion == Schema.currentVersion)
    }

    @Test(arguments: stores)
    func historyUndoesToTheStartAndRedoesToTheEnd(url: URL) throws {
        let store = try KeepsakeStore(path: try copy(of: url))
        let golden = GoldenSchema1.golden
        let history = try store.history("golden", initialValue: GoldenDocument.initial)
        let top = GoldenSchema1.goldenAppends - GoldenSchema1.goldenUndone
        #expect(history.value == golden[top])
        // A few fields as literals, in case the frozen script itself were ever changed.
        #expect(history.value.count == 143 && history.value.items.count == 7)
        #expect(history.value.shape == .rect(w: 29, h: 22) && history.value.attachment.count == 3674)
        #expect(history.value.labels == ["b": 68] && history.value.note == nil)
        #expect(history.versionCount == GoldenSchema1.goldenAppends)
        let tags = try history.tags()
        #expect(tags.undo.strings == ["start"] + (1...top).map(GoldenSchema1.goldenTag))
        #expect(tags.redo.strings == (top + 1...GoldenSchema1.goldenAppends).map(GoldenSchema1.goldenTag))
        try history.checkInvariants()

        for n in stride(from: top - 1, through: 0, by: -1) {
            #expect(try history.undo() == golden[n], "undo to version \(n)")
        }
        #expect(!history.hasUndo)
        for n in 1...GoldenSchema1.goldenAppends {
            #expect(try history.redo() == golden[n], "redo to version \(n)")
        }
        #expect(!history.hasRedo)
        #expect(try history.undo(to: "v100") == golden[100])
        #expect(try history.undo(to: "start") == golden[0])
        try history.checkInvariants()
        // Upgraded, it holds the statements a new store holds, word for word.
        #expect(try store.database.read { try Schema.hasKeepsakesStatements($0) })
    }

    /// Every version of every history read without opening it, from the committed file opened
    /// read-only: typed (by the model, from the newest checkpoint on the way) and as JSON, each
    /// the value undo and redo reach.
    @Test(arguments: stores)
    func everyVersionReadsWithoutMovingTheHistory(url: URL) throws {
        let store = try KeepsakeStore(path: url.path, options: .init(readOnly: true))
        let golden = GoldenSchema1.golden
        func json(_ history: String, _ version: Int) throws -> GoldenDocument? {
            try store.valueJSON(ofHistory: history, atVersion: version).map {
                try JSONDecoder().decode(GoldenDocument.self, from: Data($0.utf8))
            }
        }
        // Versions 394 to 400 are undone: their values are the ones redo reaches. Typed, every
        // third version and the last ten (each read replays from the base value, so reading all
        // 400 of each of the ten stores was a tenth of a run's time); undo and redo reach every
        // one in `historyUndoesToTheStartAndRedoesToTheEnd`.
        for n in 0...GoldenSchema1.goldenAppends {
            if n % 3 == 0 || n > 390 {
                #expect(
                    try store.value(ofHistory: "golden", atVersion: n, as: GoldenDocument.self) == golden[n])
            }
            // As JSON, a sample: the stored-form replay is slower, and tested on its own.
            if n % 10 == 0 || n > 390 { #expect(try json("golden", n) == golden[n], "version \(n)") }
        }
        let top = GoldenSchema1.goldenAppends - GoldenSchema1.goldenUndone
        #expect(try store.value(ofHistory: "golden", as: GoldenDocument.self) == golden[top])
        #expect(try store.value(ofHistory: "golden", atVersion: 401, as: GoldenDocument.self) == nil)
        #expect(try store.value(ofHistory: "none", atVersion: 1, as: GoldenDocument.self) == nil)
        // Pruned: the versions folded into the base value are gone, version 0 is the floor's.
        let limited = GoldenSchema1.limited
        let kept = try #require(try store.timeline(of: "limited")).map(\.version).filter { $0 > 0 }
        #expect(
            try store.value(ofHistory: "limited", atVersion: kept[0], as: GoldenDocument.self)
                == limited[kept[0]])
        #expect(
            try store.value(ofHistory: "limited", atVersion: 0, as: GoldenDocument.self)
                == limited[kept[0] - 1])
        #expect(try store.value(ofHistory: "limited", atVersion: kept[0] - 1, as: GoldenDocument.self) == nil)
        for version in kept {
            #expect(
                try store.value(ofHistory: "limited", atVersion: version, as: GoldenDocument.self)
                    == limited[version])
        }
        // Scopes: every version typed as its JSON reads.
        for summary in try #require(try store.timeline(of: "scoped")) {
            let typed = try store.value(
                ofHistory: "scoped", atVersion: summary.version, as: GoldenDocument.self)
            let stored = try json("scoped", summary.version)
            #expect(typed != nil && typed == stored, "scoped \(summary.version)")
        }
    }

    @Test(arguments: stores)
    func historyHasSeveralCheckpointsAndBlobs(url: URL) throws {
        let store = try KeepsakeStore(path: try copy(of: url))
        try store.read { connection, _ in
            let checkpoints = try connection.scalarInt(
                "SELECT count(*) FROM checkpoint JOIN history h ON h.id = history_id WHERE h.name = 'golden'")
            #expect((checkpoints ?? 0) >= 3)
            #expect((try connection.scalarInt("SELECT count(*) FROM blob") ?? 0) >= 1)
        }
    }

    @Test(arguments: stores)
    func prunedHistoryKeepsItsNewestVersions(url: URL) throws {
        let store = try KeepsakeStore(path: try copy(of: url))
        let limited = GoldenSchema1.limited
        let history = try store.history(
            "limited", initialValue: GoldenDocument.initial, maximumVersions: GoldenSchema1.limitedMaximum)
        #expect(history.value == limited[GoldenSchema1.limitedAppends])
        // Pruned at 57 versions (the limit plus the slack of 16 of the releases that wrote
        // schemas 1 to 4) down to 40, four times: 52 kept. Later releases prune at 46 (a slack
        // of an eighth of the limit, 5) down to 40, thirteen times: 42 kept.
        let kept =
            (5...KeepsakeStore.schemaVersion).map { GoldenStores.url(schema: $0) }.contains(url) ? 42 : 52
        #expect(history.versionCount == kept)
        // Version 0, read without moving the history, is the value below the oldest kept: the
        // base value (pruned before schema 4 by deleting the oldest versions, with no floor) or
        // the base value with the versions folded under the floor redone on it.
        #expect(
            try store.value(ofHistory: "limited", atVersion: 0, as: GoldenDocument.self)
                == limited[GoldenSchema1.limitedAppends - kept])
        for n in stride(
            from: GoldenSchema1.limitedAppends - 1, through: GoldenSchema1.limitedAppends - kept, by: -1)
        {
            #expect(try history.undo() == limited[n])
        }
        #expect(!history.hasUndo)
        try history.checkInvariants()
    }

    @Test(arguments: stores)
    func scopesReopenWhereTheyWereLeft(url: URL) throws {
        let store = try KeepsakeStore(path: try copy(of: url))
        let scoped = GoldenSchema1.scoped
        let history = try store.history("scoped", initialValue: GoldenDocument.initial)
        #expect(history.scopeLevel == 1)
        #expect(history.value == scoped[5])
        #expect(try history.redo() == scoped[6])
        #expect(try history.undo() == scoped[5])
        #expect(try history.undo() == scoped[4])
        #expect(!history.hasUndo)
        #expect(try history.undoAndPopCurrentScope() == scoped[4])
        #expect(history.scopeLevel == 0)
        #expect(try history.tags().undo == [nil, nil, "before-scope", "in-scope"])
        #expect(try history.undo() == scoped[2])
        #expect(try history.undo() == scoped[1])
        #expect(try history.undo() == scoped[0])
        try history.checkInvariants()
    }

    /// Migration 0008 rebuilds `history` with foreign keys off: every row that referred to a
    /// history still does, the store's connection has them on again (deleting a history
    /// deletes its rows), and an id a deletion frees is never used again, after a reopen too.
    @Test(arguments: stores)
    func anUpgradedStoreDeletesHistoriesWholeAndNeverReusesTheirIds(url: URL) throws {
        let path = try copy(of: url)
        var store = try KeepsakeStore(path: path)
        func integer(_ sql: String) throws -> Int64? {
            try store.read { connection, _ in try connection.scalarInt(sql) }
        }
        #expect(try integer("PRAGMA foreign_keys") == 1)
        let newest = try #require(try integer("SELECT max(id) FROM history"))
        let newestName = try store.read { connection, _ in
            try connection.scalarText("SELECT name FROM history WHERE id = \(newest)")
        }
        let tables = ["version", "scope", "checkpoint", "pending_change"]
        func rows(of id: Int64) throws -> [Int64?] {
            try tables.map { try integer("SELECT count(*) FROM \($0) WHERE history_id = \(id)") }
        }
        #expect(try rows(of: newest)[0...1].allSatisfy { $0 ?? 0 > 0 })
        #expect(try store.deleteHistory(try #require(newestName)))
        #expect(try rows(of: newest) == [0, 0, 0, 0])
        _ = try store.history("new", initialValue: GoldenDocument.initial)
        #expect(try integer("SELECT id FROM history WHERE name = 'new'") == newest + 1)
        #expect(try store.deleteHistory("new"))
        store.close()
        store = try KeepsakeStore(path: path)
        _ = try store.history("newer", initialValue: GoldenDocument.initial)
        #expect(try integer("SELECT id FROM history WHERE name = 'newer'") == newest + 2)
        #expect(try store.verify().problems == [])
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test(arguments: stores)
    func snapshotsRestore(url: URL) throws {
        let store = try KeepsakeStore(path: try copy(of: url))
        let golden = GoldenSchema1.golden
        #expect(try Caretaker(store: store).restore("v100", as: GoldenDocument.self) == golden[100])
        #expect(
            try Caretaker(store: store, scope: "doc-1").restore("final", as: GoldenDocument.self)
                == golden[GoldenSchema1.goldenAppends])
        let settings = GoldenSettings()
        try settings.restore(withKey: "saved", from: Caretaker(store: store))
        #expect(settings.theme == "light" && settings.fontSize == 14)
        #expect(try store.integrityCheck() == ["ok"])
        // Upgraded from before schema 6, each snapshot got the number of rows it holds.
        let counts = try store.database.read {
            try $0.query(
                "SELECT name, property_count, (SELECT count(*) FROM snapshot_property WHERE snapshot_id = s.id) "
                    + "FROM snapshot s ORDER BY name"
            ) { "\($0.text(0)!) \($0.int64(1)!) \($0.int64(2)!)" }
        }
        #expect(counts == ["final 7 7", "saved 2 2", "v100 8 8"])
    }
}
