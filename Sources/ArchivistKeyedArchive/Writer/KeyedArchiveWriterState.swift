import Archivist
import Foundation

/// The `$objects` table of an archive being written, and what keeps it bounded and shared.
final class KeyedArchiveWriterState {
    typealias Node = PropertyListDocument.Node
    let limits: ArchiveLimits
    private(set) var nodes: [Node] = [.string("$null")]
    /// Node index of each `$objects` entry (-1 while reserved).
    private(set) var objects: [Int] = [0]
    private var classObjects: [[String]: Int] = [:]
    /// The class object written last, and its chain: instances mostly come in runs of one class.
    private var lastClass: (chain: [String], object: Int)?
    /// Key nodes of the last instance written of each class object, `$class` first: most
    /// instances of a class write the same keys, which then cost no string lookups.
    private var classKeys: [Int: (names: [String], nodes: [Int])] = [:]
    /// `String(reflecting:)` of each type written under its default chain, or `""` for a
    /// top-level one (see ``checkClassName(_:of:codingPath:)``).
    private var reflectedNames: [ObjectIdentifier: String] = [:]
    /// `KeyedArchiveClassNamed` chains by type, asked once per type.
    private var typeChains: [ObjectIdentifier: [String]?] = [:]
    private var strings: [String: Int] = [:]
    /// Class instances already written, so sharing (and cycles) are kept as references.
    private var identities: [ObjectIdentifier: Int] = [:]
    private var depth = 0

    init(limits: ArchiveLimits) { self.limits = limits }

    func node(_ node: Node) -> Int {
        nodes.append(node)
        return nodes.count - 1
    }

    /// A UID node naming object `object`.
    func uid(_ object: Int) -> Int { node(.uid(UInt64(object))) }

    /// A shared string node (keys, class names).
    func string(_ value: String) -> Int {
        if let index = strings[value] { return index }
        let index = node(.string(value))
        strings[value] = index
        return index
    }

    /// Reserves the next `$objects` entry.
    func reserveObject() throws -> Int {
        guard objects.count < limits.maxObjectCount else {
            throw ArchiveError(
                .limitExceeded(.objectCount),
                "more than maxObjectCount (\(limits.maxObjectCount)) objects"
            )
        }
        objects.append(-1)
        return objects.count - 1
    }

    func setObject(_ object: Int, node: Int) { objects[object] = node }

    /// An object holding one plain plist value (a string or a number).
    func plainObject(_ value: Node) throws -> Int {
        let object = try reserveObject()
        setObject(object, node: node(value))
        return object
    }

    /// The class chain a `KeyedArchiveClassNamed` type names, or `nil` for other types.
    func classChain<T>(of type: T.Type) -> [String]? {
        let id = ObjectIdentifier(type)
        if let chain = typeChains[id] { return chain }
        let chain = (type as? KeyedArchiveClassNamed.Type)?.keyedArchiveClassChain
        typeChains[id] = .some(chain)
        return chain
    }

    /// Refuses `chain` when it is `type`'s `String(reflecting:)` default and that names no
    /// class Foundation can look up (``KeyedArchiveClassName``). The name is worked out once
    /// per type.
    ///
    /// - Throws: `.invalidValue` naming the type.
    func checkClassName<T>(_ chain: [String], of type: T.Type, codingPath: [String]) throws {
        let id = ObjectIdentifier(type)
        let reflected: String
        if let known = reflectedNames[id] {
            reflected = known
        } else {
            let name = String(reflecting: type)
            // A top-level name is never refused: keep an empty one, which no chain starts with.
            reflected = KeyedArchiveClassName.isTopLevel(name) ? "" : name
            reflectedNames[id] = reflected
        }
        guard !reflected.isEmpty else { return }
        if let refusal = KeyedArchiveClassName.unresolvableDefault(
            chain,
            of: type,
            reflected: reflected,
            codingPath: codingPath
        ) {
            throw refusal
        }
    }

    /// The object describing `chain` (`$classname`, `$classes`), written once.
    func classObject(_ chain: [String]) throws -> Int {
        if let lastClass, lastClass.chain == chain { return lastClass.object }
        let object = try newClassObject(chain)
        lastClass = (chain, object)
        return object
    }

    private func newClassObject(_ chain: [String]) throws -> Int {
        if let object = classObjects[chain] { return object }
        let object = try reserveObject()
        let keys = [string("$classname"), string("$classes")]
        let values = [string(chain[0]), node(.array(chain.map(string)))]
        setObject(object, node: node(.dictionary(keys: keys, values: values)))
        classObjects[chain] = object
        return object
    }

    /// An instance dictionary: `$class` and the fields (values are node indexes).
    func instanceNode(classChain: [String], fields: [(key: String, value: Int)]) throws -> Int {
        let classObject = try classObject(classChain)
        var values: [Int] = []
        values.reserveCapacity(fields.count + 1)
        values.append(uid(classObject))
        for field in fields { values.append(field.value) }
        return node(.dictionary(keys: keyNodes(fields, classObject: classObject), values: values))
    }

    /// The key nodes of an instance, `$class` first; shared with the previous instance of its
    /// class when the names are the same.
    private func keyNodes(_ fields: [(key: String, value: Int)], classObject: Int) -> [Int] {
        if let cached = classKeys[classObject], cached.names.count == fields.count,
            zip(cached.names, fields).allSatisfy({ $0 == $1.key })
        {
            return cached.nodes
        }
        var nodes: [Int] = []
        nodes.reserveCapacity(fields.count + 1)
        nodes.append(string("$class"))
        for field in fields { nodes.append(string(field.key)) }
        classKeys[classObject] = (fields.map(\.key), nodes)
        return nodes
    }

    /// Runs `body` one level deeper, refusing past `maxDepth` (writing recurses per level).
    func nested<R>(_ codingPath: [String], _ body: () throws -> R) throws -> R {
        guard depth < limits.maxDepth else {
            throw ArchiveError(
                .limitExceeded(.depth),
                "objects nest deeper than maxDepth (\(limits.maxDepth))",
                codingPath: codingPath
            )
        }
        depth += 1
        defer { depth -= 1 }
        return try body()
    }

    /// The object already written for a class instance, if any.
    func writtenObject(for instance: AnyObject) -> Int? { identities[ObjectIdentifier(instance)] }

    /// Records the object a class instance is written as, before its fields (so a cycle finds it).
    func record(_ instance: AnyObject, as object: Int) { identities[ObjectIdentifier(instance)] = object }

    /// The finished archive: a canonical binary plist with `root` under `$top`, no larger than
    /// `maxTotalBytes` (the reader's bound on its input).
    ///
    /// - Throws: `.limitExceeded(.totalBytes)` for a larger archive.
    func finish(root: Int) throws -> Data {
        let top = node(.dictionary(keys: [string("root")], values: [uid(root)]))
        let objectArray = node(.array(objects))
        let keys = ["$archiver", "$version", "$top", "$objects"].map(string)
        let values = [string("NSKeyedArchiver"), node(.integer(100_000)), top, objectArray]
        let rootNode = node(.dictionary(keys: keys, values: values))
        let bytes = BinaryPropertyListWriter.write(PropertyListDocument(nodes: nodes, root: rootNode, format: .binary))
        guard bytes.count <= limits.maxTotalBytes else {
            throw ArchiveError(
                .limitExceeded(.totalBytes),
                "the archive's \(bytes.count) bytes exceed maxTotalBytes (\(limits.maxTotalBytes))"
            )
        }
        return Data(bytes)
    }
}
