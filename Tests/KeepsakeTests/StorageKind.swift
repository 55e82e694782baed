import Foundation
import Keepsake
import Testing

/// The two storages a controller keeps its versions in: one test body runs against both.
enum StorageKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory
    case durable

    var testDescription: String { rawValue }

    /// The storage for history `name` of the store at `path` (created on first use).
    func storage<Value: Versionable & Codable & SendableMetatype>(path: String, history name: String) throws
        -> HistoryStorage<
            Value
        >
    {
        switch self {
        case .inMemory: .inMemory
        case .durable: .keepsake(try KeepsakeStore(path: path), history: name)
        }
    }
}

/// A tag type of the app's own: tags are any `Hashable & Codable` value, stored as JSON.
enum Milestone: Hashable, Codable {
    case review(round: Int)
    case shipped
}
