import Foundation
import Testing
@testable import ArchivistKeyedArchive

/// corelibs' keyed archiver traps when two threads archive at once (their own archivers and
/// graphs included); the bridge runs one at a time there, so its callers may use any thread.
@Suite struct KeyedArchiverBridgeThreadTests {
    @Test func archivingOnFourThreadsAtOnceNeitherTrapsNorMixesArchives() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for round in 0..<5 {
                        let root = NSArray(array: (0..<200).map { i -> NSDictionary in
                            NSDictionary(dictionary: ["id": NSNumber(value: i), "done": NSNumber(value: i % 3 == 0),
                                                      "ratio": NSNumber(value: Double(i % 5) / 2), "who": "\(thread).\(round)"])
                        })
                        let data = try KeyedArchiverBridge.archive(root)
                        let back = try #require(try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data) as? NSArray)
                        #expect(back.count == 200)
                        #expect((back[7] as? NSDictionary)?["who"] as? String == "\(thread).\(round)")
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
