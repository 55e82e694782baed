import Foundation
import Revertible
import TestSupport
import Testing

/// `String` and `Data` keep only the changed range, yet refuse any other version.
@Suite struct LargeValueTests {
    static let mebibyte = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    @Test func fiftyOneByteEditsToOneMebibyteKeepAFewKilobytes() throws {
        var user = User(name: "", imageData: Self.mebibyte)
        var reversions: [Reversion<User>] = []
        var generator = SeededGenerator(seed: 50)
        for _ in 0..<50 {
            let before = user
            let offset = Int.random(in: 0..<user.imageData.count, using: &generator)
            user.imageData[offset] &+= 1
            reversions.append(try #require(user.reversion(to: before)))
        }
        let storedBytes = try reversions.flatMap { try $0.records() }.reduce(0) { $0 + $1.payload.count }
        #expect(storedBytes < 8 * 1024, "50 one-byte edits stored \(storedBytes) bytes")
        for reversion in reversions.reversed() { try reversion.revert(&user) }
        #expect(user.imageData == Self.mebibyte)
    }

    @Test func aDifferenceOnlyAtByte12345IsTheWrongVersion() throws {
        var user = User(name: "", imageData: Self.mebibyte)
        let original = user
        user.imageData[900_000] = 1
        let reversion = try #require(user.reversion(to: original))
        user.imageData[12_345] &+= 1
        let tampered = user
        #expect(
            throws: ReversionError.wrongVersion(
                path: [.property("imageData")], reason: "the content digest differs")
        ) {
            try reversion.revert(&user)
        }
        #expect(user == tampered)
    }

    @Test func textEditsNeverSplitAScalar() throws {
        let base = String(repeating: "abc", count: 200)
        var user = User(name: base + "é" + base, imageData: Data())
        let original = user
        user.name = base + "è" + base
        let reversion = try #require(user.reversion(to: original))
        let patch = try JSONDecoder().decode(
            RangePatch<String>.self, from: try reversion.records()[0].payload)
        #expect(patch.offset == 600)
        #expect(patch.old == "é")
        #expect(patch.new == "è")
        try reversion.revert(&user)
        #expect(user == original)
    }

    @Test func aCorruptStoredRangeIsRefused() throws {
        let payload = #"{"new":"x","newCount":1,"offset":5,"old":"","oldCount":0}"#
        let record = ChangeRecord(path: [.property("name")], kind: "text", payload: Data(payload.utf8))
        #expect(throws: ReversionError.self) {
            try Reversion<User>(records: [record], resolvingAgainst: User(name: "", imageData: Data()))
        }
    }
}
