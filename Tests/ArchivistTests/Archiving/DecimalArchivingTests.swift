import ArchivistInspection
import Foundation
import Testing

@testable import Archivist

/// `Decimal` in its own tag: compact, exact, read back from archives that hold Foundation's
/// `Codable` record of it, and shown by `archivist inspect` as its value.
@Suite struct DecimalArchivingTests {
    /// The Guide's model.
    struct Product: Codable, Archivable, Sendable, Equatable {
        var id: Int
        var name: String
        var price: Decimal?
    }

    /// Six products as the encoder wrote them while it went through Foundation's `Codable`
    /// conformance of `Decimal` (a record of exponent, length, isNegative, isCompact and an
    /// eight-element mantissa, format version 2): prices 1.5,
    /// -12345678901234567890.123456789, 0, nil, NaN and
    /// 3402823669209384634633746074317682114.55 (the largest mantissa).
    static let recordForm =
        "iUFSVgIABZ4V06QDzgIMSQEAAAYAAAAONAAAAAEAAwABBwJQMAIOJQAAAAADAwEEBAEFAQYCBwwUAAAACAAAAAQPBAAEAAQABAAEAAQABAAOPgAAAAEAAwIBBwJQMQIOLwAAAAADAxEEBAYFAgYCBwweAAAACAAAAASVggIEudwBBLGTAwS+jQEEsjYE5E8EAAQADjQAAAABAAMEAQcCUDICDiUAAAAAAwMABAQABQEGAQcMFAAAAAgAAAAEAAQABAAEAAQABAAEAAQADgkAAAABAAMGAQcCUDMONAAAAAEAAwgBBwJQNAIOJQAAAAADAwAEBAAFAgYBBwwUAAAACAAAAAQABAAEAAQABAAEAAQABAAORAAAAAEAAwoBBwJQNQIONQAAAAADAwMEBAgFAQYCBwwkAAAACAAAAAT//wME//8DBP//AwT//wME//8DBP//AwT//wME//8DAQdQcm9kdWN0AAgCaWQEbmFtZQVwcmljZQhleHBvbmVudAZsZW5ndGgKaXNOZWdhdGl2ZQlpc0NvbXBhY3QIbWFudGlzc2EA"

    static let prices: [Decimal?] = [
        Decimal(string: "1.5"), Decimal(string: "-12345678901234567890.123456789"), 0, nil,
        Decimal.nan, Decimal(string: "3402823669209384634633746074317682114.55"),
    ]

    static func forty() -> [Product] {
        (1...40).map { Product(id: $0, name: "Product \($0)", price: Decimal($0) + Decimal(string: "0.5")!) }
    }

    @Test func theGuidesProductsArchiveSmallerThanTheirJSON() throws {
        let products = Self.forty()
        let archive = try Archive.encode(products)
        let json = try JSONEncoder().encode(products)
        #expect(archive.count < json.count, "\(archive.count) bytes archived, \(json.count) as JSON")
        #expect(try Archive.decode([Product].self, from: archive) == products)
    }

    @Test func aDecimalTakesFourBytesForOnePointFive() throws {
        struct Price: Codable, Archivable { var price: Decimal }
        let inline = try Archive.encode(Price(price: Decimal(string: "1.5")!))
        let without = try Archive.encode(Price(price: 0))
        // 0x11, exponent -1, flags (one mantissa byte, positive), 15.
        #expect(inline.count - without.count == 1)
        #expect(inline.range(of: Data([ArchiveTag.decimal, 0xFF, 0x02, 0x0F])) != nil)
    }

    @Test(arguments: [
        "1.5", "-12345678901234567890.123456789", "0", "-0.000001", "1.50", "150", "1000",
        "340282366920938463463374607431768211455",
        "3402823669209384634633746074317682114.55", "-1e-120", "9e120", "0.1", "65535", "65536", "256", "255",
    ])
    func decimalsRoundTripExactly(_ text: String) throws {
        let value = try #require(Decimal(string: text))
        let read = try Archive.decode(Decimal.self, from: Archive.encode(value))
        #expect(read == value)
        #expect(read.description == value.description)
        #expect(read.sign == value.sign)
        // Through Codable too, in a record and as an optional.
        let product = Product(id: 1, name: "x", price: value)
        #expect(try Archive.decode(Product.self, from: Archive.encode(product)) == product)
    }

