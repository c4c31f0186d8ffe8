import Archivist

/// The record the `RecordStore` workers (`records-upsert`, `records-mixed`) write, and the
/// multi-process tests read back.
public struct WorkerRecord: Codable, Archivable, Identifiable, Sendable {
    /// The record's id: `<prefix>-<n>` of a worker, or `counter-<n>` shared by all.
    public var id: String
    /// A number the test checks: the step that wrote the record, or a counter's value.
    public var count: Int
    /// Padding, so that the log grows and compactions happen.
    public var payload: String

    /// A record with the given fields.
    public init(id: String, count: Int, payload: String) {
        self.id = id
        self.count = count
        self.payload = payload
    }
}
