import Archivist
import Foundation

/// A property list (binary or XML) read into a flat table of nodes by the module's bounded
/// readers, for tools of this package: `archivist inspect` shows it, `archivist convert`
/// writes it again in another format. Containers hold node indexes, so shared values and the
/// cycles a binary plist can make stay indexes and are never expanded.
///
/// ```swift
/// let table = try PropertyListTable(bytes: data)
/// let binary = table.binaryBytes()
/// ```
package struct PropertyListTable: Sendable {
    /// One value of the table.
    package enum Node: Sendable, Equatable {
        case string(String)
        case data([UInt8])
        case integer(Int64)
        /// An unsigned integer above `Int64.max`.
        case unsignedInteger(UInt64)
        case real(Double)
        case bool(Bool)
        /// Seconds since 2001-01-01 00:00:00 UTC.
        case date(Double)
        /// A keyed archive's object reference (`CF$UID`).
        case uid(UInt64)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// The nodes; containers refer to others by index.
    package var nodes: [Node]
    /// The index of the root node.
    package var root: Int
    /// Whether the bytes read were a binary plist (`bplist00`), rather than XML.
    package var isBinary: Bool

    /// A table of `nodes` whose root is `root`.
    package init(nodes: [Node], root: Int, isBinary: Bool) {
        self.nodes = nodes
        self.root = root
        self.isBinary = isBinary
    }

    /// Reads `bytes`, a binary or XML property list, bounded by `limits`.
    ///
    /// - Throws: ``ArchiveError`` (`badMagic`, `truncated`, `corrupt`, `limitExceeded`) for
    ///   anything that is not a readable property list.
    /// - Complexity: O(n) in the input's size.
    package init(bytes: Data, limits: ArchiveLimits = ArchiveLimits()) throws {
        guard bytes.count <= limits.maxTotalBytes else {
            throw ArchiveError(.limitExceeded(.totalBytes), "\(bytes.count) bytes exceed maxTotalBytes")
        }
        let document = try KeyedArchiveValidator.parse([UInt8](bytes), limits: limits)
        nodes = document.nodes.map { node in
            switch node {
            case .string(let value): .string(value)
            case .data(let value): .data(value)
            case .integer(let value): .integer(value)
            case .unsignedInteger(let value): .unsignedInteger(value)
            case .real(let value): .real(value)
            case .bool(let value): .bool(value)
            case .date(let value): .date(value)
            case .uid(let value): .uid(value)
            case .array(let elements): .array(Array(elements))
            case .dictionary(let keys, let values): .dictionary(keys: Array(keys), values: Array(values))
            }
        }
        root = document.root
        isBinary = document.format == .binary
    }

    /// Whether `bytes` look like a property list: the binary magic, or XML whose first element
    /// is `plist` (after the prolog).
    package static func looksLikePropertyList(_ bytes: Data) -> Bool {
        if bytes.starts(with: Array("bplist00".utf8)) { return true }
        let head = String(decoding: bytes.prefix(512), as: UTF8.self)
        return head.contains("<plist")
    }

    /// The table as a canonical binary plist (`bplist00`), in its node order.
    ///
    /// - Complexity: O(n) in the size of the table.
    package func binaryBytes() -> [UInt8] {
        let document = PropertyListDocument(
            nodes: nodes.map { node in
                switch node {
                case .string(let value): .string(value)
                case .data(let value): .data(value)
                case .integer(let value): .integer(value)
                case .unsignedInteger(let value): .unsignedInteger(value)
                case .real(let value): .real(value)
                case .bool(let value): .bool(value)
                case .date(let value): .date(value)
                case .uid(let value): .uid(value)
                case .array(let elements): .array(elements)
                case .dictionary(let keys, let values): .dictionary(keys: keys, values: values)
                }
            },
            root: root,
            format: .binary
        )
        return BinaryPropertyListWriter.write(document)
    }
}
