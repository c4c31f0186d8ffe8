import Foundation
import Testing

@testable import Archivist

/// `changes()` reports this process's writes and, once read, other processes'.
@Suite(.timeLimit(.minutes(20))) struct RecordStoreChangesTests {
    private let configuration = RecordStore<Diligence>.Configuration(durability: .none)

    @Test func ownWritesAndOtherOpenersWritesArrive() async throws {
        try await withTemporaryDirectory { url in
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            let other = try RecordStore<Diligence>(directory: url, configuration: configuration)
            var changes = store.changes(pollingInterval: nil).makeAsyncIterator()
            try store.upsert(Diligence(id: 1))
            let own = try #require(await changes.next())
            #expect(own.upserted == [1] && !own.isFromAnotherProcess && !own.isReload)

            try other.upsert(Diligence(id: 2))
            var batch = RecordBatch<Diligence>()
            batch.delete(id: 1)
            try await other.save(batch)
            try store.refresh()
            let first = try #require(await changes.next())
            let second = try #require(await changes.next())
            #expect(first.upserted == [2] && first.isFromAnotherProcess)
            #expect(second.deleted == [1] && second.isFromAnotherProcess)

            try other.compact()
            try store.refresh()
            let reload = try #require(await changes.next())
            #expect(reload.isReload && reload.isFromAnotherProcess)
            #expect(store.all().map(\.id) == [2])
        }
    }

    @Test func noPollRunsByDefaultWhereTheSignalIsEstablished() throws {
        try withTemporaryDirectory { url in
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            let signalled = store.changes()
            #expect(store.runningPolls == 0)
            // As if the system refused the signal.
            let unsignalled = store.changes(pollingInterval: nil, observingSignal: false)
            #expect(store.runningPolls == 1)
            withExtendedLifetime((signalled, unsignalled)) {}
        }
    }

    /// An explicit interval polls besides the signal: here the only way the change arrives.
    @Test func pollingPicksUpAnotherOpenersWriteWithoutAWriteHere() async throws {
        try await withTemporaryDirectory { url in
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            let other = try RecordStore<Diligence>(directory: url, configuration: configuration)
            let changes = store.changes(pollingInterval: .milliseconds(10), observingSignal: false)
            #expect(store.runningPolls == 1)
            try other.upsert(Diligence(id: 5))
            for await change in changes where change.upserted.contains(5) {
                #expect(change.isFromAnotherProcess)
                break
            }
            #expect(store.contains(id: 5))
        }
    }
}
