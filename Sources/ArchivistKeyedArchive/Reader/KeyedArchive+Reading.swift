import Archivist
import Foundation

extension KeyedArchive {
    /// Reads a keyed archive (binary or XML property list) into its object table.
    ///
    /// Nothing is instantiated and references are not followed, so shared objects, cycles and
    /// classes this process does not know are all fine; only the layout must be sound.
    ///
    /// ```swift
    /// let archive = try KeyedArchive(data: try Data(contentsOf: url))
    /// ```
    ///
    /// - Parameters:
    ///   - data: The archive's bytes.
    ///   - limits: `maxTotalBytes` for the input, `maxObjectCount` for `$objects` and for the
    ///     plist values read into fields (a shared plist container counts each time it is
    ///     reached), `maxDepth` for plist nesting, `maxElementCount` per container.
    /// - Throws: `ArchiveError`: `.truncated`/`.badMagic`/`.corrupt` for a malformed property
    ///   list or layout (`$archiver`, `$objects`, `$top`, a reference out of bounds, a class
    ///   description without `$classname`, a Foundation value class with fields of the wrong
    ///   type, a plist container that contains itself, a date of NaN seconds anywhere in the
    ///   property list), `.unsupportedVersion` for a `$version` other than 100000,
    ///   `.limitExceeded` (`.objectCount` as soon as a plist container shared between two
    ///   fields would make the fields unfold past the limit).
    /// - Complexity: O(*n*) in the size of `data`, sharing included: a shared plist container
    ///   is counted, not copied, before the limit is reached.
    public init(data: Data, limits: ArchiveLimits = .init()) throws {
        guard data.count <= limits.maxTotalBytes else {
            throw ArchiveError(.limitExceeded(.totalBytes), "\(data.count) bytes exceed maxTotalBytes")
        }
        let document = try data.withUnsafeBytes { raw in
            // A binary plist is parsed in place; anything else goes through the validator's parse.
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            if BinaryPropertyListReader.hasMagic(bytes) {
                return try BinaryPropertyListReader.read(bytes, limits: limits)
            }
            return try KeyedArchiveValidator.parse([UInt8](bytes), limits: limits)
        }
        var reader = KeyedArchiveTableReader(document: document, limits: limits)
        self = try reader.read()
        byteCount = data.count
    }

    /// The URL an `NSURL` entry stands for, resolved against its `NS.base` chain.
    ///
    /// - Throws: `.typeMismatch` when the entry is not an `NSURL`; `.corrupt` when a string in
    ///   the chain is not a URL; `.unresolvedReference` for a chain that loops;
    ///   `.limitExceeded(.depth)` for one longer than `maxDepth`.
    public func url(at reference: KeyedArchiveReference) throws -> URL {
        var chain: [String] = []
        var seen = Set<Int>()
        var next: KeyedArchiveReference? = reference
        while let current = next {
            guard case .url(let relative, let base) = self[current] else {
                throw ArchiveError(
                    .typeMismatch,
                    "object \(current) is not an NSURL",
                    codingPath: ["$objects", "[\(current.index)]"]
                )
            }
            guard seen.insert(current.index).inserted else {
                throw ArchiveError(.unresolvedReference, "NSURL base chain loops at object \(current)")
            }
            guard chain.count < limits.maxDepth else {
                throw ArchiveError(.limitExceeded(.depth), "NSURL base chain longer than maxDepth")
            }
            chain.append(relative)
            next = base
        }
        var url: URL?
        for string in chain.reversed() {
            guard let resolved = URL(string: string, relativeTo: url) else {
                throw ArchiveError(
                    .corrupt,
                    "\"\(string)\" is not a URL",
                    codingPath: ["$objects", "[\(reference.index)]"]
                )
            }
            url = resolved
        }
        return url!  // the chain holds at least `reference` itself
    }
}
