import Foundation

/// Entry points of the native archive: turn an ``Archivable`` value (and the object graph it
/// reaches) into bytes and back.
///
/// ```swift
/// let data = try Archive.encode(user)                  // User and its letters, cycles included
/// let copy = try Archive.decode(User.self, from: data)
/// ```
///
/// The format is described byte by byte in `docs/ArchiveFormat.md`.
public enum Archive {
    /// Encodes `value` and everything it references.
    ///
    /// - Parameters:
    ///   - value: The root value.
    ///   - options: Limits and `userInfo`.
    /// - Returns: The archive's bytes.
    /// - Throws: ``ArchiveError`` with code `limitExceeded` when the graph is deeper, larger
    ///   or has more objects than ``ArchiveOptions/limits`` allow, or `invalidValue` when an
    ///   `encode(to:)` mixes keyed and single values.
    /// - Complexity: O(size of the graph).
    public static func encode<T: Archivable>(_ value: T, options: ArchiveOptions = ArchiveOptions()) throws -> Data {
        do {
            return try ArchiveEncoder.withReusable(options: options) { encoder in
                try encoder.write(value)
                return try encoder.finish()
            }
        } catch {
            throw ArchiveError(wrapping: error)
        }
    }

    /// Encodes `value` and everything it references, with the default ``ArchiveOptions``.
    ///
    /// The same as ``encode(_:options:)`` with `ArchiveOptions()`, without making and
    /// destroying the options on every call (about a fiftieth of a small model's encode).
    ///
    /// - Parameter value: The root value.
    /// - Returns: The archive's bytes.
    /// - Throws: as ``encode(_:options:)``.
    /// - Complexity: O(size of the graph).
    public static func encode<T: Archivable>(_ value: T) throws -> Data {
        try encode(value, options: defaultOptions)
    }

    /// `ArchiveOptions()`, made once.
    private static let defaultOptions = ArchiveOptions()

    /// Decodes a value of type `type` from `data` with the default ``ArchiveOptions``.
    ///
    /// The same as ``decode(_:from:options:)`` with `ArchiveOptions()`, without making and
    /// destroying the options on every call.
    ///
    /// - Parameters:
    ///   - type: The root type.
    ///   - data: Bytes from ``encode(_:options:)``.
    /// - Returns: The decoded value.
    /// - Throws: as ``decode(_:from:options:)``.
    /// - Complexity: O(`data.count`).
    public static func decode<T: Archivable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: data, options: defaultOptions)
    }

    /// Decodes a value of type `type` from `data`, checking the header, version and checksum
    /// before anything else.
    ///
    /// Only `type`, the types its decoding code names, and ``ArchiveOptions/allowedTypes``
    /// are ever instantiated.
    ///
    /// - Parameters:
    ///   - type: The root type.
    ///   - data: Bytes from ``encode(_:options:)``.
    ///   - options: Limits, allowed subclasses, type renames and `userInfo`.
    /// - Returns: The decoded value, with shared references shared and cycles restored.
    /// - Throws: ``ArchiveError``: `badMagic`, `unsupportedVersion`, `truncated`,
    ///   `checksumMismatch`, `corrupt`, `typeMismatch`, `keyNotFound`, `disallowedType`,
    ///   `limitExceeded`, ... Any byte string either decodes or throws; none traps.
    /// - Complexity: O(`data.count`).
    public static func decode<T: Archivable>(
        _ type: T.Type,
        from data: Data,
        options: ArchiveOptions = ArchiveOptions()
    ) throws -> T {
        do {
            return try decodeUnchecked(type, from: data, options: options)
        } catch {
            throw ArchiveError(wrapping: error)
        }
    }

    /// ``decode(_:from:options:)`` from bytes in memory the caller owns (an entry file's
    /// buffer), without wrapping them in a `Data` first.
    ///
    /// - Throws: as ``decode(_:from:options:)``.
    /// - Complexity: O(`bytes.count`).
    package static func decode<T: Archivable>(
        _ type: T.Type,
        fromBytes bytes: UnsafeRawBufferPointer,
        options: ArchiveOptions
    ) throws -> T {
        do {
            return try decodeUnchecked(type, fromBytes: bytes, options: options)
        } catch {
            throw ArchiveError(wrapping: error)
        }
    }

    private static func decodeUnchecked<T: Archivable>(
        _ type: T.Type,
        from data: Data,
        options: ArchiveOptions
    ) throws -> T {
        try data.withUnsafeBytes { try decodeUnchecked(type, fromBytes: $0, options: options) }
    }

    private static func decodeUnchecked<T: Archivable>(
        _ type: T.Type,
        fromBytes bytes: UnsafeRawBufferPointer,
        options: ArchiveOptions
    ) throws -> T {
        try ArchiveDecoder.withReusable(bytes: bytes, options: options) { decoder in
            let value = try decoder.read(T.self)
            let s = decoder.storage
            guard s.pointee.reader.pos == s.pointee.bodyEnd else {
                throw ArchiveError(
                    .corrupt,
                    "\(s.pointee.bodyEnd - s.pointee.reader.pos) bytes after the root value",
                    offset: s.pointee.reader.pos
                )
            }
            try decoder.resolveDeferred()
            return value
        }
    }

    /// Whether `data` is a whole archive as some writer wrote it: its header parses and its
    /// checksum matches, or its header names a format version this reader does not know (a
    /// newer writer's). When such bytes fail to decode, the cause is the reader's types,
    /// allowlist, renames or limits, not damage to the bytes.
    ///
    /// - Complexity: O(`data.count`): one checksum pass.
    static func isIntact(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            do {
                let header = try ArchiveHeader(parsing: raw)
                return header.checksum(of: raw) == header.storedChecksum
            } catch let error as ArchiveError where error.code == .unsupportedVersion {
                return true
            } catch {
                return false
            }
        }
    }

    /// The CRC32C of a whole archive that ``encode(_:options:)`` just returned, derived from
    /// the checksum stored in its header (which covers everything after the header) instead of
    /// a second pass over the bytes; `nil` for anything that is not such an archive.
    ///
    /// - Complexity: O(log n).
    package static func checksumOfEncoded(_ data: Data) -> UInt32? {
        data.withUnsafeBytes { raw -> UInt32? in
            guard let header = try? ArchiveHeader(parsing: raw) else { return nil }
            return header.wholeArchiveChecksum(of: raw)
        }
    }
}
