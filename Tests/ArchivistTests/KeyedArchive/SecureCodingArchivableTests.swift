import Archivist
import ArchivistKeyedArchive
import Foundation
import Testing

/// Seed 004's NSCoding model, made `Archivable` by declaration alone.
final class SecureOrder: NSObject, NSSecureCoding, Archivable {
    static var supportsSecureCoding: Bool { true }
    let number: String
    let total: Double

    init(number: String, total: Double) {
        self.number = number
        self.total = total
    }

    required init?(coder: NSCoder) {
        guard let number = coder.decodeObject(of: NSString.self, forKey: "number") as String? else { return nil }
        self.number = number
        total = coder.decodeDouble(forKey: "total")
    }

    func encode(with coder: NSCoder) {
        coder.encode(number as NSString, forKey: "number")
        coder.encode(total, forKey: "total")
    }
}

@Suite struct SecureCodingArchivableTests {
    enum Caches: String, CacheType {
        case orders
        var location: CacheLocation { .sharedCaches }
    }

    /// A native model holding the keyed one twice: identity is kept at that level.
    final class Basket: Archivable {
        var first: SecureOrder
        var second: SecureOrder
        init(first: SecureOrder, second: SecureOrder) {
            self.first = first
            self.second = second
        }
        func encode(to archive: ArchiveEncoder) throws {
            try archive.encode(first, forKey: "first")
            try archive.encode(second, forKey: "second")
        }
        init(from archive: ArchiveDecoder) throws {
            first = try archive.decode(SecureOrder.self, forKey: "first")
            second = try archive.decode(SecureOrder.self, forKey: "second")
        }
    }

    @Test func archiveRoundTripsAndKeepsIdentity() throws {
        let order = SecureOrder(number: "A-1", total: 12.5)
        let copy = try Archive.decode(Basket.self, from: try Archive.encode(Basket(first: order, second: order)))
        #expect(copy.first.number == "A-1" && copy.first.total == 12.5)
        #expect(copy.first === copy.second)
    }

    @Test func cacheManagerStoresItByDeclaration() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keyed-archivable-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try CacheManager<Caches>(root: CacheRoot(directory: folder))
        try cache.store([SecureOrder(number: "A-1", total: 1), SecureOrder(number: "B-2", total: 2)], for: .orders)
        let orders = try #require(try cache.value([SecureOrder].self, for: .orders))
        #expect(orders.map(\.number) == ["A-1", "B-2"])
    }

    @Test func badKeyedBytesThrowTypedErrors() throws {
        struct Forged: Archivable {
            var bytes: Data
            static var archiveTypeName: String { SecureOrder.archiveTypeName }
            func encode(to archive: ArchiveEncoder) throws { try archive.encode(bytes, forKey: "keyedArchive") }
            init(bytes: Data) { self.bytes = bytes }
            init(from archive: ArchiveDecoder) throws { bytes = try archive.decode(Data.self, forKey: "keyedArchive") }
        }
        for bytes in [Data("not a plist".utf8), Data(CyclicKeyedArchive.cyclicArray)] {
            let data = try Archive.encode(Forged(bytes: bytes))
            let error = try #require(throws: ArchiveError.self) { try Archive.decode(SecureOrder.self, from: data) }
            #expect(error.codingPath.contains("keyedArchive"))
        }
        // Another class in the keyed archive is refused by the allowlist.
        let foreign = try KeyedArchiverBridge.archive(NSArray(array: [SecureLetterLike()]))
        let error = try #require(throws: ArchiveError.self) {
            try Archive.decode(SecureOrder.self, from: try Archive.encode(Forged(bytes: foreign)))
        }
        #expect(error.code == .disallowedType)
    }

    /// Found writing the by-declaration benchmark: corelibs' `NSKeyedArchiver` traps (in
    /// `NSStringFromClass`) on a `private`, nested or generic class; the bridge refuses it first.
    @Test func aClassLinuxFoundationCannotNameIsRefusedNotATrap() throws {
        #if !canImport(Darwin)
        let nested = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.archive(SecureNoteNamespace.Nested())
        }
        #expect(nested.code == .disallowedType)
        let declared = try #require(throws: ArchiveError.self) { try Archive.encode(PrivateSecureNote()) }
        #expect(declared.code == .disallowedType)
        #endif
    }
}

