import Foundation
import Testing

@testable import Archivist

/// `KeyLocks` keys its table by a cheap 64-bit hash of the key's bytes: equal keys must share a
/// lock, and keys that differ anywhere should not (a collision costs only concurrency).
@Suite struct KeyLocksTests {
    @Test func equalKeysHashEquallyAndEveryByteCounts() {
        let path = "/tmp/root/shared-caches/" + MD5.hexDigest(of: "type") + "/" + MD5.hexDigest(of: "parameter")
        #expect(KeyLocks.hash(path) == KeyLocks.hash(String(decoding: Array(path.utf8), as: UTF8.self)))
        var seen: Set<Int> = [KeyLocks.hash(path)]
        var bytes = Array(path.utf8)
        for i in bytes.indices {
            let original = bytes[i]
            bytes[i] ^= 1
            seen.insert(KeyLocks.hash(String(decoding: bytes, as: UTF8.self)))
            bytes[i] = original
        }
        #expect(seen.count == bytes.count + 1)
        // Every length around the 8-byte words, and a zero byte at the end of a short tail.
        let lengths = (0..<20).map { KeyLocks.hash(String(repeating: "a", count: $0)) }
        #expect(Set(lengths).count == lengths.count)
        #expect(KeyLocks.hash("ab") != KeyLocks.hash("ab\u{0}"))
        #expect(KeyLocks.hash("é") != KeyLocks.hash("e\u{301}"))  // bytes, not canonical equivalence
    }

    @Test func holdersOfOneKeyRunOneAtATime() async {
        let locks = KeyLocks()
        let inside = Locked(0)
        let most = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<200 {
                        locks.withLock("/root/key") {
                            let now = inside.withLock {
                                $0 += 1
                                return $0
                            }
                            most.withLock { $0 = max($0, now) }
                            inside.withLock { $0 -= 1 }
                        }
                    }
                }
            }
        }
        #expect(most.withLock { $0 } == 1)
    }
}
