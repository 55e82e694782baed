// swift-tools-version:6.2
import PackageDescription

// Keepsake has no Swift package dependencies by design: only the toolchain and the system
// libsqlite3 (`apt-get install libsqlite3-dev` on Debian and Ubuntu).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Keepsake",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Revertible", targets: ["Revertible"]),
        .library(name: "Keepsake", targets: ["Keepsake"]),
        .executable(name: "keepsake", targets: ["keepsake"]),
        .executable(name: "keepsake-bench", targets: ["keepsake-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "Revertible", swiftSettings: strictSettings),
        .target(name: "Keepsake", dependencies: ["Revertible", "CSQLite"], swiftSettings: strictSettings),
        .executableTarget(
            name: "keepsake", dependencies: ["Keepsake", "Revertible"], swiftSettings: strictSettings),
        // The benchmarks: `Scripts/bench` runs them in a release build.
        .executableTarget(
            name: "keepsake-bench", dependencies: ["Keepsake", "CSQLite", "CBenchSupport"],
            swiftSettings: strictSettings),
        // The allocator's byte count (glibc's mallinfo2), which Swift's Glibc module does not expose.
        .target(name: "CBenchSupport"),
        // What the test targets share: a seeded generator, a manual clock, a full-copy history model,
        // child processes run with pipes no other child inherits.
        .target(
            name: "TestSupport", dependencies: ["Revertible"], path: "Tests/Support",
            swiftSettings: strictSettings),
        // What the Keepsake tests and the store fuzzer share: the test document, the rich store,
        // the damage done to copies of it.
        .target(
            name: "KeepsakeTestSupport", dependencies: ["Keepsake", "Revertible", "TestSupport"],
            path: "Tests/KeepsakeSupport", swiftSettings: strictSettings),
        // The store fuzzer: `Scripts/fuzz` builds it with libFuzzer; built plainly, it replays inputs.
        .executableTarget(
            name: "keepsake-fuzz", dependencies: ["KeepsakeTestSupport", "Keepsake", "TestSupport"],
            path: "Tests/Fuzz", swiftSettings: strictSettings),
        .testTarget(
            name: "RevertibleTests", dependencies: ["Revertible", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KeepsakeTests",
            dependencies: ["Keepsake", "Revertible", "TestSupport", "KeepsakeTestSupport"],
            // Golden stores are read from the source tree by path, never copied as resources.
            exclude: [
                "Golden/schema-1.keepsake", "Golden/schema-2.keepsake", "Golden/schema-3.keepsake",
                "Golden/schema-4.keepsake", "Golden/schema-5.keepsake",
                "Golden/schema-6.keepsake", "Golden/schema-7.keepsake", "Golden/schema-8.keepsake",
                "Golden/schema-9.keepsake", "Golden/schema-10.keepsake", "Golden/schema-11.keepsake",
            ],
            swiftSettings: strictSettings),
        // Compiled as Xcode 26 compiles a new app target: main-actor isolation by default, and the
        // upcoming features of its "approachable concurrency" setting.
        .testTarget(
            name: "MainActorAppTests", dependencies: ["Keepsake"],
            swiftSettings: strictSettings + [
                .defaultIsolation(MainActor.self),
                .enableUpcomingFeature("InferIsolatedConformances"),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
            ]),
        // Runs the built `keepsake` executable as a subprocess; the dependency makes sure it is built.
        .testTarget(
            name: "CommandLineTests", dependencies: ["keepsake", "Keepsake", "TestSupport"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
