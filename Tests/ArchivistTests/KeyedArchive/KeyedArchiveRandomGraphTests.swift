import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// A random acyclic graph of Foundation values, in the three forms the tests compare: our
/// writer's input, Foundation objects, and the tree our reader must unfold to.
indirect enum RandomKeyedValue: KeyedArchiveEncodable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case data(Data)
    case date(Date)
    case uuid(UUID)
    case url(String)
    case null
    case array([RandomKeyedValue])
    case set(Set<String>)
    case dictionary([String: RandomKeyedValue])

    static func random(depth: Int, using rng: inout SplitMix64) -> RandomKeyedValue {
        func text() -> String {
            String((0..<Int.random(in: 0...6, using: &rng)).map { _ in "aé✉z0".randomElement(using: &rng)! })
        }
        let kinds = depth > 0 ? 11 : 8
        switch Int.random(in: 0..<kinds, using: &rng) {
        case 0: return .string(text())
        case 1: return .integer(Int64.random(in: -1 << 40...1 << 40, using: &rng))
        case 2: return .real(Double(Int.random(in: -10_000...10_000, using: &rng)) + 0.25)
        case 3:
            return .data(
                Data((0..<Int.random(in: 0...20, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            )
        case 4:
            return .date(
                Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...1_000_000_000, using: &rng)) + 0.5)
            )
        case 5:
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &rng) }
            return .uuid(
                UUID(
                    uuid: (
                        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                        bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                    )
                )
            )
        case 6:
            return .url(
                "https://example.com/p\(Int.random(in: 0...999, using: &rng))?q=\(Int.random(in: 0...9, using: &rng))"
            )
        case 7: return .null
        case 8:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in random(depth: depth - 1, using: &rng) })
        case 9: return .set(Set((0..<Int.random(in: 0...4, using: &rng)).map { _ in text() }))
        default:
            var entries: [String: RandomKeyedValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) { entries[text()] = random(depth: depth - 1, using: &rng) }
            return .dictionary(entries)
        }
    }

    var keyedArchiveClassChain: [String] { ["NSObject"] }  // every case writes a Foundation class or a plain value

    func encode(with archiver: KeyedArchiveArchiver) throws {
        switch self {
        case .string(let value): try value.encode(with: archiver)
        case .integer(let value): try value.encode(with: archiver)
        case .real(let value): try value.encode(with: archiver)
        case .data(let value): try value.encode(with: archiver)
        case .date(let value): try value.encode(with: archiver)
        case .uuid(let value): try value.encode(with: archiver)
        case .url(let value): try URL(string: value)!.encode(with: archiver)
        case .null: try KeyedArchiveNull().encode(with: archiver)
        case .array(let values): try values.encode(with: archiver)
        case .set(let values): try values.encode(with: archiver)
        case .dictionary(let values): try values.encode(with: archiver)
        }
    }

    var foundation: NSObject {
        switch self {
        case .string(let value): NSString(string: value)
        case .integer(let value): NSNumber(value: value)
        case .real(let value): NSNumber(value: value)
        case .data(let value): NSData(data: value)
        case .date(let value): NSDate(timeIntervalSinceReferenceDate: value.timeIntervalSinceReferenceDate)
        case .uuid(let value): NSUUID(uuidString: value.uuidString)!
        case .url(let value): NSURL(string: value)!
        case .null: foundationNull
        case .array(let values): NSArray(array: values.map(\.foundation))
        case .set(let values): NSSet(array: Array(values))
        case .dictionary(let values):
            NSDictionary(objects: Array(values.values.map(\.foundation)), forKeys: Array(values.keys) as [NSString])
        }
    }

    var tree: KeyedArchiveTree {
        switch self {
        case .string(let value): .string(value)
        case .integer(let value): .integer(value)
        case .real(let value): .real(value)
        case .data(let value): .data(value)
        case .date(let value): .date(value)
        case .uuid(let value): .uuid(value.uuidString)
        case .url(let value): .url(value)
        case .null: .nsNull
        case .array(let values): .array(values.map(\.tree))
        case .set(let values):
            .set(values.map { KeyedArchiveTree.string($0) }.sorted { String(describing: $0) < String(describing: $1) })
        case .dictionary(let values): .dictionary(values.mapValues(\.tree))
        }
    }
}

/// Seeded random graphs written by our writer and by Foundation's NSKeyedArchiver, read back by
/// our reader and by Foundation's NSKeyedUnarchiver: all four combinations agree.
@Suite struct KeyedArchiveRandomGraphTests {
    @Test(arguments: 0..<40)
    func randomGraphAgreesBothWays(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let value = RandomKeyedValue.dictionary(["root": .random(depth: 4, using: &rng)])
        let expected = value.tree

        let ours = try KeyedArchiveWriter.archive(value)
        let oursRead = try KeyedArchive(data: ours)
        #expect(try KeyedArchiveTree(oursRead, try #require(oursRead.root)) == expected, "our writer, our reader")
        let foundationRead = try #require(try KeyedArchiveWriterTests.foundationRoot(ours) as? NSObject)
        #expect(foundationRead.isEqual(value.foundation), "our writer, Foundation's reader")

        let theirs = try NSKeyedArchiver.archivedData(withRootObject: value.foundation, requiringSecureCoding: true)
        let theirsRead = try KeyedArchive(data: theirs)
        #expect(
            try KeyedArchiveTree(theirsRead, try #require(theirsRead.root)) == expected,
            "Foundation's writer, our reader"
        )
    }
}
