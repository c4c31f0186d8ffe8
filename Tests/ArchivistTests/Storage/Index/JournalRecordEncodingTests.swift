import Foundation
import Testing

@testable import Archivist

/// The journal's records are read by every process sharing a root, of this build and of
/// earlier ones: the encoder writing them in place must produce the bytes the earlier
/// piecewise encoder did, and they must read back as the same changes.
@Suite struct JournalRecordEncodingTests {
    /// The records encoded piece by piece: the reference format the in-place encoder must match.
    static func referenceEncode(_ change: PersistentIndex.Change, into out: inout [UInt8]) {
        var body: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { body += $0 } }
        func appendFolder(_ folder: FolderPath) {
            body.append(UInt8(folder.components.count))
            for component in folder.components {
                body.append(UInt8(component.utf8.count))
                body += component.utf8
            }
        }
        func appendName(_ name: EntryName) {
            switch name {
            case .single: body.append(0)
            case .hashed(let digest):
                body.append(1)
                append(digest.high)
                append(digest.low)
            }
        }
        switch change {
        case .set(let key, let record):
            body.append(1)
            appendFolder(key.folder)
            appendName(key.name)
            append(UInt64(bitPattern: record.logical))
            append(UInt64(bitPattern: record.allocated))
            append(record.lastAccess.bitPattern)
        case .remove(let key):
            body.append(2)
            appendFolder(key.folder)
            appendName(key.name)
        case .clear(let folder):
            body.append(3)
            appendFolder(folder)
        }
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { out += $0 }
        out += body
        withUnsafeBytes(of: CRC32C.checksum(body).littleEndian) { out += $0 }
    }

    static let changes: [PersistentIndex.Change] = {
        let folders = [
            FolderPath([]), FolderPath(["shared-caches"]),
            FolderPath(["shared-caches", MD5.hexDigest(of: "hots")]),
            FolderPath(["user-caches", "user_Name-9", String(repeating: "x", count: 200)]),
        ]
        let names: [EntryName] = [.single, EntryName(parameter: "blob-1"), EntryName(parameter: "")]
        let records = [
            PersistentIndex.Record(logical: 0, allocated: 0, lastAccess: 0),
            PersistentIndex.Record(logical: 100_082 + 59, allocated: 102_400, lastAccess: 1_790_000_000.25),
            PersistentIndex.Record(logical: .max, allocated: -1, lastAccess: -.infinity),
        ]
        var changes: [PersistentIndex.Change] = []
        for folder in folders {
            changes.append(.clear(folder))
            for name in names {
                let key = DiskKey(folder: folder, name: name)
                changes.append(.remove(key))
                for record in records { changes.append(.set(key, record)) }
            }
        }
        return changes
    }()

    @Test func recordsAreTheReferenceBytes() {
        for change in Self.changes {
            var written: [UInt8] = []
            var expected: [UInt8] = []
            PersistentIndex.encode(change, into: &written)
            Self.referenceEncode(change, into: &expected)
            #expect(written == expected, "\(change)")
        }
    }

    @Test func severalRecordsInOneAppendReadBackInOrder() {
        var written: [UInt8] = []
        var expected: [UInt8] = []
        for change in Self.changes {
            PersistentIndex.encode(change, into: &written)
            Self.referenceEncode(change, into: &expected)
        }
        #expect(written == expected)
        let decoded = PersistentIndex.decodeJournal(written[...])
        #expect(decoded.changes == Self.changes)
        #expect(decoded.consumed == written.count)
        #expect(!decoded.damaged)
    }
}
