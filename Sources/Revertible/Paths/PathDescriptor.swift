public import Foundation

/// Where a change happened inside a value: a list of typed components with a readable text form.
///
/// Path descriptors are data, not `KeyPath` descriptions: they are `Codable`, `Hashable` and mean
/// the same thing in every process, so they can be stored and later resolved back to a writable
/// location through the root type's own ``Versionable/addReversions(into:)``.
///
/// The text form joins property names with dots and puts positions, keys and ids in brackets:
///
/// ```swift
/// let path = try PathDescriptor(parsing: #"childActivities[id: "A1"].priority.reason"#)
/// path.components  // [.property("childActivities"), .id("\"A1\""), .property("priority"), .property("reason")]
/// path.description // childActivities[id: "A1"].priority.reason
/// ```
///
/// The root itself is the empty path, whose text form is the empty string.
public struct PathDescriptor: Hashable, Sendable {
    /// The components from the root to the changed location.
    public var components: [PathComponent]

    /// Creates a path from its components.
    ///
    /// - Parameter components: The steps from the root to the location; empty for the root.
    public init(_ components: [PathComponent] = []) {
        self.components = components
    }

    /// Parses a path from its text form.
    ///
    /// - Parameter text: A path as written by ``description``.
    /// - Throws: ``PathDescriptor/ParseError`` naming the offset and what was expected there.
    public init(parsing text: String) throws(ParseError) {
        self.components = try PathText.parse(text)
    }

    /// Whether this is the root path.
    public var isRoot: Bool { components.isEmpty }

    /// This path followed by `other`.
    ///
    /// - Parameter other: The path to append.
    /// - Returns: A path through this one and then `other`.
    public func appending(_ other: PathDescriptor) -> PathDescriptor {
        PathDescriptor(components + other.components)
    }

    /// Whether `prefix` is this path or one of its ancestors.
    ///
    /// - Parameter prefix: The candidate ancestor.
    /// - Complexity: O(`prefix.components.count`).
    public func hasPrefix(_ prefix: PathDescriptor) -> Bool {
        components.starts(with: prefix.components)
    }
}

extension PathDescriptor: CustomStringConvertible {
    /// The text form, such as `childActivities[3].title`; it parses back to an equal path.
    public var description: String {
        var text = ""
        for (offset, component) in components.enumerated() {
            PathText.write(component, first: offset == 0, into: &text)
        }
        return text
    }
}

extension PathDescriptor: ExpressibleByArrayLiteral {
    /// Creates a path from a list of components.
    public init(arrayLiteral elements: PathComponent...) {
        self.init(elements)
    }
}

extension PathDescriptor: ExpressibleByStringLiteral {
    /// Parses a path literal such as `"items[id: 7].title"`.
    ///
    /// - Precondition: The literal is a valid path; use ``init(parsing:)`` for text from
    ///   elsewhere.
    public init(stringLiteral text: String) {
        do {
            self = try PathDescriptor(parsing: text)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

extension PathDescriptor: Codable {
    /// Decodes a path from its text form.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the text is not a valid path.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self.components = try PathText.parse(text)
        } catch {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Invalid path \(text.debugDescription): \(error)")
        }
    }

    /// Encodes the path as its text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension PathDescriptor {
    /// Why a text could not be parsed as a ``PathDescriptor``.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text that was being parsed.
        public var text: String
        /// The offset, in UTF-8 bytes, where parsing stopped.
        public var offset: Int
        /// What was expected at `offset`.
        public var expected: String

        /// Describes a parse failure.
        ///
        /// - Parameters:
        ///   - text: The text being parsed.
        ///   - offset: The UTF-8 offset where parsing stopped.
        ///   - expected: What was expected there.
        public init(text: String, offset: Int, expected: String) {
            self.text = text
            self.offset = offset
            self.expected = expected
        }

        /// A sentence naming the offset and what was expected.
        public var description: String {
            "invalid path \(text.debugDescription) at byte \(offset): expected \(expected)"
        }
    }
}

extension PathDescriptor.ParseError: LocalizedError {
    /// The ``description``, for `error.localizedDescription`.
    public var errorDescription: String? { description }
}
