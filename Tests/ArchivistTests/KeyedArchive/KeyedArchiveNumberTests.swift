import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Numbers are read as `NSCoder` reads them: any `NSNumber` — Boolean, integer or real — into
/// any numeric Swift type when its value is exactly representable there, and a Boolean from 0
/// or 1. corelibs' `NSKeyedArchiver` keeps equal `NSNumber`s as one object (its object table is
/// keyed by equality), so the `1` of one record and the `1.0` of another can both be a third
/// record's `true`; Apple's keeps distinct objects apart (by identity), so there an integer
/// field holds an integer. Both shapes are read here, by the `Decoder` and by the NSCoder-shaped API.
@Suite struct KeyedArchiveNumberTests {
    struct Entry: Decodable, Equatable {
        var flag: Bool?
        var count: Int?
        var ratio: Double?
    }

    @Test func equalNumbersStoredOnceReadIntoEachField() throws {
        let root = NSArray(array: [
            NSDictionary(dictionary: ["flag": NSNumber(value: true)]),
            NSDictionary(dictionary: ["count": NSNumber(value: 1), "ratio": NSNumber(value: 1.0)]),
        ])
        let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
        if KeyedArchiveValidator.isCorelibsFoundation {
            // The premise: corelibs wrote the three numbers as one object, the Boolean.
            let numbers = try KeyedArchive(data: data).objects.filter {
                switch $0 {
                case .bool, .integer, .real, .unsignedInteger: true
                default: false
                }
            }
            #expect(numbers == [.bool(true)])
        }
        #expect(try KeyedArchive.decode([Entry].self, from: data) == [Entry(flag: true), Entry(count: 1, ratio: 1)])
    }

    /// An ordinary record, as an app keeps it in an `NSDictionary`.
    struct TaskRecord: Decodable, Equatable {
        var id: Int
        var title: String
        var done: Bool
        var estimate: Double
        var count: Int
        var priority: UInt8
        var note: String?
        var parent: Int?
        var tags: [String]
        var scores: [Double]
    }

    static func taskRecords(_ count: Int) -> [TaskRecord] {
        (0..<count).map { i in
            TaskRecord(
                id: i,
                title: "task \(i)",
                done: i % 3 == 0,
                estimate: Double(i % 5) / (i % 2 == 0 ? 1 : 2),
                count: i % 7,
                priority: UInt8(i % 4),
                note: i % 4 == 0 ? nil : "note \(i)",
                parent: i % 5 == 0 ? nil : i / 5,
                tags: (0..<(i % 3)).map { "tag \($0)" },
                scores: [Double(i % 2), 0.5, Double(i % 3)]
            )
        }
    }

    /// Foundation's own archive of 200 records: numbers, flags, nulls and nested arrays.
    @Test func foundationsArchiveOfOrdinaryRecordsDecodes() throws {
        let records = Self.taskRecords(200)
        let root = NSArray(
            array: records.map { record -> NSDictionary in
                let values: [(String, Any)] = [
                    ("id", NSNumber(value: record.id)), ("title", NSString(string: record.title)),
                    ("done", NSNumber(value: record.done)), ("estimate", NSNumber(value: record.estimate)),
                    ("count", NSNumber(value: record.count)), ("priority", NSNumber(value: record.priority)),
                    ("note", record.note.map { NSString(string: $0) as Any } ?? foundationNull),
                    ("parent", record.parent.map { NSNumber(value: $0) as Any } ?? foundationNull),
                    ("tags", NSArray(array: record.tags.map { NSString(string: $0) })),
                    ("scores", NSArray(array: record.scores.map { NSNumber(value: $0) })),
                ]
                let dictionary = NSMutableDictionary()
                for (key, value) in values { dictionary.setObject(value, forKey: NSString(string: key)) }
                return dictionary
            }
        )
        let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
        #expect(try KeyedArchive.decode([TaskRecord].self, from: data) == records)
        #expect(try KeyedArchiverBridge.decode([TaskRecord].self, from: data) == records)
    }

    /// The same records as instances of an `NSSecureCoding` class that writes its numbers as
    /// objects, read into a `Codable` struct and through the NSCoder-shaped API.
    @Test func foundationsArchiveOfClassInstancesDecodes() throws {
        let records = Self.taskRecords(60)
        let data = try NSKeyedArchiver.archivedData(
            withRootObject: NSArray(array: records.map(NumberedTask.init)),
            requiringSecureCoding: true
        )
        #expect(try KeyedArchive.decode([TaskRecord].self, from: data) == records)
        let read = try KeyedArchive(data: data).unarchive([CoderTask].self)
        #expect(read.map(\.record) == records.map { CoderTask(record: $0).record })
    }

