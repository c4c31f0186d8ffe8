import Foundation
import Testing

@testable import ArchivistKeyedArchive

/// The bridge takes no lock around Foundation's archivers: four threads archiving and
/// unarchiving graphs of their own at once get their own archives back. (corelibs'
/// `NSKeyedArchiver` takes over half a second for 200 small dictionaries here, growing faster than their count, so the graphs are small.)
@Suite struct KeyedArchiverBridgeThreadTests {
    @Test func archivingOnFourThreadsAtOnceNeitherTrapsNorMixesArchives() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for round in 0..<3 {
                        let root = NSArray(
                            array: (0..<50).map { i -> NSDictionary in
                                NSDictionary(dictionary: [
                                    "id": NSNumber(value: i), "done": NSNumber(value: i % 3 == 0),
                                    "ratio": NSNumber(value: Double(i % 5) / 2), "who": "\(thread).\(round)",
                                ])
                            }
                        )
                        let data = try KeyedArchiverBridge.archive(root)
                        let back = try #require(
                            try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data) as? NSArray
                        )
                        #expect(back.count == 50)
                        #expect((back[7] as? NSDictionary)?["who"] as? String == "\(thread).\(round)")
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
