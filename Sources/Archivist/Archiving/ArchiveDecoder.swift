/// Reads values back from a native archive; handed to ``Archivable/init(from:)``.
///
/// Read each field by key, like `NSCoder.decodeObject(of:forKey:)`. Keys the archive has but
/// the type no longer reads are ignored; a key the archive lacks throws for `decode(_:forKey:)`
/// and gives `nil` for `decodeIfPresent(_:forKey:)`, so fields can be added and removed.
///
/// <!-- snippet: member Profile -->
/// ```swift
/// init(from archive: ArchiveDecoder) throws {
///     name = try archive.decode(String.self, forKey: "name")
///     nickname = try archive.decodeIfPresent(String.self, forKey: "nickname")
///     if archive.version < 2 {                       // migrate archives of version 0 and 1
///         tags = []
///     } else {
///         tags = try archive.decode([String].self, forKey: "tags")
///     }
/// }
/// ```
///
/// A decoder is created by ``Archive/decode(_:from:options:)`` for one archive and is valid
/// only during that call: don't keep it, and don't use it from another thread.
public final class ArchiveDecoder {
    let storage: UnsafeMutablePointer<DecoderStorage>

    /// The `userInfo` of the ``ArchiveOptions`` this archive is read with.
    // A decoder is used by one thread at a time (it is not `Sendable`), so accesses never
    // overlap and skip the run-time exclusivity check.
    @exclusivity(unchecked) public private(set) var userInfo: [String: any Sendable]

    init(bytes: UnsafeRawBufferPointer, options: ArchiveOptions) throws {
        userInfo = options.userInfo
        let state = try DecoderStorage(bytes: bytes, options: options)
        storage = .allocate(capacity: 1)
        storage.initialize(to: state)
    }

    /// Runs `body` with this thread's spare decoder set up to read `bytes` (or a new one when
    /// it is in use, by an `init(from:)` that decodes an archive of its own), and keeps the
    /// decoder as the spare afterwards unless `body` let it escape. Reusing one decoder saves
    /// an archive the cost of making and destroying its tables.
    static func withReusable<R>(
        bytes: UnsafeRawBufferPointer,
        options: ArchiveOptions,
        _ body: (ArchiveDecoder) throws -> R
    ) throws -> R {
        let cache = ArchivingThreadCache.current
        var decoder: ArchiveDecoder
        if let spare = cache.spareDecoder {
            cache.spareDecoder = nil
            decoder = spare
            do {
                try decoder.storage.pointee.reload(bytes: bytes, options: options)
            } catch {
                decoder.storage.pointee.removeAll()
                cache.spareDecoder = decoder
                throw error
            }
            // A spare's userInfo is empty (see below); most calls pass none.
            if !options.userInfo.isEmpty { decoder.userInfo = options.userInfo }
        } else {
            decoder = try ArchiveDecoder(bytes: bytes, options: options)
        }
        defer {
            decoder.invalidate()
            // Forgets the decoded objects even when something kept the decoder (a model that
            // kept its keyed container): the objects would hold that model, and it the decoder.
            decoder.storage.pointee.removeAll()
            // Kept only if nothing else holds it: a kept decoder must not read the spare's
            // next archive.
            if isKnownUniquelyReferenced(&decoder) {
                if !decoder.userInfo.isEmpty { decoder.userInfo = [:] }
                cache.spareDecoder = decoder
            }
        }
        return try body(decoder)
    }

