import Archivist
import ArchivistKeyedArchive
import Foundation

/// "By declaration vs by hand": 1,000 `NSSecureCoding` orders stored in a
/// `CacheManager` one entry each, (1) by declaring the class `Archivable`
/// (`Archivable+SecureCoding`: the keyed archive inside a native archive, read back through the
/// validating bridge), (2) archived by hand with `KeyedArchiverBridge.archive` and stored as
/// `Data`, read with `value(Data.self)` and `KeyedArchiverBridge.unarchive` — what an app does
/// without the declaration — and, for scale, (3) the same fields as a native `Archivable`
/// struct. The memory tier is off, so every read decodes from disk.
func runKeyedDeclarationBenchmarks(_ harness: Harness) throws {
    let count = harness.options.quick ? 100 : 1_000  // quick: 3 cases × 4 rounds × 100 files
    let orders = (0..<count).map(DeclaredOrder.init)
    let natives = orders.map(NativeOrder.init)
    let keys = (0..<count).map { "order-\($0)" }
    let cache = try CacheManager<DeclarationCache>(
        root: CacheRoot(directory: harness.scratch.appendingPathComponent("keyed-declaration")),
        configuration: .init(memoryCountLimit: 0)
    )

    func storeDeclared() -> Int? {
        for (order, key) in zip(orders, keys) { try? cache.store(order, for: .declared, parameter: key) }
        return nil
    }
    func storeByHand() -> Int? {
        var bytes = 0
        for (order, key) in zip(orders, keys) {
            guard let data = try? KeyedArchiverBridge.archive(order) else { continue }
            bytes += data.count
            try? cache.store(data, for: .byHand, parameter: key)
        }
        return bytes
    }
    func storeNative() -> Int? {
        for (order, key) in zip(natives, keys) { try? cache.store(order, for: .native, parameter: key) }
        return nil
    }
    func readDeclared() -> Int? {
        var total = 0.0
        for key in keys {
            total += ((try? cache.value(DeclaredOrder.self, for: .declared, parameter: key)) ?? nil)?.total ?? .nan
        }
        precondition(!total.isNaN, "a declared order did not read back")
        return nil
    }
    func readByHand() -> Int? {
        var total = 0.0
        for key in keys {
            guard let data = (try? cache.value(Data.self, for: .byHand, parameter: key)) ?? nil,
                let order = try? KeyedArchiverBridge.unarchive(DeclaredOrder.self, from: data)
            else {
                total = .nan
                break
            }
            total += order.total
        }
        precondition(!total.isNaN, "an order archived by hand did not read back")
        return nil
    }
    func readNative() -> Int? {
        var total = 0.0
        for key in keys {
            total += ((try? cache.value(NativeOrder.self, for: .native, parameter: key)) ?? nil)?.total ?? .nan
        }
        precondition(!total.isNaN, "a native order did not read back")
        return nil
    }

    // Stores before reads in every round, so the reads always find the entries.
    harness.measureInterleaved(
        "keyed-declaration.store",
        [
            ("by hand: archive + store Data", storeByHand),
            ("by declaration: store Archivable", storeDeclared),
            ("native Archivable struct", storeNative),
        ]
    )
    harness.measureInterleaved(
        "keyed-declaration.read",
        [
            ("by hand: value(Data) + unarchive", readByHand),
            ("by declaration: value(Archivable)", readDeclared),
            ("native Archivable struct", readNative),
        ]
    )
    harness.printTable("keyed-declaration.store", title: "\(count) NSSecureCoding orders stored in a CacheManager") {
        _ in "by hand: archive + store Data"
    }
    harness.printTable(
        "keyed-declaration.read",
        title: "\(count) NSSecureCoding orders read from a CacheManager (memory tier off)"
    ) {
        _ in "by hand: value(Data) + unarchive"
    }
    _ = try? cache.clear()
}

private enum DeclarationCache: String, CacheType {
    case declared, byHand, native
    var location: CacheLocation { .sharedCaches }
}

/// An app's `NSSecureCoding` order, `Archivable` by declaration alone. Not `private`:
/// `NSKeyedArchiver` on Linux cannot name a class that is not top-level (the bridge refuses it).
final class DeclaredOrder: NSObject, NSSecureCoding, Archivable, Sendable {
    static var supportsSecureCoding: Bool { true }
    let number: String
    let customer: String
    let total: Double
    let placed: Date
    let lines: [String]

    init(_ i: Int) {
        number = "A-\(100_000 + i)"
        customer = "customer\(i % 97)@example.com"
        total = Double(i % 500) + 0.99
        placed = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i) * 60)
        lines = (0..<(1 + i % 5)).map { "item \($0) of order \(i)" }
    }

    required init?(coder: NSCoder) {
        guard let number = coder.decodeObject(of: NSString.self, forKey: "number") as String?,
            let customer = coder.decodeObject(of: NSString.self, forKey: "customer") as String?,
            let placed = coder.decodeObject(of: NSDate.self, forKey: "placed") as Date?,
            let lines = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: "lines") as? [String]
        else { return nil }
        self.number = number
        self.customer = customer
        total = coder.decodeDouble(forKey: "total")
        self.placed = placed
        self.lines = lines
    }

    func encode(with coder: NSCoder) {
        coder.encode(number as NSString, forKey: "number")
        coder.encode(customer as NSString, forKey: "customer")
        coder.encode(total, forKey: "total")
        coder.encode(placed as NSDate, forKey: "placed")
        coder.encode(lines as NSArray, forKey: "lines")
    }
}

/// The same fields as a native `Archivable` struct: what the order costs without NSCoding.
private struct NativeOrder: Archivable, Sendable {
    var number: String
    var customer: String
    var total: Double
    var placed: Date
    var lines: [String]

    init(_ order: DeclaredOrder) {
        number = order.number
        customer = order.customer
        total = order.total
        placed = order.placed
        lines = order.lines
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(number, forKey: "number")
        try archive.encode(customer, forKey: "customer")
        try archive.encode(total, forKey: "total")
        try archive.encode(placed, forKey: "placed")
        try archive.encode(lines, forKey: "lines")
    }

    init(from archive: ArchiveDecoder) throws {
        number = try archive.decode(String.self, forKey: "number")
        customer = try archive.decode(String.self, forKey: "customer")
        total = try archive.decode(Double.self, forKey: "total")
        placed = try archive.decode(Date.self, forKey: "placed")
        lines = try archive.decode([String].self, forKey: "lines")
    }
}
