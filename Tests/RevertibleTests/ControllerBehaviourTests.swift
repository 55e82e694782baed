import Foundation
import Observation
import TestSupport
import Testing

@testable import Revertible

/// The seed library's defects, each a test that fails on its behaviour, plus error modes,
/// the history limit and other controller behaviour.
@MainActor @Suite struct ControllerBehaviourTests {
    struct Failure: Error {}

    @Test func undoDuringTheDebounceWindowUndoesThePendingChange() throws {
        // Seed defect: undo() did nothing, hasUndo stayed false, and the change came back later.
        let clock = ManualClock()
        let controller = VersioningController(Activity.mock(0)).withDebouncing(
            clock: clock, interval: .seconds(1))
        var activity = controller.value
        activity.title = "Typed"
        try controller.append(activity)
        #expect(controller.hasUndo)
        #expect(throws: Never.self) { activity = try controller.undo() }
        #expect(activity.title == "Child 0")
        #expect(controller.hasRedo)
        clock.advance(by: .seconds(5))
        #expect(controller.value.title == "Child 0")
        #expect(throws: Never.self) { try controller.redo() }
        #expect(controller.value.title == "Typed")
    }

    /// Observers are told of the value on every change, and of the stack state only when it
    /// changes: a view showing the redo button is not invalidated by every edit.
    @Test func observersAreToldOnlyOfWhatChanged() throws {
        final class Notified: @unchecked Sendable {
            var names: [String] = []
            var round = 0
        }
        let controller = VersioningController(Activity.mock(0))
        let notified = Notified()
        func observe() {
            notified.names = []
            notified.round += 1
            let round = notified.round
            for (name, read) in [
                ("value", { _ = controller.value }), ("hasUndo", { _ = controller.hasUndo }),
                ("hasRedo", { _ = controller.hasRedo }), ("scopeLevel", { _ = controller.scopeLevel }),
                ("versionCount", { _ = controller.versionCount }),
            ] as [(String, () -> Void)] {
                withObservationTracking(read) {
                    // Observations of earlier rounds that were not told anything are still on.
                    if round == notified.round { notified.names.append(name) }
                }
            }
        }
        var activity = controller.value
        observe()
        activity.title = "First"
        try controller.append(activity)
        #expect(notified.names == ["value", "hasUndo", "versionCount"])
        observe()
        activity.title = "Second"
        try controller.append(activity)
        #expect(notified.names == ["value", "versionCount"])
        observe()
        try controller.undo()
        #expect(notified.names == ["value", "hasRedo"])
        observe()
        try controller.undo()
        #expect(notified.names == ["value", "hasUndo"])
        observe()
        try controller.redo()
        #expect(notified.names == ["value", "hasUndo"])
        observe()
        activity.title = "Third"
        try controller.append(activity)
        #expect(notified.names == ["value", "hasRedo"])
        observe()
        try controller.pushNewScope()
        #expect(notified.names == ["value", "hasUndo", "scopeLevel"])
        try controller.checkInvariants()
    }

    @Test func aLongBurstLandsAfterTheMaximumWait() async throws {
        let clock = ManualClock()
        let controller = VersioningController(Activity.mock(0))
            .withDebouncing(clock: clock, interval: .milliseconds(500), maximumWait: .seconds(2))
        var activity = controller.value
        for index in 0..<30 {
            activity.title = "burst \(index)"
            try controller.append(activity)
            clock.advance(by: .milliseconds(100))
            if index == 25 {
                #expect(await settle { controller.versionCount == 1 })
            }
        }
        #expect(controller.versionCount == 1)
        try controller.flush()
        #expect(controller.versionCount == 2)
        #expect(controller.value.title == "burst 29")
    }

