import Archivist
import Foundation

/// Checks a keyed archive completely before any of its bytes reach `NSKeyedUnarchiver`.
///
/// The checks, in order (see `docs/FoundationBridge.md`):
/// 1. size within ``ArchiveLimits/maxTotalBytes``; a well-formed binary or XML property list,
///    read by our bounded readers; plist nesting acyclic and no deeper than
///    ``ArchiveLimits/maxDepth``; every dictionary key a string, none twice;
/// 2. `$archiver` is `NSKeyedArchiver`, `$version` is 100000, `$top` is a dictionary of UIDs,
///    `$objects` is an array whose first entry is `$null`; every UID in bounds;
/// 3. every `$class` is a UID to a class dictionary with a string `$classname` (and, when
///    present, `$classes`/`$classhints` arrays of strings), every name in the allowlist;
/// 4. Foundation value classes have the fields their corelibs `init(coder:)` force-unwraps, and
///    every `NSURL` resolves against its `NS.base` chain under both Foundation's URL parsers;
/// 5. the reference graph from `$top` is acyclic and no deeper than ``ArchiveLimits/maxDepth``
///    (computed iteratively); on corelibs Foundation, no `NSDictionary` or `NSOrderedSet` holds an instance
///    whose decoding may fail.
struct KeyedArchiveValidator {
    /// Class names the archive may instantiate.
    var allowedClassNames: Set<String>
    var limits: ArchiveLimits
    /// A key `$top` must have (`root` when unarchiving a root object), or `nil`.
    var requiredTopKey: String?
    /// Refuse `NSDictionary` instances whose contents may fail to decode. corelibs Foundation
    /// reads past its key and value arrays (SIGSEGV) when one element fails; Darwin does not.
    var refusesFallibleDictionaryContents = KeyedArchiveValidator.isCorelibsFoundation

    /// Whether this platform's Foundation is swift-corelibs-foundation.
    static var isCorelibsFoundation: Bool {
        #if canImport(Darwin)
        false
        #else
        true
        #endif
    }

    /// A validated archive: what it holds, its parsed property list, and the canonical bytes to
    /// hand to Foundation (written on request: the bridge's pure-Swift paths never need them).
    struct Result {
        var summary: KeyedArchiveSummary
        /// The property list that passed every check.
        var document: PropertyListDocument
        /// The canonical binary re-encoding of ``document``.
        var canonicalBytes: [UInt8] { BinaryPropertyListWriter.write(document) }
    }

    /// The node table plus the keyed-archive layout found in it.
    struct Layout {
        var document: PropertyListDocument
        /// Node index of each `$objects` entry.
        var objects: [Int]
        /// `$top` entries: key and object index.
        var top: [(key: String, object: Int)]
        /// Node index of the `$top` dictionary.
        var topNode: Int
        /// Class name of each instance dictionary, by node index.
        var instanceClass: [Int: String] = [:]
        /// Node index of each instance dictionary's `$class` value, so walks can skip it.
        var classReference: [Int: Int] = [:]
        /// The URL each `NSURL` instance decodes to, by node index, once checked.
        var resolvedURLs: [Int: URL] = [:]

        /// The object index a UID node refers to, or `nil` when `node` is not a UID.
        func target(ofUIDAt node: Int) -> Int? {
            if case .uid(let value) = document.nodes[node] { return Int(clamping: value) }
            return nil
        }
    }

    /// Runs every check.
    ///
    /// - Throws: `ArchiveError` (`.truncated`, `.badMagic`, `.corrupt`, `.unsupportedVersion`,
    ///   `.keyNotFound`, `.disallowedType`, `.unresolvedReference`, `.limitExceeded`).
    /// - Complexity: O(*n*) in the input size, plus O(*k*·*m*) for dictionary key lookups.
    func validate(_ data: Data) throws -> Result {
        guard data.count <= limits.maxTotalBytes else {
            throw ArchiveError(.limitExceeded(.totalBytes), "\(data.count) bytes exceed maxTotalBytes")
        }
        let document = try Self.parse([UInt8](data), limits: limits)
        try checkNesting(document)
        var layout = try readLayout(document)
        var classNames = Set<String>()
        for object in layout.objects.indices {
            if let name = try checkObject(object, in: &layout) { classNames.insert(name) }
        }
        let depth = try checkReferences(layout)
        let summary = KeyedArchiveSummary(
            format: document.format == .binary ? .binary : .xml,
            objectCount: layout.objects.count,
            instanceCount: layout.instanceClass.count,
            classNames: classNames,
            depth: depth,
            topLevelKeys: layout.top.map(\.key).sorted()
        )
        return Result(summary: summary, document: document)
    }

