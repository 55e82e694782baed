import Foundation
import Keepsake

/// keepsake-bench: Keepsake side by side with a naive snapshot store, SQLite's own commit rate
/// and full copies in memory, measured in the same run. `Scripts/bench` runs it in release.
let argumentList = Array(CommandLine.arguments.dropFirst())
let arguments = Set(argumentList)
/// `--only 2,4` runs only those scenarios (for profiling one of them).
let only: Set<Int>? = argumentList.firstIndex(of: "--only").flatMap { index in
    argumentList.indices.contains(index + 1)
        ? Set(argumentList[index + 1].split(separator: ",").compactMap { Int($0) }) : nil
}
func runs(_ scenario: Int) -> Bool { only?.contains(scenario) ?? true }
if arguments.contains("--help") {
    print(
        """
        usage: keepsake-bench [--quick] [--json] [--full-sync] [--only N,…]
          --quick      small sizes and few runs: proves the benchmark works (CI runs this)
          --json       print the figures as JSON instead of a table
          --full-sync  synchronous=FULL for Keepsake and both SQLite baselines
          --only N,…   run only these scenarios (1–6)
        """)
    exit(0)
}
let quick = arguments.contains("--quick")
let synchronous: SQLiteConnection.Synchronous = arguments.contains("--full-sync") ? .full : .normal
let runs = quick ? 3 : 15

struct Figure: Codable {
    var scenario: String
    var metric: String
    var value: Double
    var unit: String
    var target: String?
    var met: Bool?
}

var figures: [Figure] = []

