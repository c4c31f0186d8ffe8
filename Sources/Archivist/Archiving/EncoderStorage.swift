import Foundation

/// The encoder's mutable state, kept behind a pointer owned by ``ArchiveEncoder``.
struct EncoderStorage {
    /// What the value being written has written so far.
    enum Mode { case pending, keyed, single }

    /// The frame of the value being written, saved while a nested value is written.
    struct Frame {
        var mode: Mode
        var type: (any Archivable.Type)?
        var lengthOffset: Int
        /// Identifies the frame, so a Codable container can tell it still writes to its value.
        var id = 0
        /// `open.count` when the frame began: nested Codable containers above it belong to it.
        var baseLevel = 0
        /// What this value charged to the depth (more once a Codable conformance took over).
        var weight = 0
    }

    /// A nested container opened through Codable's `nestedContainer`/`nestedUnkeyedContainer`
    /// or `superEncoder`, written inside the current value until something writes to an
    /// outer container or the value ends.
    struct OpenContainer {
        /// `slot`: a `superEncoder` not written yet; `closed`: a slot that got its value.
        enum Kind { case record, array, slot, closed }
        var kind: Kind
        var lengthOffset: Int
        var count = 0
        var id: Int
    }

    var out = ByteBuffer()
    var limits: ArchiveLimits
    var frame = Frame(mode: .single, type: nil, lengthOffset: -1)
    var depth = 0
    var open: [OpenContainer] = []
    var nextID = 1

    var keys = KeyTable()
    /// How `writeEncodable` writes each Codable type it met (see ``CodableTypeKinds``).
    var codableKinds = CodableTypeKinds()
    var typeIndex: [ObjectIdentifier: Int] = [:]
    /// The type table (`..<typeCount`), then, like ``KeyTable``'s keys, the previous
    /// archive's further entries, kept by a reused encoder as the guess for the next one.
    var types: [(id: ObjectIdentifier, name: String, version: Int)] = []
    var typeCount = 0
    /// Object id by instance; the instances are retained so an address can't be reused
    /// by another object while the archive is written.
    var objectIDs: [ObjectIdentifier: Int] = [:]
    /// Offset of each object's definition in the output, or -1 while it is only referenced.
    var objectOffsets: [Int] = []
    var retained: [AnyObject] = []
    /// The path of keys, kept only for ``ArchiveEncoder/codingPath``.
    var path: [String] = []

    init(limits: ArchiveLimits) {
        self.limits = limits
        reserveHeader()
    }

    /// Room for the header, see finish().
    private mutating func reserveHeader() {
        for _ in 0..<(ArchiveFormat.reservedHeaderSize / 4) { out.appendLittleEndian(UInt32(0)) }
    }

    /// Forgets the archive just written (releasing its objects) so the storage can write the
    /// next one. Small tables keep their memory; large ones are freed, so a reused encoder
    /// never holds on to much.
    ///
    /// Tables that are already empty are left alone: emptying an empty array or dictionary
    /// still costs a uniqueness check and a call, and a one-model archive leaves most empty.
    mutating func removeAll() {
        out.removeAll()
        reserveHeader()
        frame = Frame(mode: .single, type: nil, lengthOffset: -1)
        depth = 0
        if !open.isEmpty { open.removeAll(keepingCapacity: true) }
        nextID = 1
        keys.removeAll()
        if !typeIndex.isEmpty { typeIndex = [:] }
        if types.count > KeyTable.linearLimit { types = [] }
        typeCount = 0
        if !objectOffsets.isEmpty {
            let small = objectOffsets.count <= Self.keptObjectCapacity
            objectIDs.removeAll(keepingCapacity: small)
            objectOffsets.removeAll(keepingCapacity: small)
            retained.removeAll(keepingCapacity: small)
        }
        if !path.isEmpty { path.removeAll(keepingCapacity: true) }
    }

    /// Object tables up to this many entries keep their memory in ``removeAll()``.
    static let keptObjectCapacity = 64

    // MARK: Frames

    /// Enters a nested value, charging `weight` to the depth (see ``ArchiveLimits/maxDepth``).
    mutating func enterValue(_ type: (any Archivable.Type)?, weight: Int = ArchiveLimits.levelWeight) throws -> Frame {
        try chargeDepth(weight, type: type)
        let saved = frame
        frame = Frame(mode: .pending, type: type, lengthOffset: -1, id: nextID, baseLevel: open.count, weight: weight)
        nextID &+= 1
        return saved
    }

    mutating func leaveValue(_ saved: Frame) {
        if open.count > frame.baseLevel { open.removeSubrange(frame.baseLevel...) }
        depth -= frame.weight
        frame = saved
    }

    /// Raises the current value's charge to a Codable level's: its containers take about twice
    /// the stack of a hand-written level (see ``ArchiveLimits/maxDepth``).
    mutating func chargeCodableLevel() throws {
        let extra = ArchiveLimits.codableLevelWeight - frame.weight
        guard extra > 0 else { return }
        try chargeDepth(extra, type: frame.type)
        frame.weight += extra
    }

