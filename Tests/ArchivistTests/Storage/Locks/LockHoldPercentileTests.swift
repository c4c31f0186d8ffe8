import Testing

@testable import Archivist

/// A percentile is the bound of the first bucket that reaches its rank: not the next bucket's.
@Suite struct LockHoldPercentileTests {
    @Test func aPercentileStopsAtTheBucketHoldingItsRank() {
        var holds = LockHoldHistogram()
        holds.record(nanoseconds: 2_000)  // the bucket up to 2,048 ns
        holds.record(nanoseconds: 1_000_000)
        #expect(holds.percentile(0.5) == 2_048, "the median of two holds is the shorter one's bucket")
        #expect(holds.percentile(1) == 1_000_000)
        holds.record(nanoseconds: 2_040)  // the same bucket: two of three holds
        #expect(holds.percentile(0.66) == 2_048)
        #expect(holds.percentile(0.67) == 1_000_000)
    }
}
