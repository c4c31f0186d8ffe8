import Archivist
import ArchivistTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The mode whose process `IndexSlotTests` kills at a chosen point of a write.

/// `stop-in-write <root> <ready file> <writing|journal>`: writes 10 entries under `<root>`,
/// then starts an 11th and stops — creating the ready file, then waiting to be killed — at
/// the chosen point:
/// - `writing`: its temporary is written, outside the store's lock (where most kills of a
///   writer land);
/// - `journal`: it has been renamed into place, under the lock, before its journal record
///   (the intent word is set).
func stopInWrite(_ arguments: [String]) throws {
    let root = URL(fileURLWithPath: argument(arguments, 0, "root") { $0 }, isDirectory: true)
    let ready = argument(arguments, 1, "ready file") { $0 }
    let point = argument(arguments, 2, "writing|journal") { ["writing", "journal"].contains($0) ? $0 : nil }
    let folder = FolderPath(["entries"])
    let last = DiskKey(folder: folder, name: EntryName(parameter: "last"))
    let lastName = last.name.fileName
    let stop: @Sendable () -> Never = {
        _ = FileManager.default.createFile(atPath: ready, contents: nil)
        while true { pause() }
    }
    var fileSystem = FileSystem.posix
    if point == "journal" {
        let rename = fileSystem.rename
        fileSystem.rename = { from, to in
            let result = rename(from, to)
            if result == 0 && to.hasSuffix("/" + lastName) { stop() }
            return result
        }
    }
    let store = try DiskStore.open(at: root, fileSystem: fileSystem)
    for i in 0..<10 {
        try store.write(
            Data(repeating: UInt8(i), count: 1_000 + i),
            to: DiskKey(folder: folder, name: EntryName(parameter: "\(i)")),
            typeName: "t",
            parameter: nil,
            expiry: nil,
            durability: .none
        )
    }
    let payload = Data(repeating: 0xAB, count: 15_000)
    if point == "writing" {
        _ = try payload.withUnsafeBytes { raw in
            try AtomicFile.prepare(
                [raw],
                toPath: store.path(of: last),
                durability: .none,
                temporaries: store.temporariesPath
            )
        }
        stop()
    }
    try store.write(payload, to: last, typeName: "t", parameter: nil, expiry: nil, durability: .none)
    fail("stop-in-write: the write of the last entry returned")
}
