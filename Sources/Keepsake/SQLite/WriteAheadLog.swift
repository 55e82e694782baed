import Foundation

/// A write-ahead log read the way SQLite's recovery reads it, to tell damage from a crash.
///
/// SQLite reads a log's frames in order and keeps the commits up to the first frame whose
/// checksum or salts do not match: a crash leaves the frame it was writing that way, and a
/// power loss can leave any part of the log that had not reached the disk. A log damaged once
/// it was whole (a flipped bit, a damaged byte) reads the same: every commit after the damage
/// is dropped, silently, and the store opens as it was before them.
///
/// What tells damage apart is its shape. A crash or a power loss leaves a frame unwritten or
/// half written: old bytes, zeros. Damage changes a few bits of a whole frame, and a change
/// confined to one 4-byte word can be found and undone from the frame's own checksum (the
/// checksum is a sum, so the word and its change are solved for, not searched). A damaged
/// frame is one that one such change makes valid, and after which the log goes on, in the same
/// checksum chain, to commits of its own.
///
/// Related SQLite documentation: https://www.sqlite.org/fileformat2.html#walformat
enum WriteAheadLog {
    /// Damage in a log that drops commits SQLite would otherwise read.
    struct Damage: Equatable {
        /// The first damaged frame, counted from 1 (0 for the log's header).
        let frame: Int
        /// The damaged frame's byte offset in the log.
        let offset: Int
        /// The number of whole frames in the log.
        let frames: Int
        /// The commits SQLite reads from the log as it is.
        let readCommits: Int
        /// The commits after the damage, which SQLite drops.
        let lostCommits: Int

        /// What is damaged, and what SQLite would read of the log.
        var summary: String {
            let damaged =
                frame == 0
                ? "its header no longer matches its checksum"
                : "frame \(frame) of \(frames) (at byte \(offset)) no longer matches its checksum"
            let read =
                readCommits == 0
                ? "SQLite would read none of its \(lostCommits) commits"
                : "SQLite would read the \(readCommits) commits before it and drop the \(lostCommits) after it"
            return "\(damaged), so \(read)"
        }

        /// Why a store whose log at `log` has this damage is refused, and what to do.
        func reason(log: String) -> String {
            """
            its write-ahead log (\(log)) is damaged: \(summary). \(Self.advice) to read it as \
            SQLite does, as of the damage (opened for writing, the log is copied aside first), or \
            salvage its values as of the damage with KeepsakeStore.salvage(from:to:)
            """
        }

        /// The advice in the reason a store with a damaged log is refused, which
        /// ``KeepsakeError/remedy`` reads.
        static let advice = "Open it with KeepsakeStore.Options(readsDamagedLog: true)"
    }

    private static let magic: UInt32 = 0x377f_0682
    private static let version: UInt32 = 3_007_000
    /// The fewest frames a commit that spilled pages can have: SQLite writes a transaction's
    /// pages to the log before its commit only once they fill the page cache (2,000 KiB by
    /// default, some 470 pages of 4 KiB; Keepsake keeps the default).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_cache_spill
    static let spillFrames = 64
    private static let headerSize = 32
    private static let frameHeaderSize = 24

    /// The damage of the log beside the file at `path` (`<path>-wal`), or `nil` when it has
    /// none that loses a commit. The log is read twice when damage is found, and the damage
    /// counts only if both reads find it: a writer's frame read while it was written looks
    /// damaged once, never twice.
    static func damage(ofLogBeside path: String) -> Damage? {
        guard let first = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")),
            let damage = damage(in: first)
        else { return nil }
        guard let second = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")),
            second.prefix(headerSize) == first.prefix(headerSize), Self.damage(in: second) == damage
        else { return nil }
        return damage
    }

