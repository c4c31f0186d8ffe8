import Foundation

/// Writes `message` to standard error and exits with status 1.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ArchivistProcessWorker: \(message)\n".utf8))
    exit(1)
}

/// The argument at `index` converted by `convert`, or a usage failure naming `what`.
func argument<T>(_ arguments: [String], _ index: Int, _ what: String, _ convert: (String) -> T?) -> T {
    guard index < arguments.count, let value = convert(arguments[index]) else { fail("missing or bad argument: \(what)") }
    return value
}

/// A SplitMix64 generator, as the tests' own, so workers' choices are reproducible by seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
