import Foundation

@testable import Archivist

extension DiskStore.Entry {
    /// The payload bytes as a `Data` of its own (copied), for tests; the library reads
    /// ``payloadBytes`` or shares them once through `FileBuffer.data(_:)`. Not shared with the
    /// file's buffer: a `Data` sharing it writes into the buffer when it is its storage's only
    /// reference, so a second one (another read of this property) or `payloadBytes` would see
    /// the write.
    var payload: Data { Data(payloadBytes) }
}
