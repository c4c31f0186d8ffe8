#if canImport(Observation)
import Foundation
import Observation
import Testing
@testable import Archivist

/// `ObservedRecords` evaluates its query again after changes from this process and from
/// another opener of the folder (which these stores treat as another process), and goes away
/// when released.
@Suite struct ObservedRecordsTests {
    private let configuration = RecordStore<Diligence>.Configuration(durability: .none)

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func recordsFollowAnotherOpenersAndThisProcesssWrites() async throws {
        let folder = try ScratchFolder()
        let store = try RecordStore<Diligence>(directory: folder.url, configuration: configuration)
        let other = try RecordStore<Diligence>(directory: folder.url, configuration: configuration)
        try store.upsert(Diligence(id: 1))
        try store.upsert(Diligence(id: 2))
        let odd = ObservedRecords(
            store,
            where: { $0.id % 2 == 1 },
            sortedBy: { $0.id > $1.id },
            limit: 2,
            pollingInterval: .milliseconds(100)
        )
        let all = ObservedRecords(store, pollingInterval: .milliseconds(100))
        #expect(odd.records.map(\.id) == [1])
        #expect(all.records.map(\.id) == [1, 2])

        try other.upsert(Diligence(id: 3))
        try other.upsert(Diligence(id: 4))
        #expect(await eventually { odd.records.map(\.id) == [3, 1] })
        #expect(await eventually { all.records.map(\.id) == [1, 2, 3, 4] })

        try store.upsert(Diligence(id: 5))
        #expect(await eventually { odd.records.map(\.id) == [5, 3] })
        _ = try store.delete(id: 5)
        #expect(await eventually { odd.records.map(\.id) == [3, 1] })
        try other.removeAll()
        #expect(await eventually { odd.records.isEmpty && all.records.isEmpty })
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func observationTrackingFiresOnAnotherOpenersWrite() async throws {
        let folder = try ScratchFolder()
        let store = try RecordStore<Diligence>(directory: folder.url, configuration: configuration)
        let model = ObservedRecords(store, pollingInterval: .milliseconds(100))
        let fired = Locked(false)
        withObservationTracking {
            _ = model.records
        } onChange: {
            fired.withLock { $0 = true }
        }

        let other = try RecordStore<Diligence>(directory: folder.url, configuration: configuration)
        try other.upsert(Diligence(id: 8))
        #expect(await eventually { fired.withLock { $0 } })
        #expect(await eventually { model.records.map(\.id) == [8] })
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func aReleasedModelIsDeallocatedAndStopsObserving() async throws {
        let folder = try ScratchFolder()
        let store = try RecordStore<Diligence>(directory: folder.url, configuration: configuration)
        let streams = { store.observers.withLock { $0.continuations.count } }
        weak var released: ObservedRecords<Diligence>?
        do {
            let model = ObservedRecords(store, pollingInterval: .milliseconds(100))
            released = model
            try store.upsert(Diligence(id: 1))
            #expect(await eventually { model.records.count == 1 })  // the observing task has run
            #expect(streams() == 1)
        }
        #expect(await eventually { released == nil }, "the observing task does not keep the model")
        #expect(await eventually { streams() == 0 }, "deinit ends the change stream")
        try store.upsert(Diligence(id: 2))  // nobody left to tell
        #expect(store.count == 2)
    }
}
#endif
