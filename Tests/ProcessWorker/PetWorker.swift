import Archivist
import ArchivistTestSupport
import Foundation

/// `records-pets <folder> <first> <count>`: upserts `PetRecord.numbered(first)` …
/// `PetRecord.numbered(first + count - 1)` (dogs at odd numbers) into the store at `<folder>`,
/// opened with `PetRecord.allowingDogs`.
func recordsPets(_ arguments: [String]) throws {
    let store = try RecordStore<PetRecord>(
        directory: URL(fileURLWithPath: argument(arguments, 0, "folder") { $0 }, isDirectory: true),
        configuration: PetRecord.allowingDogs
    )
    let first = argument(arguments, 1, "first") { Int($0) }
    let count = argument(arguments, 2, "count") { Int($0) }
    for index in first..<(first + count) { try store.upsert(PetRecord.numbered(index)) }
}
