import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeping the saved size index honest across crashes.
///
/// The rule: the marker `.archivist/dirty` exists whenever the disk may be ahead of the saved
/// index. It is created (under the state lock) before the first file change after a save, and
/// removed only by a save that captured every change, with no change in flight. An open that
/// finds the marker, or no readable index, rebuilds the index by scanning.
extension DiskStore {
    /// Creates the marker if needed and counts a mutation in flight.
    func beginMutation() throws {
        try state.withLock { state in
            if !state.dirty {
                let fd = fileSystem.open(markerPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw CacheError.posix("create index marker", path: markerPath, errno: errno) }
                _ = fileSystem.close(fd)
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
        let (bytes, generation, dirty) = state.withLock { state in
            state.persistScheduled = false
            return (state.dirty ? state.index.serialized() : [], state.generation, state.dirty)
        }
        guard dirty else { return }
        _ = try bytes.withUnsafeBytes { raw in
            try AtomicFile.write([raw], toPath: indexPath, durability: .file, createFolders: false, fileSystem: fileSystem)
        }
        state.withLock { state in
            if state.generation == generation && state.inFlight == 0 && state.dirty {
                _ = fileSystem.unlink(markerPath)
                state.dirty = false
            }
        }
    }

    /// Loads the saved index, or rebuilds it by a scan when the last run left the marker or
    /// the index is missing or damaged; then saves it so the marker goes away.
    func loadOrRebuildIndex() throws {
        let marker = fileSystem.open(markerPath, O_RDONLY | O_CLOEXEC, 0)
        if marker >= 0 {
            _ = fileSystem.close(marker)
        } else if let bytes = try? AtomicFile.read(path: indexPath, fileSystem: fileSystem),
                  let index = SizeIndex.deserialize(bytes) {
            state.withLock { $0.index = index }
            return
        }
        let index = try scan()
        state.withLock { state in
            state.index = index
            state.dirty = true
        }
        persistIndex()
    }
}
