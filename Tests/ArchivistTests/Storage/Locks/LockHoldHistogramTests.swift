import Testing

@testable import Archivist

/// `LockHoldHistogram`: the buckets behind the lock-hold percentiles of the benchmarks.
@Suite struct LockHoldHistogramTests {
    @Test func percentilesAreUpperBoundsWithinABucketAndNeverAboveTheLongest() throws {
        var holds = LockHoldHistogram()
        #expect(holds.percentile(0.99) == nil)
        for nanoseconds in 1...1_000 { holds.record(nanoseconds: UInt64(nanoseconds) * 1_000) }  // 1 µs … 1 ms
        #expect(holds.count == 1_000)
        #expect(holds.longestNanoseconds == 1_000_000)
        let median = try #require(holds.percentile(0.5))
        #expect(median >= 500_000 && Double(median) <= 500_000 * 1.25)
        let p99 = try #require(holds.percentile(0.99))
        #expect(p99 >= 990_000 && p99 <= 1_000_000)
        #expect(holds.percentile(1) == 1_000_000)
    }

    @Test func everyHoldCountsInTheBucketThatBoundsIt() {
        for nanoseconds: UInt64 in [0, 1, 1_024, 1_025, 1_280, 1_281, 2_047, 2_048, 123_456_789, 1 << 40, .max] {
            var holds = LockHoldHistogram()
            holds.record(nanoseconds: nanoseconds)
            let index = holds.counts.firstIndex(of: 1) ?? -1
            #expect(index >= 0)
            let upper = LockHoldHistogram.upperBound(ofBucket: index)
            let lower = index == 0 ? 0 : LockHoldHistogram.upperBound(ofBucket: index - 1)
            if index < holds.counts.count - 1 {
                #expect(
                    nanoseconds <= upper && (index == 0 || nanoseconds > lower),
                    "\(nanoseconds) in bucket \(index)"
                )
            }
            #expect(holds.percentile(0.99) == min(upper, nanoseconds) || index == holds.counts.count - 1)
        }
    }

    @Test func mergingAndRebuildingFromCountsKeepEveryHold() throws {
        var first = LockHoldHistogram()
        first.record(nanoseconds: 5_000)
        var second = LockHoldHistogram()
        second.record(nanoseconds: 7_000_000)
        first.merge(second)
        #expect(first.count == 2 && first.longestNanoseconds == 7_000_000)
        let copy = try #require(LockHoldHistogram(counts: first.counts, longestNanoseconds: first.longestNanoseconds))
        #expect(copy == first)
        #expect(LockHoldHistogram(counts: [1, 2, 3], longestNanoseconds: 1) == nil)
    }

    @Test func aFileLockCountsEachHold() throws {
        let folder = try ScratchFolder()
        let lock = FileLock(path: folder.file("holds.lock").path)
        for _ in 0..<3 { try lock.withExclusive {} }
        try lock.withShared { try lock.withShared {} }  // nested shared holders: one hold
        #expect(lock.holdHistogram.count == 4)
        #expect(
            lock.holdHistogram.longestNanoseconds == UInt64(lock.longestHold.components.attoseconds / 1_000_000_000)
                + UInt64(lock.longestHold.components.seconds) * 1_000_000_000
        )
    }
}
