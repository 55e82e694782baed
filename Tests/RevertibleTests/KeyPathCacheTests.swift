import Testing

@testable import Revertible

/// Key paths into generic types are built once per type, and each type gets its own.
@Suite struct KeyPathCacheTests {
    @Test func anIdentityKeyPathIsBuiltOncePerType() {
        let int = KeyPathCache.identity(Int.self)
        #expect(int == \Int.self)
        #expect(int === KeyPathCache.identity(Int.self))
        let strings = KeyPathCache.identity([String].self)
        #expect(strings == \[String].self)
        #expect(strings === KeyPathCache.identity([String].self))
        var value = ["a"]
        value[keyPath: strings] = ["b"]
        #expect(value == ["b"])
    }

    // Roots of their own: no diff in another test caches a path for them.
    struct Probe { var count = 0 }
    struct Other { var name = "" }

    @Test func aSlotHoldsOnePathPerRootType() {
        let probes = KeyPathCache.path(.optionalWrapped, of: Probe?.self) {
            () -> WritableKeyPath<Probe?, Probe?> in \.self
        }
        let others = KeyPathCache.path(.optionalWrapped, of: Other?.self) {
            () -> WritableKeyPath<Other?, Other?> in \.self
        }
        // A path made for one root is never handed out for another.
        #expect(ObjectIdentifier(type(of: probes)) != ObjectIdentifier(type(of: others)))
        var probe: Probe? = Probe(count: 1)
        probe[keyPath: probes] = Probe(count: 2)
        #expect(probe?.count == 2)
        var built = false
        let again = KeyPathCache.path(.optionalWrapped, of: Probe?.self) {
            () -> WritableKeyPath<Probe?, Probe?> in
            built = true
            return \.self
        }
        #expect(again === probes)
        #expect(!built)
    }

    /// What the cached paths serve: optionals and arrays of leaves diff and revert as before.
    @Test func optionalsAndArraysOfLeavesStillDiffAndRevert() throws {
        struct Note: Versionable, Equatable {
            var title: String?
            var tags: [String]
        }
        let old = Note(title: "a", tags: ["x", "y", "z"])
        var new = old
        new.title = "b"
        new.tags[1] = "Y"
        let reversion = try #require(new.reversion(to: old))
        #expect(reversion.paths.map(\.description) == ["title", "tags[1]"])
        var none = new
        none.title = nil
        let toNone = try #require(none.reversion(to: new))
        #expect(toNone.paths.map(\.description) == ["title"])
        try toNone.revert(&none)
        #expect(none == new)
        try reversion.revert(&new)
        #expect(new == old)
    }
}
