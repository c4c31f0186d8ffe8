import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Replaying a journal reuses the previous record's folder when its bytes repeat, and the size
/// index skips the walk for the folder it last set in. Neither may change what a replay builds:
/// records of several folders interleaved, with folders cleared between them, must leave the
/// same index as a rescan of the disk.
@Suite struct JournalReplayTests {
    private func folder(_ names: [String]) -> FolderPath { FolderPath(names.map { MD5.hexDigest(of: $0) }) }

    /// Folders whose encodings share prefixes (a folder and its subfolder, components that are
    /// prefixes of each other) decode to their own paths, whatever record came before.
    @Test func recordsOfFoldersSharingPrefixesDecodeToTheirOwnFolders() {
        let folders = [
            FolderPath(["ab"]), FolderPath(["a", "b"]), FolderPath(["a", "bc"]), FolderPath(["a"]),
            FolderPath([]), FolderPath(["a", "b"]), FolderPath(["ab", "c"]), FolderPath(["ab"]),
        ]
        var changes: [PersistentIndex.Change] = []
        for (i, folder) in folders.enumerated() {
            let key = DiskKey(folder: folder, name: EntryName(parameter: "p\(i % 3)"))
            changes.append(.set(key, PersistentIndex.Record(logical: Int64(i), allocated: 4096, lastAccess: Double(i))))
            changes.append(
                .set(key, PersistentIndex.Record(logical: Int64(i + 1), allocated: 4096, lastAccess: Double(i)))
            )
            changes.append(.remove(DiskKey(folder: folder, name: .single)))
            if i % 3 == 2 { changes.append(.clear(folder)) }
        }
        var bytes: [UInt8] = []
        for change in changes { PersistentIndex.encode(change, into: &bytes) }
        let decoded = PersistentIndex.decodeJournal(bytes[...])
        #expect(decoded.changes == changes)
        #expect(decoded.consumed == bytes.count)
        #expect(!decoded.damaged)
    }

