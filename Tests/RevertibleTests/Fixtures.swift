import Foundation
import Revertible

/// The seed's `User`, with explicit registration.
struct User: Versionable, Equatable, Codable {
    var name: String
    var imageData: Data

    func addReversions(into reverter: inout some Reverter<User>) {
        reverter.appendReversion(at: \.name)
        reverter.appendReversion(at: \.imageData)
    }
}

/// The seed's `Activity`: zero-boilerplate conformance, an enum with payloads, nesting.
struct Activity: Identifiable, Versionable, Equatable, Codable {
    let id: UUID
    var title: String
    var priority: Priority
    var childActivities: [Activity]

    enum Priority: Equatable, Codable, Versionable {
        case low
        case medium(dueDate: Date?)
        case high(dueDate: Date, reason: String)

        // The seed macro's expansion, written by hand: a case change overwrites the whole
        // enum; the same case records its payload's changes.
        func addReversions(into reverter: inout some Reverter<Self>) {
            guard !reverter.hasChanged(at: \.caseName) else {
                reverter.appendOverwriteReversion(at: \.self)
                return
            }
            reverter.appendReversion(at: \.mediumDueDate, named: "medium_dueDate")
            reverter.appendReversion(at: \.highDueDate, named: "high_dueDate")
            reverter.appendReversion(at: \.highReason, named: "high_reason")
        }

        private var caseName: Int {
            switch self {
            case .low: 0
            case .medium: 1
            case .high: 2
            }
        }

        private var mediumDueDate: Date? {
            get {
                guard case .medium(let dueDate) = self else { return nil }
                return dueDate
            }
            set {
                guard case .medium = self else { return }
                self = .medium(dueDate: newValue)
            }
        }

        private var highDueDate: Date? {
            get {
                guard case .high(let dueDate, _) = self else { return nil }
                return dueDate
            }
            set {
                guard case .high(_, let reason) = self, let newValue else { return }
                self = .high(dueDate: newValue, reason: reason)
            }
        }

        private var highReason: String? {
            get {
                guard case .high(_, let reason) = self else { return nil }
                return reason
            }
            set {
                guard case .high(let dueDate, _) = self, let newValue else { return }
                self = .high(dueDate: dueDate, reason: newValue)
            }
        }
    }

    static func mock(_ n: Int) -> Activity {
        Activity(id: UUID(uuid: uuid(n)), title: "Child \(n)", priority: .low, childActivities: [])
    }

    static func uuid(_ n: Int) -> uuid_t {
        let b = UInt8(truncatingIfNeeded: n)
        let c = UInt8(truncatingIfNeeded: n >> 8)
        return (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, c, b)
    }
}

/// A leaf type of the user's, made diffable in one line.
enum Color: String, Codable, VersionableLeaf {
    case red, green, blue
}

/// A struct holding every kind of tracked property, for the randomized tests.
struct Document: Versionable, Equatable, Codable {
    struct Item: Identifiable, Versionable, Equatable, Codable {
        let id: Int
        var name: String
        var done: Bool
        var tags: Set<String>
    }

    var title: String
    var count: Int
    var ratio: Double
    var color: Color
    var note: String?
    var blob: Data
    var items: [Item]
    var numbers: [Int]
    var scores: [String: Int]
    var nested: [String: Item]
    @VersionableIgnored var lastOpened: Date

    static let empty = Document(
        title: "", count: 0, ratio: 0, color: .red, note: nil, blob: Data(), items: [], numbers: [],
        scores: [:],
        nested: [:], lastOpened: Date(timeIntervalSince1970: 0))
}

/// A value type that is neither Codable nor Equatable, tracked in memory only.
struct Opaque: VersionableLeaf {
    var token: Int
    static func == (a: Opaque, b: Opaque) -> Bool { a.token == b.token }
}

struct HoldsOpaque: Versionable {
    var opaque: Opaque
}