    /// What the NSCoder-shaped API reads: the scalar methods and the `KeyedArchiveDecodable`
    /// number types, from numbers of every kind.
    struct CoderTask: KeyedArchiveDecodable {
        var record: [String: Double]
        init(record: TaskRecord) {
            self.record = [
                "id": Double(record.id), "done": record.done ? 1 : 0, "estimate": record.estimate,
                "count": Double(record.count), "priority": Double(record.priority),
            ]
        }
        init(from unarchiver: KeyedArchiveUnarchiver) throws {
            let done = try unarchiver.decodeBool(forKey: "done")
            #expect(try unarchiver.decodeInt64(forKey: "done") == (done ? 1 : 0))
            #expect(try unarchiver.decodeDouble(forKey: "done") == (done ? 1 : 0))
            #expect(try unarchiver.decodeObject(of: Int.self, forKey: "done") == (done ? 1 : 0))
            #expect(
                try unarchiver.decodeObject(of: Double.self, forKey: "count")
                    == Double(try unarchiver.decodeInteger(forKey: "count"))
            )
            let count = try unarchiver.decodeObject(of: Int64.self, forKey: "count")
            #expect(count == Int64(try unarchiver.decodeInt32(forKey: "count")))
            if count == 0 || count == 1 {
                #expect(try unarchiver.decodeObject(of: Bool.self, forKey: "count") == (count == 1))
            }
            record = [
                "id": Double(try unarchiver.decodeInteger(forKey: "id")), "done": done ? 1 : 0,
                "estimate": try unarchiver.decodeDouble(forKey: "estimate"),
                "count": Double(try unarchiver.decodeInt64(forKey: "count")),
                "priority": Double(try unarchiver.decodeFloat(forKey: "priority")),
            ]
        }
    }

    // MARK: Exactly representable, or a type mismatch with the path

    /// Writes `values` as an `NSArray` of plain numbers (one object each, as Apple's archiver
    /// keeps distinct objects) and reads it as `[T]`.
    static func read<T: Decodable>(_ values: [PropertyListDocument.Node], as type: [T].Type) throws -> [T] {
        var builder = KeyedArchiveDAGs.Builder()
        let array = builder.classDescription("NSArray")
        let elements = values.map { builder.uid(builder.object(.nodeIndex(builder.node($0)))) }
        let root = builder.instance(array, ["NS.objects": .array(elements)])
        return try KeyedArchive.decode(type, from: Data(builder.write(root: root)))
    }

    @Test func everyKindOfNumberReadsWhereItsValueFits() throws {
        #expect(
            try Self.read([.bool(true), .bool(false), .real(1), .real(-2), .integer(3)], as: [Int].self) == [
                1, 0, 1, -2, 3,
            ]
        )
        #expect(try Self.read([.bool(true), .real(255), .integer(0)], as: [UInt8].self) == [1, 255, 0])
        #expect(try Self.read([.bool(true), .integer(-7), .real(0.25)], as: [Double].self) == [1, -7, 0.25])
        #expect(
            try Self.read([.integer(1), .integer(0), .real(1), .real(0), .bool(true)], as: [Bool].self)
                == [true, false, true, false, true]
        )
        #expect(
            try Self.read([.unsignedInteger(.max), .bool(true), .real(0x1p63)], as: [UInt64].self) == [
                .max, 1, 1 << 63,
            ]
        )
        #expect(
            try Self.read([.real(0.1), .integer(3), .bool(false), .real(.infinity)], as: [Float].self) == [
                0.1, 3, 0, .infinity,
            ]
        )
        #expect(
            try Self.read([.integer(-(1 << 53)), .unsignedInteger(1 << 63 + 1 << 62)], as: [Double].self)
                == [-0x1p53, 0x1.8p63]
        )
    }

    @Test(arguments: [
        (PropertyListDocument.Node.real(1.5), "Int"), (.real(.nan), "Int"), (.real(0x1p63), "Int"),
        (.integer(300), "UInt8"),
        (.integer(-1), "UInt"), (.bool(true), "String"), (.integer(2), "Bool"), (.real(0.5), "Bool"),
        (.integer((1 << 53) + 1), "Double"), (.unsignedInteger(.max), "Int64"), (.real(1e40), "Float"),
    ])
    func aNumberThatDoesNotFitIsATypeMismatchWithItsPath(value: PropertyListDocument.Node, type: String) throws {
        let error = try #require(throws: ArchiveError.self) {
            switch type {
            case "Int": _ = try Self.read([.integer(0), value], as: [Int].self)
            case "UInt8": _ = try Self.read([.integer(0), value], as: [UInt8].self)
            case "UInt": _ = try Self.read([.integer(0), value], as: [UInt].self)
            case "String": _ = try Self.read([.string(""), value], as: [String].self)
            case "Bool": _ = try Self.read([.bool(true), value], as: [Bool].self)
            case "Double": _ = try Self.read([.real(0), value], as: [Double].self)
            case "Int64": _ = try Self.read([.integer(0), value], as: [Int64].self)
            default: _ = try Self.read([.real(0), value], as: [Float].self)
            }
        }
        #expect(error.code == .typeMismatch, "\(error)")
        #expect(error.codingPath == ["root", "[1]"], "\(error)")
    }

    /// The shape Apple's archiver writes: equal numbers stay apart (it keeps objects by
    /// identity), and `encode(with:)`'s scalars are inline — `encodeBool` a Boolean, which a
    /// model may read as an integer, `encodeInteger` an integer a model may read as a Boolean.
    @Test func inlineScalarsOfAnotherKindRead() throws {
        struct Inline: KeyedArchiveEncodable {
            var keyedArchiveClassChain: [String] { ["Task", "NSObject"] }
            func encode(with archiver: KeyedArchiveArchiver) throws {
                archiver.encode(true, forKey: "count")
                archiver.encode(1, forKey: "flag")
                archiver.encode(2.0, forKey: "id")
                archiver.encode(Int64(0), forKey: "ratio")
                try archiver.encodeObject(1, forKey: "boxed")
                try archiver.encodeObject(true, forKey: "boxedFlag")
            }
        }
        struct Task: Decodable, Equatable {
            var count: Int, flag: Bool, id: Int, ratio: Double, boxed: Bool, boxedFlag: UInt8
        }
        let data = try KeyedArchiveWriter.archive(Inline())
        #expect(
            try KeyedArchive.decode(Task.self, from: data)
                == Task(count: 1, flag: true, id: 2, ratio: 0, boxed: true, boxedFlag: 1)
        )
    }

    /// The NSCoder-shaped scalar reads refuse what does not fit, naming the key.
    @Test func coderShapedReadsRefuseWhatDoesNotFit() throws {
        struct Fields: KeyedArchiveEncodable {
            var keyedArchiveClassChain: [String] { ["Fields", "NSObject"] }
            func encode(with archiver: KeyedArchiveArchiver) throws {
                archiver.encode(1.5, forKey: "half")
                archiver.encode(2, forKey: "two")
                archiver.encode(true, forKey: "yes")
            }
        }
        struct Reads: KeyedArchiveDecodable {
            init(from unarchiver: KeyedArchiveUnarchiver) throws {
                #expect(try unarchiver.decodeDouble(forKey: "yes") == 1)
                #expect(try unarchiver.decodeBool(forKey: "yes"))
                #expect(try unarchiver.decodeFloat(forKey: "half") == 1.5)
                for read in [
                    { _ = try unarchiver.decodeInt64(forKey: "half") },
                    { _ = try unarchiver.decodeBool(forKey: "two") },
                    { _ = try unarchiver.decodeBool(forKey: "half") },
                ] as [() throws -> Void] {
                    let error = #expect(throws: ArchiveError.self) { try read() }
                    #expect(error?.code == .typeMismatch)
                    #expect(error?.codingPath.first == "root")
                }
            }
        }
        _ = try KeyedArchive(data: try KeyedArchiveWriter.archive(Fields())).unarchive(Reads.self)
    }
}

