// libFuzzer target for the Foundation bridge's validator and, behind it, NSKeyedUnarchiver.
// Build and run with `Fuzz/run.sh keyed`.
//
// Each input goes through `KeyedArchiverBridge.validate` (the validator alone) and
// `KeyedArchiverBridge.unarchiveObject` (validator, then Foundation on the canonical bytes),
// with an NSSecureCoding class of our own allowed. Foundation runs in this process: whatever
// the validator lets through that crashes corelibs is a finding, as is any error that is not an
// `ArchiveError`. The seed corpus is the 28 fixtures of `shared/fixtures/nskeyedarchiver`
// (copied by `run.sh`) plus the archives `keyedFuzzerSeeds()` generates.

import Foundation

/// An NSSecureCoding class with an optional reference to another one, like the tests' letter.
final class FuzzSecureLetter: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let content: String
    let sent: Date
    let reply: FuzzSecureLetter?

    init(content: String, sent: Date, reply: FuzzSecureLetter? = nil) {
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
        reply = coder.decodeObject(of: FuzzSecureLetter.self, forKey: "reply")
    }

    func encode(with coder: NSCoder) {
        coder.encode(content as NSString, forKey: "content")
        coder.encode(sent as NSDate, forKey: "sent")
        coder.encode(reply, forKey: "reply")
    }
}

/// Archives of every Foundation value class the bridge allows, and of the letter class.
func keyedFuzzerSeeds() throws -> [(name: String, data: Data)] {
    let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
    let letter = FuzzSecureLetter(
        content: "Dear Bob",
        sent: date,
        reply: FuzzSecureLetter(content: "Dear Alice", sent: date)
    )
    let values: [(String, NSObject & NSSecureCoding)] = [
        ("array", NSArray(array: ["a", 1, 2.5, NSArray(array: ["inner"]), NSNull()])),
        ("dictionary", NSDictionary(dictionary: ["k": "v", "n": 3, "nested": NSDictionary(dictionary: ["x": 1])])),
        ("string", NSString(string: "héllo, wörld ✉︎")),
        ("number", NSNumber(value: -1_234_567_890_123)),
        ("date", NSDate(timeIntervalSinceReferenceDate: 123_456.5)),
        ("data", NSData(data: Data((0..<64).map { UInt8($0) }))),
        ("set", NSSet(array: [1, 2, "three"])),
        ("ordered-set", NSOrderedSet(array: [1, "two", 3.5])),
        (
            "url",
            NSURL(string: "index.xml", relativeTo: URL(string: "https://www.swift.org/"))
                ?? NSURL(fileURLWithPath: "/tmp")
        ),
        ("uuid", NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? NSUUID()),
        ("letter", letter),
        ("letters", NSArray(array: [letter, letter, FuzzSecureLetter(content: "x", sent: date)])),
    ]
    return try values.map { name, object in (name, try KeyedArchiverBridge.archive(object)) }
}

/// With `ARCHIVIST_FUZZ_WRITE_SEEDS=<folder>`, writes the generated seeds there and exits.
@_cdecl("LLVMFuzzerInitialize")
public func keyedFuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
) -> Int32 {
    guard let folder = ProcessInfo.processInfo.environment["ARCHIVIST_FUZZ_WRITE_SEEDS"] else { return 0 }
    do {
        for (name, data) in try keyedFuzzerSeeds() {
            try data.write(to: URL(fileURLWithPath: folder).appendingPathComponent("generated-\(name).plist"))
        }
    } catch {
        fatalError("could not write the seeds: \(error)")
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func keyedFuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let data = Data(UnsafeBufferPointer(start: start, count: count))
    do {
        _ = try KeyedArchiverBridge.validate(data, allowedClassNames: [NSStringFromClass(FuzzSecureLetter.self)])
        let value = try KeyedArchiverBridge.unarchiveObject(ofClasses: [FuzzSecureLetter.self], from: data)
        // Use the value the way a caller would: describing it bridges every element (an NSURL
        // that Swift's URL rejects traps here).
        _ = String(describing: value)
    } catch is ArchiveError {
        // The contract: a typed error.
    } catch {
        fatalError("an error that is not an ArchiveError escaped: \(error)")
    }
    return 0
}
