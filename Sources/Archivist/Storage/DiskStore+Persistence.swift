import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeping the saved size index honest across crashes.
///
/// The rule: the marker `.archivist/dirty` reads `D` whenever the disk may be ahead of the
/// saved index. It is set (under the state lock) before the first file change after a save,
/// and set back to `C` only by a save that captured every change, with no change in flight.
/// An open that finds `D`, or no readable index, rebuilds the index by scanning.
///
/// This holds across process crashes. The index and marker are not synced, so after a power
/// loss the index may be stale until a damaged checksum or the next unclean shutdown forces
/// a scan.
extension DiskStore {
    /// Creates the marker if needed and counts a mutation in flight.
    func beginMutation() throws {
        try checkWritable()
        try state.withLock { state in
            if !state.dirty {
                try setMarker(dirty: true)
                state.dirty = true
            }
            state.inFlight += 1
        }
    }

    /// Applies a mutation's index update, ends it, and schedules a save.
    func endMutation(_ update: (inout SizeIndex) -> Void) {
        let schedule = state.withLock { state -> Bool in
            update(&state.index)
            state.inFlight -= 1
            state.generation &+= 1
            if state.persistScheduled { return false }
            state.persistScheduled = true
            return true
        }
        if schedule {
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + persistDelay) { [weak self] in
                self?.persistIndex()
            }
        }
    }

    /// Saves the index now if anything changed since the last save.
    ///
    /// - Throws: ``CacheError`` when the index file cannot be written.
    /// - Complexity: Blocking file I/O, O(n) in entries.
    package func flush() throws {
        try persistIndex(throwing: true)
    }

    /// Saves the index; on success with nothing changed meanwhile, removes the marker.
    func persistIndex() {
        _ = try? persistIndex(throwing: false)
    }

    private func persistIndex(throwing: Bool) throws {
        let (snapshot, generation) = state.withLock { state in
            state.persistScheduled = false
            return (state.dirty ? state.index.snapshot() : nil, state.generation)
        }
        guard let snapshot else { return }
        let bytes = snapshot.serialized()   // outside the lock: O(n), while reads and writes go on
        _ = try bytes.withUnsafeBytes { raw in
            try AtomicFile.write([raw], toPath: indexPath, durability: .none, createFolders: false, fileSystem: fileSystem)
        }
        state.withLock { state in
            if state.generation == generation && state.inFlight == 0 && state.dirty, (try? setMarker(dirty: false)) != nil {
                state.dirty = false
            }
        }
    }

    /// Writes the marker's flag byte.
    private func setMarker(dirty: Bool) throws {
        var flag = dirty ? UInt8(ascii: "D") : UInt8(ascii: "C")
        guard fileSystem.pwrite(markerFD, &flag, 1, 0) == 1 else {
            throw CacheError.posix("write index marker", path: markerPath, errno: errno)
        }
    }

    /// Loads the saved index, or rebuilds it by a scan when the last run left the marker or
    /// the index is missing or damaged; then saves it so the marker goes away.
    func loadOrRebuildIndex() throws {
        var flag: UInt8 = 0
        let unclean = fileSystem.read(markerFD, &flag, 1) == 1 && flag == UInt8(ascii: "D")
        if !unclean, let bytes = try? AtomicFile.read(path: indexPath, fileSystem: fileSystem),
           let index = SizeIndex.deserialize(bytes) {
            state.withLock { $0.index = index }
            return
        }
        let index = try scan()
        state.withLock { state in
            state.index = index
            state.dirty = writeRefusal == nil   // a read-only root keeps the scan in memory
        }
        persistIndex()
    }
}
