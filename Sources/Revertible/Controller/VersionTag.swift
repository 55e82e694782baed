import Foundation

/// The tag of a version: any `Hashable & Codable` value, kept as its JSON text so that it can
/// be stored and compared across processes.
///
/// You rarely make one yourself: the controller's tagging methods take any `Hashable` value
/// that is `Encodable` (a string, a number, your own enum) and turn it into a tag. Two tags are
/// equal when their JSON is, which is what lets `undo(to: Milestone.reviewed)` find a version
/// tagged by an earlier process.
///
/// ```swift
/// enum Milestone: String, Codable { case draft, reviewed }
/// controller.tag(Milestone.reviewed)
/// controller.tags().undo          // [nil, "reviewed"]: tags compare with string literals too
/// controller.tags().undo.last??.value(as: Milestone.self)   // .reviewed
/// ```
public struct VersionTag: Hashable, Sendable, CustomStringConvertible {
    /// The tag's JSON text, with sorted keys: `"reviewed"` (quotes included), `42`, `{"id":7}`.
    public let json: String

    /// A tag holding `json`, which must be valid JSON (a bare string, number or boolean
    /// included).
    ///
    /// - Parameter json: JSON text, as ``json`` gives it.
    /// - Returns: `nil` when `json` is not valid JSON.
    public init?(json: String) {
        guard (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)) != nil
        else { return nil }
        self.json = json
    }

    /// The tag of `value`.
    ///
    /// - Parameter value: A string, a number, an enum case: any `Encodable` value.
    /// - Throws: ``ReversionError/notEncodable(path:type:)`` when the value does not encode as
    ///   JSON (such as a `Double.nan`).
    public init(_ value: some Encodable) throws(ReversionError) {
        do {
            json = String(decoding: try ChangeRecord.makeEncoder().encode(value), as: UTF8.self)
        } catch {
            throw .notEncodable(path: [], type: "the tag \(type(of: value)) (\(error))")
        }
    }

    /// The tag of a value passed as `AnyHashable`, as the controller's methods take it.
    ///
    /// - Throws: ``ReversionError/notEncodable(path:type:)`` when the value is not `Encodable`.
    init(tagging value: AnyHashable) throws(ReversionError) {
        if let tag = value.base as? VersionTag {
            self = tag
            return
        }
        guard let encodable = value.base as? any Encodable else {
            throw .notEncodable(path: [], type: "the tag \(type(of: value.base)), which is not Encodable,")
        }
        try self.init(encodable)
    }

    /// The tag decoded as `type`, or `nil` when it is not one.
    ///
    /// - Parameter type: The type the tag was made from.
    public func value<T: Decodable>(as type: T.Type) -> T? {
        try? ChangeRecord.makeDecoder().decode(T.self, from: Data(json.utf8))
    }

    /// A string tag as the string itself; any other as its JSON.
    public var description: String { value(as: String.self) ?? json }
}

extension VersionTag: ExpressibleByStringLiteral {
    /// A string tag, as in `controller.tags().undo == ["original", nil]`.
    public init(stringLiteral value: String) {
        // Encoding a String as JSON cannot fail.
        json = String(decoding: (try? ChangeRecord.makeEncoder().encode(value)) ?? Data(), as: UTF8.self)
    }
}

extension VersionTag: ExpressibleByIntegerLiteral {
    /// An integer tag.
    public init(integerLiteral value: Int) {
        json = String(value)
    }
}
