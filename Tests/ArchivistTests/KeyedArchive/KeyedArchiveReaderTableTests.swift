import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// The object table `KeyedArchive(data:)` builds, read entry by entry.
@Suite struct KeyedArchiveReaderTableTests {
    typealias URLs = KeyedArchiveURLs

    /// An NSURL whose `NS.base` is an NSURL earlier in `$objects`: resolved against it.
    @Test func urlBaseEarlierInObjects() throws {
        // 3: the root array of 6; 4: the base URL (string 5); 6: the URL (string 7) on base 4.
        let data = URLs.archive([
            URLs.array([6]), URLs.url(base: 0, relative: 5), URLs.string("https://example.com/a/"),
            URLs.url(base: 4, relative: 7), URLs.string("b/c.txt"),
        ])
        let archive = try KeyedArchive(data: data)
        #expect(archive[KeyedArchiveReference(6)] == .url(relative: "b/c.txt", base: KeyedArchiveReference(4)))
        #expect(try archive.url(at: KeyedArchiveReference(6)).absoluteString == "https://example.com/a/b/c.txt")
        #expect(try archive.decode([URL].self).map(\.absoluteString) == ["https://example.com/a/b/c.txt"])
    }

    /// An instance of `count` integer fields `f0`, `f1`, … (object 2), class `Wide` (object 1).
    static func wideInstance(fields count: Int) -> Data {
        let uid = { (value: Int) in "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        let fields = (0..<count).map { "<key>f\($0)</key><integer>\($0 * 10)</integer>" }.joined()
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(2))</dict>\
            <key>$objects</key><array><string>$null</string>\
            <dict><key>$classname</key><string>Wide</string></dict>\
            <dict><key>$class</key>\(uid(1))\(fields)</dict></array></dict></plist>
            """.utf8
        )
    }

    /// `field(forKey:)` finds what `fields` holds, below and above the width at which the
    /// field table builds an index, and nothing for `$class` or an absent key.
    @Test(arguments: [3, KeyedArchiveFieldTable.indexThreshold + 4])
    func fieldForKeyMatchesFields(count: Int) throws {
        let archive = try KeyedArchive(data: Self.wideInstance(fields: count))
        guard case .instance(let instance) = archive[try #require(archive.root)] else {
            Issue.record("the root is not an instance")
            return
        }
        #expect(instance.className == "Wide")
        #expect(instance.fields.count == count)
        for index in 0..<count {
            #expect(instance.field(forKey: "f\(index)") == .integer(Int64(index * 10)))
            #expect(instance.field(forKey: "f\(index)") == instance.fields["f\(index)"])
        }
        #expect(instance.field(forKey: "$class") == nil)
        #expect(instance.field(forKey: "f\(count)") == nil)
        #expect(instance.field(forKey: "") == nil)
    }
}