    /// Copies the log beside the file at `path` aside, to `<path>-wal.damaged-<seconds since
    /// 1970>` (with `-2`, `-3`… when that name is taken), synced: a writer's next commits
    /// overwrite the frames after the damage, which that copy keeps. A copy made before of the
    /// same bytes (an open that wrote nothing, then another) is kept instead of a second one,
    /// and a log gone or no longer damaged since it was found damaged needs none: another open
    /// copied it aside first, then wrote over its frames or closed, which copies the log into
    /// the file.
    ///
    /// - Throws: ``KeepsakeError/cannotOpen(path:reason:)`` when the copy cannot be made
    ///   (nothing is left of it then).
    static func keepCopy(ofLogBeside path: String) throws(KeepsakeError) {
        let log = path + "-wal"
        let folder = NewStoreFile.folder(of: log)
        let prefix = (log as NSString).lastPathComponent + ".damaged-"
        func failure(_ reason: String) -> KeepsakeError {
            .cannotOpen(
                path: path,
                reason: """
                    its write-ahead log (\(log)) is damaged, and it could not be copied aside before \
                    the store is written (\(reason)); nothing was written
                    """)
        }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: log))
        } catch CocoaError.fileReadNoSuchFile {
            return
        } catch {
            throw failure(error.localizedDescription)
        }
        guard damage(in: bytes) != nil else { return }
        if let names = try? FileManager.default.contentsOfDirectory(atPath: folder),
            names.contains(where: { name in
                name.hasPrefix(prefix)
                    && (try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) == bytes
            })
        {
            return
        }
        let name = log + ".damaged-\(Int(Date().timeIntervalSince1970))"
        while true {
            // Made only where nothing is: another open may be copying the same log.
            let copy = NewStoreFile.untakenName(name)
            let descriptor = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                throw failure(String(cString: strerror(errno)))
            }
            close(descriptor)
            do {
                try bytes.write(to: URL(fileURLWithPath: copy))
            } catch {
                unlink(copy)
                throw failure(error.localizedDescription)
            }
            if let reason = NewStoreFile.sync(copy) {
                unlink(copy)
                throw failure(reason)
            }
            return
        }
    }

    /// The damage of the log `bytes`, or `nil` when it has none that loses a commit.
    ///
    /// Damage in the frames of the log's last commit counts only when that commit is shorter
    /// than ``spillFrames``: a commit that spilled pages to the log before it ended rewrites
    /// some of them in place at its end, then the checksums after them, with its last frame
    /// already written, and a crash in between leaves a frame one word away from valid. A
    /// commit after it was begun only once it was whole.
    static func damage(in bytes: Data) -> Damage? {
        bytes.withUnsafeBytes { damage(in: $0) }
    }

    private static func damage(in log: UnsafeRawBufferPointer) -> Damage? {
        guard log.count >= headerSize + frameHeaderSize else { return nil }
        let header: Header
        // What SQLite reads, and the walk on from where it stops.
        let asRead: Walk
        var walk: Walk
        if let read = Header(Array(log[0..<headerSize])) {
            header = read
            asRead = Walk(frame: 1, sum: header.sum, commits: 0).recover(log, header: header)
            guard asRead.stoppedAt != nil else { return nil }
            walk = asRead
        } else {
            guard let repaired = repairHeader(log) else { return nil }
            header = repaired
            // A header that does not match its checksum: SQLite reads no frame.
            asRead = Walk(frame: 1, sum: header.sum, commits: 0)
            walk = asRead.recover(log, header: header)
        }
        // A frame that no one word makes valid ends the walk, as a frame left unwritten would.
        // Where two words do, each giving the chain another checksum to go on from, the walk
        // goes on from the one the frames after it chain from.
        var repairs = 0
        while let bad = walk.stoppedAt, repairs < 16 {
            let walks = repair(log, frame: bad, header: header, seed: walk.sum).map { sum, isCommit in
                Walk(
                    frame: bad + 1, sum: sum, commits: walk.commits + (isCommit ? 1 : 0),
                    lastCommit: isCommit ? bad : walk.lastCommit
                ).recover(log, header: header)
            }
            guard var furthest = walks.first else { break }
            for other in walks.dropFirst() where other.frame > furthest.frame { furthest = other }
            repairs += 1
            walk = furthest
        }
        let lost = walk.commits - asRead.commits
        let first = asRead.stoppedAt ?? 0
        guard lost >= 2 || lost == 1 && (first == 0 || walk.lastCommit - asRead.lastCommit < spillFrames)
        else { return nil }
        return Damage(
            frame: first, offset: first == 0 ? 0 : header.offset(ofFrame: first),
            frames: (log.count - headerSize) / header.frameSize, readCommits: asRead.commits,
            lostCommits: lost)
    }

    /// The log's header, as SQLite's recovery accepts it.
    private struct Header {
        let bigEndianSums: Bool
        let pageSize: Int
        let salts: (UInt32, UInt32)
        /// The checksum the first frame's chains from.
        let sum: (UInt32, UInt32)

        var frameSize: Int { frameHeaderSize + pageSize }

        /// The byte offset of `frame`, counted from 1.
        func offset(ofFrame frame: Int) -> Int { headerSize + (frame - 1) * frameSize }

        /// The header whose 32 bytes are `bytes`, or `nil` when SQLite would read no frame
        /// after it.
        init?(_ bytes: [UInt8]) {
            let (magic, pageSize) = bytes.withUnsafeBytes { (word($0, 0), Int(word($0, 8))) }
            guard magic & ~1 == WriteAheadLog.magic,
                bytes.withUnsafeBytes({ word($0, 4) }) == WriteAheadLog.version,
                pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0
            else { return nil }
            let bigEndian = magic & 1 == 1
            let (computed, stored, salts) = bytes.withUnsafeBytes { raw in
                (
                    checksum(raw, 0..<24, seed: (0, 0), bigEndian: bigEndian), (word(raw, 24), word(raw, 28)),
                    (word(raw, 16), word(raw, 20))
                )
            }
            guard computed == stored else { return nil }
            bigEndianSums = bigEndian
            self.pageSize = pageSize
            self.salts = salts
            sum = computed
        }
    }

    /// SQLite's recovery walking the log's frames: the frame it reads next, the checksum that
    /// frame must chain from, and the commits read so far.
    private struct Walk {
        var frame: Int
        var sum: (UInt32, UInt32)
        var commits: Int
        /// The last frame that ended a commit, 0 before the first.
        var lastCommit = 0
        /// The frame that was not valid, if a whole one stopped the walk.
        var stoppedAt: Int?

        /// The walk carried on up to the first frame that is not valid, or the log's end.
        func recover(_ log: UnsafeRawBufferPointer, header: Header) -> Walk {
            var walk = self
            walk.stoppedAt = nil
            while header.offset(ofFrame: walk.frame) + header.frameSize <= log.count {
                let start = header.offset(ofFrame: walk.frame)
                guard let sum = validSum(log, at: start, header: header, seed: walk.sum) else {
                    walk.stoppedAt = walk.frame
                    return walk
                }
                walk.sum = sum
                if word(log, start + 4) != 0 {
                    walk.commits += 1
                    walk.lastCommit = walk.frame
                }
                walk.frame += 1
            }
            return walk
        }
    }

    /// The checksum of the frame at byte `start` when it is valid chained from `seed`, else
    /// `nil`: SQLite's `walDecodeFrame`.
    private static func validSum(
        _ log: UnsafeRawBufferPointer, at start: Int, header: Header, seed: (UInt32, UInt32)
    ) -> (UInt32, UInt32)? {
        guard (word(log, start + 8), word(log, start + 12)) == header.salts, word(log, start) != 0 else {
            return nil
        }
        let sum = frameSum(log, at: start, header: header, seed: seed)
        return sum == (word(log, start + 16), word(log, start + 20)) ? sum : nil
    }

    /// The checksum of the page number, commit size and page of the frame at byte `start`,
    /// chained from `seed`.
    private static func frameSum(
        _ log: UnsafeRawBufferPointer, at start: Int, header: Header, seed: (UInt32, UInt32)
    ) -> (UInt32, UInt32) {
        let head = checksum(log, start..<(start + 8), seed: seed, bigEndian: header.bigEndianSums)
        return checksum(
            log, (start + frameHeaderSize)..<(start + header.frameSize), seed: head,
            bigEndian: header.bigEndianSums)
    }

    /// The checksums and commit flags `frame` can have once a damaged word of it is put back,
    /// chained from `seed` (the checksum the frame before it ends with): none when no one word
    /// makes it valid, two when a word of its stored checksum and a word it sums both do
    /// (each then gives the chain after it another checksum to go on from).
    private static func repair(
        _ log: UnsafeRawBufferPointer, frame: Int, header: Header, seed: (UInt32, UInt32)
    )
        -> [(sum: (UInt32, UInt32), isCommit: Bool)]
    {
        let start = header.offset(ofFrame: frame)
        var bytes = Array(log[start..<start + header.frameSize])
        return bytes.withUnsafeMutableBytes { raw in
            let computed = frameSum(UnsafeRawBufferPointer(raw), at: 0, header: header, seed: seed)
            let stored = (word(UnsafeRawBufferPointer(raw), 16), word(UnsafeRawBufferPointer(raw), 20))
            let salts = (word(UnsafeRawBufferPointer(raw), 8), word(UnsafeRawBufferPointer(raw), 12))
            /// What the frame with `words` (offset, value) written into it reads as, if it is
            /// valid then; the frame is left as it was.
            func fitted(_ words: [(Int, UInt32)]) -> (sum: (UInt32, UInt32), isCommit: Bool)? {
                let before = words.map { (offset, _) in (offset, word(UnsafeRawBufferPointer(raw), offset)) }
                for (offset, value) in words { setWord(raw, offset, value) }
                defer { for (offset, value) in before { setWord(raw, offset, value) } }
                let frame = UnsafeRawBufferPointer(raw)
                return validSum(frame, at: 0, header: header, seed: seed).map { ($0, word(frame, 4) != 0) }
            }
            if salts != header.salts {
                // The salts are not summed: one of them damaged leaves the sum right.
                guard computed == stored, salts.0 == header.salts.0 || salts.1 == header.salts.1 else {
                    return []
                }
                return fitted([(8, header.salts.0), (12, header.salts.1)]).map { [$0] } ?? []
            }
            var found: [(sum: (UInt32, UInt32), isCommit: Bool)] = []
            if computed.0 == stored.0 || computed.1 == stored.1 {
                // One word of the stored checksum damaged; or, when its first words agree, the
                // frame's last word, whose change changes only the second (until 2026-11 only
                // the checksum was taken to be damaged, the walk went on from the sum of the
                // damaged page, which no frame after it chains from, and a flipped bit in the
                // last four bytes of a page lost every commit after it without a word).
                if let valid = fitted([(16, computed.0), (20, computed.1)]) { found.append(valid) }
            }
            // Any word that fits makes the frame valid, which is all that tells damage from a
            // frame left unwritten: the chain after it goes on from the frame's stored checksum.
            let words = [0, 4] + Array(stride(from: frameHeaderSize, to: header.frameSize, by: 4))
            for (index, change) in damagedWords(sum: computed, stored: stored, pairs: words.count / 2) {
                let value =
                    sumWord(UnsafeRawBufferPointer(raw), words[index], bigEndian: header.bigEndianSums)
                    &+ change
                if let valid = fitted([(words[index], header.bigEndianSums ? value : value.byteSwapped)]) {
                    found.append(valid)
                    break
                }
            }
            return found
        }
    }

    /// The header once a damaged word of it is put back, with either byte order of sums (the
    /// damaged word may be the one that says which), if one word makes it valid and the first
    /// frame valid after it.
    private static func repairHeader(_ log: UnsafeRawBufferPointer) -> Header? {
        let bytes = Array(log[0..<headerSize])
        let stored = (word(log, 24), word(log, 28))
        for bigEndian in [false, true] {
            let computed = checksum(log, 0..<24, seed: (0, 0), bigEndian: bigEndian)
            var candidates: [[(Int, UInt32)]] = []
            if computed.0 == stored.0 || computed.1 == stored.1 {
                candidates.append([(24, computed.0), (28, computed.1)])
            }
            for (index, change) in damagedWords(sum: computed, stored: stored, pairs: 3) {
                let value = sumWord(log, index * 4, bigEndian: bigEndian) &+ change
                candidates.append([(index * 4, bigEndian ? value : value.byteSwapped)])
            }
            for words in candidates {
                var candidate = bytes
                candidate.withUnsafeMutableBytes { raw in
                    for (offset, value) in words { setWord(raw, offset, value) }
                }
                guard let header = Header(candidate), header.bigEndianSums == bigEndian,
                    header.offset(ofFrame: 1) + header.frameSize <= log.count,
                    validSum(log, at: header.offset(ofFrame: 1), header: header, seed: header.sum) != nil
                else { continue }
                return header
            }
        }
        return nil
    }

    /// The words (each an index among the summed words) and the change to each that turns
    /// `sum` into `stored`, last word first.
    ///
    /// A pair of words `(x0, x1)` updates the sum as `s1 += x0 + s2; s2 += x1 + s1`: a change
    /// `d` to `x0` changes the pair's sum by `(d, d)`, to `x1` by `(0, d)`, and each later pair
    /// carries a change `(u, v)` on as `(u + v, u + 2v)`. Walking back from the end, the
    /// inverse `(2u - v, v - u)` gives the change each pair would have made. More than one word
    /// can fit: a flipped high bit fits every pair whose multipliers agree in their low bits.
    private static func damagedWords(sum: (UInt32, UInt32), stored: (UInt32, UInt32), pairs: Int)
        -> [(index: Int, change: UInt32)]
    {
        var (u, v) = (stored.0 &- sum.0, stored.1 &- sum.1)
        var words: [(index: Int, change: UInt32)] = []
        for pair in stride(from: pairs - 1, through: 0, by: -1) {
            if u == v, u != 0 { words.append((pair * 2, u)) }
            if u == 0, v != 0 { words.append((pair * 2 + 1, v)) }
            (u, v) = (2 &* u &- v, v &- u)
        }
        return words
    }

    /// SQLite's WAL checksum of `range` of `log`, chained from `seed`.
    private static func checksum(
        _ log: UnsafeRawBufferPointer, _ range: Range<Int>, seed: (UInt32, UInt32), bigEndian: Bool
    ) -> (UInt32, UInt32) {
        var (s1, s2) = seed
        var offset = range.lowerBound
        while offset < range.upperBound {
            var x0 = log.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            var x1 = log.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            if bigEndian {
                x0 = UInt32(bigEndian: x0)
                x1 = UInt32(bigEndian: x1)
            } else {
                x0 = UInt32(littleEndian: x0)
                x1 = UInt32(littleEndian: x1)
            }
            s1 = s1 &+ x0 &+ s2
            s2 = s2 &+ x1 &+ s1
            offset += 8
        }
        return (s1, s2)
    }
}

/// The big-endian 32-bit word at `offset`: every field of the log's headers.
private func word(_ log: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
    UInt32(bigEndian: log.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
}

private func setWord(_ log: UnsafeMutableRawBufferPointer, _ offset: Int, _ value: UInt32) {
    log.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
}

/// The word at `offset` as the checksum reads it.
private func sumWord(_ log: UnsafeRawBufferPointer, _ offset: Int, bigEndian: Bool) -> UInt32 {
    bigEndian ? word(log, offset) : word(log, offset).byteSwapped
}
