public import Foundation

/// Where the rows of one b-tree lie in a database file's bytes, found by walking the tree
/// from its root page (file format 4; no overflow pages followed): to damage one row where it
/// lies, as a flipped bit on disk does and no SQL statement can. Built from the file, so a test
/// built on it does not depend on the store's layout.
public struct BTreeCells {
    /// One cell holding a row (a table's leaf cell, or any cell of an index or a `WITHOUT ROWID`
    /// table): where its record's body begins, and where its row id lies (a table's).
    public struct Cell {
        public var rowID: Int?
        public var body: Int
        /// The serial type of each of the record's columns, with where each one lies.
        public var types: [(type: Int, offset: Int)]
    }

    public let cells: [Cell]

    /// The cells holding rows in the b-tree whose root is page `root` in `bytes`, in key order
    /// (for an undamaged tree).
    public init(_ bytes: Data, root: Int) {
        let bytes = [UInt8](bytes)
        let pageSize = { $0 == 1 ? 65_536 : $0 }(Int(bytes[16]) << 8 | Int(bytes[17]))
        func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
        func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }
        func varint(_ at: Int) -> (value: Int, end: Int) {
            var (value, at) = (0, at)
            for _ in 0..<8 {
                value = value << 7 | Int(bytes[at] & 0x7F)
                at += 1
                if bytes[at - 1] & 0x80 == 0 { return (value, at) }
            }
            return (value << 8 | Int(bytes[at]), at + 1)
        }
        var cells: [Cell] = []
        func walk(_ page: Int) {
            let start = (page - 1) * pageSize
            let header = start + (page == 1 ? 100 : 0)
            let kind = bytes[header]
            let leaf = kind == 0x0A || kind == 0x0D
            let pointers = header + (leaf ? 8 : 12)
            for index in 0..<u16(header + 3) {
                var cell = start + u16(pointers + 2 * index)
                if !leaf {
                    walk(u32(cell))
                    // An interior cell of a table holds a key only; of an index, a row.
                    guard kind == 0x02 else { continue }
                    cell += 4
                }
                // Payload size, then (in a table b-tree) the row id, then the record.
                var at = varint(cell).end
                let rowID = kind == 0x0D ? at : nil
                if kind == 0x0D { at = varint(at).end }
                let (headerSize, typesStart) = varint(at)
                var types: [(Int, Int)] = []
                var next = typesStart
                while next < at + headerSize {
                    let (type, end) = varint(next)
                    types.append((type, next))
                    next = end
                }
                cells.append(Cell(rowID: rowID, body: at + headerSize, types: types))
            }
            if !leaf { walk(u32(header + 8)) }
        }
        walk(root)
        self.cells = cells
    }
}
