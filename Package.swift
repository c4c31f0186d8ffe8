// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Archivist",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Archivist", targets: ["Archivist"]),
        .executable(name: "ArchivistBenchmarks", targets: ["ArchivistBenchmarks"]),
    ],
    targets: [
        .target(name: "Archivist", path: "Sources/Archivist"),
        .executableTarget(
            name: "ArchivistBenchmarks",
            dependencies: ["Archivist"],
            path: "Benchmarks/ArchivistBenchmarks"
        ),
        .testTarget(
            name: "ArchivistTests",
            dependencies: ["Archivist"],
            path: "Tests/ArchivistTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
