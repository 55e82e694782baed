public import Foundation
public import Revertible

/// The seed's `User`, with explicit registration.
public struct User: Versionable, Equatable, Codable {
    public var name: String
    public var imageData: Data

    public init(name: String, imageData: Data) {
        self.name = name
        self.imageData = imageData
    }

    public func addReversions(into reverter: inout some Reverter<User>) {
        reverter.appendReversion(at: \.name)
        reverter.appendReversion(at: \.imageData)
    }
}

/// The seed's `Activity`: zero-boilerplate conformance, an enum with payloads, nesting.
public struct Activity: Identifiable, Versionable, Equatable, Codable {
    public let id: UUID
    public var title: String
    public var priority: Priority
    public var childActivities: [Activity]

    public init(id: UUID, title: String, priority: Priority, childActivities: [Activity]) {
        self.id = id
        self.title = title
        self.priority = priority
        self.childActivities = childActivities
    }

    public enum Priority: Equatable, Codable, Versionable {
        case low
        case medium(dueDate: Date?)
        case high(dueDate: Date, reason: String)

        // The seed macro's expansion, written by hand: a case change overwrites the whole
        // enum; the same case records its payload's changes.
        public func addReversions(into reverter: inout some Reverter<Self>) {
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

    public static func mock(_ n: Int) -> Activity {
        Activity(id: UUID(uuid: uuid(n)), title: "Child \(n)", priority: .low, childActivities: [])
    }

    public static func uuid(_ n: Int) -> uuid_t {
        let b = UInt8(truncatingIfNeeded: n)
        let c = UInt8(truncatingIfNeeded: n >> 8)
        return (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, c, b)
    }
}
