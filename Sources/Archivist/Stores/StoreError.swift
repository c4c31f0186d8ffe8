import Foundation

/// The error thrown by ``PlistStore`` and ``Preferences``.
///
/// Every failure has a ``Code``; the context says where: the file, the key (or the path to a
/// nested value, such as `alert.hour` or `tags[2]`), and the lower layer's own error (a
/// `POSIXError` or Foundation's parser error) kept as ``underlyingError``. A missing file or
/// key is not an error: reads return `nil` or the default.
///
/// ```swift
/// do {
///     let minutes: Int? = try store.value(Int.self, forKey: "diligenceTime", in: "taskData")
/// } catch let error as StoreError where error.code == .typeMismatch {
///     print("wrong type for \(error.key ?? "?") in \(error.fileURL?.path ?? "?")")
/// }
/// ```
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// A store or file name cannot be used as a file name (empty, contains `/` or NUL,
        /// starts with `.`, or is too long). Names never become paths.
        case invalidName
        /// The file exists but is not a property list, or its root is not a dictionary.
        case corrupt
        /// A stored value has a different type than the one asked for.
        case typeMismatch
        /// A value cannot be stored in a property list (for example `NSNull`, a custom type,
        /// a non-string dictionary key, or an integer that does not fit in `Int`), or a
        /// ``RecordStore`` batch cannot be archived or is too large for one change-log entry
        /// (4 GiB).
        case notRepresentable
        /// The operating system refused access to the file or its folder.
        case permissionDenied
        /// The volume is full (or over quota).
        case noSpace
        /// Any other failure to read or write the file.
        case ioFailed
        /// No record has the identifier asked for (``RecordStore/update(id:_:)``).
        case notFound
        /// A record with that identifier already exists (``RecordStore/insert(_:)``).
        case alreadyExists

        /// A short name for the code.
        public var description: String {
            switch self {
            case .invalidName: "invalid name"
            case .corrupt: "corrupt file"
            case .typeMismatch: "type mismatch"
            case .notRepresentable: "not representable"
            case .permissionDenied: "permission denied"
            case .noSpace: "no space"
            case .ioFailed: "I/O failed"
            case .notFound: "not found"
            case .alreadyExists: "already exists"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The file involved, when there is one.
    public var fileURL: URL?
    /// The key (or the path to a nested value) involved, when there is one.
    public var key: String?
    /// The error reported by a lower layer (a `POSIXError`, Foundation's parser), kept as is.
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// ```swift
    /// throw StoreError(.typeMismatch, "expected a bool, found a string", key: "firstLogin")
    /// ```
    public init(
        _ code: Code,
        _ message: String,
        fileURL: URL? = nil,
        key: String? = nil,
        underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.fileURL = fileURL
        self.key = key
        self.underlyingError = underlyingError
    }

    /// `StoreError(code): message [key k] [file /path] [underlying: …]`.
    public var description: String {
        var parts = "StoreError(\(code)): \(message)"
        if let key { parts += " [key \(key)]" }
        if let fileURL { parts += " [file \(fileURL.path)]" }
        if let underlyingError { parts += " [underlying: \(underlyingError)]" }
        return parts
    }

    /// Maps an error from the storage or archive layers to a store error: a storage failure
    /// as ``init(_:_:fileURL:)`` says, an archive's as `corrupt` keeping it as the underlying
    /// error, anything else as `ioFailed`.
    init(wrapping error: any Error, fileURL: URL?) {
        switch error {
        case let error as StoreError: self = error
        case let storage as StorageError: self.init(storage, nil, fileURL: fileURL)
        case is ArchiveError: self.init(.corrupt, "\(error)", fileURL: fileURL, underlyingError: error)
        default: self.init(.ioFailed, "\(error)", fileURL: fileURL, underlyingError: error)
        }
    }

    /// A storage-layer failure in the store's words: the nearest code; `context` ("cannot
    /// write"), the failed operation, the system's text for its `errno` and the path it
    /// touched (when not `fileURL`) as the message; and as the underlying error the
    /// `POSIXError` behind it, or the lower error the storage layer kept. The storage layer's
    /// own type is not public, so it is never the underlying error.
    init(_ storage: StorageError, _ context: String?, fileURL: URL?) {
        var message = context.map { "\($0): \(storage.message)" } ?? storage.message
        var underlying = storage.underlyingError
        if let errno = storage.errno {
            message += ": \(String(cString: strerror(errno)))"
            if let code = POSIXErrorCode(rawValue: errno) { underlying = POSIXError(code) }
        }
        if let touched = storage.fileURL, touched.path != fileURL?.path {
            message += " (\(touched.path))"
        }
        self.init(Code(storage.code), message, fileURL: fileURL ?? storage.fileURL, underlyingError: underlying)
    }

    /// Returns a copy that names `fileURL` (and `key`, when the error has none yet).
    func located(at fileURL: URL, key: String? = nil) -> StoreError {
        var copy = self
        copy.fileURL = copy.fileURL ?? fileURL
        if let key {
            copy.key = copy.key.map { key + ($0.hasPrefix("[") ? "" : ".") + $0 } ?? key
        }
        return copy
    }
}

extension StoreError.Code {
    /// The store code nearest the storage layer's.
    init(_ code: StorageError.Code) {
        switch code {
        case .permissionDenied, .readOnlyFileSystem: self = .permissionDenied
        case .diskFull: self = .noSpace
        case .corruptEntry, .entryMismatch: self = .corrupt
        case .keyTooLong, .fileSystem: self = .ioFailed
        }
    }
}
