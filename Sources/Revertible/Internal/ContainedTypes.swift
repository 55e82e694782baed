import Foundation
@_spi(Reflection) import Swift

/// What the standard containers hold, read from their types alone: the element type of an
/// array, set or dictionary (its values), the type an optional wraps, an enum's payloads and a
/// tuple's elements.
enum ContainedTypes {
    /// The element type of an array, set or dictionary (its values), without the optionals
    /// around either, or `nil`.
    static func elementType(of type: Any.Type) -> Any.Type? {
        (unwrapped(type) as? any StandardCollection.Type).map { unwrapped($0.elementType) }
    }

    /// Whether `type` is one of the standard library's or Foundation's values that the JSON
    /// coders read as a leaf (a number, text, `Data`, a date, a URL, a UUID, a `Decimal`): it
    /// holds no model type.
    static func isStandardLeaf(_ type: Any.Type) -> Bool {
        type == String.self || type == Bool.self || type == Int.self || type == Double.self
            || type == Float.self
            || type == Int8.self || type == Int16.self || type == Int32.self || type == Int64.self
            || type == UInt.self || type == UInt8.self || type == UInt16.self || type == UInt32.self
            || type == UInt64.self || type == Data.self || type == Date.self || type == URL.self
            || type == UUID.self || type == Decimal.self
    }

    /// Calls `body` with the name, offset and type of each of `type`'s stored properties in
    /// turn, while it returns `true`, as the standard library's `_forEachField` does (`options`
    /// as there), and returns what that returns. An existential type (`any Shape`, `Any`,
    /// `AnyObject`, `any Sequence<Int>`) has no stored properties of its own, whatever its
    /// values hold: this returns `false` for it without calling `body`, where `_forEachField`
    /// crashes the process.
    @discardableResult
    static func forEachField(
        of type: Any.Type, options: _EachFieldOptions,
        _ body: (_ name: UnsafePointer<CChar>, _ offset: Int, _ type: Any.Type) -> Bool
    ) -> Bool {
        let kind = unsafeBitCast(type, to: UnsafeRawPointer.self).load(as: UInt.self)
        guard kind != MetadataKind.existential, kind != MetadataKind.extendedExistential else { return false }
        return _forEachField(of: type, options: options) { name, offset, fieldType, _ in
            body(name, offset, fieldType)
        }
    }

    /// `type` without the optionals around it.
    static func unwrapped(_ type: Any.Type) -> Any.Type {
        guard let optional = type as? any OptionalType.Type else { return type }
        return unwrapped(optional.wrappedType)
    }

    /// The types of an enum's payloads (a case with several values has a tuple), or of a
    /// tuple's elements; `nil` for any other type.
    ///
    /// Reflection (`Mirror`, `_forEachField`) shows an enum's payload only in a value of the
    /// case that holds it. These are read from the type's metadata instead, as the runtime's
    /// own reflection reads them, through the layout Swift's stable ABI fixes
    /// (`docs/ABI/TypeMetadata.rst`): an enum's nominal type descriptor points to its field
    /// descriptor, whose records name each case's payload type by its mangled name, which the
    /// runtime resolves in the enum's generic context.
    static func payloadTypes(of type: Any.Type) -> [Any.Type]? {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        switch metadata.load(as: UInt.self) {
        case MetadataKind.enum, MetadataKind.optional:
            return enumPayloadTypes(metadata)
        case MetadataKind.tuple:
            // Its element count, its labels, then each element's type and offset.
            let count = metadata.load(fromByteOffset: MemoryLayout<UInt>.size, as: Int.self)
            return (0..<count).map { index in
                let element = 3 * MemoryLayout<UInt>.size + index * 2 * MemoryLayout<UInt>.size
                return unsafeBitCast(
                    metadata.load(fromByteOffset: element, as: UnsafeRawPointer.self), to: Any.Type.self)
            }
        default:
            return nil
        }
    }

