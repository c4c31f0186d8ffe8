import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// A lock holder that dies between a change to one entry and its journal record names that
/// entry next to the intent word; the next holder looks at that one file — no rescan, no new
/// epoch — and every store is exact again. Without a name (or with a folder at the entry's
/// path) the root is rescanned. Stores are opened through links, as separate
/// processes (see `DiskStoreSharingTests`); the real kills are in `CrashTests`.
@Suite struct IntentTargetTests {
    private func write(_ store: DiskStore, _ key: DiskKey, bytes: Int) throws {
        try store.write(
            Data(repeating: 7, count: bytes),
            to: key,
            typeName: "t",
            parameter: nil,
            expiry: nil,
            durability: .none
        )
    }

    /// An entry file as a store writes it, put in place without the store (what a holder
    /// killed after its rename leaves).
    private func plant(_ store: DiskStore, _ key: DiskKey, bytes: Int) throws {
        let payload = [UInt8](repeating: 1, count: bytes)
        let header = payload.withUnsafeBytes {
            EntryHeader(typeName: "t", parameter: nil, writeDate: Date(), expiry: nil, payload: $0).encoded()
        }
        try Data(header + payload).write(to: URL(fileURLWithPath: store.path(of: key)))
    }

    private func expectExact(_ stores: [DiskStore], _ dir: URL) {
        let files = entryFiles(under: dir)
        for store in stores {
            #expect(store.usage(of: FolderPath([])).entryCount == files.count)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
        }
    }

    /// The dead holder's rename landed (a new entry, and a replaced one) or its unlink did:
    /// the next writer journals what the named file now is.
    @Test(arguments: ["added", "replaced", "removed"])
    func theNamedEntryIsLookedAtInsteadOfARescan(what: String) throws {
        try withTemporaryDirectory { dir throws in
            let (a, b) = (try storeThroughLink(dir, "a"), try storeThroughLink(dir, "b"))
            for i in 0..<20 { try write(a, hashedKey("x", "\(i)"), bytes: 100 + i) }
            let epoch = a.index.shared.epoch
            let target = what == "added" ? hashedKey("x", "new") : hashedKey("x", "3")
            // What a kill between the file change and its record leaves: the word set, the entry named.
            a.index.shared.intent = true
            a.index.setIntentTarget(target)
            switch what {
            case "removed": try FileManager.default.removeItem(atPath: a.path(of: target))
            default: try plant(a, target, bytes: 5_000)
            }
            try write(b, hashedKey("y", "1"), bytes: 50)
            #expect(!a.index.shared.intent)
            #expect(a.index.shared.epoch == epoch)  // no rescan: a rescan starts an epoch
            #expect(b.contains(target) == (what != "removed"))
            #expect(a.contains(target) == (what != "removed"))
            expectExact([a, b], dir)
        }
    }

    /// At open: a root whose last holder died naming its entry opens without a rescan.
    @Test func anOpenAfterADeathLooksAtTheNamedEntryOnly() throws {
        try withTemporaryDirectory { dir throws in
            let orphan = hashedKey("x", "orphan")
            let epoch: UInt64
            do {
                let a = try storeThroughLink(dir, "a")
                for i in 0..<20 { try write(a, hashedKey("x", "\(i)"), bytes: 100 + i) }
                try a.flush()
                epoch = a.index.shared.epoch
                a.index.shared.intent = true
                a.index.setIntentTarget(orphan)
                try plant(a, orphan, bytes: 3_000)
            }
            let reopened = try DiskStore.open(at: dir)
            #expect(reopened.contains(orphan))
            #expect(!reopened.index.shared.intent)
            #expect(reopened.index.shared.epoch == epoch)
            expectExact([reopened], dir)
        }
    }

    /// Without a named entry, or with a folder at the named entry's path, the root is rescanned.
    @Test(arguments: [false, true])
    func withoutATargetOrWithAFolderThereTheRootIsRescanned(folderAtPath: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let (a, b) = (try storeThroughLink(dir, "a"), try storeThroughLink(dir, "b"))
            for i in 0..<20 { try write(a, hashedKey("x", "\(i)"), bytes: 100 + i) }
            let epoch = a.index.shared.epoch
            let target = hashedKey("x", "odd")
            a.index.shared.intent = true  // drops any target
            if folderAtPath {
                a.index.setIntentTarget(target)
                try FileManager.default.createDirectory(atPath: a.path(of: target), withIntermediateDirectories: false)
            }
            try plant(a, hashedKey("x", "unnamed"), bytes: 700)
            try write(b, hashedKey("y", "1"), bytes: 50)
            #expect(!a.index.shared.intent)
            #expect(a.index.shared.epoch > epoch)  // rescanned
            #expect(b.contains(hashedKey("x", "unnamed")))
            expectExact([a, b], dir)
        }
    }
}
