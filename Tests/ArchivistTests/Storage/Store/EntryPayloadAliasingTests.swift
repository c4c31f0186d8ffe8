import Foundation
import Testing

@testable import Archivist

/// The `Data` values made from an entry's buffer (`DiskStore.Entry.payload`,
/// `FileBuffer.data(_:)`) share its memory: probes that a `Data` taken from an entry keeps
/// value semantics, so writing to one never changes another taken from the same entry, nor
/// the entry's bytes.
@Suite struct EntryPayloadAliasingTests {
    @Test func writingToOnePayloadLeavesTheOtherAlone() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let key = DiskKey(
                folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]),
                name: EntryName(parameter: "p")
            )
            let payload = Data((0..<8_000).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 3) })
            try store.write(payload, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            let read = try store.read(key, typeName: "t", parameter: "p", locking: false) {
                entry -> (Data, Data, UInt8) in
                var first = entry.payload
                let second = entry.payload
                first[0] ^= 0xFF  // `first` is the only reference to its storage
                return (first, second, entry.payloadBytes[0])
            }
            let (first, second, byte) = try #require(read)
            #expect(first[0] == payload[0] ^ 0xFF)
            #expect(second == payload, "a write to one payload showed in another")
            #expect(byte == payload[0], "a write to a payload showed in the entry's bytes")
        }
    }
}
