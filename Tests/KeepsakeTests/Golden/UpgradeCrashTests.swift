import Foundation
import Testing

@testable import Keepsake

#if canImport(Glibc)
    import Glibc
#endif

/// An app update that upgrades a store, stopped at any moment: between two migrations, inside
/// one, or while the first open records the change a debounce held. Whatever the stop leaves
/// opens — read-only as it is, writable by finishing the upgrade — and reads exactly what a
/// store upgraded without a stop reads. `Scripts/soak N` runs N/5 killed upgrades of each
/// golden store instead of 10.
@Suite struct UpgradeCrashTests {
    nonisolated static let trials = max(
        10, (Int(ProcessInfo.processInfo.environment["KEEPSAKE_SOAK_TRIALS"] ?? "") ?? 0) / 5)

    /// The golden stores written before the migrations that move rows (0004) and add digests
    /// (0005 to 0007): schema 1's, and schema 2's with a change held when its app stopped.
    nonisolated static let sources = [(GoldenSchema1.url, 1), (GoldenSchema2.url, 2)]

    /// The histories of the golden stores, with the limit each is opened with.
    nonisolated static let histories: [(name: String, limit: Int?)] = [
        ("golden", 1_000), ("limited", GoldenSchema1.limitedMaximum), ("scoped", 1_000), ("typing", 1_000),
    ]

    let directory = TemporaryDirectory()

    /// ``trace(_:)`` of each golden store upgraded without a stop, made once (by whichever of
    /// the suite's tests, running in parallel, reads it first).
    static let wholeTraces: [URL: Result<[String], any Error>] = {
        let directory = TemporaryDirectory()
        return Dictionary(
            uniqueKeysWithValues: sources.map { url, schema in
                let path = directory.path("whole-\(schema).keepsake")
                return (
                    url,
                    Result {
                        try FileManager.default.copyItem(atPath: url.path, toPath: path)
                        return try trace(path)
                    }
                )
            })
    }()

    func wholeTrace(_ url: URL) throws -> [String] {
        let trace = try #require(Self.wholeTraces[url]).get()
        #expect(trace.first == "schema \(KeepsakeStore.schemaVersion)")
        return trace
    }

    /// A writable copy of `url`, named after `label`.
    func copy(of url: URL, _ label: String) throws -> String {
        let path = directory.path("\(label).keepsake")
        try FileManager.default.copyItem(atPath: url.path, toPath: path)
        return path
    }

    /// Everything a reader gets from the store at `path`, opened writable, in order: each
    /// history's scope level, version count, value and tags, each value redoing to the newest
    /// version and then undoing to the oldest (ending each scope on the way), each snapshot,
    /// and what `verify()` and SQLite's integrity check say. Values as sorted-key JSON, so that
    /// every byte of an attachment counts.
    static func trace(_ path: String) throws -> [String] {
        let store = try KeepsakeStore(path: path)
        defer { store.close() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func text(_ document: GoldenDocument?) throws -> String {
            guard let document else { return "nil" }
            return String(decoding: try encoder.encode(document), as: UTF8.self)
        }
        var lines = ["schema \(try store.summary().schemaVersion)"]
        for (name, limit) in histories {
            let history = try store.history(
                name, initialValue: GoldenDocument.initial, maximumVersions: limit)
            let tags = try history.tags()
            lines.append(
                "\(name): level \(history.scopeLevel), \(history.versionCount) versions, "
                    + "tags \(tags.undo.strings) \(tags.redo.strings), \(try text(history.value))")
            while history.hasRedo { lines.append("redo \(try text(try history.redo()))") }
            while history.hasUndo || history.scopeLevel > 0 {
                if history.hasUndo {
                    lines.append("undo \(try text(try history.undo()))")
                } else {
                    lines.append("end scope \(try text(try history.undoAndPopCurrentScope()))")
                }
            }
            try history.checkInvariants()
        }
        let golden = Caretaker(store: store)
        lines.append("v100 \(try text(try golden.restore("v100", as: GoldenDocument.self)))")
        let final = try Caretaker(store: store, scope: "doc-1").restore("final", as: GoldenDocument.self)
        lines.append("final \(try text(final))")
        let settings = GoldenSettings()
        try settings.restore(withKey: "saved", from: golden)
        lines.append("saved \(settings.theme) \(settings.fontSize)")
        lines.append("verify \(try store.verify().problems)")
        lines.append("integrity \(try store.integrityCheck())")
        return lines
    }

    /// What a stopped upgrade left is read as it is by a read-only open: its schema, no
    /// problem, the newest version of history "golden".
    func checkReadOnly(_ path: String, schema: Int) throws {
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        defer { store.close() }
        #expect(try store.summary().schemaVersion == schema)
        #expect(try store.verify().problems == [])
        let top = GoldenSchema1.goldenAppends - GoldenSchema1.goldenUndone
        #expect(
            try store.history("golden", initialValue: GoldenDocument.initial).value
                == GoldenSchema1.golden[top])
    }

