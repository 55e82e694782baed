import Foundation
import Revertible
import Testing

/// Pins the behaviour of the standard library's reflection SPI that one-line conformance uses.
@Suite struct FieldTableTests {
    struct Plain: Versionable, Equatable {
        let id: Int
        var name: String
        var count: Int
        @VersionableIgnored var cache: [String]
        var color: Color
    }

    @Test func everyStoredVarIsTrackedUnderItsOwnNameInDeclarationOrder() throws {
        let old = Plain(id: 1, name: "a", count: 1, cache: [], color: .red)
        var new = old
        new.name = "b"
        new.count = 2
        new.cache = ["ignored"]
        new.color = .blue
        let reversion = try #require(new.reversion(to: old))
        #expect(reversion.paths.map(\.description) == ["name", "count", "color"])
        try reversion.revert(&new)
        #expect(new.name == "a" && new.count == 1 && new.color == .red)
        #expect(new.cache == ["ignored"])
    }

    @Test func anIgnoredPropertyEncodesAsItsValue() throws {
        struct Stamped: Codable, Equatable { @VersionableIgnored var at: Int }
        let data = try JSONEncoder().encode(Stamped(at: 5))
        #expect(String(decoding: data, as: UTF8.self) == #"{"at":5}"#)
        #expect(try JSONDecoder().decode(Stamped.self, from: data) == Stamped(at: 5))
    }

    @Test func anEquatableEnumWithoutRegistrationsIsOverwrittenWhole() throws {
        enum Mode: Equatable, Versionable {
            case a
            case b(Int)
        }
        var mode = Mode.b(1)
        let original = mode
        mode = .b(2)
        let reversion = try #require(mode.reversion(to: original))
        #expect(reversion.paths == [[]])
        try reversion.revert(&mode)
        #expect(mode == original)
    }

    @Test func aStructWithoutRegistrationsCrashesWithGuidance() async {
        await #expect(processExitsWith: .failure) {
            let a = Holder(handle: Handle())
            _ = a.reversion(to: Holder(handle: Handle()))
        }
    }
}

private final class Handle {}
private struct Holder: Versionable { var handle: Handle }

/// A stored `var` that nothing can track (neither ``Versionable`` nor `Equatable`) stops a type
/// tracked with no code at its first diff, saying which, since its changes would be lost; a
/// type that registers its properties by hand may hold such a property, and its stored
/// changes resolve.
@Suite struct UntrackablePropertyTests {
    /// A reference with no equality: a cache, a delegate, a formatter.
    final class Scratch: @unchecked Sendable { var uses = 0 }

    struct RegisteredByHand: Versionable, Equatable {
        var title: String
        var scratch = Scratch()

        static func == (a: Self, b: Self) -> Bool { a.title == b.title }

        func addReversions(into reverter: inout some Reverter<RegisteredByHand>) {
            reverter.appendReversion(at: \.title)
        }
    }

    struct TrackedWithNoCode: Versionable, Equatable {
        var title: String
        var scratch = Scratch()

        static func == (a: Self, b: Self) -> Bool { a.title == b.title }
    }

    @Test func aTypeRegisteredByHandMayHoldOne() throws {
        let old = RegisteredByHand(title: "draft")
        var new = old
        new.title = "final"
        let records = try #require(new.reversion(to: old)).records()
        #expect(records.map(\.path.description) == ["title"])
        #expect(
            records.map { String(decoding: $0.payload, as: UTF8.self) } == [
                #"{"new":"final","newCount":5,"offset":0,"old":"draft","oldCount":5}"#
            ]
        )
        try Reversion(records: records, resolvingAgainst: new).revert(&new)
        #expect(new.title == "draft")
    }

    @Test func aTypeTrackedWithNoCodeStopsAtItsFirstDiff() async throws {
        let result = try #require(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let old = TrackedWithNoCode(title: "draft")
                var new = old
                new.title = "final"
                _ = new.reversion(to: old)
            })
        #expect(
            String(decoding: result.standardErrorContent, as: UTF8.self).contains(
                """
                Stored property TrackedWithNoCode.scratch has type Scratch, which is neither Versionable \
                nor Equatable.
                """))
    }
}
