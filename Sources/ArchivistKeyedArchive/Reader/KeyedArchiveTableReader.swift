import Archivist
import Foundation

/// Turns a parsed property list into a ``KeyedArchive`` table, checking the layout.
///
/// One pass over `$objects`. Each class description is read once and its record (chain and
/// Foundation kind) shared by every instance of it; coding paths for errors are built only when
/// an error is thrown, never per object or field.
struct KeyedArchiveTableReader {
    let document: PropertyListDocument
    let limits: ArchiveLimits
    /// Plist values still allowed into fields (shared containers count each time reached).
    private var budget: Int
    private var objectCount = 0
    /// The node of the last `$class` key found (see ``classKeyPosition(_:)``).
    private var classKeyNode = -1
    /// Where each class description read so far is in ``classes``, by object index (-1: none):
    /// a slot per object, but plain integers, so the table costs one fill and no teardown.
    private var classSlots: [Int] = []
    /// The class descriptions read so far: a handful per archive.
    private var classes: [ClassEntry] = []

    /// A class description as its instances use it: its record, and the field names its
    /// instances share (see ``fieldTable(keys:values:classPosition:classIndex:objectIndex:)``)
    /// with the key node of each name.
    private struct ClassEntry {
        var record: ClassRecord
        var shape: KeyedArchiveFieldKeys?
        var shapeNodes: [Int] = []
    }
    /// How many references to each object were read, saturating at 2, and to all objects:
    /// what ``KeyedArchive/unfoldedBound`` is worked out from.
    private var referrers: [UInt8] = []
    private var referenceCount = 0

    /// A class description as instances use it: the chain, and which Foundation value it maps to.
    private struct ClassRecord {
        var chain: [String]
        var kind: KeyedArchiveFoundationValues.Kind
    }

    /// The `$objects` entries, once read from the envelope.
    private(set) var objectNodes = PropertyListDocument.References([])
    /// The plist containers fields have read so far (allocated at the first), until the first
    /// one read twice (see ``noteContainerRead(_:)``).
    var readContainers: [Bool] = []
    var sharingChecked = false

    init(document: PropertyListDocument, limits: ArchiveLimits) {
        self.document = document
        self.limits = limits
        self.budget = limits.maxObjectCount
    }

    /// The coding path of `$objects[index]`, plus `keys`.
    private static func path(_ index: Int, _ keys: String...) -> [String] { ["$objects", "[\(index)]"] + keys }

    mutating func read() throws -> KeyedArchive {
        let envelope = try KeyedArchiveEnvelope(document, limits: limits)
        objectNodes = envelope.objects
        objectCount = objectNodes.count
        classSlots = Array(repeating: -1, count: objectCount)
        referrers = Array(repeating: 0, count: objectCount)
        var top: [String: KeyedArchiveReference] = [:]
        for (key, value) in zip(envelope.topKeys, envelope.topValues) {
            guard let name = document.string(at: key) else {
                throw ArchiveError(.corrupt, "$top key is not a string", codingPath: ["$top"])
            }
            top[name] = try reference(at: value) { ["$top", name] }
        }
        var objects: [KeyedArchiveObject] = [.null]
        var chains: [[String]] = [[]]
        var urls: [Int] = []
        objects.reserveCapacity(objectNodes.count)
        chains.reserveCapacity(objectNodes.count)
        for index in objectNodes.indices.dropFirst() {
            let (object, chain, isURL) = try self.object(index, objectNodes: objectNodes)
            objects.append(object)
            chains.append(chain)
            if isURL { urls.append(index) }
        }
        try Self.resolveURLs(urls, in: &objects)
        // A NaN date the table did not read (it would have thrown with its path), which the
        // binary plist reader noted: the validator's rule covers every node.
        if let nanDate = document.firstNaNDate { throw KeyedArchiveDateRule.refusal(node: nanDate) }
        let bound = Self.unfoldedBound(
            objects,
            referrers: referrers,
            references: referenceCount,
            inlineValues: limits.maxObjectCount - budget
        )
        return KeyedArchive(objects: objects, classChains: chains, top: top, limits: limits, unfoldedBound: bound)
    }

