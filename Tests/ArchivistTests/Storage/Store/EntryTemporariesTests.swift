import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Entry files are written as temporaries in one folder of the store's own
/// (``DiskStore/temporariesPath``), then renamed across to their entry's folder: what a killed
/// writer leaves is found by listing that one folder, never by walking every entry folder. The
/// entry's folders are then met by the rename — missing, cleared meanwhile, or a file where a
/// folder belongs — and each write still lands whole, with sizes equal to the disk's.
@Suite struct EntryTemporariesTests {
    private func expectExact(_ store: DiskStore, _ dir: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        let files = entryFiles(under: dir)
        #expect(store.usage(of: FolderPath([])).entryCount == files.count, sourceLocation: sourceLocation)
        #expect(
            store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)),
            sourceLocation: sourceLocation
        )
    }

    /// Every temporary of a write is made in the temporaries folder and renamed from there —
    /// the first write into a folder too, whose folder the rename finds missing — and none is
    /// left in it or in an entry folder.
    @Test func writesMakeTheirTemporariesInTheTemporariesFolder() throws {
        try withTemporaryDirectory { dir throws in
            let renamedFrom = Locked<[String]>([])
            var fs = FileSystem.posix
            let rename = fs.rename
            fs.rename = { from, to in
                if to.hasSuffix(".archivist/index") == false { renamedFrom.withLock { $0.append(from) } }
                return rename(from, to)
            }
            let store = try DiskStore.open(at: dir, fileSystem: fs)
            for i in 0..<6 {
                try store.write(
                    Data(repeating: UInt8(i), count: 100 + i),
                    to: hashedKey("f\(i % 3)", "p\(i)"),
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            let sources = renamedFrom.withLock { $0 }.filter {
                AtomicFile.isTemporary($0.split(separator: "/").last ?? "")
            }
            #expect(Set(sources).count == 6)  // a first write into a folder renames twice
            #expect(sources.allSatisfy { $0.hasPrefix(store.temporariesPath + "/") })
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.temporariesPath).isEmpty)
            #expect(
                !entryFiles(under: dir).keys.contains { AtomicFile.isTemporary($0.split(separator: "/").last ?? "") }
            )
            expectExact(store, dir)
        }
    }

    /// Another process clears the entry's folder while the temporary is being written: the
    /// rename finds the folder missing, the writer makes it again, and the entry lands after
    /// the clear — in both processes' sizes as on the disk.
    @Test func aFolderClearedWhileTheTemporaryIsWrittenIsMadeAgain() throws {
        try withTemporaryDirectory { dir throws in
            let link = try linkedFolder(dir, "other")
            defer { try? FileManager.default.removeItem(at: link) }
            let other = try DiskStore.open(at: link)
            let folder = hashedKey("f", "x").folder
            let clearNext = Locked(false)
            var fs = FileSystem.posix
            let open = fs.open
            fs.open = { path, flags, mode in
                let fd = open(path, flags, mode)
                // Right after the temporary is created, outside the writer's lock.
                if fd >= 0, path.contains("/" + DiskStore.temporariesFolderName + "/"),
                    clearNext.withLock({
                        let due = $0
                        $0 = false
                        return due
                    })
                {
                    _ = try? other.clear([folder])
                }
                return fd
            }
            let store = try DiskStore.open(at: dir, fileSystem: fs)
            try store.write(
                Data(repeating: 1, count: 300),
                to: hashedKey("f", "old"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            clearNext.withLock { $0 = true }
            try store.write(
                Data(repeating: 2, count: 500),
                to: hashedKey("f", "new"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            #expect(!clearNext.withLock { $0 })  // the clear ran
            store.waitForTrash()
            other.waitForTrash()
            let files = entryFiles(under: dir)
            #expect(files.count == 1)
            #expect(store.sizes(of: hashedKey("f", "new")) != nil)
            #expect(store.sizes(of: hashedKey("f", "old")) == nil)
            expectExact(store, dir)
            expectExact(other, dir)
        }
    }

    /// A file where the temporaries folder belongs — ours by its name, counted by nothing —
    /// is cleared away by the next write, which then lands; so is a file where an entry's
    /// folder belongs (counted when it had an entry's name, and uncounted with it).
    @Test func filesWhereFoldersBelongAreClearedAway() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            try? FileManager.default.removeItem(atPath: store.temporariesPath)
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: store.temporariesPath))
            try store.write(
                Data(repeating: 1, count: 100),
                to: hashedKey("f", "a"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            var isFolder: ObjCBool = false
            #expect(
                FileManager.default.fileExists(atPath: store.temporariesPath, isDirectory: &isFolder)
                    && isFolder.boolValue
            )

            let blocked = hashedKey("g", "b")
            let folderPath = dir.path + "/" + blocked.folder.relativePath
            try Data(repeating: 9, count: 40).write(to: URL(fileURLWithPath: folderPath))
            try store.write(
                Data(repeating: 2, count: 200),
                to: blocked,
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            #expect(store.sizes(of: blocked) != nil)
            expectExact(store, dir)
        }
    }

    /// A killed process's leftovers are swept from the temporaries folder when its slot is
    /// freed, without a walk of the entry folders: a leftover beside an entry (where an older
    /// release made its temporaries) stays until a rescan, which deletes it.
    @Test func theDeadWritersSweepListsOnlyTheTemporariesFolder() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let k = hashedKey("f", "a")
            try store.write(
                Data(repeating: 1, count: 100),
                to: k,
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            let me = TemporaryName.identity
            let dead = TemporaryName.Owner(pid: me.pid, namespace: me.namespace, incarnation: me.incarnation &+ 1)
            let name =
                AtomicFile.temporaryPrefix + String(dead.pid, radix: 16) + "." + String(dead.namespace, radix: 16) + "."
                + String(dead.incarnation, radix: 16) + ".1"
            let inTemporaries = store.temporariesPath + "/" + name
            let besideEntry = (store.path(of: k) as NSString).deletingLastPathComponent + "/" + name
            try Data(repeating: 2, count: 10).write(to: URL(fileURLWithPath: inTemporaries))
            try Data(repeating: 3, count: 10).write(to: URL(fileURLWithPath: besideEntry))
            #expect(store.index.shared.register(as: dead).slot != nil)

            store.sweepEntryTemporaries()
            store.waitForTrash()
            #expect(!FileManager.default.fileExists(atPath: inTemporaries))
            #expect(FileManager.default.fileExists(atPath: besideEntry))
            _ = try store.index.scan()
            #expect(!FileManager.default.fileExists(atPath: besideEntry))
            expectExact(store, dir)
        }
    }
}