    /// A burst of appends is held with one timer, not one a keystroke: each append moves the
    /// deadline, and the timer sleeps on to it when it wakes.
    @Test func aBurstIsHeldWithOneTimer() async throws {
        /// A manual clock that counts the sleeps begun on it.
        struct CountingClock: Clock {
            final class Count: @unchecked Sendable {
                // Sound because `sleeps` is touched only while `lock` is held.
                private let lock = NSLock()
                private var value = 0
                var sleeps: Int { lock.withLock { value } }
                func add() { lock.withLock { value += 1 } }
            }
            let inner = ManualClock()
            let count = Count()
            var now: ManualClock.Instant { inner.now }
            var minimumResolution: Duration { .zero }
            func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
                count.add()
                try await inner.sleep(until: deadline, tolerance: tolerance)
            }
        }
        let clock = CountingClock()
        let controller = VersioningController(Activity.mock(0))
            .withDebouncing(clock: clock, interval: .milliseconds(500))
        var activity = controller.value
        for index in 0..<100 {
            activity.title = "burst \(index)"
            try controller.append(activity)
        }
        #expect(await settle { clock.count.sleeps == 1 })
        for _ in 0..<1_000 { await Task.yield() }
        #expect(clock.count.sleeps == 1)
        clock.inner.advance(by: .milliseconds(300))
        activity.title = "moved"
        try controller.append(activity)  // due at 800 ms
        clock.inner.advance(by: .milliseconds(300))  // 600 ms: the timer wakes and sleeps on
        #expect(await settle { clock.count.sleeps == 2 })
        for _ in 0..<1_000 { await Task.yield() }
        #expect(controller.versionCount == 0)
        clock.inner.advance(by: .milliseconds(200))
        #expect(await settle { controller.versionCount == 1 })
        #expect(controller.value.title == "moved")
        #expect(clock.count.sleeps == 2)
        // The next burst starts a timer of its own.
        activity.title = "next"
        try controller.append(activity)
        clock.inner.advance(by: .milliseconds(500))
        #expect(await settle { controller.versionCount == 2 })
        #expect(clock.count.sleeps == 3)
        try controller.checkInvariants()
    }

    /// A clock of the app's whose sleep fails with an error of its own (not a cancellation)
    /// stops that burst's timer: the next append starts another, so the burst still lands.
    @Test func aTimerWhoseClockFailsIsStartedAgainByTheNextAppend() async throws {
        /// A manual clock whose first sleep throws.
        struct FailingOnceClock: Clock {
            struct Failure: Error {}
            final class Failures: @unchecked Sendable {
                // Sound because `count` is touched only while `lock` is held.
                private let lock = NSLock()
                private var count = 1
                var remaining: Int { lock.withLock { count } }
                /// Whether this sleep fails (one fewer to come).
                func take() -> Bool {
                    lock.withLock {
                        defer { count = max(0, count - 1) }
                        return count > 0
                    }
                }
            }
            let inner = ManualClock()
            let failures = Failures()
            var now: ManualClock.Instant { inner.now }
            var minimumResolution: Duration { .zero }
            func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
                if failures.take() { throw Failure() }
                try await inner.sleep(until: deadline, tolerance: tolerance)
            }
        }
        let clock = FailingOnceClock()
        let controller = VersioningController(Activity.mock(0))
            .withDebouncing(clock: clock, interval: .milliseconds(500))
        var activity = controller.value
        activity.title = "first"
        try controller.append(activity)
        #expect(await settle { clock.failures.remaining == 0 })
        for _ in 0..<1_000 { await Task.yield() }
        activity.title = "second"
        try controller.append(activity)
        clock.inner.advance(by: .milliseconds(500))
        #expect(await settle { controller.versionCount == 1 })
        #expect(controller.value.title == "second")
        try controller.undo()
        #expect(controller.value.title == "Child 0")
        try controller.checkInvariants()
    }

    @Test func aThrowingTransactionLeavesTheValueExactlyAsBefore() {
        // Seed defect: the partial change stayed applied and untracked.
        final class ViewModel { var activity = Activity.mock(0) }
        let viewModel = ViewModel()
        let controller = VersioningController(on: viewModel, at: \.activity)
        #expect(throws: Failure.self) {
            try controller.setWithTransaction { (activity: inout Activity) throws(Failure) in
                activity.title = "Partial"
                throw Failure()
            }
        }
        #expect(viewModel.activity.title == "Child 0")
        #expect(controller.value.title == "Child 0")
        #expect(!controller.hasUndo)
    }

    @Test func anAsyncTransactionIsOneVersion() async throws {
        let controller = VersioningController(Activity.mock(0))
        try await controller.setWithTransaction { activity in
            activity.title = "A"
            await Task.yield()
            activity.childActivities.append(.mock(1))
        }
        #expect(controller.versionCount == 1)
        try controller.undo()
        #expect(controller.value == .mock(0))
    }

    @Test func theHistoryLimitDropsTheOldestVersions() throws {
        let controller = VersioningController(Activity.mock(0), maximumVersions: 3)
        var activity = controller.value
        try controller.tag("v0")
        for index in 1...5 {
            activity.title = "v\(index)"
            try controller.append(activity, tag: "v\(index)")
        }
        #expect(controller.versionCount == 3)
        #expect(try controller.tags().undo == ["v2", "v3", "v4", "v5"])
        try controller.undo(to: "v0")
        #expect(controller.value.title == "v5")
        try controller.undo(to: "v2")
        #expect(controller.value.title == "v2")
        #expect(!controller.hasUndo)
        #expect(VersioningController<Activity, Activity, ReversionError>.defaultMaximumVersions == 1_000)
    }

    struct Pair: Versionable, Equatable {
        var a = 0
        var b = 0
    }

    /// Undoing or redoing several versions is all or nothing: when a later step does not apply,
    /// the ones already applied are taken back.
    @Test func aMultiStepMoveThatFailsHalfwayChangesNothing() throws {
        var history = VersionHistory(Pair())
        history.append(Pair(a: 1, b: 0))
        history.append(Pair(a: 1, b: 1))
        // The value changed behind the history's back (`replaceCurrent(with:)` refuses such a
        // value): the newest step (b back to 0) still applies; the one before it (a back to 0)
        // does not.
        history.current = Pair(a: 5, b: 1)
        #expect(throws: ReversionError.self) { try history.undo(count: 2) }
        #expect(history.current == Pair(a: 5, b: 1))
        #expect((history.undoCount, history.redoCount) == (2, 0))

        try history.replaceCurrent(with: Pair(a: 1, b: 1))
        try history.undo(count: 2)
        #expect(history.current == Pair())
        #expect((history.undoCount, history.redoCount) == (0, 2))
        // Redo: the first step (a to 1) applies, the second (b to 1) does not.
        history.current = Pair(a: 0, b: 7)
        #expect(throws: ReversionError.self) { try history.redo(count: 2) }
        #expect(history.current == Pair(a: 0, b: 7))
        #expect((history.undoCount, history.redoCount) == (0, 2))
        try history.replaceCurrent(with: Pair())
        try history.redo(count: 5)
        #expect(history.current == Pair(a: 1, b: 1))
        #expect((history.undoCount, history.redoCount) == (2, 0))
        try history.checkInvariants()
    }

    /// Past the limit, appends drop the oldest versions in batches of an eighth of it (so that
    /// the stack is not moved by every append); setting the limit drops down to it at once.
    @Test func aLargerLimitDropsTheOldestVersionsInBatches() throws {
        let controller = VersioningController(Activity.mock(0), maximumVersions: 16)
        var activity = controller.value
        var counts: [Int] = []
        for index in 1...40 {
            activity.title = "v\(index)"
            try controller.append(activity, tag: "v\(index)")
            counts.append(controller.versionCount)
        }
        // 16 + 16 / 8 = 18 versions are held; the 19th append drops back to 16.
        let cycles = Array(repeating: [16, 17, 18], count: 7).flatMap { $0 }
        #expect(Array(counts[14...]) == [15, 16, 17, 18] + cycles + [16])
        #expect(try controller.tags().undo.map { $0?.value(as: String.self) } == (24...40).map { "v\($0)" })
        try controller.undo(to: "v24")
        #expect(controller.value.title == "v24")
        #expect(!controller.hasUndo)
        try controller.redo(to: "v40")
        // One over the new limit is within its slack, but setting the limit drops it.
        try controller.setMaximumVersions(15)
        #expect(controller.versionCount == 15)
        #expect(try controller.tags().undo.first == "v25")
    }

    @Test func errorsAreAssignedToTheControllerOrARootProperty() {
        let controller = VersioningController(Activity.mock(0), errorMode: .assignToController)
        var activity = controller.value
        activity.title = "A"
        controller.append(activity)
        // Every path the undo step checks differs in it: refused, and nothing changes.
        controller.setWithoutTracking(Activity.mock(9))
        #expect(
            controller.error
                == .wrongVersion(path: [.property("title")], reason: #"expected "A", found "Child 9""#))
        #expect(controller.value == activity)
        #expect(controller.hasUndo)
        controller.undo()
        #expect(controller.error == nil)
        #expect(controller.value == .mock(0))

        final class ViewModel {
            var activity = Activity.mock(0)
            var versioningError: ReversionError?
        }
        let viewModel = ViewModel()
        let byReference = VersioningController(
            on: viewModel, at: \.activity, errorMode: .assign(to: \ViewModel.versioningError))
        viewModel.activity.title = "B"
        byReference.appendCurrentVersion()
        byReference.setWithoutTracking(.mock(7))
        #expect(
            viewModel.versioningError
                == .wrongVersion(path: [.property("title")], reason: #"expected "B", found "Child 7""#))
        #expect(viewModel.activity.title == "B")
        byReference.undo()
        #expect(viewModel.activity == .mock(0))
    }

    @Test func theThrowingModeThrowsAndChangesNothing() throws {
        let controller = VersioningController(Activity.mock(0))
        var activity = controller.value
        activity.title = "A"
        try controller.append(activity)
        #expect(throws: ReversionError.self) { try controller.setWithoutTracking(.mock(3)) }
        #expect(controller.value == activity)
        #expect(controller.hasUndo)
    }

    @Test func setWithoutTrackingKeepsUndoOfOtherPaths() throws {
        let controller = VersioningController(Activity.mock(0))
        var activity = controller.value
        activity.title = "A"
        try controller.append(activity)
        activity.priority = .medium(dueDate: nil)
        try controller.setWithoutTracking(activity)
        try controller.undo()
        #expect(controller.value.title == "Child 0")
        #expect(controller.value.priority == .medium(dueDate: nil))
    }

    @Test func theReferenceRootIsHeldWeakly() throws {
        final class ViewModel { var activity = Activity.mock(0) }
        var viewModel: ViewModel? = ViewModel()
        weak let weakModel = viewModel
        let controller = VersioningController(on: viewModel!, at: \.activity)
        viewModel = nil
        #expect(weakModel == nil)
        try controller.appendCurrentVersion()
        #expect(!controller.hasUndo)
    }

    @Test func throwingVersionedThrows() throws {
        struct Editor { @ThrowingVersioned var count = Document.empty }
        let editor = Editor()
        editor.count.count = 1
        try editor.$count.undo()
        #expect(editor.count.count == 0)
    }
}

/// A move of several steps that stops on a refused reversion takes back those it applied. When
/// one of those is refused going back too (a type whose `==` disagrees with itself over time),
/// the move stays as far as it got, and says why: no crash, and the value and the stacks agree.
@MainActor @Suite struct RefusedTakingBackTests {
    /// Replaced whole (a leaf). Once armed, its `==` refuses every other comparison of mood 2
    /// with mood 2, starting with the first: the second step of an undo over 3 → 2 → 1 is
    /// refused, then taking the first back is refused too.
    struct Mood: Codable, VersionableLeaf {
        /// Read and written by this one test, on the main actor.
        nonisolated(unsafe) static var refusing = (armed: false, calls: 0)
        var level: Int

        static func == (a: Mood, b: Mood) -> Bool {
            guard a.level == b.level else { return false }
            guard a.level == 2, refusing.armed else { return true }
            refusing.calls += 1
            return refusing.calls % 2 == 0
        }
    }

    struct Day: Versionable, Equatable, Codable {
        var mood = Mood(level: 1)
    }

    @Test func aMoveStaysAsFarAsItGotWhenTakingBackIsRefused() throws {
        let controller = VersioningController(Day())
        try controller.tag("start")
        try controller.append(Day(mood: Mood(level: 2)))
        try controller.append(Day(mood: Mood(level: 3)))
        Mood.refusing = (true, 0)
        #expect(throws: ReversionError.self) { try controller.undo(to: "start") }
        Mood.refusing = (false, 0)
        #expect(controller.value.mood.level == 2)
        #expect(controller.storage.undoCount == 1 && controller.storage.redoCount == 1)
        try controller.checkInvariants()
        #expect(try controller.undo().mood.level == 1)
        #expect(try controller.redo().mood.level == 2)
        #expect(try controller.redo().mood.level == 3)
    }
}