    /// Counts a reference to `$objects[index]`.
    @inline(__always)
    private mutating func noteReference(_ index: Int) {
        referenceCount &+= 1
        if referrers[index] < 2 { referrers[index] += 1 }
    }

    /// The reference a UID node holds, in bounds (and counted).
    private mutating func reference(at node: Int, path: () -> [String]) throws -> KeyedArchiveReference {
        guard case .uid(let value) = document.nodes[node] else {
            throw ArchiveError(.corrupt, "expected a reference", codingPath: path())
        }
        guard value < UInt64(objectCount) else {
            throw ArchiveError(
                .corrupt,
                "reference \(value) out of bounds (\(objectCount) objects)",
                codingPath: path()
            )
        }
        noteReference(Int(value))
        return KeyedArchiveReference(Int(value))
    }

    /// Whether the string node `node` is exactly `key`.
    private func node(_ node: Int, is key: String) -> Bool {
        if case .string(let value) = document.nodes[node] { return value == key }
        return false
    }

    /// The position of the first `$class` entry of a dictionary's `keys`. The node of the last
    /// `$class` key found is compared first, as an integer: a binary archive stores that string once.
    private mutating func classKeyPosition(_ keys: PropertyListDocument.References) -> Int? {
        for position in keys.indices {
            let key = keys[position]
            if key == classKeyNode { return position }
            if case .string(let value) = document.nodes[key], value.utf8.count == 6, value == "$class" {
                classKeyNode = key
                return position
            }
        }
        return nil
    }

    /// The value of the first `key` entry of a dictionary's `keys`.
    private func value(
        _ key: String,
        keys: PropertyListDocument.References,
        values: PropertyListDocument.References
    ) -> Int? {
        for position in keys.indices where node(keys[position], is: key) { return values[position] }
        return nil
    }

    /// `$objects[index]`, its class chain, and whether it is an `NSURL` instance.
    private mutating func object(
        _ index: Int,
        objectNodes: PropertyListDocument.References
    ) throws -> (KeyedArchiveObject, [String], Bool) {
        let node = objectNodes[index]
        switch document.nodes[node] {
        case .string(let value): return (.string(value), [], false)
        case .integer(let value): return (.integer(value), [], false)
        case .unsignedInteger(let value): return (.unsignedInteger(value), [], false)
        case .real(let value): return (.real(value), [], false)
        case .bool(let value): return (.bool(value), [], false)
        case .data(let bytes): return (.data(Data(bytes)), [], false)
        case .date(let seconds):
            return (.date(try KeyedArchiveDateRule.date(seconds, codingPath: Self.path(index))), [], false)
        case .uid: throw ArchiveError(.corrupt, "$objects entry is a bare reference", codingPath: Self.path(index))
        case .array: return (.plist(try field(at: node, depth: 0) { Self.path(index) }), [], false)
        case .dictionary(let keys, let values):
            guard let classPosition = classKeyPosition(keys) else {
                if value("$classname", keys: keys, values: values) != nil {
                    return (.classDescription(try classRecord(index, objectNodes: objectNodes).chain), [], false)
                }
                return (.plist(try field(at: node, depth: 0) { Self.path(index) }), [], false)
            }
            let classReference = try reference(at: values[classPosition]) { Self.path(index, "$class") }
            let record = try classRecord(classReference.index, objectNodes: objectNodes)
            if record.kind != .other, record.kind != .url,
                let object = try foundationValue(
                    record.kind,
                    className: record.chain[0],
                    keys: keys,
                    values: values,
                    classPosition: classPosition,
                    classIndex: classReference.index,
                    objectIndex: index
                )
            {
                // Read from the nodes, its references were not counted as fields: count them.
                switch object {
                case .array(let elements), .set(let elements), .orderedSet(let elements):
                    for element in elements { noteReference(element.index) }
                case .dictionary(let keys, let values):
                    for key in keys { noteReference(key.index) }
                    for value in values { noteReference(value.index) }
                default:
                    break
                }
                return (object, record.chain, false)
            }
            let table = try fieldTable(
                keys: keys,
                values: values,
                classPosition: classPosition,
                classIndex: classReference.index,
                objectIndex: index
            )
            let instance = KeyedArchiveInstance(classChain: record.chain, table: table)
            let object = try KeyedArchiveFoundationValues.object(for: instance, kind: record.kind) { Self.path(index) }
            return (object, record.chain, record.kind == .url)
        }
    }

