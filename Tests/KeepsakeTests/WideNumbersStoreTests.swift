import Foundation
import Keepsake
import Testing

/// Numbers JSON's doubles cannot hold — 128-bit integers at their limits, a 38-digit `Decimal`,
/// a subnormal `Float`, a date to the nanosecond — and a dictionary keyed by `UUID` (which
/// `JSONEncoder` writes as an array) come back exactly from the store: every version, undone
/// and redone in a process that reopened it, equals the version appended.
@MainActor @Suite struct WideNumbersStoreTests {
    let directory = TemporaryDirectory()

    /// `Int128` needs macOS 15: each test runs where it is there.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
    struct Ledger: Versionable, Equatable, Codable {
        var signed: Int128 = 0
        var unsigned: UInt128 = 0
        var amount = Decimal(string: "0.1")!
        var ratio: Float = 0.1
        var stamp = Date(timeIntervalSinceReferenceDate: 0.123_456_789)
        var counts: [UUID: Int] = [:]
        var nested: Int?? = .some(.some(1))
    }

    static let first = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!

    /// The versions the edits make, in order, the initial value first.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
    static var versions: [Ledger] {
        let edits: [(inout Ledger) -> Void] = [
            { $0.signed = .max },
            { $0.unsigned = .max - 7 },
            { $0.amount = Decimal(string: "12345678901234567890.123456789012345678")! },
            { $0.ratio = .leastNonzeroMagnitude },
            { $0.stamp = Date(timeIntervalSinceReferenceDate: 1e9 + 0.000_001) },
            { $0.counts[first] = 7 },
            { $0.signed = .min },
            { $0.amount = Decimal(string: "-0.000000000000000000000000000001")! },
            { $0.counts[first] = nil },
            { $0.nested = .none },
            { $0.unsigned = .max },
        ]
        return edits.reduce(into: [Ledger()]) { versions, edit in
            var next = versions.last!
            edit(&next)
            versions.append(next)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func everyVersionComesBackExactlyAfterReopening(kind: StorageKind) throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        let versions = Self.versions
        let path = directory.path("ledger.keepsake")
        do {
            let writer = try VersioningController(
                Ledger(), storage: try kind.storage(path: path, history: "l"))
            for version in versions.dropFirst() { try writer.append(version) }
        }
        let controller = try VersioningController(
            Ledger(), storage: try kind.storage(path: path, history: "l"))
        guard kind == .durable else { return #expect(controller.value == Ledger()) }
        var index = versions.count - 1
        #expect(controller.value == versions[index])
        while controller.hasUndo {
            try controller.undo()
            index -= 1
            #expect(controller.value == versions[index], "undo to version \(index)")
        }
        #expect(index == 0)
        while controller.hasRedo {
            try controller.redo()
            index += 1
            #expect(controller.value == versions[index], "redo to version \(index)")
        }
        #expect(index == versions.count - 1)
        #expect(controller.storage.undoCount == versions.count - 1)
        #expect(try KeepsakeStore(path: path).verify().isOK)
    }

    /// A durable history's versions are what their `Codable` form decodes to. `Optional`'s
    /// encoding writes `.some(nil)` of an `Int??` as `null`, as it writes `nil`: the store reads
    /// `nil` back, on undo and redo as in the next process. In memory the versions are the
    /// values themselves.
    @Test(arguments: StorageKind.allCases)
    func anOptionalHoldingNoneComesBackAsItsEncodingDecodes(kind: StorageKind) throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        let path = directory.path("nested.keepsake")
        var (emptied, refilled) = (Ledger(), Ledger())
        emptied.nested = .some(.none)
        refilled.nested = .some(.some(2))
        let stored: Int?? = kind == .durable ? .none : .some(.none)
        let writer = try VersioningController(Ledger(), storage: try kind.storage(path: path, history: "l"))
        try writer.append(emptied)
        #expect(writer.value.nested == .some(.none))
        try writer.append(refilled)
        try writer.undo()
        #expect(writer.value.nested == stored)
        try writer.undo()
        try writer.redo()
        #expect(writer.value.nested == stored)
        guard kind == .durable else { return }
        let reader = try VersioningController(Ledger(), storage: try kind.storage(path: path, history: "l"))
        #expect(reader.value.nested == .none)
        try reader.redo()
        #expect(reader.value == refilled)
        try reader.undo()
        #expect(reader.value.nested == .none)
        #expect(try KeepsakeStore(path: path).verify().isOK)
    }
}
