import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The error the storage layer throws: an entry file that cannot be used, or a file-system call
/// that failed, with the operation, the path and the `errno`.
///
/// It speaks only of files and entries. Each public edge maps it once into its own error:
/// ``CacheManager`` into ``CacheError`` (code for code), the stores into ``StoreError``.
///
/// ```swift
/// throw StorageError.posix("rename", path: temporary, errno: errno)
/// ```
package struct StorageError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package enum Code: Sendable, Hashable, CustomStringConvertible {
        /// The entry file is truncated, damaged or not an entry at all, or its path holds no
        /// regular file; it has been removed.
        case corruptEntry
        /// The entry file is intact but records another type name or parameter; it has been
        /// removed.
        case entryMismatch
        /// The type name or parameter is longer than an entry's header records.
        case keyTooLong
        /// `EACCES` or `EPERM`.
        case permissionDenied
        /// `EROFS`.
        case readOnlyFileSystem
        /// `ENOSPC` or `EDQUOT`.
        case diskFull
        /// Any other failure of a file-system call.
        case fileSystem

        /// A short name for the code, in the words ``CacheError/Code`` uses for the same code.
        package var description: String {
            switch self {
            case .corruptEntry: "corrupt entry"
            case .entryMismatch: "entry mismatch"
            case .keyTooLong: "key too long"
            case .permissionDenied: "permission denied"
            case .readOnlyFileSystem: "read-only file system"
            case .diskFull: "disk full"
            case .fileSystem: "file-system error"
            }
        }
    }

    /// What went wrong.
    package var code: Code
    /// A human-readable explanation: the operation that failed, or what is wrong with the entry.
    package var message: String
    /// The type name recorded for the entry involved, when known.
    package var typeName: String?
    /// The parameter of the entry involved, when known.
    package var parameter: String?
    /// The file or folder the failing operation touched, when known.
    package var fileURL: URL?
    /// The `errno` of the failing POSIX call, when there was one.
    package var errno: Int32?
    /// A lower error kept as is.
    package var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    package init(
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

    /// `StorageError(code): message [type …] [parameter …] [file …] [errno …] [underlying: …]`.
    package var description: String {
        Self.describe(
            "StorageError",
            code,
            message,
            typeName: typeName,
            parameter: parameter,
            fileURL: fileURL,
            errno: errno,
            underlyingError: underlyingError
        )
    }

    /// `name(code): message [type …] [parameter …] [file …] [errno …] [underlying: …]`, the
    /// one wording of this error and of the errors the layers above map it into.
    package static func describe(
        _ name: String,
        _ code: some CustomStringConvertible,
        _ message: String,
        typeName: String?,
        parameter: String?,
        fileURL: URL?,
        errno: Int32?,
        underlyingError: (any Error & Sendable)?
    ) -> String {
        var text = "\(name)(\(code)): \(message)"
        if let typeName { text += " [type \(typeName)]" }
        if let parameter { text += " [parameter \(parameter.prefix(200).debugDescription)]" }
        if let fileURL { text += " [file \(fileURL.path)]" }
        if let errno { text += " [errno \(errno): \(String(cString: strerror(errno)))]" }
        if let underlyingError { text += " [underlying: \(underlyingError)]" }
        return text
    }

    /// The error for a failed POSIX call, its code chosen from `errno`.
    package static func posix(_ operation: String, path: String, errno code: Int32) -> StorageError {
        let kind: Code
        switch code {
        case EACCES, EPERM: kind = .permissionDenied
        case EROFS: kind = .readOnlyFileSystem
        case ENOSPC, EDQUOT: kind = .diskFull
        default: kind = .fileSystem
        }
        return StorageError(kind, "\(operation) failed", fileURL: URL(fileURLWithPath: path), errno: code)
    }

    /// A copy carrying the type name and the parameter, when it has none yet.
    package func with(typeName: String?, parameter: String?) -> StorageError {
        var copy = self
        copy.typeName = copy.typeName ?? typeName
        copy.parameter = copy.parameter ?? parameter
        return copy
    }
}
