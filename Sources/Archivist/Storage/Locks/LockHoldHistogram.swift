/// How long a ``FileLock`` was held, hold by hold, in logarithmic buckets: the figures in
/// docs/Reliability.md and the `processes` benchmark's 99th percentile come from here.
///
/// Four buckets per power of two from 1 µs (within 19% of the true value); shorter holds
/// count in the first bucket, holds above 2³⁵ ns (34 s) in the last. Recording is one
/// array increment, made by ``FileLock`` under the mutex it already holds when a hold ends.
///
/// ```swift
/// var holds = LockHoldHistogram()
/// holds.record(nanoseconds: 12_000)
/// print(holds.percentile(0.99) ?? 0)   // an upper bound of the 99th percentile, in ns
/// ```
package struct LockHoldHistogram: Sendable, Equatable {
    /// Holds counted per bucket; bucket `i ≥ 1` covers up to ``upperBound(ofBucket:)``.
    package private(set) var counts: [UInt64]
    /// The longest hold recorded, exactly, in nanoseconds.
    package private(set) var longestNanoseconds: UInt64 = 0

    private static let firstOctave = 10  // 2^10 ns ≈ 1 µs
    private static let octaves = 26
    private static let perOctave = 4

    /// An empty histogram.
    package init() {
        counts = Array(repeating: 0, count: Self.octaves * Self.perOctave + 1)
    }

    /// An histogram with these bucket counts and longest hold (as read back from
    /// ``counts`` and ``longestNanoseconds``, for example in another process); `nil` when
    /// `counts` has not the bucket count this build uses.
    package init?(counts: [UInt64], longestNanoseconds: UInt64) {
        guard counts.count == Self.octaves * Self.perOctave + 1 else { return nil }
        self.counts = counts
        self.longestNanoseconds = longestNanoseconds
    }

    /// The number of holds recorded.
    package var count: UInt64 { counts.reduce(0, +) }

    /// Counts one hold of `nanoseconds`.
    package mutating func record(nanoseconds: UInt64) {
        counts[Self.bucket(of: nanoseconds)] += 1
        if nanoseconds > longestNanoseconds { longestNanoseconds = nanoseconds }
    }

    /// Adds `other`'s holds to these.
    package mutating func merge(_ other: LockHoldHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        longestNanoseconds = max(longestNanoseconds, other.longestNanoseconds)
    }

    /// An upper bound, in nanoseconds, of the `fraction` percentile (0.99: the time 99% of
    /// the holds did not exceed), never above the longest hold; `nil` when empty.
    package func percentile(_ fraction: Double) -> UInt64? {
        let total = count
        guard total > 0 else { return nil }
        let rank = UInt64((Double(total) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (index, bucketCount) in counts.enumerated() {
            seen += bucketCount
            if seen >= max(rank, 1) { return min(Self.upperBound(ofBucket: index), longestNanoseconds) }
        }
        return longestNanoseconds
    }

    /// The longest hold bucket `index` counts, in nanoseconds.
    static func upperBound(ofBucket index: Int) -> UInt64 {
        guard index > 0 else { return 1 << firstOctave }
        let octave = (index - 1) / perOctave + firstOctave
        let step = UInt64(1) << (octave - 2)  // a quarter of the octave's base
        return (UInt64(1) << octave) + step * UInt64((index - 1) % perOctave + 1)
    }

    private static func bucket(of nanoseconds: UInt64) -> Int {
        guard nanoseconds > 1 << firstOctave else { return 0 }
        let value = nanoseconds - 1
        let octave = 63 - value.leadingZeroBitCount  // 2^octave ≤ value < 2^(octave + 1)
        guard octave < firstOctave + octaves else { return octaves * perOctave }
        let quarter = Int((value >> (octave - 2)) & 3)
        return (octave - firstOctave) * perOctave + quarter + 1
    }
}