    /// Applying decoded records (folders reused from record to record) builds the index that
    /// applying the very changes does, through clears of a folder and of the root between them.
    @Test func appliedDecodedRecordsBuildTheSameIndexAsTheChanges() {
        let folders = [folder(["a"]), folder(["a", "b"]), folder(["c"]), folder(["a", "b", "d"])]
        var changes: [PersistentIndex.Change] = []
        for i in 0..<200 {
            let target = folders[(i / 3 + i % 2) % folders.count]
            let key = DiskKey(folder: target, name: EntryName(parameter: "p\(i % 7)"))
            switch i % 23 {
            case 5: changes.append(.clear(folders[i % folders.count]))
            case 11: changes.append(.remove(key))
            case 22 where i > 150: changes.append(.clear(FolderPath([])))
            default:
                changes.append(
                    .set(key, PersistentIndex.Record(logical: Int64(i), allocated: Int64(i * 8), lastAccess: Double(i)))
                )
            }
        }
        var bytes: [UInt8] = []
        for change in changes { PersistentIndex.encode(change, into: &bytes) }
        var replayed = PersistentIndex.SizeIndex()
        var direct = PersistentIndex.SizeIndex()
        var batched = PersistentIndex.SizeIndex()
        for change in PersistentIndex.decodeJournal(bytes[...]).changes { replayed.apply(change) }
        for change in changes { direct.apply(change) }
        // As an open replays: runs of records in one folder, their usage added once a run ends.
        PersistentIndex.decodeJournal(bytes[...]).apply(to: &batched)
        for folder in folders + [FolderPath([]), folder(["a", "b"])] {
            for index in [replayed, batched] {
                #expect(index.usage(of: folder) == direct.usage(of: folder))
                #expect(
                    index.leastRecentlyAccessed(in: folder).map(\.0)
                        == direct.leastRecentlyAccessed(in: folder).map(\.0)
                )
                #expect(
                    index.leastRecentlyAccessed(in: folder).map(\.1)
                        == direct.leastRecentlyAccessed(in: folder).map(\.1)
                )
            }
        }
    }

    /// A record cut short or damaged after records of the same folder stops the replay there:
    /// the whole records before it are returned.
    @Test func aDamagedRecordAfterARepeatedFolderStopsTheReplay() {
        let key = DiskKey(folder: folder(["a", "b"]), name: EntryName(parameter: "p"))
        var bytes: [UInt8] = []
        for i in 0..<3 {
            PersistentIndex.encode(
                .set(key, PersistentIndex.Record(logical: Int64(i), allocated: 0, lastAccess: 0)),
                into: &bytes
            )
        }
        let whole = bytes.count
        PersistentIndex.encode(.remove(key), into: &bytes)
        var truncated = bytes
        truncated.removeLast(3)
        let cut = PersistentIndex.decodeJournal(truncated[...])
        #expect(cut.changes.count == 3)
        #expect(cut.consumed == whole)
        #expect(cut.damaged)
        var flipped = bytes
        flipped[whole + 7] ^= 0x01  // inside the last record's folder bytes
        let damaged = PersistentIndex.decodeJournal(flipped[...])
        #expect(damaged.changes.count == 3)
        #expect(damaged.consumed == whole)
        #expect(damaged.damaged)
    }

    /// One store writes into several folders in turns (nested ones among them), removes, and
    /// clears a folder or its parent now and then; a second store on the same root replays all
    /// of it at once, then again after each round. Its index must equal a rescan of the disk:
    /// entries, logical and allocated bytes of every folder, and every entry's record sizes.
    @Test func replayOfInterleavedFoldersWithClearsEqualsARescan() throws {
        try withTemporaryDirectory { dir throws in
            let links = try (0..<2).map { i in try linkedFolder(dir, "replay\(i)") }
            defer { for link in links { try? FileManager.default.removeItem(at: link) } }
            let stores = try links.map { try DiskStore.open(at: $0) }
            let (writer, reader) = (stores[0], stores[1])
            let folders = [["x"], ["x", "y"], ["x", "z"], ["w"], ["w", "y"], ["v", "u", "t"]].map(folder)
            var rng = SplitMix64(seed: 7)
            for round in 0..<4 {
                for i in 0..<150 {
                    // Runs of a few records in one folder, then another: both the repeated-folder
                    // path and the change of folder are taken.
                    let target = folders[(i / Int.random(in: 1...4, using: &rng)) % folders.count]
                    let key = DiskKey(
                        folder: target,
                        name: EntryName(parameter: "p\(Int.random(in: 0..<12, using: &rng))")
                    )
                    switch Int.random(in: 0..<20, using: &rng) {
                    case 0:
                        try writer.clear([folders[Int.random(in: 0..<folders.count, using: &rng)]])
                    case 1:
                        try writer.clear([FolderPath(Array(target.components.prefix(1)))])
                    case 2..<5:
                        try writer.remove(key)
                    default:
                        try writer.write(
                            Data(repeating: 1, count: Int.random(in: 1..<9_000, using: &rng)),
                            to: key,
                            typeName: "t",
                            parameter: nil,
                            expiry: nil,
                            durability: .none
                        )
                    }
                }
                if round == 2 {
                    // Every top folder cleared, then one nested entry written into a cleared one.
                    try writer.clear([folder(["x"]), folder(["w"]), folder(["v"])])
                    try writer.write(
                        Data([1]),
                        to: DiskKey(folder: folders[1], name: .single),
                        typeName: "t",
                        parameter: nil,
                        expiry: nil,
                        durability: .none
                    )
                }
                let scanned = try reader.index.scan()
                var all = folders
                all += [FolderPath([]), folder(["v"]), folder(["v", "u"])]
                for folder in all {
                    #expect(
                        reader.usage(of: folder) == scanned.usage(of: folder),
                        "round \(round), \(folder.relativePath)"
                    )
                    #expect(
                        writer.usage(of: folder) == scanned.usage(of: folder),
                        "round \(round), \(folder.relativePath)"
                    )
                    for p in 0..<12 {
                        let key = DiskKey(folder: folder, name: EntryName(parameter: "p\(p)"))
                        let got = reader.index.readIndex { $0.record(key) }
                        let want = scanned.record(key)
                        #expect(got?.logical == want?.logical && got?.allocated == want?.allocated, "round \(round)")
                    }
                }
            }
        }
    }
}
