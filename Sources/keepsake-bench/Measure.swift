import CBenchSupport
import Foundation

/// Timing and memory measurement. Times are p50 / p99 / maximum of repeated runs; every figure that
/// matters is quoted as a ratio against a baseline measured in the same run.
enum Measure {
    /// `runs` runs of `body`, each preceded by `setup` (not timed): p50, p99 and maximum.
    static func sample<State>(
        runs: Int, setup: () throws -> State, measure body: (inout State) throws -> Void
    ) rethrows -> Percentiles {
        var samples: [Duration] = []
        samples.reserveCapacity(runs)
        let clock = ContinuousClock()
        for _ in 0..<runs {
            var state = try setup()
            let start = clock.now
            try body(&state)
            samples.append(clock.now - start)
        }
        return Percentiles(samples)
    }

    /// `runs` runs of `body`: p50, p99 and maximum.
    static func sample(runs: Int, _ body: () throws -> Void) rethrows -> Percentiles {
        try sample(runs: runs, setup: {}, measure: { _ in try body() })
    }

    /// `runs` runs each of `baseline` and `body`, taken in turns (the pair's order alternating),
    /// so that whatever the shared machine does meanwhile — a neighbour's load, a change of
    /// clock speed — falls on both alike, and their ratio holds still between runs.
    static func paired(runs: Int, baseline: () throws -> Void, _ body: () throws -> Void) rethrows -> (
        baseline: Percentiles, body: Percentiles
    ) {
        try paired(
            runs: runs, baselineSetup: {}, baseline: { _ in try baseline() }, bodySetup: {},
            { _ in try body() })
    }

    /// ``paired(runs:baseline:_:)`` with each run preceded by its own setup, not timed.
    ///
    /// - Parameter block: How many runs of one are taken before the other's turn: one by
    ///   default; more keeps each one's caches warm from one run to the next (as when it runs
    ///   alone), while the machine's phases, which last longer, still fall on both.
    static func paired<BaselineState, BodyState>(
        runs: Int, block: Int = 1, baselineSetup: () throws -> BaselineState,
        baseline: (inout BaselineState) throws -> Void, bodySetup: () throws -> BodyState,
        _ body: (inout BodyState) throws -> Void
    ) rethrows -> (baseline: Percentiles, body: Percentiles) {
        var (first, second): ([Duration], [Duration]) = ([], [])
        first.reserveCapacity(runs)
        second.reserveCapacity(runs)
        let clock = ContinuousClock()
        func time<State>(
            _ setup: () throws -> State, _ work: (inout State) throws -> Void, into samples: inout [Duration]
        ) rethrows {
            for _ in 0..<min(block, runs - samples.count) {
                var state = try setup()
                let start = clock.now
                try work(&state)
                samples.append(clock.now - start)
            }
        }
        var turn = 0
        while first.count < runs {
            if turn.isMultiple(of: 2) {
                try time(baselineSetup, baseline, into: &first)
                try time(bodySetup, body, into: &second)
            } else {
                try time(bodySetup, body, into: &second)
                try time(baselineSetup, baseline, into: &first)
            }
            turn += 1
        }
        return (Percentiles(first), Percentiles(second))
    }

    /// `runs` rounds, each running every one of `bodies` once, in an order that turns by one from
    /// round to round: the durations of each body, round by round, so that a figure can be
    /// taken less another one of the same round (whatever the machine did in a round fell on
    /// all of them).
    static func inRounds(runs: Int, _ bodies: [() throws -> Void]) throws -> [[Duration]] {
        var samples = Array(repeating: [Duration](), count: bodies.count)
        let clock = ContinuousClock()
        for round in 0..<runs {
            for turn in 0..<bodies.count {
                let index = (round + turn) % bodies.count
                let start = clock.now
                try bodies[index]()
                samples[index].append(clock.now - start)
            }
        }
        return samples
    }

    /// The 50th and 99th percentiles and the maximum of some durations.
    struct Percentiles {
        var p50: Duration
        var p99: Duration
        var max: Duration

        init(_ samples: [Duration]) {
            let sorted = samples.sorted()
            func at(_ fraction: Double) -> Duration {
                sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded(.up)))]
            }
            (p50, p99, max) = (at(0.5), at(0.99), sorted[sorted.count - 1])
        }
    }

    /// Bytes this process has passed to `write` and `pwrite` so far (Linux's `wchar`), which
    /// counts every WAL frame SQLite writes; `nil` elsewhere.
    static func bytesWritten() -> Int? {
        guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        for line in io.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Bytes allocated and not freed, from the C library's allocator (Linux); `nil` elsewhere.
    static func heapInUse() -> Int? {
        let bytes = keepsake_heap_in_use()
        return bytes < 0 ? nil : Int(bytes)
    }

    /// Resident memory of this process in bytes (Linux); `nil` elsewhere.
    static func residentBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The most memory this process has held resident, in bytes (Linux); `nil` elsewhere.
    static func peakResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kibibytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kibibytes * 1024
    }

    static func fileSize(_ path: String) -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    var text: String {
        let s = seconds
        if s < 1e-3 { return String(format: "%.1f µs", s * 1e6) }
        if s < 1 { return String(format: "%.2f ms", s * 1e3) }
        return String(format: "%.2f s", s)
    }
}