    /// Adds `weight` to the depth, or throws `limitExceeded(.depth)` past the limit.
    mutating func chargeDepth(_ weight: Int, type: (any Archivable.Type)?) throws {
        depth += weight
        if _slowPath(depth > limits.maxDepth) {
            depth -= weight
            throw ArchiveError(
                .limitExceeded(.depth),
                "nesting deeper than maxDepth \(limits.maxDepth) while encoding (a level counts \(ArchiveLimits.levelWeight), a Codable level \(ArchiveLimits.codableLevelWeight))",
                typeName: String(describing: type)
            )
        }
    }

    mutating func finishValue() throws {
        closeContainers(above: frame.baseLevel)
        switch frame.mode {
        case .pending:
            openRecord()
            closeRecord()
        case .keyed:
            closeRecord()
        case .single:
            break
        }
        if _slowPath(out.count > limits.maxTotalBytes) {
            throw ArchiveError(.limitExceeded(.totalBytes), "archive larger than \(limits.maxTotalBytes) bytes")
        }
    }

    mutating func openRecord() {
        out.append(ArchiveTag.record)
        frame.lengthOffset = out.reserveUInt32()
        if let type = frame.type {
            out.appendVarint(typeReference(type))
        } else {
            out.append(0)
        }
        frame.mode = .keyed
    }

    private func closeRecord() {
        out.patchUInt32(UInt32(truncatingIfNeeded: out.count - frame.lengthOffset - 4), at: frame.lengthOffset)
    }

    /// Starts a keyed field: opens the record on the first one and writes the key's index.
    @inline(__always)
    mutating func beginField(_ key: String) throws {
        if _slowPath(frame.mode != .keyed) {
            guard frame.mode == .pending else {
                throw ArchiveError(.invalidValue, "keyed field \"\(key)\" after a single value", codingPath: path)
            }
            openRecord()
        }
        out.appendVarint(intern(key))
    }

    @inline(__always)
    mutating func beginSingleValue() throws {
        guard frame.mode == .pending else {
            throw ArchiveError(
                .invalidValue,
                "a single value after another value or keyed fields",
                codingPath: path
            )
        }
        frame.mode = .single
    }

    @inline(__always)
    mutating func intern(_ key: String) -> Int { keys.intern(key) }

    /// Type table reference: 1 + index of the type's entry (0 means anonymous).
    ///
    /// The few types of a typical archive are found by a scan of `types`; the dictionary is
    /// built only for archives with many types.
    ///
    /// A new entry asks the type for its name and version, also when it takes the place of
    /// the previous archive's entry for the same type.
    mutating func typeReference(_ type: any Archivable.Type) -> Int {
        let id = ObjectIdentifier(type)
        if typeCount <= KeyTable.linearLimit {
            for i in 0..<typeCount where types[i].id == id { return i + 1 }
        } else if let index = typeIndex[id] {
            return index + 1
        }
        let index = typeCount
        let entry = (id: id, name: type.archiveTypeName, version: type.archiveVersion)
        if index < types.count {
            // A kept entry further on may be this type's: drop the guesses so entries stay
            // distinct, keeping the one in place when it is this type's.
            if types[index].id == id {
                types[index] = entry
            } else {
                types.removeSubrange(index...)
                types.append(entry)
            }
        } else {
            types.append(entry)
        }
        typeCount = index + 1
        if typeCount > KeyTable.linearLimit {
            if typeIndex.isEmpty {
                for i in 0..<typeCount { typeIndex[types[i].id] = i }
            } else {
                typeIndex[id] = index
            }
        }
        return index + 1
    }

    // MARK: Containers

    /// Closes nested Codable containers down to `level` entries, innermost first.
    @inline(__always)
    mutating func closeContainers(above level: Int) {
        // Every Codable field write lands here; nearly always there is nothing to close.
        if _fastPath(open.count <= level) { return }
        closeOpenContainers(above: level)
    }

    private mutating func closeOpenContainers(above level: Int) {
        while open.count > level {
            let container = open.removeLast()
            switch container.kind {
            case .record:
                out.patchUInt32(
                    UInt32(truncatingIfNeeded: out.count - container.lengthOffset - 4),
                    at: container.lengthOffset
                )
            case .array:
                out.patchUInt32(
                    UInt32(truncatingIfNeeded: out.count - container.lengthOffset - 4),
                    at: container.lengthOffset
                )
                out.patchUInt32(UInt32(truncatingIfNeeded: container.count), at: container.lengthOffset + 4)
            case .slot:
                out.append(ArchiveTag.null)  // a superEncoder nobody wrote to
            case .closed:
                break
            }
        }
    }

