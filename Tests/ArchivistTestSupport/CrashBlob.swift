import Archivist
import Foundation

/// The crash writer's cache value: `length` bytes, each a function of the version, so the
/// test can tell a whole value from a torn one.
public struct CrashBlob: Archivable, Sendable {
    /// The version the writer stored; every store gets a new one.
    public var version: Int
    /// The value's bytes.
    public var bytes: Data

    /// The value the writer stores for `version` with `length` bytes.
    public init(version: Int, length: Int) {
        self.version = version
        bytes = Data(repeating: Self.byte(of: version), count: length)
    }

    /// Whether the bytes are exactly what the writer stores for ``version`` with `length` bytes.
    public func isIntact(length: Int) -> Bool {
        let expected = Self.byte(of: version)
        return bytes.count == length && bytes.allSatisfy { $0 == expected }
    }

    private static func byte(of version: Int) -> UInt8 { UInt8(truncatingIfNeeded: version &* 131) }

    /// Archives the version and the bytes.
    public func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(version, forKey: "version")
        try archive.encode(bytes, forKey: "bytes")
    }

    /// Reads what ``encode(to:)`` wrote.
    public init(from archive: ArchiveDecoder) throws {
        version = try archive.decode(Int.self, forKey: "version")
        bytes = try archive.decode(Data.self, forKey: "bytes")
    }
}