    /// The fields of the instance at `$objects[objectIndex]`, whose dictionary has `keys` and
    /// `values` (`$class` first at `classPosition`), in the shape of its class's instances.
    ///
    /// Archivers write an instance's keys in any order (corelibs in a new order for each), so a
    /// shape is a set of names: this instance's values are put in the order of the shape its
    /// class has, when its keys are the same names. Otherwise the instance's own keys, checked
    /// (strings, none twice), become the class's shape.
    private mutating func fieldTable(
        keys: PropertyListDocument.References,
        values: PropertyListDocument.References,
        classPosition: Int,
        classIndex: Int,
        objectIndex: Int
    ) throws -> KeyedArchiveFieldTable {
        let slot = classSlots[classIndex]
        if let shape = classes[slot].shape,
            let table = try fieldTable(
                keys: keys,
                values: values,
                classPosition: classPosition,
                shape: shape,
                shapeNodes: classes[slot].shapeNodes,
                objectIndex: objectIndex
            )
        {
            return table
        }
        var names: [String] = []
        var nodes: [Int] = []
        var positions: [Int] = []
        names.reserveCapacity(keys.count - 1)
        nodes.reserveCapacity(keys.count - 1)
        positions.reserveCapacity(keys.count - 1)
        for (position, key) in keys.enumerated() {
            guard case .string(let name) = document.nodes[key] else {
                throw ArchiveError(.corrupt, "field name is not a string", codingPath: Self.path(objectIndex))
            }
            guard name != "$class" else { continue }
            names.append(name)
            nodes.append(key)
            positions.append(position)
        }
        var duplicate: String?
        guard let shape = KeyedArchiveFieldKeys.unique(names, duplicate: &duplicate) else {
            let name = duplicate ?? ""
            throw ArchiveError(.corrupt, "field \(name) appears twice", codingPath: Self.path(objectIndex, name))
        }
        classes[slot].shape = shape
        classes[slot].shapeNodes = nodes
        var fieldValues: [KeyedArchiveField] = []
        fieldValues.reserveCapacity(names.count)
        for (slot, position) in positions.enumerated() {
            fieldValues.append(try field(at: values[position], depth: 1) { Self.path(objectIndex, names[slot]) })
        }
        return KeyedArchiveFieldTable(keys: shape, values: fieldValues)
    }

    /// The fields in `shape`'s order, or `nil` when the keys other than `$class` do not match
    /// the shape (``matchShape(_:keys:classPosition:shape:shapeNodes:_:)``).
    private mutating func fieldTable(
        keys: PropertyListDocument.References,
        values: PropertyListDocument.References,
        classPosition: Int,
        shape: KeyedArchiveFieldKeys,
        shapeNodes: [Int],
        objectIndex: Int
    ) throws -> KeyedArchiveFieldTable? {
        try Self.matchShape(
            document.nodes,
            keys: keys,
            classPosition: classPosition,
            shape: shape,
            shapeNodes: shapeNodes
        ) { source in
            var fieldValues: [KeyedArchiveField] = []
            fieldValues.reserveCapacity(source.count)
            for slot in source.indices {
                fieldValues.append(
                    try field(at: values[source[slot]], depth: 1) { Self.path(objectIndex, shape.names[slot]) }
                )
            }
            return KeyedArchiveFieldTable(keys: shape, values: fieldValues)
        }
    }