    /// Opens a nested anonymous record or array (or an unwritten slot) and returns its id.
    mutating func pushContainer(_ kind: OpenContainer.Kind) -> Int {
        let id = nextID
        nextID &+= 1
        var offset = -1
        switch kind {
        case .record:
            out.append(ArchiveTag.record)
            offset = out.reserveUInt32()
            out.append(0)
        case .array:
            out.append(ArchiveTag.array)
            offset = out.reserveUInt32()
            _ = out.reserveUInt32()
        case .slot, .closed:
            break
        }
        open.append(OpenContainer(kind: kind, lengthOffset: offset, id: id))
        return id
    }

    /// Writes a container's tag and reserves its length and count slots; returns the
    /// length slot's offset for ``endContainer(_:count:)``.
    mutating func beginContainer(_ tag: UInt8) throws -> Int {
        out.append(tag)
        let lengthOffset = out.reserveUInt32()
        _ = out.reserveUInt32()
        return lengthOffset
    }

    /// Fills in a container's body length and element count (both fixed 4-byte slots, so
    /// nothing has to move once the elements are written).
    mutating func endContainer(_ lengthOffset: Int, count: Int) throws {
        if _slowPath(count > limits.maxElementCount) {
            throw ArchiveError(.limitExceeded(.elementCount), "\(count) elements, limit \(limits.maxElementCount)")
        }
        out.patchUInt32(UInt32(truncatingIfNeeded: out.count - lengthOffset - 4), at: lengthOffset)
        out.patchUInt32(UInt32(truncatingIfNeeded: count), at: lengthOffset + 4)
    }

    // MARK: Objects

    /// Writes the object tag (and returns false, so the caller writes the body) or a
    /// reference to an object already written (and returns true).
    mutating func writeObjectHeader(_ object: AnyObject) throws -> Bool {
        let key = ObjectIdentifier(object)
        if let id = objectIDs[key] {
            if objectOffsets[id] >= 0 {
                out.append(ArchiveTag.reference)
                out.appendVarint(id)
                return true
            }
            objectOffsets[id] = out.count
            out.append(ArchiveTag.object)
            out.appendVarint(id)
            return false
        }
        let id = try newObjectID(object)
        objectOffsets[id] = out.count
        out.append(ArchiveTag.object)
        out.appendVarint(id)
        return false
    }

    mutating func writeConditionalReference(_ object: AnyObject) throws {
        let key = ObjectIdentifier(object)
        let id = try objectIDs[key] ?? newObjectID(object)
        out.append(ArchiveTag.reference)
        out.appendVarint(id)
    }

    private mutating func newObjectID(_ object: AnyObject) throws -> Int {
        let id = objectOffsets.count
        if _slowPath(id >= limits.maxObjectCount) {
            throw ArchiveError(.limitExceeded(.objectCount), "more than \(limits.maxObjectCount) objects")
        }
        objectIDs[ObjectIdentifier(object)] = id
        objectOffsets.append(-1)
        retained.append(object)
        return id
    }

    // MARK: Assembly

    /// Appends the tables, fills in the header and checksum, and hands the bytes over.
    ///
    /// The body was written after ``ArchiveFormat/reservedHeaderSize`` bytes; the version 2
    /// header is shorter (its lengths are varints), so it is written just before the body and
    /// the archive starts there.
    mutating func finish() throws -> Data {
        let reserved = ArchiveFormat.reservedHeaderSize
        let bodyLength = out.count - reserved
        out.appendVarint(typeCount)
        for i in 0..<typeCount {
            out.appendString(types[i].name)
            out.appendVarint(UInt64(bitPattern: Int64(types[i].version)))
        }
        out.appendVarint(keys.count)
        keys.withSerializedKeys { out.append($0) }
        out.appendVarint(objectOffsets.count)
        for offset in objectOffsets {
            // Stored as offset from the body's start + 1; 0 means "never defined" (a dangling
            // conditional reference).
            out.appendVarint(offset < 0 ? 0 : offset - reserved + 1)
        }
        let payload = out.count - reserved
        let headerSize = ArchiveFormat.headerSize(bodyLength: bodyLength, payload: payload)
        let total = headerSize + payload
        if total > limits.maxTotalBytes {
            throw ArchiveError(.limitExceeded(.totalBytes), "archive larger than \(limits.maxTotalBytes) bytes")
        }
        let start = reserved - headerSize
        let base = out.base + start
        _ = ArchiveFormat.storeHeader(
            at: base,
            total: total,
            bodyLength: bodyLength,
            version: out.holdsDecimal ? ArchiveFormat.decimalVersion : ArchiveFormat.version
        )
        let checked = UnsafeRawBufferPointer(
            start: base + ArchiveFormat.fixedHeaderSize,
            count: total - ArchiveFormat.fixedHeaderSize
        )
        base.storeBytes(of: CRC32C.checksum(checked).littleEndian, toByteOffset: 6, as: UInt32.self)
        return out.takeData(droppingFirst: start)
    }
}
