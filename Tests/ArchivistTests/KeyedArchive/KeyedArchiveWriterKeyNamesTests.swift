import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// An NSSecureCoding class with three optional string fields, any of them absent.
final class WireOptionals: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let a: String?
    let b: String?
    let c: String?

    required init?(coder: NSCoder) {
        // corelibs Foundation reports a missing key as a decoding failure: look first.
        func field(_ key: String) -> String? {
            coder.containsValue(forKey: key) ? coder.decodeObject(of: NSString.self, forKey: key) as String? : nil
        }
        a = field("a")
        b = field("b")
        c = field("c")
    }

    func encode(with coder: NSCoder) {}
}

/// The shape of `WireOptionals`, written by the Encoder: nil fields are left out
/// (`encodeIfPresent`), so two instances may have as many fields with different names.
struct KeyedOptionals: Codable, Equatable, KeyedArchiveClassNamed {
    static var keyedArchiveClassChain: [String] { [NSStringFromClass(WireOptionals.self), "NSObject"] }
    var a: String?
    var b: String?
    var c: String?
}

/// The keyed writer shares an instance's key nodes with the previous instance of its class only
/// when the names are the same: an instance with as many fields but other ones is written
/// under its own names, as our reader and Foundation's read back.
@Suite struct KeyedArchiveWriterKeyNamesTests {
    static let instances = [
        KeyedOptionals(a: "a1", b: "b1", c: nil),
        KeyedOptionals(a: "a2", b: nil, c: "c2"),
        KeyedOptionals(a: nil, b: "b3", c: "c3"),
        KeyedOptionals(a: "a4", b: "b4", c: nil),  // the first instance's names again
    ]

    @Test func instancesWithAsManyFieldsButOtherNamesKeepTheirOwn() throws {
        let data = try KeyedArchiveWriter.encode(Self.instances)
        #expect(try KeyedArchive.decode([KeyedOptionals].self, from: data) == Self.instances)

        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = false
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        defer { unarchiver.finishDecoding() }
        let decoded = try #require(unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? [WireOptionals])
        #expect(decoded.map { [$0.a, $0.b, $0.c] } == Self.instances.map { [$0.a, $0.b, $0.c] })
    }
}
