import CArchivistSupport

/// The decoder's mutable state, kept behind a pointer owned by ``ArchiveDecoder``.
struct DecoderStorage {
    enum Mode { case pending, keyed, single }

    /// The value being decoded. Saved while a nested value is decoded.
    struct Frame {
        var mode: Mode = .single
        /// Where the value starts (its tag).
        var start = 0
        /// For a keyed record: where its fields start, where it ends and where the next
        /// field is expected.
        var fieldsStart = 0
        var end = 0
        var cursor = 0
        /// 1 + type table index, or 0 for an anonymous record.
        var typeReference = 0
        var expected: (any Archivable.Type)?
        /// The reader's bound outside this value, restored when it is left.
        var outerEnd = 0
        /// What this value charged to the depth (more once a Codable conformance took over).
        var weight = 0
    }

    enum Slot {
        case absent
        case building
        case done(AnyObject)
    }

    struct TypeEntry {
        var name: String
        var version: Int
        /// The Swift type last found to match this entry, so the name compare runs once.
        var matched: ObjectIdentifier?
    }

    var reader: ByteReader
    var frame = Frame()
    var depth = 0
    var limits: ArchiveLimits
    var bodyEnd = 0
    var keys: ArchivedKeys
    var types: [TypeEntry] = []
    var objectOffsets: [Int] = []
    var objects: [Slot] = []
    /// Reference assignments to run once the whole graph is decoded.
    var deferred: [DeferredReference] = []
    var allowed: [String: any Archivable.Type] = [:]
    /// The type and key tables of the archive read last, byte for byte, while `types` and
    /// `keys` still hold what was read from them; empty when they don't (see
    /// ``readTypesAndKeys(_:options:)``).
    var keptTables: [UInt8] = []
    /// The last type a Codable field asked for that is not ``Archivable`` (type identities
    /// never change, so this outlives the archive).
    var lastNonArchivableType: ObjectIdentifier?
    /// ``lastNonArchivableType`` if it is a ``BackReference`` type, else `nil`.
    var lastBackReferenceType: (any BackReferenceDecoding.Type)?
    /// Keyed containers of the current record by coding-key type, reused by Codable models
    /// (see ``CodableArchiveDecoder/container(keyedBy:)``). They hold the decoder, so
    /// ``ArchiveDecoder/invalidate()`` empties this. A key type seen once is noted with
    /// `learnsKeys` false and no container; from the second model on, `container` is a
    /// `KeyedContainerCache<KeyedDecodingContainer<Key>>` whose reader remembers key indexes.
    var keyedContainers: [(key: ObjectIdentifier, learnsKeys: Bool, container: AnyObject?)] = []
    /// The most keyed containers kept: a few model types per archive.
    static let keyedContainerLimit = 8
    /// The word that tells values referring to this decoder's state without holding it (the
    /// ``CachedKeyedReader``s) whether the decode that made them still runs: it holds ``epoch``
    /// during a decode and moves past it when the decode ends (``endEpoch()``). From
    /// ``DecoderEpochs``, given back when the decoder is freed.
    let epochWord: UnsafeMutablePointer<UInt64>
    /// What ``epochWord`` holds (only this decoder writes it).
    var epoch: UInt64 = 0
    /// Whether a value was handed ``epoch`` during this decode.
    var epochUsed = false
    /// Whether a decode runs: set when an archive is loaded, cleared by
    /// ``ArchiveDecoder/invalidate()``. A container that saved positions in the archive (a
    /// nested keyed record, an unkeyed container) checks it before moving the reader there:
    /// once the decode ended, the archive's bytes may be freed. (Such a container holds the
    /// decoder, so the decoder never reads another archive while it exists.)
    var decoding = false

