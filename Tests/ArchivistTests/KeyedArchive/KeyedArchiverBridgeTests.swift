import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// An NSSecureCoding class of the tests' own, with an optional reference to another letter.
final class SecureLetter: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let content: String
    let sent: Date
    let reply: SecureLetter?

    init(content: String, sent: Date, reply: SecureLetter? = nil) {
        self.content = content
        self.sent = sent
        self.reply = reply
    }

    required init?(coder: NSCoder) {
        guard let content = coder.decodeObject(of: NSString.self, forKey: "content") as String?,
            let sent = coder.decodeObject(of: NSDate.self, forKey: "sent") as Date?
        else { return nil }
        self.content = content
        self.sent = sent
        reply = coder.decodeObject(of: SecureLetter.self, forKey: "reply")
    }

    func encode(with coder: NSCoder) {
        coder.encode(content as NSString, forKey: "content")
        coder.encode(sent as NSDate, forKey: "sent")
        coder.encode(reply, forKey: "reply")
    }
}

/// Foundation values round-tripped through the bridge, built inside each test (NSObjects are not Sendable).
enum FoundationValue: String, CaseIterable, Sendable {
    case array, dictionary, string, number, date, data, set, url, uuid, null

    var object: NSObject & NSSecureCoding {
        switch self {
        // No Bool inside: corelibs decodes an archived Bool NSNumber as the integer 1, bridge or not.
        case .array: NSArray(array: ["a", 1, 2.5, NSArray(array: ["inner"])])
        case .dictionary: NSDictionary(dictionary: ["k": "v", "n": 3, "nested": NSDictionary(dictionary: ["x": 1])])
        case .string: NSString(string: "héllo, wörld ✉︎")
        case .number: NSNumber(value: -1_234_567_890_123)
        case .date: NSDate(timeIntervalSinceReferenceDate: 123_456.5)
        case .data: NSData(data: Data((0..<300).map { UInt8($0 % 256) }))
        case .set: NSSet(array: [1, 2, "three"])
        case .url: NSURL(string: "https://example.com/a?b=c")!
        case .uuid: NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        case .null: foundationNull
        }
    }
}

@Suite struct KeyedArchiverBridgeTests {
    // MARK: Round trips

    @Test func letterRoundTrips() throws {
        let letter = SecureLetter(
            content: "Dear Alice",
            sent: Date(timeIntervalSince1970: 1_000),
            reply: SecureLetter(content: "Dear Bob", sent: Date(timeIntervalSince1970: 2_000))
        )
        let data = try KeyedArchiverBridge.archive(letter)
        let copy = try KeyedArchiverBridge.unarchive(SecureLetter.self, from: data)
        #expect(copy.content == "Dear Alice")
        #expect(copy.sent == Date(timeIntervalSince1970: 1_000))
        #expect(copy.reply?.content == "Dear Bob")
        #expect(copy.reply?.reply == nil)
    }

    @Test func sharedLetterDecodesAsOneInstance() throws {
        let shared = SecureLetter(content: "shared", sent: Date(timeIntervalSince1970: 0))
        let data = try KeyedArchiverBridge.archive(NSArray(array: [shared, shared]))
        let copy = try KeyedArchiverBridge.unarchive(NSArray.self, from: data, allowedClasses: [SecureLetter.self])
        let first = try #require(copy[0] as? SecureLetter)
        #expect(first === (copy[1] as? SecureLetter))
    }

    @Test(arguments: FoundationValue.allCases)
    func foundationValueRoundTrips(_ value: FoundationValue) throws {
        let object = value.object
        let data = try KeyedArchiverBridge.archive(object)
        let copy = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
        #expect((copy as? NSObject)?.isEqual(object) == true, "\(value): \(copy) != \(object)")
    }

    @Test func validateSummarizesAnArchive() throws {
        let letter = SecureLetter(
            content: "a",
            sent: Date(timeIntervalSince1970: 0),
            reply: SecureLetter(content: "b", sent: Date())
        )
        let summary = try KeyedArchiverBridge.validate(
            try KeyedArchiverBridge.archive(letter),
            allowedClassNames: [NSStringFromClass(SecureLetter.self)]
        )
        #expect(summary.format == .binary)
        #expect(summary.classNames == [NSStringFromClass(SecureLetter.self), "NSDate"])
        #expect(summary.instanceCount == 4)
        #expect(summary.depth == 3)  // root -> reply -> its date
        #expect(summary.topLevelKeys == ["root"])
    }