    deinit {
        // Ends the decode for the values that refer to this decoder unretained (a no-op after
        // `invalidate()`) before it goes.
        storage.pointee.endEpoch()
        DecoderEpochs.recycle(storage.pointee.epochWord)
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// The schema version the archive recorded for the value being decoded
    /// (``Archivable/archiveVersion`` when it was written), or 0 for values without a type.
    ///
    /// Use it to migrate: read old fields when the version is older than the current one.
    public var version: Int {
        guard (try? storage.pointee.openRecord()) != nil else { return 0 }
        let reference = storage.pointee.frame.typeReference
        return reference == 0 ? 0 : storage.pointee.types[reference - 1].version
    }

    /// The type name the archive recorded for the value being decoded, if any (after the
    /// renames in ``ArchiveOptions/renamedTypes``).
    public var typeName: String? {
        guard (try? storage.pointee.openRecord()) != nil else { return nil }
        let reference = storage.pointee.frame.typeReference
        return reference == 0 ? nil : storage.pointee.types[reference - 1].name
    }

    /// The keys present in the value being decoded, in archive order.
    ///
    /// - Throws: ``ArchiveError`` if the value is not a keyed record or is corrupt.
    /// - Complexity: O(number of fields).
    public func allKeys() throws -> [String] { try storage.pointee.allKeys() }

    /// Whether the value being decoded has a field for `key` (even one holding `nil`).
    ///
    /// - Throws: ``ArchiveError`` if the value is not a keyed record or is corrupt.
    public func contains(_ key: String) throws -> Bool { try storage.pointee.seek(key) }

    /// Decodes the value stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code ``ArchiveError/Code/keyNotFound`` when the key is
    ///   missing, ``ArchiveError/Code/valueNotFound`` when it holds `nil`, `typeMismatch` when
    ///   it holds another kind of value, `unresolvedReference` when it refers to an object
    ///   still being decoded (use ``decodeReference(_:forKey:assign:)`` there).
    /// - Complexity: O(size of the value); O(fields) more when fields are read out of order.
    public func decode<T: Archivable>(_ type: T.Type, forKey key: String) throws -> T {
        try decodeField(key, found: storage.pointee.seek(key)) { try read(T.self) }
    }

    /// Decodes the value stored under `key`, or `nil` when the key is missing or holds `nil`.
    ///
    /// - Throws: ``ArchiveError`` as ``decode(_:forKey:)-(T.Type,_)`` for a present value.
    public func decodeIfPresent<T: Archivable>(_ type: T.Type, forKey key: String) throws -> T? {
        try decodeFieldIfPresent(key, found: storage.pointee.seek(key)) { try read(T.self) }
    }

    /// Decodes a reference that may point back at an object still being decoded (a
    /// back-reference or the edge that closes a cycle) and hands it to `assign` once the
    /// object is fully initialized.
    ///
    /// Call it after every stored property is initialized, so `assign` can capture `self`:
    ///
    /// <!-- snippet: skip a class's initializer, which no extension can add -->
    /// ```swift
    /// init(from archive: ArchiveDecoder) throws {
    ///     content = try archive.decode(String.self, forKey: "content")
    ///     try archive.decodeReference(User.self, forKey: "user") { [unowned self] in self.user = $0 }
    /// }
    /// ```
    ///
    /// `assign` runs exactly once: at once when the object is ready (or the key is missing or
    /// the reference was conditional and its object was never archived, with `nil`), otherwise
    /// when the whole graph has been decoded, before ``Archive/decode(_:from:options:)`` returns.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch` when the reference is to an object
    ///   of another type, `corrupt` for an id out of range.
    public func decodeReference<T: AnyObject & Archivable>(
        _ type: T.Type,
        forKey key: String,
        assign: @escaping (T?) -> Void
    ) throws {
        try decodeField(key, found: storage.pointee.seek(key), ifAbsent: { assign(nil) }) {
            try readReference(T.self, assign: assign)
        }
    }

    /// Decodes the single value this `init(from:)` stands for (see
    /// ``ArchiveEncoder/encodeSingleValue(_:)``).
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch` or `invalidValue` (keyed access
    ///   already happened).
    public func decodeSingleValue<T: Archivable>(_ type: T.Type) throws -> T {
        try storage.pointee.beginSingleValue()
        return try read(T.self)
    }

    /// Whether this value's single value is `nil` (or a conditional reference to an object
    /// that was never archived); consumes it if so.
    ///
    /// - Throws: ``ArchiveError`` if the input ends here.
    public func decodeNil() throws -> Bool {
        let s = storage
        guard s.pointee.frame.mode == .pending else { return false }
        s.pointee.reader.pos = s.pointee.frame.start
        let tag = try s.pointee.reader.peekByte()
        if tag == ArchiveTag.null {
            try s.pointee.beginSingleValue()
            s.pointee.reader.pos += 1
            return true
        }
        if tag == ArchiveTag.reference {
            var probe = s.pointee.reader
            probe.pos += 1
            let id = try probe.index(below: s.pointee.objects.count, "object id")
            if case .absent = s.pointee.objects[id], s.pointee.objectOffsets[id] < 0 {
                try s.pointee.beginSingleValue()
                s.pointee.reader.pos = probe.pos
                return true
            }
        }
        return false
    }

    /// Decodes this value's array elements (used by the collection conformances).
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch` when the value is not an array,
    ///   `limitExceeded(.elementCount)` when it is too long, or any element's error.
    /// - Complexity: O(total size of the elements).
    public func decodeElements<E: Archivable>(_ type: E.Type) throws -> [E] {
        try storage.pointee.beginSingleValue()
        let (count, end, outerEnd) = try storage.pointee.openContainer(
            ArchiveTag.array,
            "an array",
            minimumElementSize: 1
        )
        // Written in place: unspecialized (a model's array), `append` was a generic call per
        // element. On a throw the elements read so far are destroyed. An empty array is made
        // apart: with capacity 0 the initializer stores the count into the standard library's
        // shared empty-array storage, a data race between threads (ThreadSanitizer reports it).
        let result =
            count == 0
            ? []
            : try [E](unsafeUninitializedCapacity: count) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                for i in 0..<count {
                    do {
                        (base + i).initialize(to: try read(E.self))
                    } catch let error as ArchiveError {
                        throw error.prefixed(by: "[\(i)]")
                    }
                    initialized = i + 1
                }
            }
        try storage.pointee.closeContainer(end: end, outerEnd: outerEnd, "an array")
        return result
    }

