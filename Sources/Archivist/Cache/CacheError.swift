import Foundation

/// The error thrown by ``CacheManager``.
///
/// A miss is `nil`, never an error; a present but unusable entry, or a failing file system,
/// throws a `CacheError`. Every error has a ``Code`` and as much context as is known: the cache
/// type's name and the parameter, the file URL, the `errno` of the failing POSIX call, and the
/// error of a lower layer (an ``ArchiveError`` when a value fails to encode or decode) kept as
/// ``underlyingError``.
///
/// ```swift
/// do {
///     let orders: [Order]? = try cache.value(for: .userOrderList)
/// } catch let error as CacheError where error.code == .corruptEntry {
///     print("dropped a damaged entry:", error.fileURL as Any)   // the next read is a miss
/// }
/// ```
public struct CacheError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// The entry file is truncated, has a bad magic, version or checksum, or is not an
        /// Archivist entry at all — or the entry's path holds no regular file but a folder, a
        /// FIFO or a symbolic link (never followed). It has been removed (a folder moved into
        /// the trash); the next read is a miss.
        case corruptEntry
        /// The entry file is intact but belongs to another type name or parameter (an MD5
        /// collision or a misplaced file). It has been removed; the next read is a miss.
        case entryMismatch
        /// The value could not be encoded into an archive; ``underlyingError`` says why.
        case encodingFailed
        /// The entry could not be decoded as the requested type; ``underlyingError`` says why.
        /// The entry is kept: reading it with the right type still works.
        case decodingFailed
        /// A user-scoped cache type was used by a manager created without a user.
        case noUser
        /// The cache type's name is over 64 KiB or the parameter over 16 MiB of UTF-8, more
        /// than an entry's header records: no such entry can exist, and nothing was read,
        /// written or removed.
        case keyTooLong
        /// The cache type's ``CacheType/name`` is empty: the name is what the type's entries
        /// are filed under, so nothing was read, written or cleared.
        case invalidTypeName
        /// The file system refused access (`EACCES`, `EPERM`).
        case permissionDenied
        /// The file system is mounted read-only (`EROFS`).
        case readOnlyFileSystem
        /// The disk or the user's quota is full (`ENOSPC`, `EDQUOT`).
        case diskFull
        /// Another file-system call failed; ``errno`` and ``fileURL`` say which and where.
        case fileSystem

        /// A short name for the code.
        public var description: String {
            switch self {
            case .corruptEntry: "corrupt entry"
            case .entryMismatch: "entry mismatch"
            case .encodingFailed: "encoding failed"
            case .decodingFailed: "decoding failed"
            case .noUser: "no user"
            case .keyTooLong: "key too long"
            case .invalidTypeName: "invalid type name"
            case .permissionDenied: "permission denied"
            case .readOnlyFileSystem: "read-only file system"
            case .diskFull: "disk full"
            case .fileSystem: "file-system error"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The stable name of the cache type involved, when known.
    public var typeName: String?
    /// The parameter of the entry involved, when there is one.
    public var parameter: String?
    /// The file or folder the failing operation touched, when known.
    public var fileURL: URL?
    /// The `errno` reported by the failing POSIX call, when there was one.
    public var errno: Int32?
    /// The error reported by a lower layer (for example an ``ArchiveError``), kept as is.
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// ```swift
    /// throw CacheError(.noUser, "message needs a signed-in user", typeName: "message")
    /// ```
    public init(
        _ code: Code,
        _ message: String,
        typeName: String? = nil,
        parameter: String? = nil,
        fileURL: URL? = nil,
        errno: Int32? = nil,
        underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.typeName = typeName
        self.parameter = parameter
        self.fileURL = fileURL
        self.errno = errno
        self.underlyingError = underlyingError
    }

    /// `CacheError(code): message [type …] [parameter …] [file …] [errno …] [underlying: …]`.
    public var description: String {
        StorageError.describe(
            "CacheError",
            code,
            message,
            typeName: typeName,
            parameter: parameter,
            fileURL: fileURL,
            errno: errno,
            underlyingError: underlyingError
        )
    }

    /// The storage layer's error in the cache's words: the same code, message, names, file,
    /// `errno` and underlying error.
    package init(_ error: StorageError) {
        let code: Code =
            switch error.code {
            case .corruptEntry: .corruptEntry
            case .entryMismatch: .entryMismatch
            case .keyTooLong: .keyTooLong
            case .permissionDenied: .permissionDenied
            case .readOnlyFileSystem: .readOnlyFileSystem
            case .diskFull: .diskFull
            case .fileSystem: .fileSystem
            }
        self.init(
            code,
            error.message,
            typeName: error.typeName,
            parameter: error.parameter,
            fileURL: error.fileURL,
            errno: error.errno,
            underlyingError: error.underlyingError
        )
    }

    /// `error` as a ``CacheError``: itself, a ``StorageError`` mapped, anything else as
    /// `fileSystem` with `message`, keeping the error as ``underlyingError``.
    package static func from(_ error: any Error, _ message: String) -> CacheError {
        switch error {
        case let error as CacheError: error
        case let error as StorageError: CacheError(error)
        default: CacheError(.fileSystem, message, underlyingError: error)
        }
    }

    /// Runs `body`, which calls into the storage layer, throwing its ``StorageError``s as
    /// ``CacheError``s; other errors pass unchanged.
    package static func mapping<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as StorageError {
            throw CacheError(error)
        }
    }

    /// A copy carrying the cache type's name and the parameter, filled in by the layer that
    /// knows them.
    package func with(typeName: String?, parameter: String?) -> CacheError {
        var copy = self
        copy.typeName = copy.typeName ?? typeName
        copy.parameter = copy.parameter ?? parameter
        return copy
    }
}
