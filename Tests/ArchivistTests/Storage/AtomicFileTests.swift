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
            failing.rename = { _, _ in errno = EIO; return -1 }
            let error = #expect(throws: CacheError.self) {
                try AtomicFile.write(Data("new".utf8), to: url, durability: .file, fileSystem: failing)
            }
            #expect(error?.code == .fileSystem)
            #expect(error?.errno == EIO)
            #expect(try AtomicFile.read(path: url.path) == Array("old".utf8))
            #expect(allPaths(under: dir) == ["file"])
        }
    }

    @Test func fullDiskIsReportedAsDiskFull() throws {
        try withTemporaryDirectory { dir throws in
            var full = FileSystem.posix
            full.write = { _, _, _ in errno = ENOSPC; return -1 }
            let error = #expect(throws: CacheError.self) {
                try AtomicFile.write(Data("x".utf8), to: dir.appendingPathComponent("f"), durability: .none, fileSystem: full)
            }
            #expect(error?.code == .diskFull)
            #expect(allPaths(under: dir).isEmpty)
        }
    }
}
