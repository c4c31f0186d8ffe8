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
    ///   type), `.unsupportedVersion` for a `$version` other than 100000, `.limitExceeded`.
    /// - Complexity: O(*n*) in the size of `data` (plus plist sharing, bounded as above).
    public init(data: Data, limits: ArchiveLimits = .init()) throws {
        guard data.count <= limits.maxTotalBytes else {
            throw ArchiveError(.limitExceeded(.totalBytes), "\(data.count) bytes exceed maxTotalBytes")
        }
        let document = try KeyedArchiveValidator.parse([UInt8](data), limits: limits)
        var reader = KeyedArchiveTableReader(document: document, limits: limits)
        self = try reader.read()
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
                throw ArchiveError(.typeMismatch, "object \(current) is not an NSURL", codingPath: ["$objects", "[\(current.index)]"])
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
                throw ArchiveError(.corrupt, "\"\(string)\" is not a URL", codingPath: ["$objects", "[\(reference.index)]"])
            }
            url = resolved
        }
        return url!  // the chain holds at least `reference` itself
    }
}

/// Turns a parsed property list into a ``KeyedArchive`` table, checking the layout.
struct KeyedArchiveTableReader {
    let document: PropertyListDocument
    let limits: ArchiveLimits
    /// Plist values still allowed into fields (shared containers count each time reached).
    private var budget: Int
    private var objectCount = 0

    init(document: PropertyListDocument, limits: ArchiveLimits) {
        self.document = document
        self.limits = limits
        self.budget = limits.maxObjectCount
    }

    mutating func read() throws -> KeyedArchive {
        let envelope = try KeyedArchiveEnvelope(document, limits: limits)
        let objectNodes = envelope.objects
        objectCount = objectNodes.count
        let (topKeys, topValues) = (envelope.topKeys, envelope.topValues)
        var top: [String: KeyedArchiveReference] = [:]
        for (key, value) in zip(topKeys, topValues) {
            guard let name = document.string(at: key) else {
                throw ArchiveError(.corrupt, "$top key is not a string", codingPath: ["$top"])
            }
            top[name] = try reference(at: value, path: ["$top", name])
        }
        var objects: [KeyedArchiveObject] = [.null]
        var chains: [[String]] = [[]]
        objects.reserveCapacity(objectNodes.count)
        chains.reserveCapacity(objectNodes.count)
        for index in objectNodes.indices.dropFirst() {
            let (object, chain) = try self.object(at: objectNodes[index], path: ["$objects", "[\(index)]"], objectNodes: objectNodes)
            objects.append(object)
            chains.append(chain)
        }
        try resolveURLs(&objects)
        return KeyedArchive(objects: objects, classChains: chains, top: top, limits: limits)
    }

    /// The reference a UID node holds, in bounds.
    private func reference(at node: Int, path: [String]) throws -> KeyedArchiveReference {
        guard case .uid(let value) = document.nodes[node] else {
            throw ArchiveError(.corrupt, "expected a reference", codingPath: path)
        }
        guard value < UInt64(objectCount) else {
            throw ArchiveError(.corrupt, "reference \(value) out of bounds (\(objectCount) objects)", codingPath: path)
        }
        return KeyedArchiveReference(Int(value))
    }

    /// One `$objects` entry and its class chain.
    private mutating func object(at node: Int, path: [String], objectNodes: [Int]) throws -> (KeyedArchiveObject, [String]) {
        switch document.nodes[node] {
        case .string(let value): return (.string(value), [])
        case .integer(let value): return (.integer(value), [])
        case .unsignedInteger(let value): return (.unsignedInteger(value), [])
        case .real(let value): return (.real(value), [])
        case .bool(let value): return (.bool(value), [])
        case .data(let bytes): return (.data(Data(bytes)), [])
        case .date(let seconds): return (.date(Date(timeIntervalSinceReferenceDate: seconds)), [])
        case .uid: throw ArchiveError(.corrupt, "$objects entry is a bare reference", codingPath: path)
        case .array: return (.plist(try field(at: node, path: path, depth: 0)), [])
        case .dictionary(let keys, let values):
            guard let classValue = document.value(forKey: "$class", inDictionaryAt: node) else {
                if document.value(forKey: "$classname", inDictionaryAt: node) != nil {
                    return (.classDescription(try classChain(at: node, path: path)), [])
                }
                return (.plist(try field(at: node, path: path, depth: 0)), [])
            }
            let classReference = try reference(at: classValue, path: path + ["$class"])
            let classPath = ["$objects", "[\(classReference.index)]"]
            let chain = try classChain(at: objectNodes[classReference.index], path: classPath)
            var fields: [String: KeyedArchiveField] = [:]
            fields.reserveCapacity(keys.count)
            for (key, value) in zip(keys, values) {
                guard let name = document.string(at: key) else {
                    throw ArchiveError(.corrupt, "field name is not a string", codingPath: path)
                }
                guard name != "$class" else { continue }
                guard fields.updateValue(try field(at: value, path: path + [name], depth: 1), forKey: name) == nil else {
                    throw ArchiveError(.corrupt, "field \(name) appears twice", codingPath: path + [name])
                }
            }
            let instance = KeyedArchiveInstance(classChain: chain, fields: fields)
            return (try KeyedArchiveFoundationValues.object(for: instance, path: path), chain)
        }
    }