    /// Checks the header and checksum and reads the tables; the reader is left at the root.
    init(bytes: UnsafeRawBufferPointer, options: ArchiveOptions) throws {
        let header = try ArchiveHeader(parsing: bytes)
        // A non-empty buffer: the header parsed.
        let base = bytes.baseAddress.unsafelyUnwrapped
        limits = options.limits
        // Taken after the last throw before `load`, which gives it back if it throws.
        epochWord = DecoderEpochs.take()
        epoch = archivist_atomic_load_u64(epochWord)
        keys = ArchivedKeys(base: base)
        reader = ByteReader(base: base, start: 0, end: 0)
        do {
            try load(bytes, header: header, options: options)
        } catch {
            // No decoder will own the word: give it back.
            DecoderEpochs.recycle(epochWord)
            throw error
        }
    }

    /// Makes this storage read another archive, as ``init(bytes:options:)`` would, keeping
    /// the memory of its tables.
    mutating func reload(bytes: UnsafeRawBufferPointer, options: ArchiveOptions) throws {
        let header = try ArchiveHeader(parsing: bytes)
        let base = bytes.baseAddress.unsafelyUnwrapped
        limits = options.limits
        if !objectOffsets.isEmpty { objectOffsets.removeAll(keepingCapacity: true) }
        if !objects.isEmpty { objects.removeAll(keepingCapacity: true) }
        frame = Frame()
        depth = 0
        reader = ByteReader(base: base, start: 0, end: 0)
        try load(bytes, header: header, options: options)
    }

    /// Forgets the archive just read (releasing its objects); large tables give back their memory.
    /// Type and key tables that are kept (``keptTables``) stay for the next archive.
    mutating func removeAll() {
        if !objectOffsets.isEmpty {
            let small = objects.count <= Self.keptObjectCapacity
            objects.removeAll(keepingCapacity: small)
            objectOffsets.removeAll(keepingCapacity: small)
        }
        if keptTables.isEmpty {
            types.removeAll(keepingCapacity: types.count <= KeyTable.linearLimit)
            keys.removeAll(base: reader.base)
        }
        if !deferred.isEmpty { deferred.removeAll() }
        if !allowed.isEmpty { allowed = [:] }
        frame = Frame()
        reader = ByteReader(base: reader.base, start: 0, end: 0)
    }

    /// Object tables up to this many entries keep their memory in ``removeAll()``.
    static let keptObjectCapacity = 64

    private mutating func load(_ bytes: UnsafeRawBufferPointer, header: ArchiveHeader, options: ArchiveOptions) throws {
        if !options.allowedTypes.isEmpty {
            var allowed: [String: any Archivable.Type] = [:]
            for type in options.allowedTypes {
                allowed[type.archiveTypeName] = type
                for name in type.formerArchiveTypeNames { allowed[name] = type }
            }
            self.allowed = allowed
        } else if !allowed.isEmpty {
            allowed = [:]
        }
        let count = bytes.count
        guard count <= limits.maxTotalBytes else {
            throw ArchiveError(.limitExceeded(.totalBytes), "\(count) bytes, limit \(limits.maxTotalBytes)")
        }
        let base = bytes.baseAddress.unsafelyUnwrapped
        if options.verifiesChecksum {
            let sum = header.checksum(of: bytes)
            guard sum == header.storedChecksum else {
                throw ArchiveError(
                    .checksumMismatch,
                    "CRC32C \(sum) but the header says \(header.storedChecksum)",
                    offset: header.checksumStart == ArchiveFormat.version1HeaderSize ? 24 : 6
                )
            }
        }
        let bodyStart = header.bodyStart
        bodyEnd = header.tablesOffset
        var tables = ByteReader(base: base, start: bodyEnd, end: count)
        try readTypesAndKeys(&tables, options: options)
        let objectCount = try tables.index(below: tables.remaining + 1, "object count")
        guard objectCount <= limits.maxObjectCount else {
            throw ArchiveError(.limitExceeded(.objectCount), "\(objectCount) objects, limit \(limits.maxObjectCount)")
        }
        objectOffsets.reserveCapacity(objectCount)
        let offsetBase = header.version == 1 ? 0 : bodyStart
        for _ in 0..<objectCount {
            // Version 1 stores offsets from the archive's start, version 2 from the body's.
            let stored = try tables.index(below: bodyEnd - offsetBase + 1, "object offset")
            guard stored == 0 || stored - 1 + offsetBase >= bodyStart else {
                throw ArchiveError(.corrupt, "object offset \(stored - 1) inside the header", offset: tables.pos)
            }
            objectOffsets.append(stored == 0 ? -1 : stored - 1 + offsetBase)
        }
        guard tables.pos == count else {
            throw ArchiveError(.corrupt, "\(count - tables.pos) unread bytes after the tables", offset: tables.pos)
        }
        if objectCount > 0 { objects.append(contentsOf: repeatElement(.absent, count: objectCount)) }
        reader = ByteReader(base: base, start: bodyStart, end: bodyEnd)
        decoding = true
    }

