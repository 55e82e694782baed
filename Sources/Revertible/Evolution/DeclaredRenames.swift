import Foundation
@_spi(Reflection) import Swift

/// The renames declared in ``Versionable/propertyEvolution`` by a type and every type its
/// values hold, which the standard decoder knows nothing of.
///
/// Stored JSON that holds a renamed property under its old name may still decode with the
/// standard decoder, and then silently without it: an optional property renamed (`comment`
/// to `note`) reads `nil`, the stored text ignored. So JSON is read by the merge whenever one of
/// these old names is a key in it, whichever type declared it (an element's type, say), and by
/// the standard decoder alone when none is.
///
/// The types a value holds are found from its type by reflection: a struct's or class's stored
/// properties, a generic struct's type arguments (a collection of the app's own, `Bag<Todo>`,
/// whose elements its code keeps in a buffer), an optional's wrapped type, an array's, set's or
/// dictionary's elements, an enum's payloads, a tuple's elements, each walked in turn. What a
/// value of an existential type (`any Shape`) or a generic class holds is not seen: a rename
/// declared only by a type held there is applied when the standard decoder fails, not before.
enum DeclaredRenames {
    /// The old names of the properties renamed by `type` and the types its values hold, each
    /// as the JSON of its key followed by a colon (`"comment":`).
    static func oldKeys(reachableFrom type: Any.Type) -> [[UInt8]] {
        let id = ObjectIdentifier(type)
        if let known = cache.withLock({ $0[id] }) { return known }
        var visited: Set<ObjectIdentifier> = []
        var names: Set<String> = []
        collect(type, into: &names, visited: &visited)
        let keys = names.sorted().map { Array((DirectJSON.quoted($0) + ":").utf8) }
        cache.withLock { $0[id] = keys }
        return keys
    }

    /// Whether `json` may hold a property of `type` (or of a type its values hold) under the
    /// name it had before a declared rename: one of those names is written as a key in it.
    static func mayBeIn(_ json: Data, for type: Any.Type) -> Bool {
        let keys = oldKeys(reachableFrom: type)
        guard !keys.isEmpty else { return false }
        return json.withUnsafeBytes { bytes in keys.contains { contains($0, in: bytes) } }
    }

    private static func collect(
        _ type: Any.Type, into names: inout Set<String>, visited: inout Set<ObjectIdentifier>
    ) {
        let type = ContainedTypes.unwrapped(type)
        guard visited.insert(ObjectIdentifier(type)).inserted, !ContainedTypes.isStandardLeaf(type) else {
            return
        }
        if let versionable = type as? any Versionable.Type {
            for evolution in versionable.propertyEvolution {
                if case .renamed(let old, _) = evolution.kind { names.insert(old) }
            }
        }
        if let element = ContainedTypes.elementType(of: type) {
            collect(element, into: &names, visited: &visited)
            return
        }
        if let payloads = ContainedTypes.payloadTypes(of: type) {
            for payload in payloads { collect(payload, into: &names, visited: &visited) }
            return
        }
        // `.ignoreUnknown` (1 << 1), and `.classType` (1 << 0) for a class, as in `CodingKeyTree`.
        let options = _EachFieldOptions(rawValue: type is AnyClass ? 0b11 : 0b10)
        var fields: [Any.Type] = []
        ContainedTypes.forEachField(of: type, options: options) { _, _, fieldType in
            fields.append(fieldType)
            return true
        }
        for field in fields { collect(field, into: &names, visited: &visited) }
        // A collection of the app's own may keep its elements where no stored property shows
        // their type (a buffer it allocates, an array of `Any`): its type arguments are
        // walked too (`Bag<Todo>`: `Todo`).
        for argument in ContainedTypes.genericTypeArguments(of: type) {
            collect(argument, into: &names, visited: &visited)
        }
    }

    /// Whether `bytes` holds `pattern`.
    private static func contains(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard pattern.count > 1, let first = pattern.first, bytes.count >= pattern.count else { return false }
        let last = bytes.count - pattern.count
        var at = 0
        while at <= last {
            // The next place the pattern's first byte (a quote) is, found by `memchr`.
            guard let base = bytes.baseAddress,
                let found = memchr(base + at, Int32(first), last - at + 1)
            else { return false }
            at = base.distance(to: UnsafeRawPointer(found))
            // Most quotes start another key or text: their next byte tells, without a call.
            let matches =
                bytes[at + 1] == pattern[1]
                && pattern.withUnsafeBytes { pattern in
                    pattern.baseAddress.map { memcmp(base + at, $0, pattern.count) == 0 } ?? false
                }
            if matches { return true }
            at += 1
        }
        return false
    }
}

private let cache = Locked<[ObjectIdentifier: [[UInt8]]]>([:])
