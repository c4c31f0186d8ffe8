import Foundation

/// Writes values into a native archive; handed to ``Archivable/encode(to:)``.
///
/// Inside `encode(to:)`, write each field under a key, like `NSCoder.encode(_:forKey:)`:
///
/// <!-- snippet: member Profile -->
/// ```swift
/// func encode(to archive: ArchiveEncoder) throws {
///     try archive.encode(name, forKey: "name")
///     try archive.encode(tags, forKey: "tags")            // any Archivable value
///     try archive.encode(nickname, forKey: "nickname")    // an optional: nil writes nothing
///     try archive.encodeConditional(owner, forKey: "owner") // only if archived elsewhere
/// }
/// ```
///
/// A type that stands for one value (a wrapper, a raw-value enum) calls
/// ``encodeSingleValue(_:)`` once instead. Class instances are written once per archive and
/// referenced afterwards, so shared references and cycles survive.
///
/// An encoder is created by ``Archive/encode(_:options:)`` for one archive and is valid only
/// during that call: don't keep it, and don't use it from another thread.
public final class ArchiveEncoder {
    let storage: UnsafeMutablePointer<EncoderStorage>

    /// The `userInfo` of the ``ArchiveOptions`` this archive is written with.
    // An encoder is used by one thread at a time (it is not `Sendable`), so accesses never
    // overlap and skip the run-time exclusivity check.
    @exclusivity(unchecked) public private(set) var userInfo: [String: any Sendable]

    init(options: ArchiveOptions) {
        userInfo = options.userInfo
        storage = .allocate(capacity: 1)
        storage.initialize(to: EncoderStorage(limits: options.limits))
    }

    /// Runs `body` with this thread's spare encoder set up for `options` (or a new one when
    /// it is in use, by an `encode(to:)` that encodes an archive of its own), and keeps the
    /// encoder as the spare afterwards unless `body` let it escape. Reusing one encoder saves
    /// an archive the cost of making and destroying its tables.
    static func withReusable<R>(options: ArchiveOptions, _ body: (ArchiveEncoder) throws -> R) rethrows -> R {
        let cache = ArchivingThreadCache.current
        var encoder: ArchiveEncoder
        if let spare = cache.spareEncoder {
            cache.spareEncoder = nil
            encoder = spare
            // A spare's userInfo is empty (see below); most calls pass none.
            if !options.userInfo.isEmpty { encoder.userInfo = options.userInfo }
            encoder.storage.pointee.limits = options.limits
        } else {
            encoder = ArchiveEncoder(options: options)
        }
        defer {
            // Kept only if nothing else holds it: a kept encoder must not write into the
            // spare's next archive.
            if isKnownUniquelyReferenced(&encoder) {
                encoder.storage.pointee.removeAll()
                if !encoder.userInfo.isEmpty { encoder.userInfo = [:] }
                cache.spareEncoder = encoder
            }
        }
        return try body(encoder)
    }

