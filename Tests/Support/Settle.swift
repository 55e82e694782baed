import Foundation

/// Lets other tasks run until `condition` holds; fails the wait after a bounded number of turns.
/// Runs on the caller's actor (`isolation`), where the timers it waits for record their changes.
public func settle(isolation: isolated (any Actor)? = #isolation, until condition: () -> Bool) async -> Bool {
    for _ in 0..<100_000 {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
