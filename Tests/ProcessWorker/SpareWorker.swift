import Archivist
import ArchivistTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The modes of `SpareFolderTests`: processes claiming spare folders at once, and a process
// killed in the middle of keeping or claiming one.

/// `spare-claims <root> <writer> <folders> <entries>`: writes `entries` entries named
/// `<writer>-<i>` into each of the folders `s/0` … `s/<folders - 1>` (new folders, made from
/// spares when there are some), while other processes write into the same folders.
func spareClaims(_ arguments: [String]) throws {
    let root = URL(fileURLWithPath: argument(arguments, 0, "root") { $0 }, isDirectory: true)
    let writer = argument(arguments, 1, "writer") { $0 }
    let folders = argument(arguments, 2, "folders") { Int($0) }
    let entries = argument(arguments, 3, "entries") { Int($0) }
    let store = try DiskStore.open(at: root)
    for folder in 0..<folders {
        for i in 0..<entries {
            let key = DiskKey(folder: FolderPath(["s", String(folder)]), name: EntryName(parameter: "\(writer)-\(i)"))
            try store.write(
                Data("\(writer) \(folder) \(i)".utf8),
                to: key,
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
        }
    }
}

/// `spare-stop <root> <ready file> <keep|claim>`: stops — creating the ready file, then waiting
/// to be killed — at a chosen point of the spare folders' life:
/// - `keep`: fills the folder `k` with 300 entries and clears it; its trash walk stops just
///   before renaming the emptied folder into the spare area;
/// - `claim`: with a spare in the area (a run of `keep` killed before, then reopened), writes
///   into the new folder `n`, stopping once the spare is renamed to this process's claim name.
func spareStop(_ arguments: [String]) throws {
    let root = URL(fileURLWithPath: argument(arguments, 0, "root") { $0 }, isDirectory: true)
    let ready = argument(arguments, 1, "ready file") { $0 }
    let point = argument(arguments, 2, "keep|claim") { ["keep", "claim"].contains($0) ? $0 : nil }
    let stop: @Sendable () -> Never = {
        _ = FileManager.default.createFile(atPath: ready, contents: nil)
        while true { pause() }
    }
    var fileSystem = FileSystem.posix
    let renameExclusive = fileSystem.renameExclusive
    fileSystem.renameExclusive = { fromFolder, from, toFolder, to in
        // `to` is below the root's descriptor (`.archivist/spare/…`), or a whole path.
        if point == "keep" && to.contains(".archivist/spare/") && !to.contains("/.tmp-") { stop() }
        let result = renameExclusive(fromFolder, from, toFolder, to)
        if point == "claim" && result == 0 && to.contains(".archivist/spare/.tmp-") { stop() }
        return result
    }
    let store = try DiskStore.open(at: root, fileSystem: fileSystem)
    if point == "keep" {
        for i in 0..<300 {
            try store.write(
                Data(repeating: UInt8(truncatingIfNeeded: i), count: 100),
                to: DiskKey(folder: FolderPath(["k"]), name: EntryName(parameter: "\(i)")),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
        }
        try store.clear([FolderPath(["k"])])
        store.waitForTrash()
    } else {
        try store.write(
            Data("new".utf8),
            to: DiskKey(folder: FolderPath(["n"]), name: EntryName(parameter: "x")),
            typeName: "t",
            parameter: nil,
            expiry: nil,
            durability: .none
        )
    }
    fail("spare-stop: the \(point) point was not reached")
}
