import Foundation
import Testing

@testable import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The helper that runs the command line and the `sqlite3` shell: no other child holds its
/// pipes, and a child writing much to both is read to the end.
@Suite struct ChildProcessTests {
    /// A process spawned as an exit test spawns its child (`posix_spawn`, every descriptor not
    /// marked close-on-exec inherited) while a pipe is open: it holds neither end. With
    /// Foundation's `Pipe` it held both, and a command's output, read to its end, ended only
    /// when that process did (`OpenRaceTests` waited ten minutes).
    @Test func aProcessSpawnedWhileAPipeIsOpenDoesNotHoldIt() throws {
        #if os(Linux)
            let (read, write) = try ChildProcess.makePipe()
            defer {
                try? read.close()
                try? write.close()
            }
            let listing = FileManager.default.temporaryDirectory.appendingPathComponent(
                "child-fds-\(UUID().uuidString)"
            ).path
            defer { try? FileManager.default.removeItem(atPath: listing) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, listing, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            // The shell lists the descriptors it was started with.
            let arguments = ["/bin/sh", "-c", "ls /proc/$$/fd"]
            var argv = arguments.map { strdup($0) } + [nil]
            defer { for argument in argv { free(argument) } }
            var pid: pid_t = 0
            #expect(posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, environ) == 0)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            let descriptors = try String(contentsOfFile: listing, encoding: .utf8)
                .split(separator: "\n").compactMap { Int32($0) }
            #expect(!descriptors.contains(read.fileDescriptor), "\(descriptors)")
            #expect(!descriptors.contains(write.fileDescriptor), "\(descriptors)")
            #expect(descriptors.contains(1))
        #endif
    }

    /// A child filling both pipes (far past what one holds) is read to the end of each.
    @Test func bothOutputsAreReadToTheEnd() throws {
        let run = try ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c",
                "i=0; while [ $i -lt 2000 ]; do echo out-$i-0123456789012345678901234567890123456789; echo err-$i-0123456789012345678901234567890123456789 >&2; i=$((i+1)); done; exit 3",
            ]
        )
        #expect(run.status == 3)
        let output = String(decoding: run.output, as: UTF8.self).split(separator: "\n")
        let error = String(decoding: run.error, as: UTF8.self).split(separator: "\n")
        #expect(output.count == 2000 && output.last == "out-1999-0123456789012345678901234567890123456789")
        #expect(error.count == 2000 && error.last == "err-1999-0123456789012345678901234567890123456789")
    }
}
