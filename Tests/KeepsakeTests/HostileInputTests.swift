import Foundation
import KeepsakeTestSupport
import TestSupport
import Testing

@testable import Keepsake

/// Damaged files, hostile names and extreme values: a typed error or the exact value back,
/// never a crash, a hang, or a write to a file that was only read.
@Suite struct HostileInputTests {
    let directory = TemporaryDirectory()

    /// A real store with a history of 40 versions and two snapshots, folded into one file.
    func sampleStore() throws -> Data {
        let path = directory.path("sample.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
        var generator = SeededGenerator(seed: 7)
        var doc = history.value
        for index in 0..<40 {
            DocEdits.edit(&doc, using: &generator)
            try history.append(doc, tag: index % 10 == 0 ? "t\(index)" : nil)
        }
        try Caretaker(store: store).save(doc, as: "latest")
        try Caretaker(store: store).save(Doc.big(), as: "big")
        try store.compact()
        store.close()
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    @Test(arguments: Soak.batches(usually: 4))
    func flippedBytesGiveATypedErrorOrACleanResultAndReadsNeverWrite(batch: UInt64) throws {
        let original = try sampleStore()
        var generator = SeededGenerator(seed: 0xF11B_0000 + batch)
        var outcomes: [String: Int] = [:]
        for variant in 0..<60 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let offset = Int.random(in: 100..<bytes.count, using: &generator)
                bytes[offset] ^= UInt8.random(in: 1...255, using: &generator)
            }
            let path = directory.path("damaged-\(batch)-\(variant).keepsake")
            try bytes.write(to: URL(fileURLWithPath: path))
            // Read-only: a typed error or a report, and the file stays byte for byte.
            var reported = true
            do {
                let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
                let verification = try store.verify()
                reported = !verification.isOK
                _ = try store.summary()
                _ = try store.timeline(of: "doc")
                outcomes[verification.isOK ? "read: ok" : "read: verify reports it", default: 0] += 1
                store.close()
            } catch {
                outcomes["read: \(Self.kind(of: error))", default: 0] += 1
            }
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "variant \(variant) was written to"
            )
            // Read-write: opening the history and undoing to the start works or throws typed errors.
            do {
                let store = try KeepsakeStore(path: path)
                let history = try store.history("doc", initialValue: Doc.empty, maximumVersions: nil)
                while history.hasUndo { try history.undo() }
                _ = try Caretaker(store: store).restore("latest", as: Doc.self)
                outcomes["write: ok", default: 0] += 1
            } catch {
                outcomes["write: \(Self.kind(of: error))", default: 0] += 1
                // What a read says is damage, `verify` reports: a user told so checks the file.
                if !reported { Issue.record("variant \(variant): \(error), and verify reported nothing") }
            }
        }
        #expect(outcomes.values.reduce(0, +) == 120)
        print("flipped bytes, batch \(batch): \(outcomes.sorted { $0.key < $1.key })")
    }

    static func kind(of error: any Error) -> String {
        switch error {
        case let error as KeepsakeError:
            switch error {
            case .notAStore: "notAStore"
            case .sqlite(let sqlite): "sqlite \(sqlite.code.primary)"
            case .reversion: "reversion"
            case .undecodableValue: "undecodableValue"
            case .undecodableSnapshot: "undecodableSnapshot"
            default: "\(error)"
            }
        default: "untyped \(type(of: error))"
        }
    }

    @Test func aReadOnlyStoreReadsAndRefusesWritesWithATypedError() throws {
        let path = directory.path("readonly.keepsake")
        do {
            let history = try KeepsakeStore(path: path).history("doc", initialValue: Doc.empty)
            var doc = history.value
            doc.title = "written"
            try history.append(doc)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try KeepsakeStore(path: path, options: .init(readOnly: true))
        let history = try store.history("doc", initialValue: Doc.empty)
        #expect(history.value.title == "written")
        var doc = history.value
        doc.title = "refused"
        #expect {
            try history.append(doc)
        } throws: { error in
            guard case .sqlite(let sqlite) = error as? KeepsakeError else { return false }
            return sqlite.code == .readOnly
        }
        #expect(history.value.title == "written" && history.versionCount == 1)
        #expect(throws: KeepsakeError.self) { try store.history("new", initialValue: Doc.empty) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    static let hostileNames = [
        "", "'; DROP TABLE history; --", "quote \" and ' both", "日本語 🎉 Ünïcödé",
        String(repeating: "long", count: 5_000),
        "nul\u{0}inside", "line\nbreak\ttab", "[id: 1].title", "%_wildcards_%",
    ]

    @Test func hostileNamesAndTagsAreStoredVerbatim() throws {
        let path = directory.path("names.keepsake")
        let store = try KeepsakeStore(path: path)
        let caretaker = Caretaker(store: store)
        for (index, name) in Self.hostileNames.enumerated() {
            let history = try store.history(name, initialValue: Doc.empty)
            var doc = history.value
            doc.title = "value \(index)"
            try history.append(doc, tag: name)
            try caretaker.save(doc, as: name)
        }
        let reopened = try KeepsakeStore(path: path)
        #expect(try reopened.historyNames() == Self.hostileNames.sorted())
        for (index, name) in Self.hostileNames.enumerated() {
            let history = try reopened.history(name, initialValue: Doc.empty)
            #expect(history.value.title == "value \(index)")
            #expect(try history.tags().undo.strings == [nil, name])
            #expect(try Caretaker(store: reopened).restore(name, as: Doc.self)?.title == "value \(index)")
        }
        #expect(try Caretaker(store: reopened).snapshots().map(\.name).sorted() == Self.hostileNames.sorted())
        #expect(try reopened.verify().isOK)
    }

    struct Extreme: Versionable, Codable, Equatable {
        struct Node: Versionable, Codable, Equatable {
            var value: Int
            var children: [Node]
        }

        var number: Double
        var text: String
        var tree: Node

        static func chain(depth: Int) -> Node {
            (0..<depth).reduce(Node(value: depth, children: [])) { Node(value: $1, children: [$0]) }
        }
    }

    @Test func extremeValuesRoundTripExactly() throws {
        let path = directory.path("extreme.keepsake")
        let history = try KeepsakeStore(path: path).history(
            "x", initialValue: Extreme(number: 0, text: "", tree: Extreme.chain(depth: 100)))
        var value = history.value
        let numbers: [Double] = [
            .nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        for number in numbers {
            value.number = number
            try history.append(value)
        }
        value.text = String(repeating: "🎉 huge ", count: 400_000)
        try history.append(value)
        value.tree.children[0].children[0].value = -1
        try history.append(value)
        try history.writeCheckpoint()
        let reopened = try KeepsakeStore(path: path).history(
            "x", initialValue: Extreme(number: 0, text: "", tree: Extreme.chain(depth: 1)))
        #expect(reopened.value.text == value.text)
        #expect(reopened.value.tree == value.tree)
        #expect(try reopened.undo().tree == Extreme.chain(depth: 100))
        #expect(try reopened.undo().text == "")
        for number in numbers.reversed().dropFirst() {
            let undone = try reopened.undo().number
            #expect(undone.bitPattern == number.bitPattern || (undone.isNaN && number.isNaN))
        }
    }
}