    /// Decodes this value's dictionary pairs (used by `Dictionary`'s conformance).
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch` when the value is not a
    ///   dictionary, `corrupt` for a duplicate key, or any key's or value's error.
    /// - Complexity: O(total size of the pairs).
    public func decodeDictionary<K: Archivable & Hashable, V: Archivable>(
        _ keyType: K.Type,
        _ valueType: V.Type
    ) throws -> [K: V] {
        try storage.pointee.beginSingleValue()
        let (count, end, outerEnd) = try storage.pointee.openContainer(
            ArchiveTag.dictionary,
            "a dictionary",
            minimumElementSize: 2
        )
        var result: [K: V] = [:]
        result.reserveCapacity(count)
        for i in 0..<count {
            let key: K
            do {
                key = try read(K.self)
            } catch let error as ArchiveError {
                throw error.prefixed(by: "[key \(i)]")
            }
            do {
                let value = try read(V.self)
                if result.updateValue(value, forKey: key) != nil {
                    throw ArchiveError(.corrupt, "duplicate dictionary key", offset: storage.pointee.reader.pos)
                }
            } catch let error as ArchiveError {
                throw error.prefixed(by: "[\(key)]")
            }
        }
        try storage.pointee.closeContainer(end: end, outerEnd: outerEnd, "a dictionary")
        return result
    }

    func keyNotFound(_ key: String) -> ArchiveError {
        ArchiveError(
            .keyNotFound,
            "no value for key \"\(key)\"",
            codingPath: [key],
            typeName: typeName,
            offset: storage.pointee.frame.start
        )
    }
}

extension ArchiveDecoder {
    /// Reads the field `key` of the open record, which a seek just looked for: when `found` is
    /// false the result is `ifAbsent()`; otherwise `read` reads the value at the reader and the
    /// field is marked done. An ``ArchiveError`` from `read` gets `key` at the front of its
    /// coding path; errors of the seek and of `ifAbsent` pass as they are (they are about the
    /// record, and `keyNotFound` names the key itself).
    ///
    /// One body for the keyed reads of both decoders, hand-written and Codable (directly or
    /// through the two forms below). The seek is the caller's, its result passed in rather
    /// than a closure: the seeks are large once inlined, and in a closure's body the optimizer
    /// keeps them out of line, a call per field. Always inlined, so a field costs no more than
    /// the same code written in place; `key` is an autoclosure, so a Codable key's
    /// `stringValue` is asked for only by an error.
    ///
    /// Transparent rather than `@inline(__always)`, this helper and the ones below: every
    /// nesting level of a decode passes through them, and a debug build (which inlines only
    /// transparent functions) would spend frames on them at each level, so the default depth
    /// limit would no longer fit a 512 KiB thread (`ArchiveStackDepthTests`, under
    /// ThreadSanitizer's larger frames).
    @_transparent
    func decodeField<R>(
        _ key: @autoclosure () -> String,
        found: Bool,
        ifAbsent: () throws -> R,
        read: () throws -> R
    ) throws -> R {
        guard found else { return try ifAbsent() }
        do {
            let value = try read()
            storage.pointee.fieldDone()
            return value
        } catch let error as ArchiveError {
            throw error.prefixed(by: key())
        }
    }

    /// ``decodeField(_:found:ifAbsent:read:)`` for a field that must be present: throws
    /// `keyNotFound` when the record lacks it.
    @_transparent
    func decodeField<R>(_ key: @autoclosure () -> String, found: Bool, read: () throws -> R) throws -> R {
        try decodeField(key(), found: found, ifAbsent: { throw keyNotFound(key()) }, read: read)
    }

    /// ``decodeField(_:found:read:)`` for an optional field: `nil` when the record lacks it or
    /// it holds `nil` (consumed, see ``skipNullField()``). The value is read as `R` and made
    /// optional only on return: read as `R?`, an unspecialized caller would look up
    /// `Optional<R>`'s metadata at run time on every field.
    @_transparent
    func decodeFieldIfPresent<R>(_ key: @autoclosure () -> String, found: Bool, read: () throws -> R) throws -> R? {
        guard found, !(try skipNullField()) else { return nil }
        return try decodeField(key(), found: true, read: read)
    }

    /// Consumes the `nil` the reader stands on (the value of the field just sought) and marks
    /// the field done; false, consuming nothing, for any other value.
    @inline(__always)
    func skipNullField() throws -> Bool {
        let s = storage
        guard try s.pointee.reader.peekByte() == ArchiveTag.null else { return false }
        s.pointee.reader.pos += 1
        s.pointee.fieldDone()
        return true
    }
}

extension UnsafeMutablePointer where Pointee == DecoderStorage {
    /// Runs `body` with the reader on the bytes from `start` to `end`, then puts the reader's
    /// position and bound back, whether `body` returns or throws: a value read away from the
    /// reader (an object defined further on, an unkeyed container's next element, a
    /// `superDecoder` slot read after its container was left) must leave the reader where the
    /// read around it expects it.
    ///
    /// On the storage, not the decoder: an unkeyed container's `body` mutates the container,
    /// which would make the caller retain and release the decoder it holds around every
    /// element. Always inlined, so an unkeyed element's `body` is inlined with it rather than
    /// called as a closure.
    @_transparent
    func reading<R>(from start: Int, to end: Int, _ body: () throws -> R) rethrows -> R {
        let savedPos = pointee.reader.pos
        let savedEnd = pointee.reader.end
        pointee.reader.pos = start
        pointee.reader.end = end
        defer {
            pointee.reader.pos = savedPos
            pointee.reader.end = savedEnd
        }
        return try body()
    }
}

/// A decoder lives for one ``Archive/decode(_:from:options:)`` call on one thread.
@available(*, unavailable, message: "an ArchiveDecoder is used by one decode call on one thread")
extension ArchiveDecoder: Sendable {}
