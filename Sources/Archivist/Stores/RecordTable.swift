/// The records of a ``RecordStore`` in memory, with the order they were last written in.
struct RecordTable<Record: Identifiable> {
    private var entries: [Record.ID: (record: Record, sequence: Int)] = [:]
    /// Writes in order; an entry is superseded when its record was written again or deleted.
    private var order: [(sequence: Int, id: Record.ID)] = []
    private var nextSequence = 0
    /// The log generation the on-disk snapshot includes.
    var generation: UInt64 = 0
    /// The size of the on-disk snapshot, which the log must outgrow before a compaction.
    var snapshotBytes = 0

    var count: Int { entries.count }

    /// An empty table.
    init() {}

    /// An empty table whose write sequence numbers continue after `last`, so that a table
    /// reloaded from disk never reuses the sequence number of a write in the table it replaces.
    init(sequencesAfter last: Int) { nextSequence = last + 1 }

    /// The sequence number of the latest write (or one less than the next).
    var lastSequence: Int { nextSequence - 1 }

    /// The sequence number of the write that last stored the record with identifier `id`.
    func sequence(of id: Record.ID) -> Int? { entries[id]?.sequence }

    func record(id: Record.ID) -> Record? { entries[id]?.record }

    mutating func upsert(_ record: Record) {
        let sequence = nextSequence
        nextSequence += 1
        entries[record.id] = (record, sequence)
        order.append((sequence, record.id))
        if order.count > 2 * entries.count + 64 { dropSupersededOrder() }
    }

    @discardableResult
    mutating func delete(id: Record.ID) -> Bool {
        entries.removeValue(forKey: id) != nil
    }

    mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
    }

    mutating func apply<Batch: Sequence, IDs: Sequence>(upserts: Batch, deletes: IDs)
    where Batch.Element == Record, IDs.Element == Record.ID {
        for record in upserts { upsert(record) }
        for id in deletes { delete(id: id) }
    }

    private func isCurrent(_ write: (sequence: Int, id: Record.ID)) -> Bool {
        entries[write.id]?.sequence == write.sequence
    }

    func inWriteOrder() -> [Record] {
        var result: [Record] = []
        result.reserveCapacity(entries.count)
        for write in order where isCurrent(write) {
            if let record = entries[write.id]?.record { result.append(record) }
        }
        return result
    }

    func latest(_ n: Int) -> [Record] {
        var result: [Record] = []
        var index = order.count - 1
        while result.count < n && index >= 0 {
            let write = order[index]
            if isCurrent(write), let record = entries[write.id]?.record { result.append(record) }
            index -= 1
        }
        return result
    }

    private mutating func dropSupersededOrder() {
        order = order.filter(isCurrent)
    }
}

// A value of sendable parts: the records and their identifiers.
extension RecordTable: Sendable where Record: Sendable, Record.ID: Sendable {}
