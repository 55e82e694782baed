import Foundation
import Testing

@testable import Keepsake

/// Several processes and many tasks on one store. Run this suite under the thread sanitizer:
/// `swift test --sanitize=thread --filter ConcurrencyTests`.
@Suite struct ConcurrencyTests {
    let directory = TemporaryDirectory()

    @Test func twoProcessesAppendingToTwoHistoriesLoseNothing() async throws {
        let path = directory.path("two.keepsake")
        try KeepsakeStore(path: path).close()
        async let first = #expect(processExitsWith: .success) { [path = path as String] in
            try ConcurrencyTests.append(300, to: "first", at: path)
        }
        async let second = #expect(processExitsWith: .success) { [path = path as String] in
            try ConcurrencyTests.append(300, to: "second", at: path)
        }
        _ = await (first, second)
        let store = try KeepsakeStore(path: path)
        for name in ["first", "second"] {
            let history = try store.history(name, initialValue: Doc.empty, maximumVersions: nil)
            #expect(history.versionCount == 300)
            #expect(history.value.title == "\(name) 299")
            try history.checkInvariants()
        }
        #expect(try store.verify().isOK)
    }

    @Test func twoProcessesOnOneHistoryNeverCorruptIt() async throws {
        let path = directory.path("shared.keepsake")
        try KeepsakeStore(path: path).close()
        async let first = #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [path = path as String] in
            try ConcurrencyTests.append(150, to: "shared", at: path, label: "first")
        }
        async let second = #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [path = path as String] in
            try ConcurrencyTests.append(150, to: "shared", at: path, label: "second")
        }
        for result in await [first, second] {
            if let result, result.exitStatus != .exitCode(0) {
                Issue.record(
                    "child failed: \(String(decoding: result.standardErrorContent, as: UTF8.self).suffix(3000))"
                )
            }
        }
        let store = try KeepsakeStore(path: path)
        let history = try store.history("shared", initialValue: Doc.empty, maximumVersions: nil)
        #expect(history.versionCount == 300)  // every append landed once: conflicts were retried
        try history.checkInvariants()
        #expect(try store.verify().isOK)
    }

    @Test func twoConnectionsCreatingTheSameHistoryAtOnceAgree() async throws {
        // Both used to see no history and both insert it; the loser failed on UNIQUE(name).
        let path = directory.path("create.keepsake")
        try KeepsakeStore(path: path).close()
        for round in 0..<10 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for label in ["first", "second"] {
                    group.addTask {
                        try ConcurrencyTests.append(20, to: "new \(round)", at: path, label: label)
                    }
                }
                try await group.waitForAll()
            }
            let history = try KeepsakeStore(path: path).history("new \(round)", initialValue: Doc.empty)
            #expect(history.versionCount == 40)
        }
    }

    /// Appends `count` versions, reopening the history after a conflict with another writer and
    /// retrying after a busy store, as an application would.
    static func append(_ count: Int, to name: String, at path: String, label: String? = nil) throws {
        let store = try KeepsakeStore(path: path)
        var history = try store.history(name, initialValue: Doc.empty, maximumVersions: nil)
        var index = 0
        while index < count {
            var doc = history.value
            doc.title = "\(label ?? name) \(index)"
            do {
                try history.append(doc)
                index += 1
            } catch {
                // (Written as a switch: Swift 6.3 crashes compiling typed `catch` patterns here.)
                switch error {
                case .historyConflict:
                    history = try store.history(name, initialValue: Doc.empty, maximumVersions: nil)
                case .sqlite(let sqlite) where sqlite.code == .busy:
                    continue
                default:
                    throw error
                }
            }
        }
    }

    @Test func manyTasksShareOneStore() async throws {
        let store = try KeepsakeStore(path: directory.path("tasks.keepsake"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    let history = try store.history(
                        "task \(task)", initialValue: Doc.empty, maximumVersions: nil)
                    var doc = history.value
                    for index in 0..<40 {
                        doc.title = "\(index)"
                        try history.append(doc)
                        if index % 10 == 0 {
                            try Caretaker(store: store).save(doc, as: "task \(task) at \(index)")
                        }
                    }
                    try history.undo()
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.historyNames().count == 8)
        #expect(try store.summary().histories.allSatisfy { $0.versions == 40 && $0.redoDepth == 1 })
        #expect(try Caretaker(store: store).snapshots().count == 32)
        #expect(try store.verify().isOK)
    }
}
