import Foundation

@testable import Archivist

extension Archive {
    /// The root `Data` of `archive` through ``Archive/rootDataRange(in:options:)``, copied or,
    /// with `sharing` and at least ``Archive/minimumSharedCount`` bytes, sharing `archive`'s
    /// buffer, as a cache read shares its file's: for tests of the root `Data` fast path.
    static func rootData(of archive: Data, sharing: Bool, options: ArchiveOptions) -> Data? {
        archive.withUnsafeBytes { raw -> Data? in
            guard let range = rootDataRange(in: raw, options: options) else { return nil }
            guard sharing, range.count >= minimumSharedCount else {
                return Data(bytes: raw.baseAddress! + range.lowerBound, count: range.count)
            }
            let owner = archive
            return Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: raw.baseAddress! + range.lowerBound),
                count: range.count,
                deallocator: .custom { _, _ in withExtendedLifetime(owner) {} }
            )
        }
    }
}
