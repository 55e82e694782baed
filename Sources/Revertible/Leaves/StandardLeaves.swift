public import Foundation

// Values that change as a whole: a change records the old and the new value.
extension Bool: VersionableLeaf {}
extension Int: VersionableLeaf {}
extension Int8: VersionableLeaf {}
extension Int16: VersionableLeaf {}
extension Int32: VersionableLeaf {}
extension Int64: VersionableLeaf {}
extension UInt: VersionableLeaf {}
extension UInt8: VersionableLeaf {}
extension UInt16: VersionableLeaf {}
extension UInt32: VersionableLeaf {}
extension UInt64: VersionableLeaf {}
extension Float: VersionableLeaf {}
extension Double: VersionableLeaf {}
extension Date: VersionableLeaf {}
extension UUID: VersionableLeaf {}
extension URL: VersionableLeaf {}
extension Decimal: VersionableLeaf {}
