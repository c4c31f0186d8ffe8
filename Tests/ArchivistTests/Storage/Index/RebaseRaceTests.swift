import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fold takes its copy of the index, and afterwards reads its index back from the new
/// snapshot (`rebase`), on the fold queue while the process's other threads go on writing. A
/// write applies its change to the index, appends the journal record, and only then moves the
/// process's journal position: a copy taken in between holds the change and a position before
/// its record, which the new epoch's journal then applies a second time; a rebase installed in
/// between drops the change. Either way the sizes leave the disk for good.
@Suite struct RebaseRaceTests {
    @Test(arguments: ["rebase", "fold"])
    func aFoldOrRebaseDuringAWritesJournalAppendKeepsTheWrite(step: String) throws {
        try withTemporaryDirectory { dir throws in
            // The next journal append, once armed, waits until the test lets it go.
            let journal = Locked<Int32?>(nil)
            let appending = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            var fileSystem = FileSystem.posix
            let pwrite = fileSystem.pwrite
            fileSystem.pwrite = { fd, buffer, count, offset in
                if journal.withLock({ armed in
                    guard armed == fd else { return false }
                    armed = nil
                    return true
                }) {
                    appending.signal()
                    _ = release.wait(timeout: .now() + 30)
                }
                return pwrite(fd, buffer, count, offset)
            }
            let store = try DiskStore.open(at: dir, fileSystem: fileSystem)
            for i in 0..<20 {
                try store.write(
                    Data(repeating: 1, count: 100),
                    to: hashedKey("f", "\(i)"),
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            #expect(try store.index.foldJournal() == .folded)  // the snapshot a rebase reads
            let epoch = store.index.shared.epoch

            journal.withLock { $0 = store.index.journalFD }
            let written = DispatchSemaphore(value: 0)
            Thread {
                _ = try? store.write(
                    Data(repeating: 2, count: 100),
                    to: hashedKey("f", "new"),
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
                written.signal()
            }.start()
            #expect(appending.wait(timeout: .now() + 30) == .success)
            // The write's change is in the index, its record not yet in the journal.
            let rebased = DispatchSemaphore(value: 0)
            Thread {
                if step == "rebase" {
                    store.index.rebase(onSnapshotOf: epoch)
                } else {
                    _ = try? store.index.foldJournal()
                }
                rebased.signal()
            }.start()
            // A rebase that does not wait for the write installs now.
            let rebasedEarly = rebased.wait(timeout: .now() + 1) == .success
            release.signal()
            #expect(written.wait(timeout: .now() + 30) == .success)
            if !rebasedEarly { #expect(rebased.wait(timeout: .now() + 30) == .success) }

            let files = entryFiles(under: dir)
            #expect(files.count == 21)
            #expect(store.usage(of: FolderPath([])).entryCount == files.count)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
            let other = try storeThroughLink(dir, "other")  // from the snapshot and journal on disk
            #expect(other.usage(of: FolderPath([])).entryCount == files.count)
            #expect(other.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
        }
    }
}
