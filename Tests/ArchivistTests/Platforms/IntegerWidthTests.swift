import Foundation
import Testing

@testable import Archivist

/// `Int` is 32 bits on Apple Watch hardware (arm64_32), which nothing here runs. These tests
/// evaluate every default limit and the size computations built on them in `Int32`
/// arithmetic, where an overflow traps as it would on the watch.
struct IntegerWidthTests {
    /// Each default of ``ArchiveLimits``, in 32 bits.
    @Test func archiveLimitDefaultsFitIn32Bits() throws {
        let limits = ArchiveLimits()
        for (name, value) in [
            ("maxDepth", limits.maxDepth), ("maxObjectCount", limits.maxObjectCount),
            ("maxElementCount", limits.maxElementCount), ("maxTotalBytes", limits.maxTotalBytes),
        ] {
            #expect(Int32(exactly: value) != nil, "ArchiveLimits.\(name) = \(value) does not fit in a 32-bit Int")
        }
        // What the encoder leaves for the body of the largest archive: the limit less the
        // header room it reserves, and the depth charged for one level of each kind.
        let total = try #require(Int32(exactly: limits.maxTotalBytes))
        let (room, overflow) = total.subtractingReportingOverflow(Int32(ArchiveFormat.reservedHeaderSize))
        #expect(!overflow && room > 0)
        let depth = try #require(Int32(exactly: limits.maxDepth))
        #expect(!depth.multipliedReportingOverflow(by: Int32(ArchiveLimits.codableLevelWeight)).overflow)
    }

    /// The cache's defaults and the largest entry header, in 32 bits.
    @Test func cacheDefaultsAndHeaderSizesFitIn32Bits() throws {
        enum Kinds: String, CacheType {
            case only
            var location: CacheLocation { .sharedCaches }
        }
        let configuration = CacheManager<Kinds>.Configuration()
        #expect(Int32(exactly: configuration.memoryCountLimit) != nil)
        #expect(Int32(exactly: configuration.memoryCostLimit) != nil)
        let fixed = Int32(EntryHeader.fixedSize)
        let names = try #require(Int32(exactly: EntryHeader.maxTypeNameLength))
        let parameter = try #require(Int32(exactly: EntryHeader.maxParameterLength))
        let (sum, overflow) = fixed.addingReportingOverflow(names)
        #expect(!overflow && !sum.addingReportingOverflow(parameter).overflow)
    }

    /// A journal frame's stored length, checked in `Int32` as a 32-bit `Int` would: a damaged
    /// length of 2³¹ or more (which `Int32(_:)` of it would trap on) is damage, like any length
    /// above a record's body or past the bytes read; an intact one comes back exactly.
    @Test func journalRecordLengthIsCheckedBeforeItBecomesA32BitInt() {
        let body = Int32(PersistentIndex.maxJournalRecordBytes - 8)
        for stored: UInt32 in [1 << 31, UInt32(Int32.max) + 1, .max, UInt32(body) + 1] {
            #expect(
                PersistentIndex.journalRecordLength(stored: stored, remaining: Int32.max) == nil,
                "length \(stored)"
            )
        }
        #expect(PersistentIndex.journalRecordLength(stored: 16, remaining: Int32(8 + 16)) == 16)
        #expect(PersistentIndex.journalRecordLength(stored: 17, remaining: Int32(8 + 16)) == nil)  // runs past the end
        #expect(PersistentIndex.journalRecordLength(stored: 0, remaining: Int32(7)) == nil)  // not even a frame
        #expect(PersistentIndex.journalRecordLength(stored: UInt32(body), remaining: Int32.max) == body)
        // The same checks in the platform's `Int`, which the journal's decoding uses.
        #expect(PersistentIndex.journalRecordLength(stored: .max, remaining: Int.max) == nil)
        #expect(PersistentIndex.journalRecordLength(stored: 16, remaining: 24) == 16)
    }

    /// The record log's largest entry: its frame stores a 32-bit length, and the bound the
    /// writer checks must be an `Int` on every platform.
    @Test func recordLogEntryBoundIsClampedToTheWidth() {
        #expect(ChangeLog.maxEntryBytes == Int(clamping: UInt32.max))
        #expect(Int32(clamping: UInt32.max) == Int32.max)  // what the same expression gives there
    }
}