    /// The type arguments of a generic struct or enum (`Bag<Todo>`: `Todo`; the type arguments
    /// of the types it is nested in too), in their order; empty for any other type, and for a
    /// generic class (whose arguments lie where its superclasses leave room).
    ///
    /// Read from the type's metadata through the layout Swift's stable ABI fixes
    /// (`docs/ABI/TypeMetadata.rst`): a value type's metadata holds its kind, its nominal type
    /// descriptor, then its key generic arguments, one word each, in the order of the generic
    /// parameters that have one (a type, a pack of types or an integer; only types are read);
    /// the descriptor says which parameters those are.
    static func genericTypeArguments(of type: Any.Type) -> [Any.Type] {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        switch metadata.load(as: UInt.self) {
        case MetadataKind.struct, MetadataKind.enum, MetadataKind.optional: break
        default: return []
        }
        let descriptor = metadata.load(fromByteOffset: MemoryLayout<UInt>.size, as: UnsafeRawPointer.self)
        let flags = descriptor.load(as: UInt32.self)
        guard flags & 0x1F == ContextKind.struct || flags & 0x1F == ContextKind.enum,
            flags & ContextKind.isGeneric != 0
        else { return [] }
        // A struct's or enum's descriptor is 28 bytes (flags, parent, name, access function,
        // fields, two counts); its generic header follows: two relative pointers, then the
        // number of parameters, requirements and key arguments, and flags, 16 bits each; then
        // one byte per parameter: its kind (low six bits) and whether it has a key argument.
        let header = descriptor + 28
        let parameters = Int(header.load(fromByteOffset: 8, as: UInt16.self))
        let arguments = metadata + 2 * MemoryLayout<UInt>.size
        var types: [Any.Type] = []
        var key = 0
        for index in 0..<parameters {
            let parameter = header.load(fromByteOffset: 16 + index, as: UInt8.self)
            guard parameter & 0x80 != 0 else { continue }
            if parameter & 0x3F == 0 {
                let argument = arguments.load(
                    fromByteOffset: key * MemoryLayout<UInt>.size, as: UnsafeRawPointer.self)
                types.append(unsafeBitCast(argument, to: Any.Type.self))
            }
            key += 1
        }
        return types
    }

    private static func enumPayloadTypes(_ metadata: UnsafeRawPointer) -> [Any.Type]? {
        // An enum's metadata: its kind, its nominal type descriptor, then its generic arguments.
        let descriptor = metadata.load(fromByteOffset: MemoryLayout<UInt>.size, as: UnsafeRawPointer.self)
        let flags = descriptor.load(as: UInt32.self)
        guard flags & 0x1F == ContextKind.enum else { return nil }
        let arguments = flags & ContextKind.isGeneric != 0 ? metadata + 2 * MemoryLayout<UInt>.size : nil
        // The descriptor's flags, parent, name and access function, then its fields.
        guard let fields = relativeTarget(at: descriptor + 16) else { return [] }
        // The field descriptor's type name, superclass, kind, record size and count, then its
        // records: flags, type name and field name each.
        let recordSize = Int(fields.load(fromByteOffset: 10, as: UInt16.self))
        let count = Int(fields.load(fromByteOffset: 12, as: UInt32.self))
        var types: [Any.Type] = []
        for index in 0..<count {
            // A case without a payload has no type name.
            guard let name = relativeTarget(at: fields + 16 + index * recordSize + 4) else { continue }
            let found = _getTypeByMangledNameInContext(
                name.assumingMemoryBound(to: UInt8.self), UInt(mangledLength(name)),
                genericContext: descriptor, genericArguments: arguments)
            if let found { types.append(found) }
        }
        return types
    }

    /// Where a 32-bit offset relative to its own place points, or `nil` for none.
    private static func relativeTarget(at place: UnsafeRawPointer) -> UnsafeRawPointer? {
        let offset = place.loadUnaligned(as: Int32.self)
        return offset == 0 ? nil : place + Int(offset)
    }

    /// The length of a mangled name: it ends at a zero byte, but a symbolic reference in it
    /// (a byte from 1 to 0x17, then a 32-bit offset; from 0x18 to 0x1F, then a pointer) may
    /// hold zero bytes.
    private static func mangledLength(_ name: UnsafeRawPointer) -> Int {
        var length = 0
        while case let byte = name.load(fromByteOffset: length, as: UInt8.self), byte != 0 {
            let step =
                switch byte {
                case 0x01...0x17: 1 + 4
                case 0x18...0x1F: 1 + MemoryLayout<UInt>.size
                default: 1
                }
            length += step
        }
        return length
    }

    /// The metadata kinds read here (`MetadataKind` in the runtime).
    private enum MetadataKind {
        static let `struct`: UInt = 0x200
        static let `enum`: UInt = 0x201
        static let optional: UInt = 0x202
        static let tuple: UInt = 0x301
        static let existential: UInt = 0x303
        static let extendedExistential: UInt = 0x307
    }

    /// A context descriptor's kind (its flags' low five bits) for a struct and an enum, and its
    /// generic flag.
    private enum ContextKind {
        static let `struct`: UInt32 = 17
        static let `enum`: UInt32 = 18
        static let isGeneric: UInt32 = 0x80
    }
}

/// The collections whose elements a stored path reaches by index, key or id.
private protocol StandardCollection {
    static var elementType: Any.Type { get }
}

extension Array: StandardCollection { fileprivate static var elementType: Any.Type { Element.self } }
extension ContiguousArray: StandardCollection {
    fileprivate static var elementType: Any.Type { Element.self }
}
extension Set: StandardCollection { fileprivate static var elementType: Any.Type { Element.self } }
extension Dictionary: StandardCollection { fileprivate static var elementType: Any.Type { Value.self } }

private protocol OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType { fileprivate static var wrappedType: Any.Type { Wrapped.self } }
