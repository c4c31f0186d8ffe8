/// Changes to a ``RecordStore`` applied together: all of them or none.
///
/// ```swift
/// var batch = RecordBatch<Task>()
/// batch.upsert(newTask)
/// batch.delete(id: oldTask.id)
/// try store.save(batch)
/// ```
public struct RecordBatch<Record: Archivable & Identifiable & Sendable>: Sendable
where Record.ID: Archivable & Sendable {
    /// Records to insert or replace, in order.
    public var upserts: [Record] = []
    /// Identifiers to delete, applied after the upserts.
    public var deletes: [Record.ID] = []

    /// An empty batch.
    public init() {}

    /// A batch that upserts `records`.
    public init(upserting records: [Record]) { upserts = records }

    /// Whether the batch changes nothing.
    public var isEmpty: Bool { upserts.isEmpty && deletes.isEmpty }

    /// Adds a record to insert or replace.
    public mutating func upsert(_ record: Record) { upserts.append(record) }

    /// Adds an identifier to delete (deleting a missing record is not an error).
    public mutating func delete(id: Record.ID) { deletes.append(id) }
}

extension RecordBatch: Archivable {
    /// `RecordBatch`, whatever the record type is called, so that renaming the record type
    /// (with ``Archivable/formerArchiveTypeNames`` or ``ArchiveOptions/renamedTypes``) keeps
    /// every change-log entry readable.
    public static var archiveTypeName: String { "RecordBatch" }

    /// The names change logs written before version 2 of the log format used: the generic
    /// default `RecordBatch<Name>`, for the record type's Swift name, its archive name and
    /// each of its former archive names.
    public static var formerArchiveTypeNames: [String] {
        var names = [String(describing: Record.self), Record.archiveTypeName] + Record.formerArchiveTypeNames
        names = names.map(legacyName(wrapping:))
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// The name a change-log entry had when the record type was archived as `recordTypeName`
    /// (before the batch had a fixed name).
    static func legacyName(wrapping recordTypeName: String) -> String { "RecordBatch<\(recordTypeName)>" }

    /// `options` with each of its ``ArchiveOptions/renamedTypes`` also applied to the batches
    /// of old change logs, whose names embed the record type's old name.
    static func decodingOptions(_ options: ArchiveOptions) -> ArchiveOptions {
        var extended = options
        for old in options.renamedTypes.keys where extended.renamedTypes[legacyName(wrapping: old)] == nil {
            extended.renamedTypes[legacyName(wrapping: old)] = archiveTypeName
        }
        return extended
    }

    /// Writes the upserts and deletes (one change-log entry).
    public func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(upserts, forKey: "upserts")
        try archive.encode(deletes, forKey: "deletes")
    }

    /// Reads a change-log entry.
    public init(from archive: ArchiveDecoder) throws {
        upserts = try archive.decode([Record].self, forKey: "upserts")
        deletes = try archive.decode([Record.ID].self, forKey: "deletes")
    }
}

/// What a ``RecordStore`` holds on disk besides its change log: every record in write order,
/// and the log generation the snapshot includes.
struct RecordSnapshot<Record: Archivable & Identifiable & Sendable>: Archivable where Record.ID: Archivable & Sendable {
    static var archiveTypeName: String { "RecordSnapshot" }
    var generation: UInt64
    var records: [Record]

    init(generation: UInt64, records: [Record]) {
        self.generation = generation
        self.records = records
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(generation, forKey: "generation")
        try archive.encode(records, forKey: "records")
    }

    init(from archive: ArchiveDecoder) throws {
        generation = try archive.decode(UInt64.self, forKey: "generation")
        records = try archive.decode([Record].self, forKey: "records")
    }
}
