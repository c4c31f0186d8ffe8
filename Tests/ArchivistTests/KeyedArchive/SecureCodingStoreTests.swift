import Archivist
import ArchivistKeyedArchive
import Foundation
import Testing

/// An app's `NSSecureCoding` model made a `RecordStore` record by declaration alone:
/// `Archivable` from this module, `Identifiable` and `Sendable` as any record.
final class SecureTicket: NSObject, NSSecureCoding, Archivable, Identifiable, Sendable {
    static var supportsSecureCoding: Bool { true }
    let id: String
    let title: String
    let issued: Date
    let seats: [Int]

    init(id: String, title: String, issued: Date, seats: [Int]) {
        self.id = id
        self.title = title
        self.issued = issued
        self.seats = seats
    }

    required init?(coder: NSCoder) {
        guard let id = coder.decodeObject(of: NSString.self, forKey: "id") as String?,
            let title = coder.decodeObject(of: NSString.self, forKey: "title") as String?,
            let issued = coder.decodeObject(of: NSDate.self, forKey: "issued") as Date?,
            let seats = coder.decodeObject(of: [NSArray.self, NSNumber.self], forKey: "seats") as? [Int]
        else { return nil }
        self.id = id
        self.title = title
        self.issued = issued
        self.seats = seats
    }

    func encode(with coder: NSCoder) {
        coder.encode(id as NSString, forKey: "id")
        coder.encode(title as NSString, forKey: "title")
        coder.encode(issued as NSDate, forKey: "issued")
        coder.encode(seats as NSArray, forKey: "seats")
    }
}

/// A native record holding the same ticket twice: sharing is kept at the native level.
struct TicketPair: Archivable, Identifiable, Sendable {
    var id: String
    var outbound: SecureTicket
    var inbound: SecureTicket

    init(id: String, outbound: SecureTicket, inbound: SecureTicket) {
        self.id = id
        self.outbound = outbound
        self.inbound = inbound
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(id, forKey: "id")
        try archive.encode(outbound, forKey: "outbound")
        try archive.encode(inbound, forKey: "inbound")
    }

    init(from archive: ArchiveDecoder) throws {
        id = try archive.decode(String.self, forKey: "id")
        outbound = try archive.decode(SecureTicket.self, forKey: "outbound")
        inbound = try archive.decode(SecureTicket.self, forKey: "inbound")
    }
}

/// A second `NSSecureCoding` class that tickets may hold; never `Archivable` itself.
final class SecureSeatMap: NSObject, NSSecureCoding, Sendable {
    static var supportsSecureCoding: Bool { true }
    let rows: Int

    init(rows: Int) { self.rows = rows }
    required init?(coder: NSCoder) { rows = coder.decodeInteger(forKey: "rows") }
    func encode(with coder: NSCoder) { coder.encode(rows, forKey: "rows") }
}

/// A ticket holding a seat map that declares it (``KeyedArchiveAllowedClasses``): it reads back.
final class DeclaredSeatTicket: NSObject, NSSecureCoding, Archivable, Identifiable, Sendable, KeyedArchiveAllowedClasses
{
    static var supportsSecureCoding: Bool { true }
    static var keyedArchiveAllowedClasses: [AnyClass] { [SecureSeatMap.self] }
    let id: String
    let map: SecureSeatMap

    init(id: String, map: SecureSeatMap) {
        self.id = id
        self.map = map
    }

    required init?(coder: NSCoder) {
        guard let id = coder.decodeObject(of: NSString.self, forKey: "id") as String?,
            let map = coder.decodeObject(of: SecureSeatMap.self, forKey: "map")
        else { return nil }
        self.id = id
        self.map = map
    }

    func encode(with coder: NSCoder) {
        coder.encode(id as NSString, forKey: "id")
        coder.encode(map, forKey: "map")
    }
}

/// The same ticket without the declaration: it is written, but the allowlist refuses the seat
/// map when it is read back.
final class UndeclaredSeatTicket: NSObject, NSSecureCoding, Archivable, Identifiable, Sendable {
    static var supportsSecureCoding: Bool { true }
    let id: String
    let map: SecureSeatMap

    init(id: String, map: SecureSeatMap) {
        self.id = id
        self.map = map
    }

    required init?(coder: NSCoder) {
        guard let id = coder.decodeObject(of: NSString.self, forKey: "id") as String?,
            let map = coder.decodeObject(of: SecureSeatMap.self, forKey: "map")
        else { return nil }
        self.id = id
        self.map = map
    }

    func encode(with coder: NSCoder) {
        coder.encode(id as NSString, forKey: "id")
        coder.encode(map, forKey: "map")
    }
}

/// `NSSecureCoding` models stored by declaration in a `RecordStore` and a `CacheManager`, then
/// read back by a new instance over the same folder (what the next launch of the app sees).
@Suite struct SecureCodingStoreTests {
    enum Caches: String, CacheType {
        case tickets
        case seatTickets
        var location: CacheLocation { .sharedCaches }
    }

    static let issued = Date(timeIntervalSinceReferenceDate: 700_000_000.25)

