// The seeks behind remembered key indexes (``KeyedReader``, ``CachedKeyedReader``): by an
// index remembered, and by name while noting the index the name was found under.

extension DecoderStorage {
    /// Positions the reader at the value of the field whose key is entry `index` of the key
    /// table in the open record; false if absent. The same reads and errors as ``seek(_:)``
    /// with that entry's name, when the name is in the table once.
    @inline(__always)
    mutating func seek(keyIndex index: Int) throws -> Bool {
        if _slowPath(frame.mode != .keyed) { try openRecord() }
        if frame.cursor < frame.end {
            reader.pos = frame.cursor
            if try reader.index(below: keys.count, "key index") == index { return true }
        }
        reader.pos = frame.fieldsStart
        while reader.pos < frame.end {
            if try reader.index(below: keys.count, "key index") == index { return true }
            try reader.skipValue()
        }
        return false
    }

    /// ``seek(_:)``, which also stores 1 + the index of the key it finds in `slot`.
    mutating func seek(_ key: String, learning slot: UnsafeMutablePointer<Int>) throws -> Bool {
        if _slowPath(frame.mode != .keyed) { try openRecord() }
        if frame.cursor < frame.end {
            reader.pos = frame.cursor
            let index = try reader.index(below: keys.count, "key index")
            if keys.matches(index, key) {
                slot.pointee = index &+ 1
                return true
            }
        }
        reader.pos = frame.fieldsStart
        while reader.pos < frame.end {
            let index = try reader.index(below: keys.count, "key index")
            if keys.matches(index, key) {
                slot.pointee = index &+ 1
                return true
            }
            try reader.skipValue()
        }
        return false
    }
}
