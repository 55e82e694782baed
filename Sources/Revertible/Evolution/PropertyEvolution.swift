import Foundation

/// How a property of a ``Versionable`` type changed since data was stored: a rename, or a new
/// type with a conversion from the old one. Declared once, in
/// ``Versionable/propertyEvolution``, it serves every stored form: change records (their
/// paths), history checkpoints and snapshots (their JSON).
///
/// ```swift
/// struct Doc: Versionable, Codable {
///     var name: String        // stored as "title" by earlier versions of the app
///     var count: String       // stored as an Int
///
///     static let propertyEvolution: [PropertyEvolution] = [
///         .renamed("title", to: "name"),
///         .converted("count", from: Int.self) { String($0) },
///     ]
/// }
/// ```
///
/// Declarations name properties, as Swift declares them, whatever JSON keys their type's
/// `CodingKeys` store them under.
///
/// Changes that need no declaration: a new property with a default value (the stored value is
/// used where there is one, the app's value where not; `nil` for an optional, as `Codable`
/// reads a missing key), a removed property (its stored changes are skipped — unless the type's
/// own `init(from:)` reads its key, as after a move into a struct of its own — and a storage
/// keeps its stored values for an earlier release until it is declared ``removed(_:)``), a new enum case,
/// a property made optional, a property renamed with its old name kept as its JSON key in
/// `CodingKeys` (`case name = "title"`: its stored changes are read as that property's).
public struct PropertyEvolution: @unchecked Sendable {
    enum Kind {
        case renamed(old: String, new: String)
        case converted(name: String, conversion: Conversion)
        case removed(key: String)
    }

    // Unchecked because a conversion closure captures the old type's metatype; it only
    // decodes with it and calls the caller's `@Sendable` function.
    package struct Conversion {
        package let oldType: String
        /// Decodes the old stored form and converts it.
        package let convert: (any Decoder) throws -> Any
    }

    let kind: Kind

    /// The property now called `new` was stored as `old`.
    ///
    /// - Parameters:
    ///   - old: The name earlier data uses.
    ///   - new: The property's name now.
    public static func renamed(_ old: String, to new: String) -> Self {
        Self(kind: .renamed(old: old, new: new))
    }

    /// The property stored under `key` is gone for good: a storage lets its stored values go.
    ///
    /// A property removed needs no declaration to open stored data: its stored changes are
    /// skipped (unless the type's `init(from:)` reads its key), and its stored values ignored. A storage that stores values again whole (a
    /// Keepsake checkpoint) keeps what the model does not read, since that may be a later
    /// release's property, read by an earlier one: an earlier release opening the same store
    /// (another device, a downgrade) still finds it. Declare the removal once no release that
    /// reads it is in use: the values are dropped at the next checkpoint, which costs what the
    /// model's own encoding costs again.
    ///
    /// ```swift
    /// static let propertyEvolution: [PropertyEvolution] = [.removed("legacyColor")]
    /// ```
    ///
    /// - Parameter key: The JSON key the property was stored under: its name, unless the type's
    ///   `CodingKeys` gave it another.
    public static func removed(_ key: String) -> Self {
        Self(kind: .removed(key: key))
    }

    /// The property `name` was stored as an `Old`; `convert` makes today's value of one.
    ///
    /// A stored value is converted where it does not decode as today's type, and always where
    /// it is stored under the property's name before a rename declared beside this one: only
    /// an earlier model wrote that name. So a change of meaning whose JSON both types read
    /// (cents in an `Int`, dollars in a `Double`) takes a new name as well:
    ///
    /// ```swift
    /// .renamed("cents", to: "dollars"),
    /// .converted("dollars", from: Int.self) { Double($0) / 100 },
    /// ```
    ///
    /// - Parameters:
    ///   - name: The property's name now (after any rename).
    ///   - oldType: The type earlier data holds.
    ///   - convert: Turns an old value into a new one.
    public static func converted<Old: Decodable, New>(
        _ name: String, from oldType: Old.Type, _ convert: @escaping @Sendable (Old) throws -> New
    ) -> Self {
        Self(
            kind: .converted(
                name: name,
                conversion: Conversion(oldType: "\(Old.self)") { decoder in
                    try convert(try Old(from: decoder))
                }))
    }
}

extension Array where Element == PropertyEvolution {
    /// The current name of a property stored as `stored`, or `nil` when it was not renamed.
    package func currentName(of stored: String) -> String? {
        for evolution in self {
            if case .renamed(let old, let new) = evolution.kind, old == stored { return new }
        }
        return nil
    }

    /// The name stored data used for the property now called `current`, if it was renamed.
    package func storedName(of current: String) -> String? {
        for evolution in self {
            if case .renamed(let old, let new) = evolution.kind, new == current { return old }
        }
        return nil
    }

    /// The names stored data used for properties renamed since.
    package var formerNames: [String] {
        compactMap { evolution in
            if case .renamed(let old, _) = evolution.kind { return old }
            return nil
        }
    }

    /// The stored keys of the properties declared removed.
    package var removedKeys: [String] {
        compactMap { evolution in
            if case .removed(let key) = evolution.kind { return key }
            return nil
        }
    }

    /// The conversion declared for the property now called `name`.
    package func conversion(for name: String) -> PropertyEvolution.Conversion? {
        for evolution in self {
            if case .converted(let converted, let conversion) = evolution.kind, converted == name {
                return conversion
            }
        }
        return nil
    }
}