    private func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "secure-coding-store-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    @Test func recordStoreKeepsNSSecureCodingRecordsAcrossReopening() throws {
        try withFolder { folder in
            let store = try RecordStore<SecureTicket>(directory: folder)
            try store.insert(SecureTicket(id: "t1", title: "Lisbon", issued: Self.issued, seats: [12, 13]))
            try store.upsert(SecureTicket(id: "t2", title: "Porto", issued: Self.issued, seats: []))
            _ = try store.update(id: "t1") {
                $0 = SecureTicket(id: "t1", title: "Lisbon (moved)", issued: $0.issued, seats: [14])
            }

            let reopened = try RecordStore<SecureTicket>(directory: folder)
            #expect(reopened.recoveredDamage == nil)
            let first = try #require(reopened.record(id: "t1"))
            #expect(first.title == "Lisbon (moved)" && first.issued == Self.issued && first.seats == [14])
            #expect(reopened.all().map(\.id) == ["t2", "t1"] || reopened.all().map(\.id) == ["t1", "t2"])

            try reopened.compact()  // the records now come from the snapshot
            let compacted = try RecordStore<SecureTicket>(directory: folder)
            #expect(compacted.record(id: "t2")?.title == "Porto")
            #expect(compacted.record(id: "t1")?.seats == [14])
        }
    }

    @Test func aSharedTicketIsOneInstanceAfterReopening() throws {
        try withFolder { folder in
            let ticket = SecureTicket(id: "t1", title: "Round trip", issued: Self.issued, seats: [1])
            let store = try RecordStore<TicketPair>(directory: folder)
            try store.insert(TicketPair(id: "p1", outbound: ticket, inbound: ticket))

            let pair = try #require(try RecordStore<TicketPair>(directory: folder).record(id: "p1"))
            #expect(pair.outbound === pair.inbound)
            #expect(pair.outbound.title == "Round trip")

            let cache = try CacheManager<Caches>(root: CacheRoot(directory: folder.appendingPathComponent("cache")))
            try cache.store(
                [ticket, ticket, SecureTicket(id: "t2", title: "Other", issued: Self.issued, seats: [])],
                for: .tickets
            )
            let fresh = try CacheManager<Caches>(root: CacheRoot(directory: folder.appendingPathComponent("cache")))
            let tickets = try #require(try fresh.value([SecureTicket].self, for: .tickets))
            #expect(tickets.map(\.id) == ["t1", "t1", "t2"])
            #expect(tickets[0] === tickets[1])
            #expect(tickets[0] !== tickets[2])
        }
    }

    @Test func cacheManagerReadsDeclaredClassesAndRefusesUndeclaredOnes() throws {
        try withFolder { folder in
            let root = CacheRoot(directory: folder)
            let cache = try CacheManager<Caches>(root: root)
            try cache.store(DeclaredSeatTicket(id: "d", map: SecureSeatMap(rows: 30)), for: .seatTickets)
            try cache.store(UndeclaredSeatTicket(id: "u", map: SecureSeatMap(rows: 30)), for: .tickets)

            let fresh = try CacheManager<Caches>(root: root)
            #expect(try fresh.value(DeclaredSeatTicket.self, for: .seatTickets)?.map.rows == 30)
            let error = #expect(throws: CacheError.self) { try fresh.value(UndeclaredSeatTicket.self, for: .tickets) }
            #expect(error?.code == .decodingFailed)
            let refusal = try #require(error?.underlyingError as? ArchiveError)
            #expect(refusal.code == .disallowedType)
            #expect(refusal.codingPath.first == "keyedArchive")
            #expect(fresh.contains(.tickets))  // a refusal is not corruption: the entry stays
        }
    }

    @Test func recordStoreRefusesToOpenOverARecordTheAllowlistRefusesAndKeepsIt() throws {
        try withFolder { folder in
            let declared = try RecordStore<DeclaredSeatTicket>(directory: folder.appendingPathComponent("declared"))
            try declared.insert(DeclaredSeatTicket(id: "d1", map: SecureSeatMap(rows: 12)))
            #expect(try RecordStore<DeclaredSeatTicket>(directory: declared.directory).record(id: "d1")?.map.rows == 12)

            // Writing never decodes, so the undeclared class goes to disk; reading it back on the
            // next open is refused, never instantiated. The entry is intact, so it is not set
            // aside as damage (that took every later entry with it): the open throws, and the
            // log stays for a build of the model that declares the class.
            let undeclared = try RecordStore<UndeclaredSeatTicket>(
                directory: folder.appendingPathComponent("undeclared")
            )
            try undeclared.insert(UndeclaredSeatTicket(id: "u1", map: SecureSeatMap(rows: 1)))
            let log = undeclared.directory.appendingPathComponent("records.log")
            let before = try Data(contentsOf: log)
            let error = #expect(throws: StoreError.self) {
                try RecordStore<UndeclaredSeatTicket>(directory: undeclared.directory)
            }
            #expect(error?.code == .corrupt)
            #expect((error?.underlyingError as? ArchiveError)?.code == .disallowedType)
            #expect(try Data(contentsOf: log) == before)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: undeclared.directory.path)
                    .filter { $0.contains("quarantine") }.isEmpty
            )
        }
    }
}