    /// Each migration commits on its own, so a stop between two leaves the schema of the
    /// last one committed: every such store, from both golden stores.
    @Test(
        arguments: sources.flatMap { url, schema in
            (schema + 1..<KeepsakeStore.schemaVersion).map { (url, schema, $0) }
        })
    func aStoreLeftBetweenTwoMigrationsReadsAsOneUpgradedWhole(url: URL, from: Int, stoppedAt: Int) throws {
        let whole = try wholeTrace(url)
        let path = try copy(of: url, "stopped")
        let connection = try SQLiteConnection(path: path)
        try Schema.migrate(connection, from: from, through: stoppedAt)
        connection.close()
        try checkReadOnly(path, schema: stoppedAt)
        #expect(try Self.trace(path) == whole)
    }

    /// The first open after an update on a disk too full for the upgrade (the golden store is
    /// 288 KiB; the disk 360 or 480 KiB): a typed `.full`, the store opens read-only at the
    /// schema the last migration that fit left, and once there is room the next open finishes
    /// the upgrade and reads as a whole one.
    @Test(
        .enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"),
        arguments: ["360k", "480k"])
    func anUpgradeOutOfRoomStopsTypedAndFinishesOnceThereIsRoom(disk: String) throws {
        let whole = try wholeTrace(GoldenSchema1.url)
        let mount = try #require(TemporaryMount(size: disk))
        let path = mount.path + "/full.keepsake"
        try FileManager.default.copyItem(atPath: GoldenSchema1.url.path, toPath: path)
        // Its remedy is the read-only open that reads it meanwhile.
        #expect {
            try KeepsakeStore(path: path)
        } throws: { error in
            guard let error = error as? KeepsakeError, case .sqlite(let sqlite) = error else { return false }
            return sqlite.code == .full && error.remedy == .openReadOnly
        }
        let file = try SQLiteConnection(path: path, readOnly: true)
        let schema = Int(try file.scalarInt("PRAGMA user_version") ?? -1)
        file.close()
        #expect((1..<KeepsakeStore.schemaVersion).contains(schema))
        try checkReadOnly(path, schema: schema)
        #expect(mount.resize("8m"))
        #expect(try Self.trace(path) == whole)
    }

    /// A disk with no room even for the shared-memory file of the write-ahead log: SQLite
    /// calls that a disk I/O error, and the error says which file could not grow, why that
    /// may be, and to open the store read-only (its remedy). The store is left as it was,
    /// opens read-only meanwhile (the failed open left an empty log, and a shared-memory file
    /// too short to read through it: the file, holding every commit, is read as immutable),
    /// and upgrades once there is room.
    @Test(.enabled(if: TemporaryMount.isAvailable, "needs permission to mount a tmpfs"))
    func aDiskWithNoRoomForTheLogsIndexSaysWhichFile() throws {
        let mount = try #require(TemporaryMount(size: "300k"))
        let path = mount.path + "/full.keepsake"
        try FileManager.default.copyItem(atPath: GoldenSchema1.url.path, toPath: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            try KeepsakeStore(path: path)
        } throws: { error in
            guard let error = error as? KeepsakeError, case .sqlite(let sqlite) = error else { return false }
            return sqlite.code.extended == SQLiteError.Code.sharedMemorySize.extended
                && sqlite.message
                    == "disk I/O error (\(String(cString: strerror(ENOSPC)))): \(path)-shm could not grow (is the disk full?); "
                    + "open it with KeepsakeStore.Options(readOnly: true) to read it"
                && error.remedy == .openReadOnly
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(FileState.logSize(of: path) == 0)
        try checkReadOnly(path, schema: 1)
        #expect(mount.resize("8m"))
        #expect(try Self.trace(path) == wholeTrace(GoldenSchema1.url))
    }

    /// The first open after an update, killed with SIGKILL at a random moment of its first
    /// 60 ms (a debug build's upgrade and first opens of the histories take about 40): the
    /// store then opens, read-only and writable, and reads as one upgraded without a stop.
    @Test(arguments: sources.flatMap { url, schema in (0..<trials).map { (url, schema, $0) } })
    func anUpgradeKilledAtARandomMomentLosesNothing(url: URL, from: Int, trial: Int) async throws {
        let whole = try wholeTrace(url)
        let path = try copy(of: url, "killed")
        let seed = UInt64(0x06C4_0000 + from * 1_000 + trial)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, seed = seed as UInt64] in
            CheckpointCrashTests.killSoon(seed: seed, within: 0..<60_000)
            let store = try KeepsakeStore(path: path)
            for (name, limit) in UpgradeCrashTests.histories {
                _ = try store.history(name, initialValue: GoldenDocument.initial, maximumVersions: limit)
            }
            while true { sleep(1) }
        }
        let file = try SQLiteConnection(path: path, readOnly: true)
        let schema = Int(try file.scalarInt("PRAGMA user_version") ?? -1)
        file.close()
        #expect((from...KeepsakeStore.schemaVersion).contains(schema))
        try checkReadOnly(path, schema: schema)
        #expect(try Self.trace(path) == whole, "trial \(trial) of schema \(from), killed at schema \(schema)")
    }
}