    /// Calls `body` with the position in `keys` of each of `shape`'s names, slot by slot, or
    /// returns `nil` when the keys other than `$class` (at `classPosition`) are not exactly
    /// `shape`'s names, each once: found by node (a binary archive stores each key string once,
    /// so a key is an integer compare) or else by name.
    private static func matchShape<Result>(
        _ nodes: [PropertyListDocument.Node],
        keys: PropertyListDocument.References,
        classPosition: Int,
        shape: KeyedArchiveFieldKeys,
        shapeNodes: [Int],
        _ body: (UnsafeMutableBufferPointer<Int>) throws -> Result
    ) rethrows -> Result? {
        let width = shapeNodes.count
        guard keys.count == width + 1 else { return nil }
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: width) { source -> Result? in
            source.initialize(repeating: -1)
            // Corelibs writes every instance's key strings anew, so once one key is not the
            // shape's node, the rest are looked up by name without scanning the nodes first.
            var byNode = true
            for position in keys.indices where position != classPosition {
                let key = keys[position]
                var slot = -1
                if byNode {
                    for candidate in 0..<width where shapeNodes[candidate] == key {
                        slot = candidate
                        break
                    }
                    byNode = slot >= 0
                }
                if slot < 0 {
                    guard case .string(let name) = nodes[key], let found = shape.position(of: name) else { return nil }
                    slot = found
                }
                // Two keys on one slot: the general path reports the repeat.
                guard source[slot] < 0 else { return nil }
                source[slot] = position
            }
            // `width` keys on distinct slots of `width`: every slot has its value.
            return try body(source)
        }
    }

    /// The value an instance of a Foundation value class stands for, read from its plist
    /// nodes without building its field table, or `nil` when its keys do not match its class's
    /// shape (the first instance of a class, or one written with other keys: the general path).
    private func foundationValue(
        _ kind: KeyedArchiveFoundationValues.Kind,
        className: String,
        keys: PropertyListDocument.References,
        values: PropertyListDocument.References,
        classPosition: Int,
        classIndex: Int,
        objectIndex: Int
    ) throws -> KeyedArchiveObject? {
        let slot = classSlots[classIndex]
        guard let shape = classes[slot].shape else { return nil }
        // Captured apart: a closure reading them through `self` copied the whole reader.
        let nodes = document.nodes
        let objectCount = objectCount
        return try Self.matchShape(
            nodes,
            keys: keys,
            classPosition: classPosition,
            shape: shape,
            shapeNodes: classes[slot].shapeNodes
        ) { source in
            let fields = KeyedArchiveNodeFields(
                nodes: nodes,
                shape: shape,
                values: values,
                positions: source,
                objectCount: objectCount
            ) { Self.path(objectIndex) }
            return try KeyedArchiveFoundationValues.object(kind, className: className, fields: fields) {
                Self.path(objectIndex)
            }
        }
    }

    /// The record of the class description at `$objects[index]`, read once.
    private mutating func classRecord(_ index: Int, objectNodes: PropertyListDocument.References) throws -> ClassRecord
    {
        if classSlots[index] >= 0 { return classes[classSlots[index]].record }
        let chain = try classChain(at: objectNodes[index]) { Self.path(index) }
        let record = ClassRecord(chain: chain, kind: KeyedArchiveFoundationValues.Kind(className: chain[0]))
        classSlots[index] = classes.count
        classes.append(ClassEntry(record: record))
        return record
    }

    /// A class description's chain: `$classes` (most derived first), else `[$classname]`.
    private func classChain(at node: Int, path: () -> [String]) throws -> [String] {
        guard case .dictionary(let keys, let values) = document.nodes[node],
            value("$class", keys: keys, values: values) == nil
        else {
            throw ArchiveError(.corrupt, "$class does not refer to a class description", codingPath: path())
        }
        guard let nameNode = value("$classname", keys: keys, values: values), let name = document.string(at: nameNode)
        else {
            throw ArchiveError(.corrupt, "class description without a string $classname", codingPath: path())
        }
        guard let classesNode = value("$classes", keys: keys, values: values) else { return [name] }
        guard case .array(let entries) = document.nodes[classesNode] else {
            throw ArchiveError(
                .corrupt,
                "$classes is not an array of strings",
                codingPath: path() + ["$classes"],
                typeName: name
            )
        }
        var chain: [String] = []
        chain.reserveCapacity(entries.count + 1)
        for entry in entries {
            guard let superclass = document.string(at: entry) else {
                throw ArchiveError(
                    .corrupt,
                    "$classes is not an array of strings",
                    codingPath: path() + ["$classes"],
                    typeName: name
                )
            }
            chain.append(superclass)
        }
        return chain.first == name ? chain : [name] + chain
    }

    /// A plist value read into a field, bounded in depth and in total values read.
    private mutating func field(at node: Int, depth: Int, path: () -> [String]) throws -> KeyedArchiveField {
        guard depth <= limits.maxDepth else {
            throw ArchiveError(.limitExceeded(.depth), "plist nesting deeper than maxDepth", codingPath: path())
        }
        budget -= 1
        guard budget >= 0 else {
            throw ArchiveError(
                .limitExceeded(.objectCount),
                "the archive's fields unfold to more than maxObjectCount values",
                codingPath: path()
            )
        }
        switch document.nodes[node] {
        case .string(let value): return .string(value)
        case .integer(let value): return .integer(value)
        case .unsignedInteger(let value): return .unsignedInteger(value)
        case .real(let value): return .real(value)
        case .bool(let value): return .bool(value)
        case .data(let bytes): return .data(Data(bytes))
        case .date(let seconds): return .date(try KeyedArchiveDateRule.date(seconds, codingPath: path()))
        case .uid: return .reference(try reference(at: node, path: path))
        case .array(let elements):
            try noteContainerRead(node)
            var fields: [KeyedArchiveField] = []
            fields.reserveCapacity(elements.count)
            for (position, element) in elements.enumerated() {
                fields.append(try field(at: element, depth: depth + 1) { path() + ["[\(position)]"] })
            }
            return .array(fields)
        case .dictionary(let keys, let values):
            try noteContainerRead(node)
            var entries: [String: KeyedArchiveField] = [:]
            entries.reserveCapacity(keys.count)
            for (key, value) in zip(keys, values) {
                guard let name = document.string(at: key) else {
                    throw ArchiveError(.corrupt, "dictionary key is not a string", codingPath: path())
                }
                guard
                    entries.updateValue(try field(at: value, depth: depth + 1) { path() + [name] }, forKey: name) == nil
                else {
                    throw ArchiveError(.corrupt, "key \(name) appears twice", codingPath: path() + [name])
                }
            }
            return .dictionary(entries)
        }
    }

    /// Turns the `NSURL` instances at `indexes` into ``KeyedArchiveObject/url(relative:base:)``
    /// once the whole table is read: `NS.relative` must name a string, `NS.base` `$null` or
    /// another `NSURL`.
    private static func resolveURLs(_ indexes: [Int], in objects: inout [KeyedArchiveObject]) throws {
        func isURL(_ object: KeyedArchiveObject) -> Bool {
            switch object {
            case .url: return true
            case .instance(let instance): return instance.classChain.first == "NSURL"
            default: return false
            }
        }
        for index in indexes {
            guard case .instance(let instance) = objects[index] else { continue }
            var relative: String?
            switch instance.table["NS.relative"] {
            case .string(let value)?: relative = value
            case .reference(let target)?: if case .string(let value) = objects[target.index] { relative = value }
            default: break
            }
            guard let relative else {
                throw ArchiveError(
                    .corrupt,
                    "NSURL.NS.relative must be a string",
                    codingPath: path(index, "NS.relative"),
                    typeName: "NSURL"
                )
            }
            var base: KeyedArchiveReference?
            switch instance.table["NS.base"] {
            case nil: base = nil
            case .reference(let target)? where target.isNull: base = nil
            case .reference(let target)? where isURL(objects[target.index]): base = target
            default:
                throw ArchiveError(
                    .corrupt,
                    "NSURL.NS.base must be $null or an NSURL",
                    codingPath: path(index, "NS.base"),
                    typeName: "NSURL"
                )
            }
            objects[index] = .url(relative: relative, base: base)
        }
    }
}
