import Archivist
import Foundation

/// The crash writer's record: a payload that is a function of its id and of the batch that
/// wrote it, so the test can tell a whole record from a torn or mixed one.
public struct CrashRecord: Codable, Archivable, Identifiable, Sendable {
    /// The record's id (-1: the record carrying the last batch's sequence number).
    public var id: Int
    /// The sequence number of the batch that last wrote the record.
    public var batch: Int
    /// Bytes that depend on ``id`` and ``batch`` only.
    public var payload: Data

    /// The record the writer saves for `id` in batch `batch`.
    public init(id: Int, batch: Int) {
        self.id = id
        self.batch = batch
        payload = Self.payload(id: id, batch: batch)
    }

    /// Whether the payload is exactly what the writer stores for this id and batch.
    public var isIntact: Bool { payload == Self.payload(id: id, batch: batch) }

    private static func payload(id: Int, batch: Int) -> Data {
        let length = (id &* 7919 &+ batch &* 104_729) % 3_000
        return Data((0..<length).map { UInt8(truncatingIfNeeded: id &+ batch &* 31 &+ $0) })
    }
}
