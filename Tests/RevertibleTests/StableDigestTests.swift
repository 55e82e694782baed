import Foundation
import Revertible
import Testing

/// The digest inside stored `String`/`Data` patches must never change between releases or
/// processes: it is XXH64 with seed 0, pinned here against values from the reference
/// implementation (python `xxhash.xxh64`). A patch keeps digests when either side is over 256
/// bytes, so each value is diffed against 300 spaces.
@Suite struct StableDigestTests {
    static let longer = String(repeating: " ", count: 300)

    @Test(
        arguments: [
            ("", 0xef46_db37_51d8_e999),
            ("abc", 0x44bc_2cf5_ad77_0999),
            (String(repeating: "x", count: 31), 0x60dd_0d01_083b_99f0),
            (String(repeating: "Nobody inspects the spammish repetition", count: 3), 0x0367_2e8d_8944_3a6f),
        ] as [(String, UInt64)])
    func textDigestsMatchXXH64(text: String, digest: UInt64) {
        #expect(RangePatch(from: Self.longer, to: text).newDigest == digest)
    }

    @Test func byteDigestsMatchXXH64() {
        let value = Data((0..<5).flatMap { _ in (0...255).map { UInt8($0) } } + Array("abcde".utf8))
        #expect(RangePatch(from: Data(count: 300), to: value).newDigest == 0xc1de_6ff4_00a1_8263)
    }
}
