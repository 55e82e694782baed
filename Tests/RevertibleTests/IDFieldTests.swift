import Foundation
import TestSupport
import Testing

@testable import Revertible

/// An element found by its id's bytes (``IDField``) is the one `firstIndex` finds by `==`: the
/// first of its id, whatever the id's size, with ids shared by several elements and ids that no
/// element has.
@Suite struct IDFieldTests {
    struct Wide: Identifiable, Equatable {
        var name: String
        let id: UUID
    }

    struct Word: Identifiable, Equatable {
        var flag: Bool
        let id: Int
        var note: String
    }

    struct Narrow: Identifiable, Equatable {
        var flag: Bool
        let id: Int32
    }

    struct Tiny: Identifiable, Equatable {
        let id: UInt8
        var count: Int
    }

    @Test func idsFoundByTheirBytesAreTheFirstOfTheirID() throws {
        var random = SeededGenerator(seed: 16)
        let uuids = try (0..<40).map {
            try #require(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012X", $0 * 7)))
        }
        try check(Wide.self, &random) { Wide(name: "w\($0)", id: uuids[$0]) }
        try check(Word.self, &random) { Word(flag: $0.isMultiple(of: 2), id: $0 * 7919, note: "\($0)") }
        try check(Narrow.self, &random) { Narrow(flag: true, id: Int32($0) - 20) }
        try check(Tiny.self, &random) { Tiny(id: UInt8($0), count: $0) }
    }

    /// Random arrays of elements made by `make` from ids drawn out of 40 (so some are shared
    /// and some are absent), each id looked up, and each element's id looked for before it.
    private func check<E: Identifiable>(
        _: E.Type, _ random: inout SeededGenerator, _ make: (Int) -> E
    ) throws {
        let field = try #require(IDField.of(E.self))
        #expect(field.size == MemoryLayout<E.ID>.size)
        for _ in 0..<200 {
            let elements = (0..<Int.random(in: 0...60, using: &random)).map { _ in
                make(Int.random(in: 0..<40, using: &random))
            }
            for id in (0..<40).map({ make($0).id }) {
                #expect(field.index(of: id, in: elements) == elements.firstIndex { $0.id == id })
            }
            for index in elements.indices {
                let lower = Int.random(in: 0...index, using: &random)
                let range = lower..<Int.random(in: lower...elements.count, using: &random)
                #expect(
                    field.hasID(of: index, in: elements, among: range)
                        == elements[range].contains { $0.id == elements[index].id })
            }
        }
    }
}