    @Test func nanAndZeroRoundTrip() throws {
        let nan = try Archive.decode(Decimal.self, from: Archive.encode(Decimal.nan))
        #expect(nan.isNaN)
        let zero = try Archive.decode(Decimal.self, from: Archive.encode(Decimal.zero))
        #expect(zero == 0 && !zero.isNaN && zero.isZero)
        let product = try Archive.decode(Product.self, from: Archive.encode(Product(id: 1, name: "x", price: .nan)))
        #expect(product.price?.isNaN == true)
    }

    @Test func anArchiveWithADecimalIsVersionThreeAndOneWithoutStaysVersionTwo() throws {
        let with = [UInt8](try Archive.encode(Self.forty()))
        #expect(with[4] == 3 && with[5] == 0)
        let without = [UInt8](try Archive.encode([1, 2, 3]))
        #expect(without[4] == 2 && without[5] == 0)
        // The thread's encoder, reused after a decimal, writes version 2 again.
        _ = try Archive.encode(Decimal(1))
        #expect([UInt8](try Archive.encode("after"))[4] == 2)
    }

    @Test func archivesOfFoundationsRecordFormStillDecode() throws {
        let data = try #require(Data(base64Encoded: Self.recordForm))
        #expect(data[4] == 2)  // written before the tag: version 2
        let products = try Archive.decode([Product].self, from: data)
        #expect(products.map(\.id) == Array(0..<6))
        #expect(products[0].price == Decimal(string: "1.5"))
        #expect(products[1].price == Decimal(string: "-12345678901234567890.123456789"))
        #expect(products[2].price == 0)
        #expect(products[3].price == nil)
        #expect(products[4].price?.isNaN == true)
        #expect(products[5].price == Decimal(string: "3402823669209384634633746074317682114.55"))
        // Re-encoded, they take the tag, and mean the same.
        let again = try Archive.encode(products)
        #expect(again.count < data.count)
        let reread = try Archive.decode([Product].self, from: again)
        #expect(reread.map(\.price?.description) == products.map(\.price?.description))
    }

