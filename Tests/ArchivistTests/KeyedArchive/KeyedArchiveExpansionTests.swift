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
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(NSArray.self, from: data)
        }
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

    // MARK: The pure-Swift reader's paths

    /// Thrown by ``Untouched`` when decoding reaches it: a decode that throws anything else
    /// refused the archive before building a single Swift value.
    struct ReachedInit: Error {}

    /// A type whose decoding must never start.
    struct Untouched: Decodable, KeyedArchiveDecodable {
        init(from decoder: any Decoder) throws { throw ReachedInit() }
        init(from unarchiver: KeyedArchiveUnarchiver) throws { throw ReachedInit() }
    }

    /// A 64-level doubling DAG (2.3 KB) is refused on every decoding path before the root's
    /// `init(from:)` runs: the unfolded size is computed first, in time proportional to the
    /// archive, so the refusal costs milliseconds instead of `maxObjectCount` values built.
    @Test(arguments: KeyedArchiveDAGs.Shape.allCases)
    func everyDecodingPathRefusesADoublingDAGBeforeBuildingAValue(shape: KeyedArchiveDAGs.Shape) throws {
        let data = Data(KeyedArchiveDAGs.doubling(shape, levels: 64))
        let archive = try KeyedArchive(data: data)
        let paths: [(String, () throws -> Void)] = [
            ("KeyedArchive.decode", { _ = try KeyedArchive.decode(Untouched.self, from: data) }),
            ("decode(_:key:)", { _ = try archive.decode(Untouched.self) }),
            ("unarchive(_:key:)", { _ = try archive.unarchive(Untouched.self) }),
            ("bridge decode", { _ = try KeyedArchiverBridge.decode(Untouched.self, from: data) }),
            ("bridge unarchive", { _ = try KeyedArchiverBridge.unarchive(Untouched.self, from: data) }),
        ]
        for (name, decode) in paths {
            let clock = ContinuousClock()
            let start = clock.now
            let error = #expect(throws: ArchiveError.self, "\(name)") { try decode() }
            #expect(error?.code == .limitExceeded(.objectCount), "\(name): \(String(describing: error))")
            #expect(error?.underlyingError == nil, "\(name) ran the root's init(from:)")
            // Generous: the refusal takes milliseconds; building the limit's values took seconds.
            #expect(clock.now - start < .seconds(2), "\(name)")
        }
    }

    /// The reader's table refuses a property list whose containers share along exponentially
    /// many paths before it copies any of them into fields.
    @Test func theTableRefusesPlistLevelSharingBeforeCopyingIt() throws {
        let data = Data(KeyedArchiveDAGs.plistLevelDoubling(levels: 64))
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(throws: ArchiveError.self) { try KeyedArchive(data: data) }
        #expect(error.code == .limitExceeded(.objectCount))
        #expect(clock.now - start < .seconds(2))
    }

    /// The bound is exact on the reader's paths too: a DAG that unfolds to fewer values than
    /// `maxObjectCount` decodes, and throws once the limit is below its unfolded size.
    @Test func theReaderBoundIsTheUnfoldedSize() throws {
        indirect enum Nest: Decodable, KeyedArchiveDecodable, Equatable {
            case node([Nest])
            init(from decoder: any Decoder) throws { self = .node(try [Nest](from: decoder)) }
            init(from unarchiver: KeyedArchiveUnarchiver) throws {
                self = .node(try unarchiver.decodeElements(of: Nest.self))
            }
            var count: Int { if case .node(let children) = self { 1 + children.map(\.count).reduce(0, +) } else { 0 } }
        }
        let data = Data(KeyedArchiveDAGs.doubling(.array, levels: 8))
        // Eight levels: 1 + 2 + … + 128 arrays.
        #expect(try KeyedArchive.decode(Nest.self, from: data).count == 255)
        var limits = ArchiveLimits()
        limits.maxObjectCount = 255
        #expect(try KeyedArchive(data: data, limits: limits).decode(Nest.self).count == 255)
        #expect(try KeyedArchive(data: data, limits: limits).unarchive(Nest.self).count == 255)
        limits.maxObjectCount = 254
        let archive = try KeyedArchive(data: data, limits: limits)
        for decode in [{ _ = try archive.decode(Untouched.self) }, { _ = try archive.unarchive(Untouched.self) }]
            as [() throws -> Void]
        {
            let error = #expect(throws: ArchiveError.self) { try decode() }
            #expect(error?.code == .limitExceeded(.objectCount))
        }
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
