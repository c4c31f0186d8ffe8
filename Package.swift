// swift-tools-version: 6.3
import PackageDescription

let package = Package(
    name: "Archivist",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1), .macCatalyst(.v16)],
    products: [
        .library(name: "Archivist", targets: ["Archivist"]),
        .library(name: "ArchivistKeyedArchive", targets: ["ArchivistKeyedArchive"]),
        .executable(name: "ArchivistBenchmarks", targets: ["ArchivistBenchmarks"]),
        .executable(name: "archivist", targets: ["ArchivistCLI"]),
    ],
    targets: [
        // C where Swift cannot reach the hardware without a package dependency: atomics on
        // memory shared between processes (and hardware CRC32C).
        .target(name: "CArchivistSupport", path: "Sources/CArchivistSupport"),
        // PrivacyInfo.xcprivacy: the Required-Reason APIs the library calls and why
        // (docs/Platforms.md, "Privacy manifest").
        .target(
            name: "Archivist",
            dependencies: ["CArchivistSupport"],
            path: "Sources/Archivist",
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // NSKeyedArchiver archives: the validating Foundation bridge, plist readers and writer.
        // Built on the core; the core does not know it.
        .target(name: "ArchivistKeyedArchive", dependencies: ["Archivist"], path: "Sources/ArchivistKeyedArchive"),
        // What the `archivist` tool does (inspect, ls, verify, stats, clear, convert), as a
        // library so the tests call it directly as well as run the tool. Not a product.
        .target(
            name: "ArchivistInspection",
            dependencies: ["Archivist", "ArchivistKeyedArchive"],
            path: "Sources/ArchivistInspection"
        ),
        // The command-line tool `archivist` (the product's name): arguments in,
        // `ArchivistInspection` does the work. The target and its folder are not called
        // `archivist`: on a case-insensitive file system (macOS by default) they would be
        // `Archivist`'s.
        .executableTarget(name: "ArchivistCLI", dependencies: ["ArchivistInspection"], path: "Tools/archivist"),
        .executableTarget(
            name: "ArchivistBenchmarks",
            dependencies: ["Archivist", "ArchivistKeyedArchive"],
            path: "Benchmarks/ArchivistBenchmarks"
        ),
        // What the tests and the processes they start share: the seeded generator, the crash
        // writer's and the workers' value types, the progress file. Not a product.
        .target(
            name: "ArchivistTestSupport",
            dependencies: ["Archivist"],
            path: "Tests/ArchivistTestSupport"
        ),
        // The process the crash tests start and kill (Tests/ArchivistTests/Reliability/).
        .executableTarget(
            name: "ArchivistCrashWriter",
            dependencies: ["Archivist", "ArchivistTestSupport"],
            path: "Tests/CrashWriter"
        ),
        // The processes the multi-process tests start: several open one store at once.
        .executableTarget(
            name: "ArchivistProcessWorker",
            dependencies: ["Archivist", "ArchivistTestSupport"],
            path: "Tests/ProcessWorker"
        ),
        .testTarget(
            name: "ArchivistTests",
            dependencies: [
                "Archivist", "ArchivistKeyedArchive", "ArchivistTestSupport",
                "ArchivistCrashWriter", "ArchivistProcessWorker", "ArchivistInspection", "ArchivistCLI",
            ],
            path: "Tests/ArchivistTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