    /// A hand-written model encodes and decodes a `Decimal` field with the same tag.
    @Test func aHandWrittenModelHoldsADecimal() throws {
        struct HandPriced: Archivable {
            var price: Decimal
            var discount: Decimal?
            init(price: Decimal, discount: Decimal?) { (self.price, self.discount) = (price, discount) }
            func encode(to archive: ArchiveEncoder) throws {
                try archive.encode(price, forKey: "price")
                try archive.encode(discount, forKey: "discount")
            }
            init(from archive: ArchiveDecoder) throws {
                price = try archive.decode(Decimal.self, forKey: "price")
                discount = try archive.decodeIfPresent(Decimal.self, forKey: "discount")
            }
        }
        let price = try #require(Decimal(string: "-12345678901234567890.123456789"))
        let data = try Archive.encode(HandPriced(price: price, discount: nil))
        #expect(data.range(of: Data([ArchiveTag.decimal, UInt8(bitPattern: -9)])) != nil)
        let read = try Archive.decode(HandPriced.self, from: data)
        #expect(read.price == price && read.discount == nil)
        #expect(
            try Archive.decode(HandPriced.self, from: Archive.encode(HandPriced(price: 1, discount: 0.25))).discount
                == 0.25
        )
    }

    @Test func damagedDecimalsThrowInsteadOfTrapping() throws {
        var bytes = [UInt8](try Archive.encode(Decimal(string: "1.5")!))
        let at = try #require(bytes.firstIndex(of: ArchiveTag.decimal))
        var options = ArchiveOptions()
        options.verifiesChecksum = false
        for flags: UInt8 in [0x80, 17 << 1, 0xFF] {  // more mantissa bytes than 16
            bytes[at + 2] = flags
            #expect(throws: ArchiveError.self) { try Archive.decode(Decimal.self, from: Data(bytes), options: options) }
        }
        // 10 × 10^127: a mantissa whose trailing zero no exponent left holds.
        bytes[at + 1] = 0x7F
        bytes[at + 2] = 1 << 1
        bytes[at + 3] = 10
        let error = #expect(throws: ArchiveError.self) {
            try Archive.decode(Decimal.self, from: Data(bytes), options: options)
        }
        #expect(error?.code == .corrupt)
    }

    @Test func inspectShowsTheValue() throws {
        let outline = try ArchiveOutline(bytes: Archive.encode(Self.forty()))
        #expect(outline.version == 3)
        let text = NativeArchiveTree.nodes(outline).map { $0.text() }.joined(separator: "\n")
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("price: 1.5"), "\(text.prefix(600))")
        #expect(lines.contains("price: 40.5"))
        #expect(!text.contains("mantissa"))
        let exact = try ArchiveOutline(bytes: Archive.encode(Decimal(string: "-12345678901234567890.123456789")!))
        #expect(
            NativeArchiveTree.nodes(exact).map { $0.text() }.joined().contains("root: -12345678901234567890.123456789")
        )
    }

    /// Every other Foundation value a Codable model holds: the four with tags of their own are
    /// written inline (not as their `Codable` conformances' strings, doubles and records); the
    /// rest are records of their own `Codable` conformance, which round-trip.
    @Test func otherFoundationValuesInACodableModel() throws {
        struct Sample: Codable, Archivable, Equatable {
            var url: URL
            var id: UUID
            var date: Date
            var bytes: Data
            var length: Measurement<UnitLength>
            var locale: Locale
            var zone: TimeZone
        }
        let sample = Sample(
            url: URL(string: "https://example.com/a?b=1")!,
            id: UUID(),
            date: Date(timeIntervalSinceReferenceDate: 12.25),
            bytes: Data([1, 2, 3]),
            length: Measurement(value: 1.5, unit: .kilometers),
            locale: Locale(identifier: "de_CH"),
            zone: TimeZone(identifier: "Europe/Zurich")!
        )
        let data = try Archive.encode(sample)
        #expect(try Archive.decode(Sample.self, from: data) == sample)
        let outline = try ArchiveOutline(bytes: data)
        guard case .record(_, let fields) = outline.root else {
            Issue.record("not a record: \(outline.root)")
            return
        }
        let byKey = Dictionary(fields.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        if case .url(let text)? = byKey["url"] {
            #expect(text == "https://example.com/a?b=1")
        } else {
            Issue.record("url: \(String(describing: byKey["url"]))")
        }
        if case .uuid(let id)? = byKey["id"] {
            #expect(id == sample.id)
        } else {
            Issue.record("id: \(String(describing: byKey["id"]))")
        }
        if case .date(let seconds)? = byKey["date"] {
            #expect(seconds == 12.25)
        } else {
            Issue.record("date: \(String(describing: byKey["date"]))")
        }
        if case .data(let count, _)? = byKey["bytes"] {
            #expect(count == 3)
        } else {
            Issue.record("bytes: \(String(describing: byKey["bytes"]))")
        }
        guard case .record(_, let measurement)? = byKey["length"] else {
            Issue.record("length: \(String(describing: byKey["length"]))")
            return
        }
        #expect(measurement.map(\.key).prefix(2) == ["value", "unit"])
        for key in ["zone", "locale"] {
            guard case .record(_, let fields)? = byKey[key] else {
                Issue.record("\(key): \(String(describing: byKey[key]))")
                continue
            }
            #expect(fields.first?.key == "identifier", "\(key)")
            guard case .string? = fields.first?.value else {
                Issue.record("\(key): \(fields)")
                continue
            }
        }
        #expect(data[4] == 2)  // no decimal: version 2
    }
}
