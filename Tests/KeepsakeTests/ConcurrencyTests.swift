import Foundation
import KeepsakeTestSupport
import Testing

@testable import Keepsake

/// Several processes and many tasks on one store. Run this suite under the thread sanitizer:
/// `Scripts/sanitize thread --filter ConcurrencyTests`.
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
            ConcurrencyTests.reportingErrors {
                try ConcurrencyTests.append(150, to: "shared", at: path, label: "first")
            }
        }
        async let second = #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [path = path as String] in
            ConcurrencyTests.reportingErrors {
                try ConcurrencyTests.append(150, to: "shared", at: path, label: "second")
            }
        }
        for result in await [first, second] { #expect(Self.errors(of: result) == "") }
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

    /// Two processes open a history, edit and close it, over and over, while a third keeps
    /// deleting it: each open finds it or creates it anew, even when one process creates it
    /// and the third deletes it between the opener's two reads (that open used to fail with
    /// `.undecodableValue`, "the history vanished while it was being opened"). An edit made
    /// after a deletion gets `.historyConflict`.
    @Test func openingAHistoryOthersKeepCreatingAndDeletingNeverFails() async throws {
        let path = directory.path("deleted.keepsake")
        try KeepsakeStore(path: path).close()
        func race(_ role: String) async -> ExitTest.Result? {
            await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                [path = path as String, role = role as String] in
                ConcurrencyTests.reportingErrors {
                    try ConcurrencyTests.openOrDelete(role, at: path, for: .seconds(4))
                }
            }
        }
        async let deleter = race("delete")
        async let first = race("open")
        async let second = race("open")
        for result in await [deleter, first, second] { #expect(Self.errors(of: result) == "") }
        let store = try KeepsakeStore(path: path)
        try store.history("doc", initialValue: Doc.empty).checkInvariants()
        #expect(try store.verify().problems == [])
    }

    /// Opens history "doc", edits and closes it (`role` "open"), or deletes it ("delete"), over
    /// and over for `duration`. Any error but a conflict is thrown.
    static func openOrDelete(_ role: String, at path: String, for duration: Duration) throws {
        let store = try KeepsakeStore(path: path)
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            guard role == "open" else {
                try store.deleteHistory("doc")
                continue
            }
            let history = try store.history("doc", initialValue: Doc.empty)
            var doc = history.value
            doc.title += "."
            do {
                try history.append(doc)
                try history.close()
            } catch {
                guard case .historyConflict("doc") = error else { throw error }
            }
        }
    }

    /// Runs `body` in a child process, writing what it throws to standard error (read with
    /// ``errors(of:)``) rather than crashing with it: a failed exit test gives no result, so the
    /// error would be lost and the failure say only that the child died of a signal.
    static func reportingErrors(_ body: () throws -> Void) {
        do {
            try body()
        } catch {
            FileHandle.standardError.write(Data("\(error)".utf8))
        }
    }

    /// What a child process run with ``reportingErrors(_:)`` threw: empty when nothing.
    static func errors(of result: ExitTest.Result?) -> String? {
        result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) }
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
