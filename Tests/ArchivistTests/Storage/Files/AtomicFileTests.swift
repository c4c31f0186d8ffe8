import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.serialized) struct AtomicFileTests {
    @Test(arguments: Durability.allCases)
    func writeThenReadRoundTripsAndLeavesNoTemporary(durability: Durability) throws {
        try withTemporaryDirectory { dir throws in
            let url = dir.appendingPathComponent("a/b/file")
            try AtomicFile.write(Data("first".utf8), to: url, durability: durability)
            try AtomicFile.write(Data("second".utf8), to: url, durability: durability)
            #expect(try AtomicFile.read(path: url.path) == Array("second".utf8))
            #expect(allPaths(under: dir).sorted() == ["a", "a/b", "a/b/file"])
        }
    }

    @Test func readOfMissingFileIsNil() throws {
        try withTemporaryDirectory { dir throws in
            #expect(try AtomicFile.read(path: dir.path + "/nothing") == nil)
        }
    }

    /// The umask is process-wide, so this suite runs serialized and restores it.
    @Test(arguments: [mode_t(0o000), mode_t(0o077), mode_t(0o277)])
    func filesAre0600AndFoldersAre0700WhateverTheUmask(mask: mode_t) throws {
        let previous = umask(mask)
        defer { umask(previous) }
        try withTemporaryDirectory { dir throws in
            let url = dir.appendingPathComponent("x/y/file")
            try AtomicFile.write(Data("v".utf8), to: url, durability: .none)
            #expect(permissions(url.path) == 0o600)
            #expect(permissions(dir.path + "/x") == 0o700)
            #expect(permissions(dir.path + "/x/y") == 0o700)
        }
    }

    @Test func failedRenameKeepsTheOldFileAndRemovesTheTemporary() throws {
        try withTemporaryDirectory { dir throws in
            let url = dir.appendingPathComponent("file")
            try AtomicFile.write(Data("old".utf8), to: url, durability: .none)
            var failing = FileSystem.posix
            failing.rename = { _, _ in
                errno = EIO
                return -1
            }
            let error = #expect(throws: StorageError.self) {
                try AtomicFile.write(Data("new".utf8), to: url, durability: .file, fileSystem: failing)
            }
            #expect(error?.code == .fileSystem)
            #expect(error?.errno == EIO)
            #expect(try AtomicFile.read(path: url.path) == Array("old".utf8))
            #expect(allPaths(under: dir) == ["file"])
        }
    }

    /// Header and payload go out in one `writev`; a kernel that takes only part of them (one
    /// byte at a time here) gets the rest, in order, in further calls.
    @Test func shortVectoredWritesAreCompleted() throws {
        try withTemporaryDirectory { dir throws in
            let calls = Locked(0)
            var stingy = FileSystem.posix
            stingy.writev = { fd, vectors, count in
                calls.withLock { $0 += 1 }
                let first = UnsafeBufferPointer(start: vectors, count: Int(count)).first { $0.iov_len > 0 }!
                return FileSystem.posix.write(fd, first.iov_base!, 1)
            }
            let head = Array("head-".utf8)
            let payload = Array("payload".utf8)
            let path = dir.path + "/f"
            try head.withUnsafeBytes { h in
                try payload.withUnsafeBytes { p in
                    _ = try AtomicFile.write([h, p], toPath: path, durability: .none, fileSystem: stingy)
                }
            }
            #expect(try AtomicFile.read(path: path) == head + payload)
            #expect(calls.withLock { $0 } == head.count + payload.count)
        }
    }

    @Test func entryReadOfEmptyAndShortFilesKeepsTheirBytes() throws {
        try withTemporaryDirectory { dir throws in
            let empty = dir.path + "/empty"
            let small = dir.path + "/small"
            try AtomicFile.write(Data(), to: URL(fileURLWithPath: empty), durability: .none)
            try AtomicFile.write(Data("abc".utf8), to: URL(fileURLWithPath: small), durability: .none)
            #expect(try AtomicFile.readData(path: empty) == Data())
            #expect(try AtomicFile.readData(path: small) == Data("abc".utf8))
            #expect(try AtomicFile.readData(path: dir.path + "/missing") == nil)
        }
    }

    @Test func fullDiskIsReportedAsDiskFull() throws {
        try withTemporaryDirectory { dir throws in
            var full = FileSystem.posix
            full.write = { _, _, _ in
                errno = ENOSPC
                return -1
            }
            let error = #expect(throws: StorageError.self) {
                try AtomicFile.write(
                    Data("x".utf8),
                    to: dir.appendingPathComponent("f"),
                    durability: .none,
                    fileSystem: full
                )
            }
            #expect(error?.code == .diskFull)
            #expect(allPaths(under: dir).isEmpty)
        }
    }
}
extension AtomicFileTests {
    /// The folder is everything before the last slash of the UTF-8 path, whatever the string's
    /// storage (native, small, or built from a `Substring`/`NSString`); no slash is a typed error.
    @Test func preparedFolderOverUTF8() throws {
        let dir = NSTemporaryDirectory() + "archivist-\(UInt32.random(in: 0...UInt32.max))/dïr ✓"
        defer { try? FileManager.default.removeItem(atPath: (dir as NSString).deletingLastPathComponent) }
        let bytes: [UInt8] = [1, 2, 3]
        try bytes.withUnsafeBytes { raw in
            let paths = [
                dir + "/a", String((dir + "/bé").utf16.map { Character(UnicodeScalar($0)!) }),
                (NSString(string: dir + "/c") as String), String(Substring(dir + "/ü/d")),
            ]
            for path in paths {
                let prepared = try AtomicFile.prepare([raw], toPath: path, durability: .none)
                #expect(prepared.folder == (path as NSString).deletingLastPathComponent)
                #expect(try prepared.rename(.posix))
                #expect(FileManager.default.contents(atPath: path) == Data(bytes))
            }
            let error = #expect(throws: StorageError.self) {
                try AtomicFile.prepare([raw], toPath: "no-slash", durability: .none)
            }
            #expect(error?.code == .fileSystem)
        }
    }
}
