import Foundation
import Revertible

/// The `changes` column of a version (schema 4): its change records as one JSON array, one
/// `[path, kind, patch, digest]` element per change, in the order undo applies them.
///
/// ```json
/// [["items[id: 7].title","replace",{"new":"Milk","old":"Mlk"},-4971000264869391627]]
/// ```
///
/// The patch is the record's JSON as it was encoded, byte for byte, and the digest covers the
/// version's position, the element's index, path, kind and patch (``HistoryRows/digest(position:ordinal:_:)``),
/// so a damaged byte or an element moved to another version is caught when read. A `null`
/// digest (a change written before schema 2, migrated) is read unchecked. The text is valid
/// JSON, so the `sqlite3` shell reads it with `json_each`; Keepsake splits it itself, which
/// keeps each patch's bytes as written.
enum StoredChanges {
    /// One element of the array, as stored.
    struct Entry: Equatable {
        var path: String
        var kind: String
        var patch: String
        var digest: Int64?

        /// Whether the element matches its digest as the `ordinal`th change of the version at
        /// `position`. One written before schema 2 has no digest and matches; so does one of a
        /// position out of range, which no digest covers (the version's own checks report it).
        func matchesDigest(position: Int64, ordinal: Int) -> Bool {
            guard let digest, (0...Int64(HistoryRows.largestNumber)).contains(position) else { return true }
            return digest
                == HistoryRows.digest(position: Int(position), ordinal: Int64(ordinal), path, kind, patch)
        }
    }

    /// The column's text for `reversion`'s records at `position`, and the bytes the records take
    /// (paths and patches), written as each change's JSON is made: no ``ChangeRecord`` is made
    /// on the way.
    ///
    /// - Throws: What ``Reversion/records(encoder:)`` throws.
    static func encode<Root>(
        _ reversion: Reversion<Root>, position: Int, encoderWhenNeeded makeEncoder: () -> JSONEncoder
    ) throws(ReversionError) -> (text: String, bytes: Int, liesDeep: Bool) {
        var writer = Writer(position: position, capacity: 256)
        var liesDeep = false
        try reversion.forEachRecord(encoderWhenNeeded: makeEncoder) { path, kind, patch in
            writer.append(path: path, kind: kind, patch: patch)
            liesDeep = liesDeep || mayLieDeep(path: path, patch: patch)
        }
        let (text, bytes) = writer.finish()
        return (text, bytes, liesDeep)
    }

    /// How many levels down the value's JSON a change may reach (its path's steps and its
    /// patch's own nesting) before the value is checked to encode whole: `JSONEncoder` writes
    /// 511 at most, and a model's own `encode(to:)` may nest a few levels for each of its steps.
    /// A model's changes lie a handful of levels down; an outline, a linked list, may not.
    static var levelsToCheck: Int { 64 }

    /// Whether the change at `path`, whose patch is the JSON `patch`, may reach
    /// ``levelsToCheck`` levels down the value: the patch is read only when it is long enough
    /// to nest that deep.
    static func mayLieDeep(path: PathDescriptor, patch: UnsafeRawBufferPointer) -> Bool {
        let steps = path.components.count
        guard steps + patch.count / 2 >= levelsToCheck else { return false }
        return steps + nesting(of: patch) >= levelsToCheck
    }