    /// Reads the type and key tables at `tables`, or keeps the ones read from the previous
    /// archive when these are the same bytes (a reused decoder reading the next archive of
    /// the same model): the same bytes pass the same checks and give the same tables, so
    /// one compare replaces a string per type and a UTF-8 check per key.
    ///
    /// Tables read with `renamedTypes` are not kept (their names depend on the options), nor
    /// tables over ``keptTablesLimit`` bytes.
    private mutating func readTypesAndKeys(_ tables: inout ByteReader, options: ArchiveOptions) throws {
        let start = tables.base + tables.pos
        let renames = !options.renamedTypes.isEmpty
        if !keptTables.isEmpty, !renames, keptTables.count <= tables.remaining,
            keptTables.withUnsafeBytes({ Bytewise.equal($0.baseAddress, start, count: $0.count) })
        {
            keys.rebase(start)
            tables.pos += keptTables.count
            return
        }
        keptTables.removeAll(keepingCapacity: true)
        types.removeAll(keepingCapacity: true)
        keys.removeAll(base: start)
        let typeCount = try tables.index(below: tables.remaining + 1, "type count")
        types.reserveCapacity(typeCount)
        for _ in 0..<typeCount {
            var name = try tables.string()
            let version = Int(truncatingIfNeeded: Int64(bitPattern: try tables.varint()))
            if renames, let renamed = options.renamedTypes[name] { name = renamed }
            types.append(TypeEntry(name: name, version: version, matched: nil))
        }
        let keyCount = try tables.index(below: tables.remaining + 1, "key count")
        keys.reserveCapacity(keyCount)
        for _ in 0..<keyCount { try keys.append(from: &tables) }
        let length = tables.base + tables.pos - start
        if !renames, length <= Self.keptTablesLimit {
            keptTables.append(contentsOf: UnsafeRawBufferPointer(start: start, count: length))
        }
    }

    /// Type and key tables up to this many bytes are kept for the next archive.
    static let keptTablesLimit = 1_024

    // MARK: Epochs

    /// The word and the value it holds while this decode runs, for a value that refers to this
    /// decoder (or to what the decode keeps alive) without holding it.
    @inline(__always)
    mutating func currentEpoch() -> (word: UnsafePointer<UInt64>, epoch: UInt64) {
        epochUsed = true
        return (UnsafePointer(epochWord), epoch)
    }

    /// Ends the decode for every value handed ``currentEpoch()`` (they throw from now on), then
    /// drops the cached containers (which hold this decoder, and the readers the
    /// ``CachedKeyedReader``s refer to). One atomic add, only after a decode that used the epoch.
    mutating func endEpoch() {
        if epochUsed {
            epoch = archivist_atomic_add_u64(epochWord, 1)
            epochUsed = false
        }
        if !keyedContainers.isEmpty { keyedContainers.removeAll(keepingCapacity: true) }
    }

    /// Throws unless a decode runs (``decoding``): for a container that saved positions in the
    /// archive, used after its decode ended.
    @inline(__always)
    func checkDecoding() throws {
        if _slowPath(!decoding) { throw Self.usedAfterDecode() }
    }

    @inline(never)
    private static func usedAfterDecode() -> ArchiveError {
        ArchiveError(.invalidValue, "a decoding container used after the decode that made it ended")
    }

    // MARK: Frames