/// A task as an Objective-C-style class keeps it: numbers written as `NSNumber` objects (which
/// corelibs stores once per value), the note as a string or `NSNull`, the tags as an `NSArray`.
final class NumberedTask: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let record: KeyedArchiveNumberTests.TaskRecord

    init(_ record: KeyedArchiveNumberTests.TaskRecord) { self.record = record }

    required init?(coder: NSCoder) { return nil }

    func encode(with coder: NSCoder) {
        coder.encode(NSNumber(value: record.id), forKey: "id")
        coder.encode(NSString(string: record.title), forKey: "title")
        coder.encode(NSNumber(value: record.done), forKey: "done")
        coder.encode(NSNumber(value: record.estimate), forKey: "estimate")
        coder.encode(NSNumber(value: record.count), forKey: "count")
        coder.encode(NSNumber(value: record.priority), forKey: "priority")
        coder.encode(record.note.map { NSString(string: $0) as NSObject } ?? foundationNull, forKey: "note")
        coder.encode(record.parent.map { NSNumber(value: $0) as NSObject } ?? foundationNull, forKey: "parent")
        coder.encode(NSArray(array: record.tags.map { NSString(string: $0) }), forKey: "tags")
        coder.encode(NSArray(array: record.scores.map { NSNumber(value: $0) }), forKey: "scores")
    }
}
