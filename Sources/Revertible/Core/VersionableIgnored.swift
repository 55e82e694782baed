/// Leaves a stored property out of the tracking that ``Versionable`` synthesizes.
///
/// Use it for properties whose meaning an undo would break, such as a last-updated date:
///
/// ```swift
/// struct Note: Versionable {
///     var title: String
///     @VersionableIgnored var lastUpdated = Date()
/// }
/// ```
///
/// The wrapper is transparent to `Equatable`, `Hashable` and `Codable`: it encodes as the
/// wrapped value alone.
///
/// A reversion checks the value it is given by what is tracked, so an ignored property that
/// changed since never stops an undo: a note added to an array or a dictionary, or set where
/// there was `nil`, is taken out again even after its `lastUpdated` changed. Undo and redo
/// leave an ignored property as they find it, except in a value they put back whole (such a
/// note, redone), which brings it back as it was recorded.
@propertyWrapper
public struct VersionableIgnored<Value> {
    /// The property's value, never tracked.
    public var wrappedValue: Value

    /// Wraps a value that is not tracked.
    ///
    /// - Parameter wrappedValue: The initial value.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }
}

/// Lets reflection recognise ``VersionableIgnored`` whatever its generic argument.
protocol VersionableIgnoredMarker {}
extension VersionableIgnored: VersionableIgnoredMarker {}

extension VersionableIgnored: Equatable where Value: Equatable {}
extension VersionableIgnored: Hashable where Value: Hashable {}
extension VersionableIgnored: Sendable where Value: Sendable {}

extension VersionableIgnored: Decodable where Value: Decodable {
    /// Decodes the wrapped value directly.
    public init(from decoder: any Decoder) throws {
        self.wrappedValue = try Value(from: decoder)
    }
}

extension VersionableIgnored: Encodable where Value: Encodable {
    /// Encodes the wrapped value directly.
    public func encode(to encoder: any Encoder) throws {
        try wrappedValue.encode(to: encoder)
    }
}