    /// Enters a nested value, charging `weight` to the depth (see ``ArchiveLimits/maxDepth``).
    @inline(__always)
    mutating func enterValue(
        _ expected: (any Archivable.Type)?,
        weight: Int = ArchiveLimits.levelWeight
    ) throws -> Frame {
        try chargeDepth(weight)
        let saved = frame
        frame = Frame(mode: .pending, start: reader.pos, expected: expected, outerEnd: reader.end, weight: weight)
        return saved
    }

    /// Moves past whatever of the value `init(from:)` left unread.
    mutating func finishValue() throws {
        switch frame.mode {
        case .pending:
            reader.pos = frame.start
            try reader.skipValue()
        case .keyed:
            reader.pos = frame.end
        case .single:
            break
        }
    }

    /// Restores the enclosing frame (also after an error, so a `try?` in `init(from:)` leaves
    /// the decoder usable).
    mutating func leaveValue(_ saved: Frame) {
        reader.end = frame.outerEnd
        depth -= frame.weight
        frame = saved
    }

    /// Raises the current value's charge to a Codable level's: its containers take about twice
    /// the stack of a hand-written level (see ``ArchiveLimits/maxDepth``).
    @inline(__always)
    mutating func chargeCodableLevel() throws {
        let extra = ArchiveLimits.codableLevelWeight - frame.weight
        guard extra > 0 else { return }
        try chargeDepth(extra)
        frame.weight += extra
    }

    /// Adds `weight` to the depth, or throws `limitExceeded(.depth)` past the limit. Inlined
    /// (twice per decoded model), the error out of line.
    @inline(__always)
    mutating func chargeDepth(_ weight: Int) throws {
        depth += weight
        if _slowPath(depth > limits.maxDepth) {
            depth -= weight
            throw depthExceeded()
        }
    }

    @inline(never)
    private func depthExceeded() -> ArchiveError {
        ArchiveError(
            .limitExceeded(.depth),
            "nesting deeper than maxDepth \(limits.maxDepth) while decoding (a level counts \(ArchiveLimits.levelWeight), a Codable level \(ArchiveLimits.codableLevelWeight))",
            offset: reader.pos
        )
    }

    /// Opens the pending value as a keyed record, checking its type against the expected one.
    mutating func openRecord() throws {
        guard frame.mode == .pending else {
            if frame.mode == .keyed { return }
            throw ArchiveError(.invalidValue, "keyed access after a single value was read", offset: reader.pos)
        }
        reader.pos = frame.start
        let tag = try reader.byte()
        guard tag == ArchiveTag.record else {
            throw mismatch(expected: "a keyed record", found: tag, at: frame.start)
        }
        let length = Int(clamping: try reader.fixed(UInt32.self))
        guard length <= reader.remaining else { throw reader.truncated("a keyed record") }
        let end = reader.pos + length
        reader.end = end
        frame.end = end
        frame.mode = .keyed
        frame.typeReference = try reader.index(below: types.count + 1, "type reference")
        frame.fieldsStart = reader.pos
        frame.cursor = reader.pos
        if frame.typeReference != 0, let expected = frame.expected {
            try checkType(expected, reference: frame.typeReference)
        }
    }

    /// Whether the type table entry `reference` names `type` (or one of its former names).
    /// Inlined: after the first object of a type, one compare.
    @inline(__always)
    mutating func typeMatches(_ type: any Archivable.Type, reference: Int) -> Bool {
        if types[reference - 1].matched == ObjectIdentifier(type) { return true }
        return typeNameMatches(type, reference: reference)
    }

    /// ``typeMatches(_:reference:)`` by name, remembering a match.
    @inline(never)
    private mutating func typeNameMatches(_ type: any Archivable.Type, reference: Int) -> Bool {
        let id = ObjectIdentifier(type)
        let name = types[reference - 1].name
        guard name == type.archiveTypeName || type.formerArchiveTypeNames.contains(name) else { return false }
        types[reference - 1].matched = id
        return true
    }

