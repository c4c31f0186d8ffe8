import ArchivistTestSupport
import Dispatch
import Foundation
import Testing

@testable import Archivist

/// The blocking, `async` and completion-handler forms of `clear` mean the same thing: they
/// return once the folders are renamed into the trash, not after the deletion (which
/// `flush()` waits for). Checked with the store's trash queue held up: a form that waited for
/// the deletion would still be waiting when the test looks.
@Suite struct CacheClearFormsTests {
    enum Form: String, CaseIterable { case blocking, async, completion }

    @Test(arguments: Form.allCases)
    func everyFormReturnsBeforeTheTrashIsDeleted(form: Form) async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            for i in 0..<20 { try await cache.store("value \(i)", for: .apiStrategy, parameter: "\(i)") }
            let before = cache.totalSize
            // Hold up the trash queue until the clear has returned (or, for a form that waits
            // for the deletion, until a generous hang guard runs out).
            let release = DispatchSemaphore(value: 0)
            cache.caches.trash.queue.async { _ = release.wait(timeout: .now() + 20) }
            let freed: Int
            switch form {
            case .blocking:
                let blocking: () throws -> Int = { try cache.clear(.type(.apiStrategy)) }  // not the async overload
                freed = try blocking()
            case .async: freed = try await cache.clear(.type(.apiStrategy))
            case .completion:
                freed = try await withCheckedThrowingContinuation { continuation in
                    cache.clear(.type(.apiStrategy)) { continuation.resume(with: $0) }
                }
            }
            let trash = dir.appendingPathComponent(".archivist/trash")
            #expect(!allPaths(under: trash).isEmpty, "\(form) waited for the deletion")
            release.signal()
            #expect(freed == before)
            #expect(cache.totalSize == 0)
            #expect(try await cache.value(String.self, for: .apiStrategy, parameter: "3") == nil)
            try await cache.flush()
            #expect(allPaths(under: trash).isEmpty)
        }
    }
}
