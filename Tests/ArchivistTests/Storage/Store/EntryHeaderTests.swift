import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

@Suite struct EntryHeaderTests {
    private func entry(
        parameter: String? = "/v1/orders",
        expiry: Date? = Date(timeIntervalSince1970: 2_000_000_000)
    ) -> [UInt8] {
        let payload: [UInt8] = Array("payload bytes".utf8)
        let header = payload.withUnsafeBytes {
            EntryHeader(
                typeName: "apiStrategy",
                parameter: parameter,
                writeDate: Date(timeIntervalSince1970: 1_700_000_000.25),
                expiry: expiry,
                payload: $0
            )
        }
        return header.encoded() + payload
    }

    @Test(arguments: [("/v1/orders" as String?, true), (nil, false), ("", true)])
    func encodedHeaderDecodesToTheSameFields(parameter: String?, hasExpiry: Bool) throws {
        let bytes = entry(parameter: parameter, expiry: hasExpiry ? Date(timeIntervalSince1970: 2e9) : nil)
        let (header, length) = try bytes.withUnsafeBytes {
            try EntryHeader.decode($0, payloadIncluded: true, path: "/x")
        }
        #expect(header.typeName == "apiStrategy")
        #expect(header.parameter == parameter)
        #expect(header.writeDate == Date(timeIntervalSince1970: 1_700_000_000.25))
        #expect(header.expiry == (hasExpiry ? Date(timeIntervalSince1970: 2e9) : nil))
        #expect(Array(bytes[length...]) == Array("payload bytes".utf8))
    }

    /// The header written field by field, the reference for the in-place encoder: both must
    /// give the same bytes (every process reading the root reads them).
    private static func referenceEncoded(_ header: EntryHeader) -> [UInt8] {
        func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { out += $0 }
        }
        let name = Array(header.typeName.utf8)
        let param = Array((header.parameter ?? "").utf8)
        var out: [UInt8] = [0x41, 0x52, 0x43, 0x45]
        append(UInt16(1), to: &out)
        append(UInt16((header.parameter != nil ? 1 : 0) | (header.expiry != nil ? 2 : 0)), to: &out)
        append(UInt32(name.count), to: &out)
        append(UInt32(param.count), to: &out)
        append(header.writeDate.timeIntervalSince1970.bitPattern, to: &out)
        append((header.expiry?.timeIntervalSince1970 ?? 0).bitPattern, to: &out)
        append(UInt64(header.payloadLength), to: &out)
        append(header.payloadChecksum, to: &out)
        let sum = CRC32C.checksum(name, seed: CRC32C.checksum(out))
        append(CRC32C.checksum(param, seed: sum), to: &out)
        return out + name + param
    }

    @Test func encodedBytesAreTheFieldByFieldLayout() {
        let names = ["hots", "apiStrategy", "ünïcødé 名前", String(repeating: "t", count: 300)]
        let parameters: [String?] = [nil, "", "/v1/orders", "ключ", String(repeating: "p", count: 5_000)]
        for name in names {
            for parameter in parameters {
                for expiry in [nil, Date(timeIntervalSince1970: 2e9)] {
                    let header = EntryHeader(
                        typeName: name,
                        parameter: parameter,
                        writeDate: Date(timeIntervalSince1970: 1.7e9 + 0.125),
                        expiry: expiry,
                        payloadLength: 100_082,
                        payloadChecksum: 0xDEAD_BEEF
                    )
                    let bytes = header.encoded()
                    #expect(bytes == Self.referenceEncoded(header), "\(name) \(String(describing: parameter))")
                    #expect(bytes.count == EntryHeader.encodedCount(typeName: name, parameter: parameter))
                }
            }
        }
    }

    @Test func everyTruncationThrowsCorruptEntry() {
        let bytes = entry()
        for cut in 0..<bytes.count {
            let error = #expect(throws: StorageError.self) {
                try Array(bytes[..<cut]).withUnsafeBytes {
                    try EntryHeader.decode($0, payloadIncluded: true, path: "/x")
                }
            }
            #expect(error?.code == .corruptEntry, "cut at \(cut)")
        }
    }

    @Test func everySingleBitFlipThrowsCorruptEntry() {
        let bytes = entry()
        for index in bytes.indices {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[index] ^= 1 << bit
                let error = #expect(throws: StorageError.self) {
                    try damaged.withUnsafeBytes { try EntryHeader.decode($0, payloadIncluded: true, path: "/x") }
                }
                #expect(error?.code == .corruptEntry, "byte \(index) bit \(bit)")
            }
        }
    }

    @Test func randomForeignBytesNeverDecode() {
        var rng = SplitMix64(seed: 0xE17)
        for round in 0..<2_000 {
            let count = Int.random(in: 0..<300, using: &rng)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if round.isMultiple(of: 2) && count >= 4 { bytes.replaceSubrange(0..<4, with: Array("ARCE".utf8)) }
            #expect(throws: StorageError.self, "seed 0xE17 round \(round)") {
                try bytes.withUnsafeBytes { try EntryHeader.decode($0, payloadIncluded: true, path: "/x") }
            }
        }
    }

    @Test func trailingBytesAreRejected() {
        let bytes = entry() + [0]
        #expect(throws: StorageError.self) {
            try bytes.withUnsafeBytes { try EntryHeader.decode($0, payloadIncluded: true, path: "/x") }
        }
    }
}