    mutating func checkType(_ type: any Archivable.Type, reference: Int) throws {
        guard typeMatches(type, reference: reference) else {
            throw ArchiveError(
                .typeMismatch,
                "archive holds \(types[reference - 1].name) where \(type.archiveTypeName) was expected",
                typeName: types[reference - 1].name,
                offset: frame.start
            )
        }
    }

    func mismatch(expected: String, found tag: UInt8, at offset: Int) -> ArchiveError {
        ArchiveError(.typeMismatch, "expected \(expected), found \(ArchiveTag.name(tag))", offset: offset)
    }

    /// Positions the reader at the value of `key` in the open record; false if absent.
    @inline(__always)
    mutating func seek(_ key: String) throws -> Bool {
        if _slowPath(frame.mode != .keyed) { try openRecord() }
        if frame.cursor < frame.end {
            reader.pos = frame.cursor
            let index = try reader.index(below: keys.count, "key index")
            if keys.matches(index, key) { return true }
        }
        return try scan(for: key)
    }

    private mutating func scan(for key: String) throws -> Bool {
        reader.pos = frame.fieldsStart
        while reader.pos < frame.end {
            let index = try reader.index(below: keys.count, "key index")
            if keys.matches(index, key) { return true }
            try reader.skipValue()
        }
        return false
    }

    /// Call after reading a field's value: the next field is probably the one after it.
    @inline(__always)
    mutating func fieldDone() { frame.cursor = reader.pos }

    mutating func allKeys() throws -> [String] {
        try openRecord()
        var result: [String] = []
        let saved = reader.pos
        reader.pos = frame.fieldsStart
        while reader.pos < frame.end {
            result.append(keys.string(try reader.index(below: keys.count, "key index")))
            try reader.skipValue()
        }
        reader.pos = saved
        return result
    }

    /// The tag of the value being decoded while nothing of it has been read (`nil` after
    /// that, or when the reader holds no byte there): for a type that reads either of two
    /// encodings of itself.
    func pendingValueTag() -> UInt8? {
        guard frame.mode == .pending, frame.start >= 0, frame.start < reader.end else { return nil }
        return reader.base.load(fromByteOffset: frame.start, as: UInt8.self)
    }

    @inline(__always)
    mutating func beginSingleValue() throws {
        guard frame.mode == .pending else {
            throw ArchiveError(.invalidValue, "a second single value, or one after keyed access", offset: reader.pos)
        }
        frame.mode = .single
        reader.pos = frame.start
    }

    // MARK: Containers

    /// Reads a container header; returns its element count and end, and bounds the reader.
    mutating func openContainer(
        _ tag: UInt8,
        _ what: String,
        minimumElementSize: Int
    ) throws -> (count: Int, end: Int, outerEnd: Int) {
        let start = reader.pos
        let found = try reader.byte()
        guard found == tag else { throw mismatch(expected: what, found: found, at: start) }
        let length = Int(clamping: try reader.fixed(UInt32.self))
        guard length >= 4, length <= reader.remaining else { throw reader.truncated(what) }
        let end = reader.pos + length
        let count = Int(clamping: try reader.fixed(UInt32.self))
        guard count <= limits.maxElementCount else {
            throw ArchiveError(
                .limitExceeded(.elementCount),
                "\(count) elements, limit \(limits.maxElementCount)",
                offset: start
            )
        }
        // Before anything is reserved for the elements: a count the bytes left cannot hold
        // would otherwise cost an allocation of up to `maxElementCount` elements. Divided, not
        // multiplied, so that a raised limit cannot overflow a 32-bit `Int`.
        guard count <= (end - reader.pos) / max(1, minimumElementSize) else {
            throw ArchiveError(.corrupt, "\(what) claims \(count) elements in \(end - reader.pos) bytes", offset: start)
        }
        let outerEnd = reader.end
        reader.end = end
        return (count, end, outerEnd)
    }

    mutating func closeContainer(end: Int, outerEnd: Int, _ what: String) throws {
        guard reader.pos == end else {
            throw ArchiveError(.corrupt, "\(end - reader.pos) stray bytes at the end of \(what)", offset: reader.pos)
        }
        reader.end = outerEnd
    }
}
