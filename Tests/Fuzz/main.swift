import Foundation

// The store fuzzer: damages a copy of a store that uses everything, the way an input picks,
// and checks that the copy gives what the undamaged store gives, up to a typed error.
// `KEEPSAKE_FUZZ_MODE` (bytes, cells, keys, ops-bytes, ops-cells, ops-keys) says how; see
// `Scripts/fuzz`, which builds it with libFuzzer. Built plainly, it replays the inputs it is given
// as files, saying what each one did: a problem a fuzzing run found, explained.

let modes = FuzzMode.allCases.map(\.rawValue).joined(separator: ", ")
guard let mode = ProcessInfo.processInfo.environment["KEEPSAKE_FUZZ_MODE"].flatMap(FuzzMode.init) else {
    FileHandle.standardError.write(Data("error: set KEEPSAKE_FUZZ_MODE to one of: \(modes)\n".utf8))
    exit(2)
}
let fuzzer: StoreFuzzer
do {
    fuzzer = try StoreFuzzer(mode: mode)
} catch {
    FileHandle.standardError.write(Data("error: the undamaged store failed: \(error)\n".utf8))
    exit(1)
}

#if KEEPSAKE_LIBFUZZER
    @_silgen_name("LLVMFuzzerRunDriver")
    func runDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafeRawPointer, Int) -> CInt
    ) -> CInt

    /// Checks one input libFuzzer made; a problem aborts, for libFuzzer to keep the input.
    @_cdecl("LLVMFuzzerTestOneInput")
    func testOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
        let input = Array(UnsafeRawBufferPointer(start: start, count: count))
        MainActor.assumeIsolated {
            let (problem, account) = (try? fuzzer.check(input)) ?? ("the harness failed", [])
            if let problem {
                FileHandle.standardError.write(
                    Data("PROBLEM: \(problem)\n  \(account.joined(separator: "\n  "))\n".utf8))
                abort()
            }
        }
        return 0
    }

    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(runDriver(&argc, &argv, testOneInput))
#else
    var problems = 0
    for file in CommandLine.arguments.dropFirst() {
        do {
            let input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            let (problem, account) = try fuzzer.check(input)
            print("\(file): \(problem.map { "PROBLEM: \($0)" } ?? "agrees with the undamaged store")")
            for line in account { print("  \(line)") }
            if problem != nil { problems += 1 }
        } catch {
            print("\(file): not checked: \(error)")
            problems += 1
        }
    }
    exit(problems == 0 ? 0 : 1)
#endif