    /// The deepest nesting of arrays and objects in the JSON `json` (`0` for a scalar),
    /// brackets within strings left out.
    static func nesting(of json: UnsafeRawBufferPointer) -> Int {
        let (quote, backslash) = (UInt8(ascii: "\""), UInt8(ascii: "\\"))
        guard let base = json.baseAddress else { return 0 }
        var (depth, deepest, index) = (0, 0, 0)
        while index < json.count {
            switch json[index] {
            case quote:
                // To the closing quote: the next one not escaped by an odd run of backslashes
                // (`memchr`: a long text's patch is skipped at the speed of memory).
                var end = index + 1
                while true {
                    guard let match = memchr(base + end, Int32(quote), json.count - end) else {
                        return deepest
                    }
                    let found = base.distance(to: UnsafeRawPointer(match))
                    var escapes = 0
                    while json[found - 1 - escapes] == backslash { escapes += 1 }
                    end = found + 1
                    if escapes.isMultiple(of: 2) { break }
                }
                index = end
                continue
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
            index += 1
        }
        return deepest
    }

    /// Writes the column's text one change at a time, with each change's digest.
    struct Writer {
        private let position: Int
        private var text: [UInt8] = []
        private var bytes = 0
        private var ordinal: Int64 = 0
        /// The digest's input, built from the same bytes rather than from strings made for it.
        private var input: [UInt8] = []

        init(position: Int, capacity: Int) {
            self.position = position
            text.reserveCapacity(capacity)
            text.append(UInt8(ascii: "["))
        }

        mutating func append(path: PathDescriptor, kind: String, patch: UnsafeRawBufferPointer) {
            let path = path.description
            bytes += patch.count + path.utf8.count
            input.reserveCapacity(patch.count + path.utf8.count + kind.utf8.count + 48)
            let digest = HistoryRows.digest(position: position, ordinal: ordinal, input: &input) {
                $0.appendUTF8(path)
                $0.append(0)
                $0.appendUTF8(kind)
                $0.append(0)
                $0.append(contentsOf: patch.assumingMemoryBound(to: UInt8.self))
                $0.append(0)
            }
            StoredChanges.writeElement(
                path: path, kind: kind, digest: digest, first: ordinal == 0, into: &text
            ) {
                $0.append(contentsOf: patch.assumingMemoryBound(to: UInt8.self))
            }
            ordinal += 1
        }

        /// The text, closed, and the bytes the changes took.
        consuming func finish() -> (text: String, bytes: Int) {
            text.append(UInt8(ascii: "]"))
            return (String(decoding: text, as: UTF8.self), bytes)
        }
    }

    /// The column's text holding `entries`, each patch written as it stands.
    static func text(of entries: [Entry]) -> String {
        var text: [UInt8] = [UInt8(ascii: "[")]
        for (ordinal, entry) in entries.enumerated() {
            writeElement(
                path: entry.path, kind: entry.kind, digest: entry.digest, first: ordinal == 0, into: &text
            ) {
                $0.appendUTF8(entry.patch)
            }
        }
        text.append(UInt8(ascii: "]"))
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends one element, `[path, kind, patch, digest]`, preceded by a comma unless `first`;
    /// `writePatch` appends the patch's JSON as it stands.
    fileprivate static func writeElement(
        path: String, kind: String, digest: Int64?, first: Bool, into text: inout [UInt8],
        patch writePatch: (inout [UInt8]) -> Void
    ) {
        if !first { text.append(UInt8(ascii: ",")) }
        text.append(UInt8(ascii: "["))
        DirectJSON.writeQuoted(path, into: &text)
        text.append(UInt8(ascii: ","))
        DirectJSON.writeQuoted(kind, into: &text)
        text.append(UInt8(ascii: ","))
        writePatch(&text)
        text.append(UInt8(ascii: ","))
        if let digest { text.appendDecimal(digest) } else { text.appendLiteral("null") }
        text.append(UInt8(ascii: "]"))
    }

    /// The records stored in `text` for the version at `position`, each checked against its
    /// digest.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)`` (with no history name: the caller
    ///   fills it in) when the text is not such an array or a change does not match its digest;
    ///   `PathDescriptor.ParseError` when a path does not parse.
    static func records(_ text: String, position: Int) throws -> [ChangeRecord] {
        try checkedEntries(text, position: position).map { entry in
            ChangeRecord(
                path: try PathDescriptor(parsing: entry.path), kind: entry.kind,
                payload: Data(entry.patch.utf8))
        }
    }

    /// The elements stored in `text` for the version at `position`, each checked against its
    /// digest: what every reader of a version's changes shows or applies.
    ///
    /// - Throws: ``KeepsakeError/damaged(history:reason:)``, with no history name (the caller
    ///   fills it in), when the text is not such an array or an element does not match its digest.
    static func checkedEntries(_ text: String, position: Int) throws(KeepsakeError) -> [Entry] {
        let entries: [Entry]
        do throws(Malformed) {
            entries = try Self.entries(text)
        } catch {
            throw KeepsakeError.damaged(
                history: "", reason: "the changes of version \(position) are not readable: \(error.reason)")
        }
        if let ordinal = entries.indices.first(where: {
            !entries[$0].matchesDigest(position: Int64(position), ordinal: $0)
        }) {
            let path = entries[ordinal].path
            throw KeepsakeError.damaged(
                history: "",
                reason:
                    "change \(ordinal) of version \(position) (at \(path.isEmpty ? "(root)" : path)) does not match its digest"
            )
        }
        return entries
    }

    /// Why a column's text could not be split.
    struct Malformed: Error {
        let reason: String
    }

    /// Splits the column's text into its elements, without checking digests.
    static func entries(_ text: String) throws(Malformed) -> [Entry] {
        var scanner = Scanner(bytes: Array(text.utf8))
        var entries: [Entry] = []
        try scanner.expect(UInt8(ascii: "["))
        if try scanner.peek() == UInt8(ascii: "]") {
            scanner.index += 1
        } else {
            while true {
                try scanner.expect(UInt8(ascii: "["))
                let path = try scanner.string()
                try scanner.expect(UInt8(ascii: ","))
                let kind = try scanner.string()
                try scanner.expect(UInt8(ascii: ","))
                let patch = try scanner.value()
                try scanner.expect(UInt8(ascii: ","))
                let digest = try scanner.digest()
                try scanner.expect(UInt8(ascii: "]"))
                entries.append(Entry(path: path, kind: kind, patch: patch, digest: digest))
                guard try scanner.next() == UInt8(ascii: ",") else {
                    scanner.index -= 1
                    break
                }
            }
            try scanner.expect(UInt8(ascii: "]"))
        }
        scanner.skipSpace()
        guard scanner.index == scanner.bytes.count else { throw Malformed(reason: "text after the array") }
        return entries
    }

    /// Reads JSON text far enough to split the array: strings, and the extent of any value.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        mutating func peek() throws(Malformed) -> UInt8 {
            skipSpace()
            guard index < bytes.count else { throw Malformed(reason: "it ends early") }
            return bytes[index]
        }

        mutating func next() throws(Malformed) -> UInt8 {
            let byte = try peek()
            index += 1
            return byte
        }

        mutating func expect(_ byte: UInt8) throws(Malformed) {
            let found = try next()
            guard found == byte else {
                throw Malformed(
                    reason:
                        "expected \"\(Character(Unicode.Scalar(byte)))\" at byte \(index - 1), found \"\(Character(Unicode.Scalar(found)))\""
                )
            }
        }

        /// The end of the string whose opening quote is at `start`, just past its closing
        /// quote, and whether it has escapes.
        func stringEnd(from start: Int) throws(Malformed) -> (end: Int, escaped: Bool) {
            var index = start + 1
            var escaped = false
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""): return (index + 1, escaped)
                case UInt8(ascii: "\\"):
                    escaped = true
                    index += 2
                default: index += 1
                }
            }
            throw Malformed(reason: "a string is not closed")
        }

        /// A JSON string, unescaped.
        mutating func string() throws(Malformed) -> String {
            guard try peek() == UInt8(ascii: "\"") else {
                throw Malformed(reason: "expected a string at byte \(index)")
            }
            let (end, escaped) = try stringEnd(from: index)
            let literal = bytes[index..<end]
            index = end
            guard escaped else { return String(decoding: literal.dropFirst().dropLast(), as: UTF8.self) }
            guard let string = FoundationJSON.object(Data(literal)) as? String else {
                throw Malformed(reason: "a string's escapes are not JSON")
            }
            return string
        }

        /// The text of one JSON value, as it stands: its extent is found by matching brackets
        /// outside strings.
        mutating func value() throws(Malformed) -> String {
            _ = try peek()
            let start = index
            var depth = 0
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index = try stringEnd(from: index).end
                    if depth == 0 { return String(decoding: bytes[start..<index], as: UTF8.self) }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return try scalar(from: start) }
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return String(decoding: bytes[start..<index], as: UTF8.self)
                    }
                case UInt8(ascii: ","):
                    if depth == 0 { return try scalar(from: start) }
                default: break
                }
                index += 1
            }
            throw Malformed(reason: "a patch is not closed")
        }

        /// The scalar (a number, `true`, `false`, `null`) from `start` to here.
        private func scalar(from start: Int) throws(Malformed) -> String {
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { throw Malformed(reason: "a patch is missing") }
            return text
        }

        /// A digest: a signed 64-bit integer, or `null`.
        mutating func digest() throws(Malformed) -> Int64? {
            skipSpace()
            let start = index
            while index < bytes.count,
                bytes[index] == UInt8(ascii: "-") || (0x30...0x39).contains(bytes[index])
                    || (0x61...0x7A).contains(bytes[index])
            {
                index += 1
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if text == "null" { return nil }
            guard let digest = Int64(text) else {
                throw Malformed(reason: "a digest is not a 64-bit integer")
            }
            return digest
        }
    }
}
