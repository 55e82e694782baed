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