@MainActor func record(
    _ scenario: String, _ metric: String, _ value: Double, _ unit: String, target: String? = nil,
    met: Bool? = nil
) {
    figures.append(
        Figure(scenario: scenario, metric: metric, value: value, unit: unit, target: target, met: met))
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keepsake-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

func open(_ name: String) throws -> KeepsakeStore {
    try KeepsakeStore(path: path(name), options: .init(synchronous: synchronous))
}

/// Bytes of the changes of the newest version of `history`.
func bytesOfLastVersion(_ store: KeepsakeStore, _ history: String) throws -> Int {
    guard let last = try store.timeline(of: history)?.last else { return 0 }
    return try store.changes(ofVersion: last.version, in: history)?.reduce(0) {
        $0 + $1.path.utf8.count + $1.kind.utf8.count + $1.patch.utf8.count
    } ?? 0
}

// MARK: 1. Big document, small edit

if runs(1) {
    let scenario = "1 big document, small edit"
    let original = BigDocument.make(items: quick ? 1_000 : 10_000, bytes: quick ? 64 * 1024 : 1 << 20)
    var edited = original
    edited.items[edited.items.count / 2].title = "Edited"
    let diff = Measure.median(runs: runs) { _ = edited.reversion(to: original) }
    let reversion = edited.reversion(to: original)!
    let revert = try Measure.median(runs: runs) { _ = try reversion.reverted(edited) }
    let memoryAppend = try Measure.median(
        runs: runs, setup: { VersioningController(original) },
        measure: {
            try $0.append(edited)
        })
    let memoryUndo = try Measure.median(
        runs: runs,
        setup: { () -> VersioningController<BigDocument, BigDocument, ReversionError> in
            let controller = VersioningController(original)
            try controller.append(edited)
            return controller
        }, measure: { _ = try $0.undo() })
    var copies: [BigDocument] = [original]
    let copyAppend = Measure.median(runs: runs) {
        copies.append(edited)
        _ = copies.popLast()
    }

    let store = try open("big.keepsake")
    let history = try store.history("big", initialValue: original, maximumVersions: nil)
    var current = original
    var index = 0
    let durableAppend = try Measure.median(
        runs: runs,
        setup: { () -> BigDocument in
            index += 1
            var next = current
            next.items[(index * 37) % next.items.count].title = "Edit \(index)"
            return next
        },
        measure: { next in
            try history.append(next)
            current = next
        })
    let bytesPerEdit = try bytesOfLastVersion(store, "big")
    let durableUndo = try Measure.median(runs: min(runs, index)) { _ = try history.undo() }

    let naive = try NaiveSnapshotStore<BigDocument>(path: path("naive.sqlite"), synchronous: synchronous)
    try naive.append(original)
    var naiveIndex = 0
    let naiveAppend = try Measure.median(
        runs: runs,
        setup: { () -> BigDocument in
            naiveIndex += 1
            var next = original
            next.items[(naiveIndex * 37) % next.items.count].title = "Edit \(naiveIndex)"
            return next
        }, measure: { try naive.append($0) })
    let naiveBytes = try JSONEncoder().encode(edited).count
    let naiveUndo = try Measure.median(runs: min(runs, naiveIndex)) { _ = try naive.undo() }

    record(scenario, "diff (reversion(to:))", diff.seconds, "s")
    record(scenario, "revert", revert.seconds, "s")
    record(scenario, "full copies: append + pop", copyAppend.seconds, "s")
    record(scenario, "in-memory append", memoryAppend.seconds, "s")
    record(scenario, "in-memory undo", memoryUndo.seconds, "s")
    record(scenario, "durable append", durableAppend.seconds, "s")
    record(scenario, "durable undo", durableUndo.seconds, "s")
    record(scenario, "naive snapshot store: append", naiveAppend.seconds, "s")
    record(scenario, "naive snapshot store: undo", naiveUndo.seconds, "s")
    let speedup = naiveAppend.seconds / durableAppend.seconds
    record(scenario, "durable append vs naive (×faster)", speedup, "×", target: "≥ 20×", met: speedup >= 20)
    let overMemory = durableAppend.seconds / memoryAppend.seconds
    record(
        scenario, "durable append vs in-memory (×slower)", overMemory, "×", target: "≤ 2×",
        met: overMemory <= 2)
    record(
        scenario, "bytes stored per edit", Double(bytesPerEdit), "bytes", target: "< 1 KiB",
        met: bytesPerEdit < 1024)
    record(scenario, "naive: bytes stored per edit", Double(naiveBytes), "bytes")
}

// MARK: 2. Small document, many edits

if runs(2) {
    let scenario = "2 small document, many edits"
    let edits = quick ? 300 : 10_000
    let store = try open("small.keepsake")
    let history = try store.history("small", initialValue: SmallDocument())
    var value = history.value
    let clock = ContinuousClock()
    let start = clock.now
    for step in 0..<edits {
        value.edit(step)
        try history.append(value)
    }
    let versionsPerSecond = Double(edits) / (clock.now - start).seconds
    // The same edits typed into a debounced history: each is written durably as it is held
    // (one small transaction), and a burst of 25 becomes one version.
    let typing = try store.history("typing", initialValue: SmallDocument())
    typing.withDebouncing(interval: .seconds(3_600))
    var typed = typing.value
    let typingStart = clock.now
    for step in 0..<edits {
        typed.edit(step)
        try typing.append(typed)
        if step % 25 == 24 { try typing.flush() }
    }
    let heldPerSecond = Double(edits) / (clock.now - typingStart).seconds
    let limit = try SQLiteLimit.commitsPerSecond(
        path: path("limit.sqlite"), synchronous: synchronous, rows: edits)
    record(scenario, "durable versions per second", versionsPerSecond, "/s")
    record(scenario, "SQLite limit: 200-byte rows committed per second", limit, "/s")
    let share = versionsPerSecond / limit
    record(
        scenario, "versions/s as a share of SQLite's limit", share * 100, "%", target: "≥ 50%",
        met: share >= 0.5)
    record(scenario, "keystrokes held durably per second (debounced)", heldPerSecond, "/s")
    let holdCost = versionsPerSecond / heldPerSecond
    record(
        scenario, "keystroke held durably ÷ durable append", holdCost, "×",
        target: "≤ 2×", met: holdCost <= 2)
}

// MARK: 3. Blob edits

if runs(3) {
    let scenario = "3 fifty one-byte edits to 1 MiB"
    let original = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
    struct Blob: Versionable, Equatable, Codable { var bytes: Data }
    var value = Blob(bytes: original)
    let controller = VersioningController(value, maximumVersions: nil)
    // Give `value` its own bytes before measuring, as an app's model would have: otherwise the
    // first edit's copy (which `original` keeps alive) would be counted as history.
    value.bytes.withUnsafeMutableBytes { _ in }
    let heapBefore = Measure.heapInUse()
    for step in 0..<50 {
        value.bytes[(step * 20_011) % value.bytes.count] &+= 1
        try controller.append(value)
    }
    let heapAfter = Measure.heapInUse()
    let steps = (controller.storage as? InMemoryVersionStorage<Blob>)?.history.scopes[0].undo ?? []
    var reversionBytes = 0
    for step in steps {
        let records = try step.reversion.records()
        reversionBytes += records.reduce(0) { $0 + $1.payload.count }
    }
    let store = try open("blob.keepsake")
    let history = try store.history("blob", initialValue: Blob(bytes: original), maximumVersions: nil)
    try store.compact()
    let sizeBefore = Measure.fileSize(path("blob.keepsake"))
    var durable = history.value
    for step in 0..<50 {
        durable.bytes[(step * 20_011) % durable.bytes.count] &+= 1
        try history.append(durable)
    }
    try store.compact()
    let growth = Measure.fileSize(path("blob.keepsake")) - sizeBefore
    if let heapBefore, let heapAfter {
        let held = heapAfter - heapBefore
        record(
            scenario, "in-memory history: heap growth", Double(held), "bytes", target: "< 64 KiB",
            met: held < 64 * 1024)
    }
    record(scenario, "in-memory history: reversions encoded", Double(reversionBytes), "bytes")
    record(
        scenario, "durable: file growth", Double(growth), "bytes", target: "< 64 KiB", met: growth < 64 * 1024
    )
}

// MARK: 4. Reopen

if runs(4) {
    let scenario = "4 reopen a long history"
    let sizes = quick ? [100, 1_000] : [1_000, 10_000, 100_000]
    var times: [Int: Double] = [:]
    for size in sizes {
        let name = "reopen-\(size).keepsake"
        do {
            let store = try open(name)
            let history = try store.history("long", initialValue: SmallDocument(), maximumVersions: nil)
            var value = history.value
            for step in 0..<size {
                value.edit(step)
                try history.append(value)
            }
        }
        let heapBefore = Measure.heapInUse()
        var kept: KeepsakeHistory<SmallDocument>?
        let time = try Measure.median(runs: runs) {
            let history = try open(name).history("long", initialValue: SmallDocument(), maximumVersions: nil)
            _ = try history.undo()
            kept = history
        }
        let heap = Measure.heapInUse().map { $0 - (heapBefore ?? 0) }
        _ = kept
        times[size] = time.seconds
        record(scenario, "open + load + first undo, \(size) versions", time.seconds, "s")
        if let heap { record(scenario, "heap held after opening \(size) versions", Double(heap), "bytes") }
    }
    if let small = times[sizes.first!], let large = times[sizes.last!] {
        let ratio = large / small
        record(
            scenario, "\(sizes.last!) vs \(sizes.first!) versions (×)", ratio, "×", target: "< 2×",
            met: ratio < 2)
    }
}

// MARK: 5. Snapshots

if runs(5) {
    let scenario = "5 snapshots of the big document"
    let document = BigDocument.make(items: quick ? 1_000 : 10_000, bytes: quick ? 64 * 1024 : 1 << 20)
    let store = try open("snapshots.keepsake")
    let caretaker = Caretaker(store: store)
    var counter = 0
    let save = try Measure.median(runs: runs) {
        counter += 1
        try caretaker.save(document, as: "s\(counter)")
    }
    let restore = try Measure.median(runs: runs) { _ = try caretaker.restore("s1", as: BigDocument.self) }
    let inspector = try SQLiteConnection(path: path("snapshots.keepsake"))
    let contentBytes = {
        (try inspector.scalarInt("SELECT coalesce(sum(length(value)), 0) FROM snapshot_property") ?? 0)
            + (try inspector.scalarInt("SELECT coalesce(sum(length(bytes)), 0) FROM blob") ?? 0)
    }
    let before = try contentBytes()
    var changed = document
    changed.title = "Changed title"
    try caretaker.save(changed, as: "one-property-changed")
    // Everything the second snapshot added: its rows and any new blob.
    let added = Int(try contentBytes() - before)
    record(scenario, "save", save.seconds, "s")
    record(scenario, "restore", restore.seconds, "s")
    record(
        scenario, "second snapshot, one property changed: bytes added", Double(added), "bytes",
        target: "< 1 KiB",
        met: added < 1024)
}

// MARK: 6. Append latency over a long run

if runs(6) {
    // Every append timed on its own: checkpoints (a whole value every 1,024 versions or when the
    // changes outweigh the last one) and pruning under the default limit happen inside some of
    // them, and show as the p99 and the maximum, not in a median.
    let scenario = "6 durable append latency, big document, default limit"
    let appends = quick ? 150 : 5_000
    var document = BigDocument.make(items: quick ? 1_000 : 10_000, bytes: quick ? 64 * 1024 : 1 << 20)
    let store = try open("latency.keepsake")
    let history = try store.history("latency", initialValue: document)
    let clock = ContinuousClock()
    var samples: [Duration] = []
    samples.reserveCapacity(appends)
    for step in 0..<appends {
        document.items[(step &* 7_919) % document.items.count].title = "Edit \(step)"
        let start = clock.now
        try history.append(document)
        samples.append(clock.now - start)
    }
    let latency = Measure.Percentiles(samples)
    record(scenario, "p50", latency.p50.seconds, "s")
    record(scenario, "p99", latency.p99.seconds, "s")
    record(scenario, "max", latency.max.seconds, "s")
    let (p99, worst) = (latency.p99.seconds / latency.p50.seconds, latency.max.seconds / latency.p50.seconds)
    record(scenario, "p99 ÷ p50", p99, "×", target: "≤ 3×", met: p99 <= 3)
    record(scenario, "max ÷ p50", worst, "×", target: "≤ 10×", met: worst <= 10)
}

// MARK: Report

if arguments.contains("--json") {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(figures), as: UTF8.self))
} else {
    print(
        "Keepsake benchmarks · \(quick ? "quick smoke run" : "full run") · synchronous=\(synchronous.rawValue) · \(ProcessInfo.processInfo.activeProcessorCount) cores"
    )
    var scenario = ""
    for figure in figures {
        if figure.scenario != scenario {
            scenario = figure.scenario
            print("\n\(scenario)")
        }
        let value: String
        switch figure.unit {
        case "s": value = Duration.seconds(figure.value).text
        case "bytes":
            value =
                figure.value < 10_000
                ? "\(Int(figure.value)) B" : String(format: "%.1f KiB", figure.value / 1024)
        case "/s": value = String(format: "%.0f/s", figure.value)
        case "%": value = String(format: "%.0f%%", figure.value)
        default: value = String(format: "%.1f%@", figure.value, figure.unit)
        }
        let target = figure.target.map { "  target \($0): \(figure.met == true ? "met" : "MISSED")" } ?? ""
        print("  \(figure.metric.padding(toLength: 58, withPad: " ", startingAt: 0)) \(value)\(target)")
    }
}
