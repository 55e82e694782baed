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
    /// A value with no equality: a formatter, a callback.
    struct Scratch: Sendable { var format: @Sendable (Int) -> String = { "\($0)" } }

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

/// A class shares its instances between versions, so a change made inside one in place is in
/// every version at once, and no diff can see it. A type tracked with no code stops at its first
/// diff on a `var` that is such a class or holds its instances, or on being a class itself,
/// naming the class, since its changes would be lost. A class that adopts ``VersionableLeaf``
/// (its author's word that its instances are replaced, never changed) is tracked whole; a `let`
/// or an ignored property is not tracked at all.
@Suite struct SharedInstanceTests {
    final class Style: Codable, Equatable, @unchecked Sendable {
        var color: String
        init(color: String) { self.color = color }
        static func == (a: Style, b: Style) -> Bool { a.color == b.color }
    }

    final class Layer: Codable, Equatable, Identifiable, @unchecked Sendable {
        var id: Int
        var name: String
        init(id: Int, name: String) { (self.id, self.name) = (id, name) }
        static func == (a: Layer, b: Layer) -> Bool { a.id == b.id && a.name == b.name }
    }

    /// Replaced whole, never changed in place.
    final class Theme: Codable, Equatable, VersionableLeaf, Sendable {
        let name: String
        init(name: String) { self.name = name }
        static func == (a: Theme, b: Theme) -> Bool { a.name == b.name }
    }

    struct Styled: Versionable, Equatable, Codable {
        var title: String
        var style: Style
    }

    struct Layered: Versionable, Equatable, Codable {
        var title: String
        var layers: [String: [Layer]?]
    }

    final class Page: Versionable, Equatable, Codable, @unchecked Sendable {
        var title = ""
        static func == (a: Page, b: Page) -> Bool { a.title == b.title }
    }

    struct Themed: Versionable, Equatable, Codable {
        var title: String
        var theme: Theme
        var themes: [Theme]
        let fixed: Style
        @VersionableIgnored var scratch = Style(color: "")
    }

    @Test func aPropertyOfAClassStopsTheFirstDiffNamingIt() async throws {
        let result = try #require(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let old = Styled(title: "a", style: Style(color: "black"))
                var new = old
                new.style.color = "red"
                new.title = "b"
                _ = new.reversion(to: old)
            })
        #expect(
            String(decoding: result.standardErrorContent, as: UTF8.self).contains(
                """
                Stored property Styled.style has type Style, a class: the versions share each \
                instance, so a change made inside one in place cannot be seen, and would be lost. \
                Make Style a struct; if its instances are never changed once made, conform it to \
                VersionableLeaf; or mark the property @VersionableIgnored, or implement \
                addReversions(into:) for Styled.
                """))
    }

    @Test func aPropertyHoldingInstancesOfAClassInContainersStopsTheFirstDiff() async throws {
        let result = try #require(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let old = Layered(title: "a", layers: ["top": [Layer(id: 1, name: "x")]])
                var new = old
                new.title = "b"
                _ = new.reversion(to: old)
            })
        #expect(
            String(decoding: result.standardErrorContent, as: UTF8.self).contains(
                "Stored property Layered.layers holds instances of Layer, a class: the versions share"))
    }

    @Test func aClassTrackedWithNoCodeStopsItsFirstDiff() async throws {
        let result = try #require(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let old = Page()
                let new = Page()
                new.title = "b"
                _ = new.reversion(to: old)
            })
        #expect(
            String(decoding: result.standardErrorContent, as: UTF8.self).contains(
                """
                Page is a class: the versions a controller keeps would share one instance, so a \
                change made in place could not be seen, and would be lost.
                """))
    }

    @Test func aLeafClassIsReplacedWholeAndALetOrIgnoredOneIsNotTracked() throws {
        let old = Themed(
            title: "a", theme: Theme(name: "light"), themes: [Theme(name: "light")],
            fixed: Style(color: "black"))
        var new = old
        new.theme = Theme(name: "dark")
        new.themes.append(Theme(name: "sepia"))
        new.fixed.color = "red"
        new.scratch = Style(color: "blue")
        let reversion = try #require(new.reversion(to: old))
        let records = try reversion.records()
        #expect(records.map(\.path.description) == ["theme", "themes"])
        #expect(
            records.map { String(decoding: $0.payload, as: UTF8.self) } == [
                #"{"new":{"name":"dark"},"old":{"name":"light"}}"#,
                #"{"insertions":[{"element":{"name":"sepia"},"offset":1}],"newCount":2,"oldCount":1,"removals":[]}"#,
            ])
        try Reversion(records: records, resolvingAgainst: new).revert(&new)
        #expect(new.theme.name == "light" && new.themes.map(\.name) == ["light"])
        #expect(new.fixed.color == "red" && new.scratch.color == "blue")
    }
}