    /// A class description's chain: `$classes` (most derived first), else `[$classname]`.
    private func classChain(at node: Int, path: [String]) throws -> [String] {
        guard case .dictionary = document.nodes[node],
              document.value(forKey: "$class", inDictionaryAt: node) == nil else {
            throw ArchiveError(.corrupt, "$class does not refer to a class description", codingPath: path)
        }
        guard let nameNode = document.value(forKey: "$classname", inDictionaryAt: node),
              let name = document.string(at: nameNode) else {
            throw ArchiveError(.corrupt, "class description without a string $classname", codingPath: path)
        }
        guard let classesNode = document.value(forKey: "$classes", inDictionaryAt: node) else { return [name] }
        guard case .array(let entries) = document.nodes[classesNode] else {
            throw ArchiveError(.corrupt, "$classes is not an array of strings", codingPath: path + ["$classes"], typeName: name)
        }
        var chain: [String] = []
        for entry in entries {
            guard let superclass = document.string(at: entry) else {
                throw ArchiveError(.corrupt, "$classes is not an array of strings", codingPath: path + ["$classes"], typeName: name)
            }
            chain.append(superclass)
        }
        return chain.first == name ? chain : [name] + chain
    }

    /// A plist value read into a field, bounded in depth and in total values read.
    private mutating func field(at node: Int, path: [String], depth: Int) throws -> KeyedArchiveField {
        guard depth <= limits.maxDepth else {
            throw ArchiveError(.limitExceeded(.depth), "plist nesting deeper than maxDepth", codingPath: path)
        }
        budget -= 1
        guard budget >= 0 else {
            throw ArchiveError(.limitExceeded(.objectCount), "the archive's fields unfold to more than maxObjectCount values",
                               codingPath: path)
        }
        switch document.nodes[node] {
        case .string(let value): return .string(value)
        case .integer(let value): return .integer(value)
        case .unsignedInteger(let value): return .unsignedInteger(value)
        case .real(let value): return .real(value)
        case .bool(let value): return .bool(value)
        case .data(let bytes): return .data(Data(bytes))
        case .date(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .uid: return .reference(try reference(at: node, path: path))
        case .array(let elements):
            var fields: [KeyedArchiveField] = []
            fields.reserveCapacity(elements.count)
            for (position, element) in elements.enumerated() {
                fields.append(try field(at: element, path: path + ["[\(position)]"], depth: depth + 1))
            }
            return .array(fields)
        case .dictionary(let keys, let values):
            var entries: [String: KeyedArchiveField] = [:]
            for (key, value) in zip(keys, values) {
                guard let name = document.string(at: key) else {
                    throw ArchiveError(.corrupt, "dictionary key is not a string", codingPath: path)
                }
                guard entries.updateValue(try field(at: value, path: path + [name], depth: depth + 1), forKey: name) == nil else {
                    throw ArchiveError(.corrupt, "key \(name) appears twice", codingPath: path + [name])
                }
            }
            return .dictionary(entries)
        }
    }

    /// Turns `NSURL` instances into ``KeyedArchiveObject/url(relative:base:)`` once the whole
    /// table is read: `NS.relative` must name a string, `NS.base` `$null` or another `NSURL`.
    private func resolveURLs(_ objects: inout [KeyedArchiveObject]) throws {
        func isURL(_ object: KeyedArchiveObject) -> Bool {
            if case .instance(let instance) = object { return instance.classChain.first == "NSURL" }
            return false
        }
        for index in objects.indices {
            guard case .instance(let instance) = objects[index], instance.className == "NSURL" else { continue }
            let path = ["$objects", "[\(index)]"]
            var relative: String?
            switch instance.fields["NS.relative"] {
            case .string(let value)?: relative = value
            case .reference(let target)?: if case .string(let value) = objects[target.index] { relative = value }
            default: break
            }
            guard let relative else {
                throw ArchiveError(.corrupt, "NSURL.NS.relative must be a string", codingPath: path + ["NS.relative"], typeName: "NSURL")
            }
            var base: KeyedArchiveReference?
            switch instance.fields["NS.base"] {
            case nil: base = nil
            case .reference(let target)? where target.isNull: base = nil
            case .reference(let target)? where isURL(objects[target.index]): base = target
            default:
                throw ArchiveError(.corrupt, "NSURL.NS.base must be $null or an NSURL", codingPath: path + ["NS.base"], typeName: "NSURL")
            }
            objects[index] = .url(relative: relative, base: base)
        }
    }
}