    /// Chooses the reader by the first bytes.
    static func parse(_ bytes: [UInt8], limits: ArchiveLimits) throws -> PropertyListDocument {
        if BinaryPropertyListReader.hasMagic(bytes) {
            var reader = BinaryPropertyListReader(bytes: bytes, limits: limits)
            return try reader.read()
        }
        let first = bytes.drop(while: { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }).first
        if first == UInt8(ascii: "<") {
            var reader = XMLPropertyListReader(bytes: bytes, limits: limits)
            return try reader.read()
        }
        if bytes.count < 8 {
            throw ArchiveError(.truncated, "input too short for a property list", offset: bytes.count)
        }
        throw ArchiveError(.badMagic, "neither a binary (bplist00) nor an XML property list", offset: 0)
    }

    /// Plist containers must form a DAG of bounded depth with string keys (a binary plist can
    /// make a container contain itself).
    private func checkNesting(_ document: PropertyListDocument) throws {
        var state = [UInt8](repeating: 0, count: document.nodes.count)  // 0 new, 1 open, 2 done
        var stack: [(node: Int, next: Int)] = [(document.root, 0)]
        state[document.root] = 1
        while let frame = stack.last {
            // One child per step, read in place: listing the children at each step would make a
            // container of n children cost n^2.
            if frame.next == 0, case .dictionary(let keys, _) = document.nodes[frame.node] {
                try checkKeys(keys, of: frame.node, in: document)
            }
            guard frame.next < document.childCount(of: frame.node) else {
                state[frame.node] = 2
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].next += 1
            let child = document.child(frame.next, of: frame.node)
            switch state[child] {
            case 1: throw ArchiveError(.corrupt, "property list container contains itself")
            case 2: continue
            default:
                guard stack.count < limits.maxDepth else {
                    throw ArchiveError(.limitExceeded(.depth), "plist nesting deeper than \(limits.maxDepth)")
                }
                state[child] = 1
                stack.append((child, 0))
            }
        }
    }

    /// Every key a string, and no key twice. NSKeyedArchiver never writes a key twice, and
    /// CoreFoundation's binary plist parser leaks the second key and its value when a
    /// dictionary has one (LeakSanitizer reports it), so a hostile file could leak memory on
    /// every read. Keys are compared as Swift strings (canonical equivalence), which is
    /// stricter than CoreFoundation's code-unit comparison: everything it sees as a repeat is
    /// refused, and a pair that is equal only after normalization is refused as well.
    private func checkKeys(
        _ keys: PropertyListDocument.References,
        of node: Int,
        in document: PropertyListDocument
    ) throws {
        var seen = Set<String>(minimumCapacity: keys.count)
        for key in keys {
            guard let name = document.string(at: key) else {
                throw ArchiveError(.corrupt, "dictionary key (object \(key)) is not a string")
            }
            guard seen.insert(name).inserted else {
                throw ArchiveError(.corrupt, "dictionary (object \(node)) has the key \"\(name)\" twice")
            }
        }
    }

