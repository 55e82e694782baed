import Foundation

/// Lets other tasks run until `condition` holds; fails the wait after a bounded number of turns.
@MainActor
public func settle(until condition: () -> Bool) async -> Bool {
    for _ in 0..<100_000 {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
