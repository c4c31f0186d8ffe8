import Archivist

/// The parts of an NSKeyedArchiver property list that every reader of it checks first:
/// `$archiver` is `NSKeyedArchiver`, `$version` is 100000, `$objects` is an array that starts
/// with `$null` and is no longer than `maxObjectCount`, `$top` is a dictionary.
///
/// Shared by the validator (before Foundation sees an archive) and the pure-Swift reader, so
/// the two judge an archive's envelope alike.
struct KeyedArchiveEnvelope {
    /// Node index of each `$objects` entry.
    var objects: PropertyListDocument.References
    /// Node index of the `$top` dictionary.
    var topNode: Int
    /// Node indices of `$top`'s keys.
    var topKeys: PropertyListDocument.References
    /// Node indices of `$top`'s values, in the order of ``topKeys``.
    var topValues: PropertyListDocument.References

    /// Reads the envelope of `document`.
    ///
    /// - Throws: ``ArchiveError`` with `corrupt`, `unsupportedVersion` or
    ///   `limitExceeded(.objectCount)`, naming the key at fault.
    init(_ document: PropertyListDocument, limits: ArchiveLimits) throws {
        let root = document.root
        guard case .dictionary = document.nodes[root] else {
            throw ArchiveError(.corrupt, "archive root is not a dictionary")
        }
        guard let archiver = document.value(forKey: "$archiver", inDictionaryAt: root),
            document.string(at: archiver) == "NSKeyedArchiver"
        else {
            throw ArchiveError(.corrupt, "$archiver is not NSKeyedArchiver", codingPath: ["$archiver"])
        }
        guard let version = document.value(forKey: "$version", inDictionaryAt: root),
            document.nodes[version] == .integer(100_000)
        else {
            throw ArchiveError(.unsupportedVersion, "$version is not 100000", codingPath: ["$version"])
        }
        guard let objectsNode = document.value(forKey: "$objects", inDictionaryAt: root),
            case .array(let objects) = document.nodes[objectsNode]
        else {
            throw ArchiveError(.corrupt, "$objects is missing or not an array", codingPath: ["$objects"])
        }
        guard let first = objects.first, document.string(at: first) == "$null" else {
            throw ArchiveError(.corrupt, "$objects does not start with $null", codingPath: ["$objects", "[0]"])
        }
        guard objects.count <= limits.maxObjectCount else {
            throw ArchiveError(.limitExceeded(.objectCount), "\(objects.count) objects exceed maxObjectCount")
        }
        guard let topNode = document.value(forKey: "$top", inDictionaryAt: root),
            case .dictionary(let keys, let values) = document.nodes[topNode]
        else {
            throw ArchiveError(.corrupt, "$top is missing or not a dictionary", codingPath: ["$top"])
        }
        self.objects = objects
        self.topNode = topNode
        topKeys = keys
        topValues = values
    }
}
