/// A nested keyed record's bounds and read cursor (a class: decoding containers are copied
/// and their methods are non-mutating).
final class NestedRecord {
    let start: Int
    let fieldsStart: Int
    let end: Int
    var cursor: Int

    init(start: Int, fieldsStart: Int, end: Int) {
        self.start = start
        self.fieldsStart = fieldsStart
        self.end = end
        cursor = fieldsStart
    }
}

extension ArchiveDecoder {
    /// Reads a nested record's header at the reader and returns its bounds.
    func nestedRecord() throws -> NestedRecord {
        let s = storage
        let start = s.pointee.reader.pos
        let tag = try s.pointee.reader.byte()
        guard tag == ArchiveTag.record else {
            throw s.pointee.mismatch(expected: "a keyed container", found: tag, at: start)
        }
        let length = Int(clamping: try s.pointee.reader.fixed(UInt32.self))
        guard length <= s.pointee.reader.remaining else { throw s.pointee.reader.truncated("a keyed container") }
        let end = s.pointee.reader.pos + length
        let saved = s.pointee.reader.end
        s.pointee.reader.end = end
        defer { s.pointee.reader.end = saved }
        _ = try s.pointee.reader.index(below: s.pointee.types.count + 1, "type reference")
        let record = NestedRecord(start: start, fieldsStart: s.pointee.reader.pos, end: end)
        s.pointee.reader.pos = end
        return record
    }

    /// Runs `body` with a nested record standing in for the current frame, and puts the
    /// reader back where it was: a read of a nested record's field may come after the
    /// enclosing value moved past it (an unkeyed container at a value's root leaves the reader
    /// after its array, which is where the value must end).
    func within<R>(_ record: NestedRecord, _ body: () throws -> R) throws -> R {
        let s = storage
        // The record's positions are in the archive's bytes, which may be gone after the decode.
        try s.pointee.checkDecoding()
        let savedFrame = s.pointee.frame
        let savedPos = s.pointee.reader.pos
        let savedEnd = s.pointee.reader.end
        var frame = DecoderStorage.Frame()
        frame.mode = .keyed
        frame.start = record.start
        frame.fieldsStart = record.fieldsStart
        frame.end = record.end
        frame.cursor = record.cursor
        frame.outerEnd = savedEnd
        s.pointee.frame = frame
        s.pointee.reader.end = record.end
        defer {
            record.cursor = s.pointee.frame.cursor
            s.pointee.frame = savedFrame
            s.pointee.reader.pos = savedPos
            s.pointee.reader.end = savedEnd
        }
        return try body()
    }
}
