/// The error thrown when encoding or decoding an archive fails.
///
/// Every failure has a ``Code``; the context says where it happened: the coding path of keys
/// from the root to the failing value, the type names involved, the byte offset, and
/// Foundation's own error when the failure came from the Foundation bridge. Input from disk
/// never traps: any byte string decodes to a value or throws an `ArchiveError`.
///
/// ```swift
/// do {
///     let user = try Archive.decode(User.self, from: data)
/// } catch let error as ArchiveError where error.code == .checksumMismatch {
///     print("corrupt archive:", error)
/// }
/// ```
public struct ArchiveError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// The input ended before a complete archive or value was read.
        case truncated
        /// The input does not start with the archive's magic bytes.
        case badMagic
        /// The archive was written by a format version (or with flags) this reader does not know.
        case unsupportedVersion
        /// The checksum stored in the archive does not match its payload.
        case checksumMismatch
        /// The bytes are structurally invalid (bad tag, bad length, index out of range, bad UTF-8).
        case corrupt
        /// A value of one kind was found where another was expected.
        case typeMismatch
        /// A required key is missing from a keyed value.
        case keyNotFound
        /// A required value is `nil` in the archive.
        case valueNotFound
        /// The archive names a type that is not among the types the caller allows.
        case disallowedType
        /// A reference points at an object still being decoded: declare it as a deferred reference.
        case unresolvedReference
        /// One of the ``ArchiveLimits`` was exceeded.
        case limitExceeded(ArchiveLimits.Kind)
        /// A value cannot be represented in the archive (for example a non-plist value, or a
        /// custom encoder that wrote two values).
        case invalidValue
        /// Foundation's NSKeyedArchiver or NSKeyedUnarchiver reported an error.
        case foundation

        /// A short name for the code.
        public var description: String {
            switch self {
            case .truncated: "truncated"
            case .badMagic: "bad magic"
            case .unsupportedVersion: "unsupported version"
            case .checksumMismatch: "checksum mismatch"
            case .corrupt: "corrupt"
            case .typeMismatch: "type mismatch"
            case .keyNotFound: "key not found"
            case .valueNotFound: "value not found"
            case .disallowedType: "disallowed type"
            case .unresolvedReference: "unresolved reference"
            case .limitExceeded(let kind): "limit exceeded (\(kind))"
            case .invalidValue: "invalid value"
            case .foundation: "Foundation error"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The keys (and array indexes, as `[n]`) from the root value down to the failing value.
    public var codingPath: [String]
    /// The type name the archive holds at the failure, when known.
    public var typeName: String?
    /// The byte offset in the input at which the failure was detected, when known.
    public var offset: Int?
    /// The error reported by a lower layer (for example Foundation), kept as is.
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        codingPath: [String] = [],
        typeName: String? = nil,
        offset: Int? = nil,
        underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.codingPath = codingPath
        self.typeName = typeName
        self.offset = offset
        self.underlyingError = underlyingError
    }

    /// The coding path written as `a.b[3].c`.
    public var codingPathDescription: String {
        var out = ""
        for key in codingPath {
            if key.hasPrefix("[") || out.isEmpty { out += key } else { out += "." + key }
        }
        return out
    }

    /// `ArchiveError(code): message at path (type, offset)`.
    public var description: String {
        var parts = "ArchiveError(\(code)): \(message)"
        if !codingPath.isEmpty { parts += " at \(codingPathDescription)" }
        if let typeName { parts += " [type \(typeName)]" }
        if let offset { parts += " [offset \(offset)]" }
        if let underlyingError { parts += " [underlying: \(underlyingError)]" }
        return parts
    }

    /// Wraps an error thrown by a model's own `encode(to:)`/`init(from:)` (a Codable
    /// `DecodingError`, say) so callers see one error type; an `ArchiveError` passes through.
    init(wrapping error: any Error) {
        if let error = error as? ArchiveError {
            self = error
            return
        }
        let code: Code
        switch error {
        case DecodingError.typeMismatch: code = .typeMismatch
        case DecodingError.valueNotFound: code = .valueNotFound
        case DecodingError.keyNotFound: code = .keyNotFound
        case DecodingError.dataCorrupted: code = .corrupt
        default: code = .invalidValue
        }
        self.init(code, "\(error)", underlyingError: error)
    }

    /// Returns a copy with `key` prepended to the coding path (used while an error unwinds).
    func prefixed(by key: String) -> ArchiveError {
        var copy = self
        copy.codingPath.insert(key, at: 0)
        return copy
    }
}
