import Foundation
import Testing

@testable import Archivist

/// `update(id:)` rethrows the body's own error unchanged, as its documentation and
/// `PlistStore.update` say, rather than wrapping it as a `StoreError`.
@Suite struct RecordStoreUpdateErrorTests {
    struct ValidationError: Error, Equatable {
        var reason: String
    }

    @Test func bodyErrorReachesTheCallerAsItselfAndNothingChanges() throws {
        try withTemporaryDirectory { url in
            let store = try RecordStore<Diligence>(directory: url, configuration: .init(durability: .none))
            try store.insert(Diligence(id: 1, breakTimes: 2))
            let thrown = #expect(throws: ValidationError.self) {
                try store.update(id: 1) { record in
                    record.breakTimes = -1
                    throw ValidationError(reason: "negative breaks")
                }
            }
            #expect(thrown == ValidationError(reason: "negative breaks"))
            #expect(store.record(id: 1)?.breakTimes == 2)
            // A store error thrown by a nested write inside the body also stays what it was.
            let nested = #expect(throws: StoreError.self) {
                try store.update(id: 1) { _ in try store.insert(Diligence(id: 1)) }
            }
            #expect(nested?.code == .alreadyExists)
            #expect(try RecordStore<Diligence>(directory: url).record(id: 1)?.breakTimes == 2)
        }
    }
}
