import Foundation
import Testing

/// A fresh directory for one test, removed when the value goes away, or — in a suite with the
/// ``TemporaryDirectoryCleanup`` trait — when the test ends, whichever comes first.
final class TemporaryDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keepsake-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        Self.created?.append(url)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The directories created while a test with ``TemporaryDirectoryCleanup`` runs.
    @TaskLocal fileprivate static var created: Created?

    fileprivate final class Created: @unchecked Sendable {
        private let lock = NSLock()
        private var urls: [URL] = []

        func append(_ url: URL) { lock.withLock { urls.append(url) } }
        func removeAll() {
            for url in lock.withLock({ urls }) { try? FileManager.default.removeItem(at: url) }
        }
    }
}

/// Removes the temporary directories a test created when it ends. An actor suite's instance,
/// whose `directory` a ``TemporaryDirectory`` is, lives as long as a task isolated to it waits
/// — a debounce timer on a manual clock no test advances again — so its deinit, which removes
/// the directory, may never run: four such suites left ~270 MB of stores in the temporary
/// directory on every run of the tests.
struct TemporaryDirectoryCleanup: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        let created = TemporaryDirectory.Created()
        defer { created.removeAll() }
        try await TemporaryDirectory.$created.withValue(created) { try await function() }
    }
}

extension Trait where Self == TemporaryDirectoryCleanup {
    /// Removes the temporary directories each test creates when it ends.
    static var removesTemporaryDirectories: Self { TemporaryDirectoryCleanup() }
}