    // MARK: Refusals

    @Test func disallowedClassThrowsDisallowedType() throws {
        let data = try KeyedArchiverBridge.archive(NSArray(array: [SecureLetter(content: "x", sent: Date())]))
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(NSArray.self, from: data)
        }
        #expect(error.code == .disallowedType)
        #expect(error.typeName == NSStringFromClass(SecureLetter.self))
    }

    @Test func refusedClassThrowsEvenWhenAllowed() throws {
        let data = try KeyedArchiverBridge.archive(NSArray(array: [1]))
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchiveObject(ofClasses: [NSValue.self], from: data)
        }
        #expect(error.code == .disallowedType)
    }

    @Test func wrongRootTypeThrowsTypeMismatch() throws {
        let data = try KeyedArchiverBridge.archive(NSArray(array: [1]))
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(NSDictionary.self, from: data)
        }
        #expect(error.code == .typeMismatch)
    }

    /// CoreFoundation's binary plist parser leaks the second key and its value of a dictionary
    /// that repeats a key (104 bytes per parse under LeakSanitizer): the validator refuses such
    /// a dictionary before Foundation sees it, in both formats.
    @Test(arguments: [PropertyListSerialization.PropertyListFormat.binary, .xml])
    func repeatedDictionaryKeyIsRefused(format: PropertyListSerialization.PropertyListFormat) throws {
        let archive = try KeyedArchiverBridge.archive(SecureLetter(content: "x", sent: Date(timeIntervalSince1970: 0)))
        let plist = try PropertyListSerialization.propertyList(from: archive, format: nil)
        var bytes = [UInt8](try PropertyListSerialization.data(fromPropertyList: plist, format: format, options: 0))
        // "$objects" and "$version" have the same length: renaming one repeats the other.
        let from = Array("$objects".utf8)
        let to = Array("$version".utf8)
        let start = try #require(
            (0...(bytes.count - from.count)).first { Array(bytes[$0..<($0 + from.count)]) == from }
        )
        bytes.replaceSubrange(start..<(start + from.count), with: to)
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(SecureLetter.self, from: Data(bytes))
        }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("twice"), "\(error)")
    }

    @Test(.needsKeyedArchiveFixtures) func circularFixtureThrowsUnresolvedReference() throws {
        let data = try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/circularReference.plist")
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(NSMutableArray.self, from: data)
        }
        #expect(error.code == .unresolvedReference)
    }

    // An exit test (a child process): macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// The three refusals Foundation on Linux would die on (a class off the allowlist, a
    /// cycle through `init(coder:)`, a 100,000-deep chain), in a child process: if any of
    /// them reached Foundation and crashed, the child's exit status fails this test.
    @Test(.needsKeyedArchiveFixtures) func refusalsHoldInAChildProcess() async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        await #expect(processExitsWith: .success) {
            func refused(_ expected: ArchiveError.Code, _ body: () throws -> Any) {
                do {
                    _ = try body()
                    exit(EXIT_FAILURE)
                } catch let error as ArchiveError where error.code == expected {
                    return
                } catch {
                    exit(EXIT_FAILURE)
                }
            }
            refused(.disallowedType) {
                let data = try KeyedArchiverBridge.archive(NSArray(array: [SecureLetter(content: "x", sent: Date())]))
                return try KeyedArchiverBridge.unarchive(NSArray.self, from: data)
            }
            refused(.unresolvedReference) {
                let data = try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/circularReference.plist")
                return try KeyedArchiverBridge.unarchive(NSMutableArray.self, from: data)
            }
            refused(.limitExceeded(.depth)) {
                try KeyedArchiverBridge.unarchive(
                    NSArray.self,
                    from: Data(KeyedArchiveChains.binaryChain(depth: 100_000))
                )
            }
        }
    }
    #endif

    @Test func hundredThousandDeepChainThrowsDepthLimit() throws {
        let data = Data(KeyedArchiveChains.binaryChain(depth: 100_000))
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(NSArray.self, from: data)
        }
        #expect(error.code == .limitExceeded(.depth))
    }

    @Test(arguments: [(100, true), (199, true), (300, false)])
    func xmlChainDecodesWithinMaxDepthOnly(depth: Int, decodes: Bool) throws {
        let data = Data(KeyedArchiveChains.xmlChain(depth: depth).utf8)
        if decodes {
            var array = try KeyedArchiverBridge.unarchive(NSArray.self, from: data)
            var levels = 1
            while let inner = array.firstObject as? NSArray {
                array = inner
                levels += 1
            }
            #expect(levels == depth)
        } else {
            let error = try #require(throws: ArchiveError.self) {
                try KeyedArchiverBridge.unarchive(NSArray.self, from: data)
            }
            #expect(error.code == .limitExceeded(.depth))
        }
    }

    @Test func dictionaryOfFallibleInstancesIsRefusedOnLinux() throws {
        let data = try KeyedArchiverBridge.archive(
            NSDictionary(dictionary: ["k": SecureLetter(content: "x", sent: Date())])
        )
        if KeyedArchiveValidator.isCorelibsFoundation {
            let error = try #require(throws: ArchiveError.self) {
                try KeyedArchiverBridge.unarchive(NSDictionary.self, from: data, allowedClasses: [SecureLetter.self])
            }
            #expect(error.code == .disallowedType)
        } else {
            let copy = try KeyedArchiverBridge.unarchive(
                NSDictionary.self,
                from: data,
                allowedClasses: [SecureLetter.self]
            )
            #expect((copy["k"] as? SecureLetter)?.content == "x")
        }
    }

    // MARK: Fixtures

    @Test(.needsKeyedArchiveFixtures) func fixtureFolderHoldsTheExpectedFiles() throws {
        let directory = try #require(
            KeyedArchiveFixtures.directory(),
            Comment(rawValue: KeyedArchiveFixtures.missingMessage)
        )
        let files =
            FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String }
            .filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".txt") && $0.contains(".") } ?? []
        #expect(Set(files) == Set(KeyedArchiveFixtures.paths))
        #expect(KeyedArchiveFixtures.paths.count == 28)
    }

    @Test(
        .needsKeyedArchiveFixtures,
        arguments: KeyedArchiveFixtures.expectations.map { ($0.path, $0.outcome.description) }
    )
    func fixtureDecodesOrThrowsTypedError(path: String, expected: String) throws {
        let data = try KeyedArchiveFixtures.data(path)
        do {
            _ = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
            #expect(expected == "decodes")
        } catch let error as ArchiveError {
            #expect(expected == "throws \(error.code)", "\(error)")
        }
    }

    // MARK: Never crashing, proven in a child process

    // Fuzzes in exit tests (child processes): macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test(.needsKeyedArchiveFixtures) func fixturesTruncationsAndByteFlipsNeverCrash() async throws {
        try await runFuzzInChildProcess(seeds: [KeyedArchiveFuzz.seed], flips: 3_000)
    }

    /// Off by default: runs when `ARCHIVIST_FUZZ_SEEDS` is set (see ``KeyedArchiveFuzz/campaign``).
    @Test(
        .needsKeyedArchiveFixtures,
        .enabled(if: KeyedArchiveFuzz.campaign != nil, "set ARCHIVIST_FUZZ_SEEDS to run a long campaign")
    )
    func longFlipCampaignNeverCrashes() async throws {
        let campaign = try #require(KeyedArchiveFuzz.campaign)
        try await runFuzzInChildProcess(seeds: campaign.seeds, flips: campaign.flips)
    }

    private func runFuzzInChildProcess(seeds: [UInt64], flips: Int) async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("archivist-fuzz-\(UUID()).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = await #expect(processExitsWith: .success) { [seeds, flips, log = log as String] in
            KeyedArchiveFuzz.run(seeds: seeds, flips: flips, log: log)
        }
        if result == nil {
            Issue.record("child failed; seeds \(seeds), last inputs: \(KeyedArchiveFuzz.lastLines(of: log))")
        }
    }
    #endif
}
