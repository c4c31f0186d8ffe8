import Archivist
import Foundation

/// CRC32C throughput: the CPU's instructions (what `CRC32C.checksum` runs where it can)
/// against the portable software version, on a cache entry's 100 KB and on 10 MB.
func runChecksumBenchmarks(_ harness: Harness) throws {
    let suite = "crc32c"
    var throughputs: [String] = []
    for (size, label, rounds) in [(100_000, "100 KB", 500), (10_000_000, "10 MB", 5)] {
        let bytes = [UInt8]((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 11) })
        let expected = bytes.withUnsafeBytes { CRC32C.softwareChecksum($0) }
        let processed = size * rounds
        func run(_ checksum: (UnsafeRawBufferPointer) -> UInt32) -> Int? {
            bytes.withUnsafeBytes { raw in
                for _ in 0..<rounds where checksum(raw) != expected { fatalError("CRC32C disagrees with software") }
            }
            return processed
        }
        var cases: [(String, () -> Int?)] = [("software, \(label)", { run { CRC32C.softwareChecksum($0) } })]
        if CRC32C.usesHardware {
            cases.append(
                ("hardware, \(label)", { run { CRC32C.hardwareChecksum($0.baseAddress!, $0.count, seed: 0) } })
            )
        }
        harness.measureInterleaved(suite, cases)
        for (name, _) in cases {
            if let result = harness.results.last(where: { $0.suite == suite && $0.name == name }) {
                throughputs.append(String(format: "%@: %.1f GB/s", name, Double(processed) / Double(result.medianNS)))
            }
        }
    }
    harness.printTable(
        suite,
        title:
            "CRC32C, \(CRC32C.usesHardware ? "hardware vs software" : "software only (no CRC32C instructions)") (bytes = bytes checksummed per sample)"
    ) { name in
        name.hasPrefix("hardware, ") ? "software, " + name.dropFirst("hardware, ".count) : name
    }
    for line in throughputs { print("  \(line)") }
}
