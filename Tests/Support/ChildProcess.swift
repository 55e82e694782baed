public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a tool as a child process and collects what it writes, through pipes no other child
/// inherits.
///
/// Foundation's `Pipe` makes descriptors that every process spawned while they are open
/// inherits. An exit test's child spawned by another test at that moment (a writer running
/// for minutes) then held the write end of a command's output, and reading that output to its
/// end waited for the writer to end, not the command: `OpenRaceTests` waited ten minutes on an
/// `inspect` that had exited, its writer having given up meanwhile. Here each pipe is made
/// close-on-exec, so only the command, which gets it as its output, holds it.
public enum ChildProcess {
    /// What a child process wrote and how it ended.
    public struct Outcome: Sendable {
        /// Its exit status.
        public let status: Int32
        /// What it wrote to its standard output.
        public let output: Data
        /// What it wrote to its standard error.
        public let error: Data
    }

    /// Runs `executable` with `arguments` (in `directory`, else the current one; with this
    /// process's environment and `environment` over it) and waits for it to end, reading its
    /// standard output and error meanwhile.
    ///
    /// - Throws: The error `Process.run()` throws when it cannot start, or a POSIX error when
    ///   no pipe can be made.
    public static func run(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil,
        environment: [String: String] = [:]
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let directory { process.currentDirectoryURL = directory }
        let (outputRead, outputWrite) = try makePipe()
        let (errorRead, errorWrite) = try makePipe()
        process.standardOutput = outputWrite
        process.standardError = errorWrite
        do {
            try process.run()
        } catch {
            for handle in [outputRead, outputWrite, errorRead, errorWrite] { try? handle.close() }
            throw error
        }
        // The child has its own copies; with these closed, each read ends when the child ends.
        try? outputWrite.close()
        try? errorWrite.close()
        // Standard error is read beside: a child filling one pipe while this reads the other
        // would wait forever.
        let error = Collected()
        let reader = Thread { [errorRead] in
            error.finish(errorRead.readDataToEndOfFile())
        }
        reader.start()
        let output = outputRead.readDataToEndOfFile()
        process.waitUntilExit()
        let errorData = error.wait()
        try? outputRead.close()
        try? errorRead.close()
        return Outcome(status: process.terminationStatus, output: output, error: errorData)
    }

    /// A pipe whose two ends are closed in every process this one starts (on Linux,
    /// `O_CLOEXEC` set as it is made, with no moment between in which another thread's spawn
    /// could copy it).
    static func makePipe() throws -> (read: FileHandle, write: FileHandle) {
        var descriptors: [Int32] = [0, 0]
        if let pipe2 = Self.pipe2 {
            guard pipe2(&descriptors, O_CLOEXEC) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        } else {
            // No `pipe2` (Darwin, whose `Process` spawns with every other descriptor closed).
            guard pipe(&descriptors) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        }
        return (
            FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true),
            FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
        )
    }

    /// glibc's `pipe2`, which its Swift module leaves out (it needs `_GNU_SOURCE`); `nil`
    /// where the C library has none.
    private static let pipe2: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32)? = {
        #if os(Linux)
            // `RTLD_DEFAULT` (a null handle on glibc): the process's own symbols.
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
        #else
            return nil
        #endif
    }()

    /// The data a reading thread hands over when its pipe ends.
    private final class Collected: @unchecked Sendable {
        // Sound because `data` is written once, before `done` is signalled, and read after.
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        func finish(_ data: Data) {
            self.data = data
            done.signal()
        }

        func wait() -> Data {
            done.wait()
            return data
        }
    }
}
