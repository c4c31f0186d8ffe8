import Foundation
import Testing
@testable import Archivist
@testable import ArchivistKeyedArchive

/// Keyed archives that are small but unfold exponentially ("billion laughs"): the validator
/// must refuse them before Foundation builds the graph, because the first use of the result
/// (bridging nested NSArrays to Swift arrays on Linux) copies every path and never finishes.
@Suite struct KeyedArchiveExpansionTests {
    @Test(arguments: KeyedArchiveDAGs.Shape.allCases)
    func sixtyFourDoublingLevelsThrowObjectCount(shape: KeyedArchiveDAGs.Shape) throws {
        let data = Data(KeyedArchiveDAGs.doubling(shape, levels: 64))
        #expect(data.count < 16_384)
        let validation = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(data) }
        #expect(validation.code == .limitExceeded(.objectCount))
        // The bridge validates before Foundation decodes: it throws instead of handing out a bomb.
        let decoding = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
        }
        #expect(decoding.code == .limitExceeded(.objectCount))
    }

    @Test func billionLaughsOfTwoKilobytesIsRefused() throws {
        let data = Data(KeyedArchiveDAGs.doubling(.array, levels: 64))
        #expect(data.count < 3_000)
        let error = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.unarchive(NSArray.self, from: data) }
        #expect(error.code == .limitExceeded(.objectCount))
    }

    @Test func plistLevelSharingIsCountedToo() throws {
        let data = Data(KeyedArchiveDAGs.plistLevelDoubling(levels: 64))
        let error = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(data) }
        #expect(error.code == .limitExceeded(.objectCount))
    }

    /// The bound is on the unfolded size, against `maxObjectCount`: a small DAG passes, and
    /// the same DAG fails once the limit is just below what it unfolds to.
    @Test(arguments: KeyedArchiveDAGs.Shape.allCases)
    func smallDAGDecodesAndLimitIsExact(shape: KeyedArchiveDAGs.Shape) throws {
        let data = Data(KeyedArchiveDAGs.doubling(shape, levels: 8))
        let root = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
        switch shape {
        case .array:
            var level = try #require(root as? NSArray)
            var depth = 1
            while let inner = level.firstObject as? NSArray {
                #expect(level.count == 2)
                level = inner
                depth += 1
            }
            #expect(depth == 8)
        case .dictionary:
            let dictionary = try #require(root as? NSDictionary)
            #expect(dictionary.count == 2)
        case .set:
            let set = try #require(root as? NSSet)
            #expect(set.count == 2)
        }
        var limits = ArchiveLimits()
        limits.maxObjectCount = 300
        #expect(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(data, limits: limits) }
        limits.maxObjectCount = 1 << 20
        #expect(try KeyedArchiverBridge.validate(data, limits: limits).depth >= 8)
    }

    /// A tree-shaped archive that the plist reader's own count lets through (467 plist
    /// objects) still passes: without sharing, the tree holds fewer values than the table.
    @Test func chainWithinLimitPasses() throws {
        let data = Data(KeyedArchiveChains.binaryChain(depth: 150))
        var limits = ArchiveLimits()
        limits.maxObjectCount = 467
        #expect(try KeyedArchiverBridge.validate(data, limits: limits).depth == 150)
    }
}