    deinit {
        storage.pointee.out.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// The keys from the root value to the value being encoded, for error messages.
    public var codingPath: [String] { storage.pointee.path }

    /// Writes `value` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code ``ArchiveError/Code/invalidValue`` if this value
    ///   already wrote a single value, or `limitExceeded` when the graph is too deep or large.
    /// - Complexity: O(size of `value`).
    public func encode<T: Archivable>(_ value: T, forKey key: String) throws {
        try storage.pointee.beginField(key)
        do {
            try write(value)
        } catch let error as ArchiveError {
            throw error.prefixed(by: key)
        }
    }

    /// Writes `value` under `key` if it is not `nil`; a `nil` writes nothing and decodes as
    /// `nil` (`ArchiveDecoder/decodeIfPresent(_:forKey:)`).
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode<T: Archivable>(_ value: T?, forKey key: String) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    /// Writes `object` under `key` only as a reference: if the same instance is archived
    /// unconditionally anywhere in the archive, the reference decodes to it; otherwise it
    /// decodes as `nil`. This is `encodeConditionalObject(_:forKey:)`, for back-references
    /// such as a letter's `user`.
    ///
    /// Decode it with ``ArchiveDecoder/decodeReference(_:forKey:assign:)``.
    ///
    /// - Throws: ``ArchiveError`` with code `limitExceeded(.objectCount)` when the archive
    ///   holds too many objects.
    public func encodeConditional<T: AnyObject & Archivable>(_ object: T?, forKey key: String) throws {
        guard let object else { return }
        try storage.pointee.beginField(key)
        try storage.pointee.writeConditionalReference(object)
    }

    /// Writes the single value this `encode(to:)` stands for.
    ///
    /// ```swift
    /// struct Cents: Archivable {
    ///     var amount: Int
    ///     func encode(to archive: ArchiveEncoder) throws { try archive.encodeSingleValue(amount) }
    ///     init(from archive: ArchiveDecoder) throws { amount = try archive.decodeSingleValue(Int.self) }
    /// }
    /// ```
    ///
    /// - Throws: ``ArchiveError`` with code ``ArchiveError/Code/invalidValue`` if this
    ///   `encode(to:)` already wrote a keyed field or a single value.
    public func encodeSingleValue<T: Archivable>(_ value: T) throws {
        try storage.pointee.beginSingleValue()
        try write(value)
    }

    /// Writes a `nil` as this value's single value.
    ///
    /// - Throws: ``ArchiveError`` with code ``ArchiveError/Code/invalidValue`` if a value was
    ///   already written.
    public func encodeNil() throws {
        try storage.pointee.beginSingleValue()
        storage.pointee.out.append(ArchiveTag.null)
    }

    /// Writes the elements of a sequence as an array value (used by the collection
    /// conformances; call it from a custom collection type's `encode(to:)`).
    ///
    /// - Throws: ``ArchiveError`` if an element fails or a limit is exceeded.
    /// - Complexity: O(total size of the elements).
    public func encodeElements<S: Sequence>(_ elements: S) throws where S.Element: Archivable {
        try storage.pointee.beginSingleValue()
        let start = try storage.pointee.beginContainer(ArchiveTag.array)
        var count = 0
        for element in elements {
            do {
                try write(element)
            } catch let error as ArchiveError {
                throw error.prefixed(by: "[\(count)]")
            }
            count += 1
        }
        try storage.pointee.endContainer(start, count: count)
    }

    /// Writes key/value pairs as a dictionary value (used by `Dictionary`'s conformance).
    ///
    /// - Throws: ``ArchiveError`` if a key or value fails or a limit is exceeded.
    /// - Complexity: O(total size of the pairs).
    public func encodePairs<S: Sequence, K: Archivable, V: Archivable>(_ pairs: S) throws
    where S.Element == (key: K, value: V) {
        try storage.pointee.beginSingleValue()
        let start = try storage.pointee.beginContainer(ArchiveTag.dictionary)
        var count = 0
        for (key, value) in pairs {
            do {
                try write(key)
                try write(value)
            } catch let error as ArchiveError {
                throw error.prefixed(by: "[\(key)]")
            }
            count += 1
        }
        try storage.pointee.endContainer(start, count: count)
    }

    // MARK: - Values

    /// Writes one value with its tag: primitives inline, class instances once per archive,
    /// everything else by calling its `encode(to:)` in a fresh value frame.
    func write<T: Archivable>(_ value: T) throws {
        if T.self is AnyObject.Type {
            let object = ClassInstance.object(value)
            if try storage.pointee.writeObjectHeader(object) { return }
            try writeFrame(value, type: type(of: value))
        } else {
            try writeFrame(value, type: T.self)
        }
    }

    private func writeFrame<T: Archivable>(_ value: T, type: any Archivable.Type) throws {
        let saved = try storage.pointee.enterValue(type)
        defer { storage.pointee.leaveValue(saved) }
        try value.encode(to: self)
        try storage.pointee.finishValue()
    }

    /// Assembles the archive: header, body, tables, checksum.
    func finish() throws -> Data {
        try storage.pointee.finish()
    }
}

extension ArchiveEncoder {
    /// Writes a Codable value: through its `Archivable` conformance when it has one (keeping
    /// identity and type names), otherwise as an anonymous value of its own.
    func writeEncodable<T: Encodable>(_ value: T) throws {
        if CodablePrimitives.write(value, to: &storage.pointee.out) { return }
        switch storage.pointee.codableKinds.kind(of: T.self) {
        case .archivable(let type):
            // T is `type`: the cast is the identity, without a conformance lookup per value.
            func write<A: Archivable>(as _: A.Type) throws { try self.write(unsafeBitCast(value, to: A.self)) }
            try write(as: type)
        case .reference(let type):
            func object<R: CodableReferenceWriting>(as _: R.Type) -> AnyObject? {
                unsafeBitCast(value, to: R.self).referencedObject
            }
            let saved = try storage.pointee.enterValue(nil, weight: ArchiveLimits.codableLevelWeight)
            defer { storage.pointee.leaveValue(saved) }
            try CodableArchiveEncoder.writeReference(
                object(as: type),
                archive: self,
                target: .frame(id: storage.pointee.frame.id)
            )
            try storage.pointee.finishValue()
        case .dynamic:
            if let archivable = value as? any Archivable {
                try write(archivable)
                return
            }
            fallthrough
        case .plain:
            let saved = try storage.pointee.enterValue(nil, weight: ArchiveLimits.codableLevelWeight)
            defer { storage.pointee.leaveValue(saved) }
            try value.encode(to: CodableArchiveEncoder(archive: self, target: .frame(id: storage.pointee.frame.id)))
            try storage.pointee.finishValue()
        }
    }

    /// The target for a container requested from an `Encoder` at `target`: the frame's own
    /// record, or a top-level array pushed as a nested container; `nil` if the value already
    /// wrote something else.
    func codableContainerTarget(from target: CodableTarget, kind: EncoderStorage.OpenContainer.Kind) -> CodableTarget? {
        guard case .frame(let id) = target, storage.pointee.frame.id == id else { return nil }
        switch (kind, storage.pointee.frame.mode) {
        case (.record, .pending):
            storage.pointee.openRecord()
            return target
        case (.record, .keyed):
            return target
        case (.array, .pending):
            storage.pointee.frame.mode = .single
            let id = storage.pointee.pushContainer(.array)
            return .nested(level: storage.pointee.open.count - 1, id: id)
        default:
            return nil
        }
    }
}

/// An encoder lives for one ``Archive/encode(_:options:)`` call on one thread.
@available(*, unavailable, message: "an ArchiveEncoder is used by one encode call on one thread")
extension ArchiveEncoder: Sendable {}
