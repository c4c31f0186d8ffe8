import Foundation
import Testing

@testable import ArchivistKeyedArchive

/// corelibs' `NSNull` instances are all equal but hash by identity, so `NSKeyedArchiver` traps
/// ("Duplicate keys of type 'AnyHashable'") on a graph that holds two of them — by chance of the
/// process's hash seed. Every null the bridge builds is one instance, so what it unarchives
/// archives again.
@Suite struct KeyedArchiverBridgeNullTests {
    /// A root NSArray (object 1) of `count` distinct NSNull objects (objects 2…), their class last.
    static func archive(nullObjects count: Int) -> Data {
        func uid(_ value: Int) -> String { "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        let classObject = count + 3
        let nulls = String(repeating: "<dict><key>$class</key>\(uid(classObject))</dict>", count: count)
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(1))</dict>\
            <key>$objects</key><array><string>$null</string>\
            <dict><key>$class</key>\(uid(count + 2))<key>NS.objects</key>\
            <array>\((0..<count).map { uid($0 + 2) }.joined())</array></dict>\
            \(nulls)\
            <dict><key>$classname</key><string>NSArray</string></dict>\
            <dict><key>$classname</key><string>NSNull</string></dict></array></dict></plist>
            """.utf8
        )
    }

    @Test func everyNullOfAnUnarchivedGraphIsOneInstance() throws {
        let array = try #require(
            try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: Self.archive(nullObjects: 40)) as? NSArray
        )
        #expect(array.count == 40)
        let instances = Set(array.map { ObjectIdentifier($0 as AnyObject) })
        #expect(instances.count == 1)
    }

    @Test func anUnarchivedGraphOfManyNullsArchivesAgain() throws {
        // Each round's graph is new objects, so a second null instance would get a new chance to
        // collide; 40 nulls trap corelibs' archiver in most rounds.
        for _ in 0..<20 {
            let array = try #require(
                try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: Self.archive(nullObjects: 40)) as? NSArray
            )
            let again = try KeyedArchiverBridge.archive(array)
            let back = try #require(try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: again) as? NSArray)
            #expect(back.count == 40)
            #expect(back.allSatisfy { $0 is NSNull })
        }
    }
}
