/// A small seeded generator (SplitMix64) so random tests are reproducible: print the seed on
/// failure and rerun with it. The tests and the processes they start (the crash writer, the
/// multi-process workers) share this one, so a seed means the same choices in each.
///
/// ```swift
/// var rng = SplitMix64(seed: 42)
/// let roll = Int.random(in: 0..<100, using: &rng)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is a function of `seed` alone.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