    private func readLayout(_ document: PropertyListDocument) throws -> Layout {
        let envelope = try KeyedArchiveEnvelope(document, limits: limits)
        let (objects, topNode, keys, values) = (
            envelope.objects, envelope.topNode, envelope.topKeys, envelope.topValues
        )
        // Every UID anywhere must point into $objects. No date is NaN (``KeyedArchiveDateRule``,
        // the reader's rule too): corelibs traps describing one, and an NSDate key that is NaN
        // never equals itself, so NSDictionary lookups of its own keys fail.
        for (index, node) in document.nodes.enumerated() {
            switch node {
            case .uid(let value) where value >= UInt64(objects.count):
                throw ArchiveError(
                    .corrupt,
                    "reference \(value) out of bounds (\(objects.count) objects), object \(index)"
                )
            case .date(let seconds) where !KeyedArchiveDateRule.allows(seconds):
                throw KeyedArchiveDateRule.refusal(node: index)
            default:
                continue
            }
        }
        var top: [(key: String, object: Int)] = []
        for (key, value) in zip(keys, values) {
            let name = document.string(at: key) ?? ""
            guard case .uid(let target) = document.nodes[value] else {
                throw ArchiveError(.corrupt, "$top value is not a reference", codingPath: ["$top", name])
            }
            top.append((name, Int(clamping: target)))
        }
        if let requiredTopKey, !top.contains(where: { $0.key == requiredTopKey }) {
            throw ArchiveError(.keyNotFound, "$top has no \(requiredTopKey)", codingPath: ["$top", requiredTopKey])
        }
        return Layout(document: document, objects: Array(objects), top: top, topNode: topNode)
    }

    /// Checks one `$objects` entry; returns the class name when it is an instance.
    private func checkObject(_ object: Int, in layout: inout Layout) throws -> String? {
        let document = layout.document
        let node = layout.objects[object]
        // NSKeyedArchiver never writes a bare reference as an object; Foundation would hand its
        // private UID type to the caller (as an NSDictionary key, one that never matches).
        if case .uid = document.nodes[node] {
            throw ArchiveError(.corrupt, "$objects entry is a bare reference", codingPath: ["$objects", "[\(object)]"])
        }
        guard case .dictionary = document.nodes[node] else { return nil }
        let path = ["$objects", "[\(object)]"]
        guard let classValue = document.value(forKey: "$class", inDictionaryAt: node) else {
            // A class description, or a plain dictionary Foundation returns as a value.
            return nil
        }
        guard let classObject = layout.target(ofUIDAt: classValue) else {
            throw ArchiveError(.corrupt, "$class is not a reference", codingPath: path + ["$class"])
        }
        let className = try checkClassDescription(
            layout.objects[classObject],
            in: document,
            path: ["$objects", "[\(classObject)]"]
        )
        try checkFoundationFields(of: className, instance: node, in: layout, path: path)
        if className == "NSURL" { try resolveURL(instance: node, in: &layout, path: path) }
        layout.instanceClass[node] = className
        layout.classReference[node] = classValue
        return className
    }

    /// A class description: `$classname` string in the allowlist, optional string arrays.
    private func checkClassDescription(_ node: Int, in document: PropertyListDocument, path: [String]) throws -> String
    {
        guard case .dictionary = document.nodes[node],
            document.value(forKey: "$class", inDictionaryAt: node) == nil
        else {
            throw ArchiveError(.corrupt, "$class does not refer to a class description", codingPath: path)
        }
        guard let nameNode = document.value(forKey: "$classname", inDictionaryAt: node),
            let name = document.string(at: nameNode)
        else {
            throw ArchiveError(.corrupt, "class description without a string $classname", codingPath: path)
        }
        for key in ["$classes", "$classhints"] {
            guard let listNode = document.value(forKey: key, inDictionaryAt: node) else { continue }
            guard case .array(let entries) = document.nodes[listNode],
                entries.allSatisfy({ document.string(at: $0) != nil })
            else {
                throw ArchiveError(
                    .corrupt,
                    "\(key) is not an array of strings",
                    codingPath: path + [key],
                    typeName: name
                )
            }
            // Foundation instantiates a hint when the named class is missing: hints need the allowlist too.
            if key == "$classhints",
                let hint = entries.compactMap(document.string(at:)).first(where: {
                    !allowedClassNames.contains($0)
                })
            {
                throw ArchiveError(
                    .disallowedType,
                    "class hint \(hint) is not allowed",
                    codingPath: path,
                    typeName: hint
                )
            }
        }
        guard allowedClassNames.contains(name) else {
            throw ArchiveError(
                .disallowedType,
                "class \(name) is not among the allowed classes",
                codingPath: path,
                typeName: name
            )
        }
        return name
    }
}
