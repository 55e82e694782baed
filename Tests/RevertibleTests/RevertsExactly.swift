import Revertible
import Testing

/// The changed paths of `edited` against `original`, as stored records name them, after checking
/// that its reversion reverts and redoes exactly, directly and through those records (resolved as
/// a store resolves them, where no position is kept).
func pathsRevertingExactly<Value: Versionable & Equatable & Codable>(
    _ original: Value, _ edited: Value, sourceLocation: SourceLocation = #_sourceLocation
) throws -> [String] {
    let reversion = try #require(edited.reversion(to: original), sourceLocation: sourceLocation)
    let stored = try Reversion(records: try reversion.records(), resolvingAgainst: edited)
    for reversion in [reversion, stored] {
        var value = edited
        try reversion.revert(&value)
        #expect(value == original, sourceLocation: sourceLocation)
        try reversion.inverse.revert(&value)
        #expect(value == edited, sourceLocation: sourceLocation)
    }
    return try reversion.records().map(\.path.description)
}
