import Testing

@testable import Archivist

/// A key's lock leaves the table when its last user is done: the key is free again for
/// `withLockIfAvailable`, which refuses it only while someone holds it.
@Suite struct KeyLocksReleaseTests {
    @Test func aKeyIsAvailableAgainOnceItsHoldersAreDone() {
        let locks = KeyLocks()
        locks.withLock("shared-caches/a/value") {
            #expect(locks.withLockIfAvailable("shared-caches/a/value") { 1 } == nil, "held: not available")
            #expect(locks.withLockIfAvailable("shared-caches/b/value") { 2 } == 2, "another key is")
        }
        #expect(locks.withLockIfAvailable("shared-caches/a/value") { 3 } == 3, "released: available again")
        locks.withLock("shared-caches/a/value") { locks.withLock("shared-caches/c/value") {} }
        #expect(locks.withLockIfAvailable("shared-caches/a/value") { 4 } == 4)
        #expect(locks.withLockIfAvailable("shared-caches/c/value") { 5 } == 5)
    }
}
