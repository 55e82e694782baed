import Foundation

/// Which batches of seeds a randomized test runs.
///
/// `Scripts/test` runs the few batches each test names (0, 1, …), the same every run, so that a
/// failure there is a regression. `Scripts/soak` sets `KEEPSAKE_SOAK_SEEDS` (how many batches)
/// and `KEEPSAKE_SOAK_FIRST_SEED` (the first; it picks one no run is likely to have tried and
/// prints it), so that each soak walks seeds of its own. A failing case names its batch: run
/// `Scripts/soak` again with the same first seed to replay it.
///
/// ```swift
/// @Test(arguments: Soak.batches(usually: 4))
/// func randomEditsRevertExactly(batch: UInt64) throws { … }
/// ```
public enum Soak {
    /// `0..<usual`, or the batches `Scripts/soak` asked for.
    ///
    /// - Parameter usual: How many batches the test runs under `Scripts/test`.
    public static func batches(usually usual: UInt64) -> Range<UInt64> {
        let environment = ProcessInfo.processInfo.environment
        guard let count = environment["KEEPSAKE_SOAK_SEEDS"].flatMap({ UInt64($0) }), count > 0 else {
            return 0..<usual
        }
        let first = environment["KEEPSAKE_SOAK_FIRST_SEED"].flatMap { UInt64($0) } ?? 0
        return first..<first + count
    }
}