// An exit test (a child process): macOS and Linux only.
#if os(macOS) || os(Linux)
extension SecureCodingArchivableTests {
    /// Reading is refused as well, never a trap: an archive written where the class has a name
    /// (Apple platforms) read back on Linux, by declaration or through the bridge, names a
    /// class corelibs' `NSStringFromClass` traps on.
    @Test(.enabled(if: foundationIsCorelibs, "corelibs' NSStringFromClass traps on such classes; Apple's names them"))
    func readingAClassLinuxFoundationCannotNameIsRefusedNotATrap() async {
        await #expect(processExitsWith: .success) {
            struct Forged: Archivable {
                var bytes: Data
                static var archiveTypeName: String { PrivateSecureNote.archiveTypeName }
                func encode(to archive: ArchiveEncoder) throws { try archive.encode(bytes, forKey: "keyedArchive") }
                init(bytes: Data) { self.bytes = bytes }
                init(from archive: ArchiveDecoder) throws {
                    bytes = try archive.decode(Data.self, forKey: "keyedArchive")
                }
            }
            do {
                let keyed = try KeyedArchiverBridge.archive(NSArray(array: ["x"]))
                let refusals: [() throws -> Void] = [
                    { _ = try Archive.decode(PrivateSecureNote.self, from: try Archive.encode(Forged(bytes: keyed))) },
                    { _ = try KeyedArchiverBridge.unarchive(SecureNoteNamespace.Nested.self, from: keyed) },
                    {
                        _ = try KeyedArchiverBridge.unarchiveObject(
                            ofClasses: [SecureNoteNamespace.Nested.self],
                            from: keyed
                        )
                    },
                ]
                for refusal in refusals {
                    do {
                        try refusal()
                        exit(2)
                    } catch let error as ArchiveError where error.code == .disallowedType {
                        continue
                    }
                }
            } catch {
                exit(3)
            }
        }
    }
}
#endif

#if canImport(Darwin)
private let foundationIsCorelibs = false
#else
private let foundationIsCorelibs = true
#endif

/// A class corelibs' `NSStringFromClass` cannot name (not top-level), made `Archivable`.
private final class PrivateSecureNote: NSObject, NSSecureCoding, Archivable {
    static var supportsSecureCoding: Bool { true }
    override init() {}
    required init?(coder: NSCoder) {}
    func encode(with coder: NSCoder) {}
}

/// Nested in a type: not top-level either.
enum SecureNoteNamespace {
    final class Nested: NSObject, NSSecureCoding {
        static var supportsSecureCoding: Bool { true }
        override init() {}
        required init?(coder: NSCoder) {}
        func encode(with coder: NSCoder) {}
    }
}

/// A second NSSecureCoding class, not allowed inside `SecureOrder`'s archive.
final class SecureLetterLike: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    override init() {}
    required init?(coder: NSCoder) {}
    func encode(with coder: NSCoder) {}
}

/// `circularReference.plist`'s shape (an NSMutableArray holding itself), built inline.
enum CyclicKeyedArchive {
    static var cyclicArray: [UInt8] {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\
            <dict><key>CF$UID</key><integer>1</integer></dict></dict><key>$objects</key><array>\
            <string>$null</string><dict><key>$class</key><dict><key>CF$UID</key><integer>2</integer></dict>\
            <key>NS.objects</key><array><dict><key>CF$UID</key><integer>1</integer></dict></array></dict>\
            <dict><key>$classname</key><string>NSMutableArray</string></dict></array></dict></plist>
            """
        return Array(xml.utf8)
    }
}
