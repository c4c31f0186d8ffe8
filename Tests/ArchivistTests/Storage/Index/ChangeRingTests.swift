import Testing

@testable import Archivist

/// The change ring keeps the last ``DiskStore/ChangeRing/capacity`` changes in order, however
/// often it wrapped, and numbers them without gaps.
@Suite struct ChangeRingTests {
    /// A change told apart by its origin.
    static func change(_ number: Int) -> DiskStore.StoreChange {
        DiskStore.StoreChange(.clear(FolderPath(["f"])), origin: UInt(number), fromOtherProcess: false)
    }

    @Test func itKeepsTheLastChangesInOrderAcrossWraps() {
        let capacity = PersistentIndex.ChangeRing.capacity
        var ring = PersistentIndex.ChangeRing()
        #expect(ring.items(from: 0).isEmpty)
        for count in 1...(3 * capacity + 17) {
            ring.append(Self.change(count - 1))
            #expect(ring.next == UInt64(count))
            #expect(ring.first == UInt64(max(0, count - capacity)))
            if count % 97 == 0 || count == capacity || count == capacity + 1 {
                let kept = ring.items(from: ring.first).map(\.origin)
                #expect(kept == Array(Int(ring.first)..<count).map(UInt.init), "after \(count)")
                let tail = ring.items(from: UInt64(count - 3)).map(\.origin)
                #expect(tail == [count - 3, count - 2, count - 1].map(UInt.init), "after \(count)")
                #expect(ring.items(from: ring.next).isEmpty)
            }
        }
    }
}
