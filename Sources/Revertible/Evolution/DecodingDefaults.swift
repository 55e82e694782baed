import Foundation

/// A type whose stored values may lack properties added since they were stored, with a value
/// that supplies them.
///
/// Stored data is read by merging it over what the app provides at the same place: a history's
/// initial value, a restore template (see ``EvolvingDecoding``). An array element or a
/// dictionary value the app's value does not hold has no such place — a todo stored by the
/// first release, inserted in a history or kept in a checkpoint, when the app's initial value
/// holds no todos — and synthesized `Codable` ignores a property's default value, so a property
/// added to the element type would stop the store from opening. Give the type a value to take
/// those properties from:
///
/// ```swift
/// struct Todo: Codable, Equatable, Identifiable {
///     var id: Int
///     var title: String
///     var priority = 0  // added in 1.1
/// }
///
/// extension Todo: DecodingDefaults {
///     static var decodingDefaults: Todo { Todo(id: 0, title: "") }
/// }
/// ```
///
/// Every stored `Todo` (in a checkpoint, a stored change, a snapshot) that lacks `priority`
/// reads `0`; one that has it keeps its own. A property the stored data holds is never taken
/// from here. An optional the stored data leaves out reads `nil`, as `Codable` reads it.
///
/// Where the app provides a value at the same place (a property of the history's initial
/// value, a dictionary value under the same key), that value comes first. An array element
/// takes only these: the app's array holds other elements, and taking a property from its first
/// one would read a value no stored element had.
public protocol DecodingDefaults: Encodable {
    /// The value whose properties fill those a stored value lacks. Encoded once per type.
    static var decodingDefaults: Self { get }
}

/// The JSON trees of ``DecodingDefaults`` values, made once per type.
enum DecodingDefaultsTree {
    private static let trees = Locked<[ObjectIdentifier: Tree]>([:])

    /// A parsed JSON value, held so that the cache can hold it.
    private final class Tree: @unchecked Sendable {
        // Sound because it is never changed after `init`.
        let node: Any?
        init(_ node: Any?) { self.node = node }
    }

    /// The parsed JSON of `type`'s ``DecodingDefaults/decodingDefaults``, or `nil` when `type`
    /// has none (or they do not encode).
    static func of(_ type: Any.Type) -> Any? {
        guard let defaults = type as? any DecodingDefaults.Type else { return nil }
        let key = ObjectIdentifier(type)
        if let tree = trees.withLock({ $0[key] }) { return tree.node }
        let node = (try? ChangeRecord.makeEncoder().encode(defaults.decodingDefaults)).flatMap(
            FoundationJSON.object)
        trees.withLock { $0[key] = Tree(node) }
        return node
    }
}
