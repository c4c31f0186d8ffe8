import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// A date of NaN seconds — a plist date, or an `NSDate` whose `NS.time` is NaN — is refused
/// as `.corrupt` by the pure-Swift reader, as by the bridge's validator: such a `Date` traps
/// when described (FoundationEssentials) and never equals itself. Before, the reader handed
/// it to the caller. Infinite and huge dates are read by both.
@Suite struct KeyedArchiveNaNDateTests {
    /// Archives holding `seconds` as a date: in `$objects` as a plist date, as an `NSDate`
    /// instance's `NS.time`, and as an instance's inline date field.
    static func archives(_ seconds: Double) -> [(name: String, data: Data)] {
        [
            ("$objects date", KeyedArchiverBridgeValueTests.binaryArchive(element: .date(seconds))),
            (
                "NSDate NS.time",
                KeyedArchiverBridgeValueTests.binaryArchive(element: .real(seconds), elementClass: "NSDate")
            ),
            ("inline field", KeyedArchiveReaderFuzzFindingsTests.archive(withInlineDate: seconds)),
        ]
    }

    @Test(arguments: [Double.nan, -.nan, Double(bitPattern: 0x7FF0_0000_0000_0001)])
    func nanDatesAreCorruptForTheReaderAsForTheValidator(seconds: Double) throws {
        for (name, data) in Self.archives(seconds) {
            let readerError = #expect(throws: ArchiveError.self, "\(name)") { try KeyedArchive(data: data) }
            #expect(readerError?.code == .corrupt, "\(name): \(String(describing: readerError))")
            #expect(readerError?.codingPath.first == "$objects", "\(name): \(String(describing: readerError))")
            if name != "inline field" {  // the validator needs a root of an allowed class
                let validatorError = #expect(throws: ArchiveError.self, "\(name)") {
                    try KeyedArchiverBridge.validate(data)
                }
                #expect(validatorError?.code == .corrupt, "\(name)")
            }
        }
    }

    @Test(arguments: [Double.infinity, -Double.infinity, 1e300, 0, 700_000_000.25])
    func otherDatesAreReadByBoth(seconds: Double) throws {
        struct Note: Decodable { var when: Date }
        let archives = Self.archives(seconds)
        #expect(
            try KeyedArchive.decode([Date].self, from: archives[0].data) == [
                Date(timeIntervalSinceReferenceDate: seconds)
            ]
        )
        #expect(
            try KeyedArchive.decode([Date].self, from: archives[1].data) == [
                Date(timeIntervalSinceReferenceDate: seconds)
            ]
        )
        #expect(
            try KeyedArchive.decode(Note.self, from: archives[2].data).when
                == Date(timeIntervalSinceReferenceDate: seconds)
        )
        _ = try KeyedArchiverBridge.validate(archives[0].data)
        _ = try KeyedArchiverBridge.validate(archives[1].data)
    }

    /// A NaN date the reader never turns into a value — an object no reference reaches, or a
    /// key of the property list's root beside `$objects` — is refused all the same, by one rule
    /// shared with the validator: no date in the property list is NaN.
    static func archivesWithAnUnreadNaNDate() throws -> [(name: String, data: Data)] {
        func archive(extraRootKey: Bool) throws -> Data {
            var builder = KeyedArchiveDAGs.Builder()
            let array = builder.classDescription("NSArray")
            let element = builder.uid(builder.object(.string("x")))
            let root = builder.instance(array, ["NS.objects": .array([element])])
            let nan = builder.node(.date(.nan))
            guard extraRootKey else { return Data(builder.write(root: root)) }
            // The writer's root dictionary, with one more key.
            var document = try KeyedArchiveValidator.parse(builder.write(root: root), limits: ArchiveLimits())
            let key = document.nodes.count
            document.nodes.append(.string("$extra"))
            guard case .dictionary(let keys, let values) = document.nodes[document.root] else { return Data() }
            document.nodes[document.root] = .dictionary(keys: Array(keys) + [key], values: Array(values) + [nan])
            return Data(BinaryPropertyListWriter.write(document))
        }
        return [
            ("unreferenced object", try archive(extraRootKey: false)),
            ("extra root key", try archive(extraRootKey: true)),
        ]
    }

    @Test func aNaNDateTheReaderNeverReadsIsRefusedOnEveryPath() throws {
        struct Strings: Decodable, KeyedArchiveDecodable {
            init(from decoder: any Decoder) throws { _ = try [String](from: decoder) }
            init(from unarchiver: KeyedArchiveUnarchiver) throws { _ = try unarchiver.decodeElements(of: String.self) }
        }
        for (name, data) in try Self.archivesWithAnUnreadNaNDate() {
            let paths: [(String, () throws -> Void)] = [
                ("table", { _ = try KeyedArchive(data: data) }),
                ("decode", { _ = try KeyedArchive.decode(Strings.self, from: data) }),
                ("validate", { _ = try KeyedArchiverBridge.validate(data) }),
                ("bridge decode", { _ = try KeyedArchiverBridge.decode(Strings.self, from: data) }),
                ("bridge unarchive", { _ = try KeyedArchiverBridge.unarchive(Strings.self, from: data) }),
                ("bridge unarchiveObject", { _ = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data) }),
            ]
            for (path, read) in paths {
                let error = #expect(throws: ArchiveError.self, "\(name), \(path)") { try read() }
                #expect(error?.code == .corrupt, "\(name), \(path): \(String(describing: error))")
            }
        }
    }

    /// The writer refuses to write what the reader refuses to read.
    @Test func theWriterRefusesANaNDate() throws {
        struct Note: Encodable { var when: Date }
        let nan = Date(timeIntervalSinceReferenceDate: .nan)
        for write in [
            { try KeyedArchiveWriter.encode(nan) }, { try KeyedArchiveWriter.encode(Note(when: nan)) },
            { try KeyedArchiveWriter.encode([nan]) }, { try KeyedArchiveWriter.archive(nan) },
        ] as [() throws -> Data] {
            let error = #expect(throws: ArchiveError.self) { try write() }
            #expect(error?.code == .invalidValue)
        }
        let infinite = try KeyedArchiveWriter.encode(Note(when: .distantFuture))
        #expect(try KeyedArchive.decode([String: Date].self, from: infinite) == ["when": .distantFuture])
    }
}
