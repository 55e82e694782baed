import Foundation
import Revertible

/// Follows a path through a Swift value by reflection: used only to tell an optional property
/// that was `nil` (left out of a snapshot's JSON) from a property the type does not have.
enum MirrorProbe {
    /// The value at `path` in `value`, or `nil` when the path names nothing there.
    static func value(at path: ArraySlice<PathComponent>, in value: Any) -> Any? {
        guard let component = path.first else { return value }
        let mirror = Mirror(reflecting: unwrapped(value))
        let child: Any?
        switch component {
        case .property(let name):
            switch mirror.displayStyle {
            case .enum:
                // The case's payload is the enum's one child, labelled with the case's name.
                child = mirror.children.first.flatMap { $0.label == name ? $0.value : nil }
            case .tuple:
                // Codable names unlabelled payload values `_0`, `_1`; a tuple labels them `.0`.
                let label = name.hasPrefix("_") ? "." + name.dropFirst() : name
                child = mirror.children.first { $0.label == name || $0.label == label }?.value
            case _ where name == "_0":
                // A case with one unlabelled value: the payload is that value.
                child = value
            default:
                // A property wrapper's storage is labelled `_name`.
                child = mirror.children.first { $0.label == name || $0.label == "_" + name }?.value
            }
        case .index(let index):
            child = mirror.children.dropFirst(index).first?.value
        case .id(let json):
            child =
                mirror.children.first { element in
                    Mirror(reflecting: element.value).children.first { $0.label == "id" }.map {
                        sameJSON($0.value, json)
                    }
                        ?? false
                }?.value
        case .key(let json):
            child =
                mirror.children.lazy.compactMap { entry -> Any? in
                    let pair = Mirror(reflecting: entry.value).children.map(\.value)
                    return pair.count == 2 && sameJSON(pair[0], json) ? pair[1] : nil
                }.first
        }
        return child.flatMap { Self.value(at: path.dropFirst(), in: $0) }
    }

    /// Whether `value` is an optional holding nothing.
    static func isNil(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    /// The value an optional holds, or `value` itself.
    static func unwrapped(_ value: Any) -> Any {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional, let wrapped = mirror.children.first?.value else {
            return value
        }
        return wrapped
    }

    private static func sameJSON(_ value: Any, _ json: String) -> Bool {
        guard let encodable = value as? any Encodable,
            let data = try? ChangeRecord.makeEncoder().encode(encodable)
        else { return false }
        return (try? StoredForm(json: String(decoding: data, as: UTF8.self))) == (try? StoredForm(json: json))
    }
}
