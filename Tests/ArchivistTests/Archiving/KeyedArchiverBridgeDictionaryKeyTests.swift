import Foundation
import Testing
@testable import Archivist

/// corelibs traps when it bridges an `NSDictionary` whose key is an array or a dictionary to
/// Swift — describing the decoded value, or casting an enclosing collection to `[Any]`, does.
/// The validator refuses such keys. Found by the libFuzzer target `Fuzz/KeyedArchiveFuzzer.swift`.
@Suite struct KeyedArchiverBridgeDictionaryKeyTests {
    /// The libFuzzer find: one byte of `fq/recentapps.sfl2` makes the fifth key of an item's
    /// dictionary refer to another item's dictionary instead of the string `uuid`.
    static func mutatedRecentApps() throws -> Data {
        var bytes = [UInt8](try KeyedArchiveFixtures.data("fq/recentapps.sfl2"))
        try #require(bytes.count > 5_056 && bytes[5_056] == 0x2C)
        bytes[5_056] = 0x24
        return Data(bytes)
    }

    /// A root NSArray (object 3) holding an NSDictionary (object 4) whose one key is object 5,
    /// written as `key`, and whose value is the string object 6.
    static func archive(key: String) -> Data {
        func uid(_ value: Int) -> String { "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        return Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(3))</dict>\
            <key>$objects</key><array><string>$null</string>\
            <dict><key>$classname</key><string>NSArray</string></dict>\
            <dict><key>$classname</key><string>NSDictionary</string></dict>\
            <dict><key>$class</key>\(uid(1))<key>NS.objects</key><array>\(uid(4))</array></dict>\
            <dict><key>$class</key>\(uid(2))<key>NS.keys</key><array>\(uid(5))</array>\
            <key>NS.objects</key><array>\(uid(6))</array></dict>\
            \(key)<string>value</string></array></dict></plist>
            """.utf8)
    }

    static let collectionKeys: [(name: String, xml: String)] = [
        ("NSArray instance", "<dict><key>$class</key><dict><key>CF$UID</key><integer>1</integer></dict><key>NS.objects</key><array/></dict>"),
        ("NSDictionary instance", "<dict><key>$class</key><dict><key>CF$UID</key><integer>2</integer></dict><key>NS.keys</key><array/><key>NS.objects</key><array/></dict>"),
        ("plain plist array", "<array><string>a</string></array>"),
        ("plain plist dictionary", "<dict><key>a</key><string>b</string></dict>"),
    ]

    @Test func fuzzFoundDictionaryKeyIsRefused() throws {
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.validate(try Self.mutatedRecentApps())
        }
        #expect(error.code == .corrupt)
        #expect(error.codingPath.last == "NS.keys", "\(error)")
    }

    @Test(arguments: collectionKeys.map(\.name))
    func collectionKeyIsCorrupt(_ name: String) throws {
        let xml = try #require(Self.collectionKeys.first { $0.name == name }?.xml)
        let error = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(Self.archive(key: xml)) }
        #expect(error.code == .corrupt, "\(error)")
    }

    @Test func stringKeyDecodesAndBridges() throws {
        let array = try KeyedArchiverBridge.unarchive(NSArray.self, from: Self.archive(key: "<string>key</string>"))
        let bridged = try #require(array as? [[String: String]])
        #expect(bridged == [["key": "value"]])
    }

    /// Through Foundation, in a child process, using the value as a caller would.
    @Test func refusedKeysNeverReachFoundation() async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        await #expect(processExitsWith: .success) {
            let inputs = KeyedArchiverBridgeDictionaryKeyTests.collectionKeys.map {
                KeyedArchiverBridgeDictionaryKeyTests.archive(key: $0.xml)
            } + [try KeyedArchiverBridgeDictionaryKeyTests.mutatedRecentApps()]
            for data in inputs {
                do {
                    let value = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
                    _ = String(describing: value)
                    exit(EXIT_FAILURE)  // every one of them must be refused
                } catch let error as ArchiveError where error.code == .corrupt {
                    continue
                } catch {
                    exit(EXIT_FAILURE)
                }
            }
        }
    }
}
