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
            throw ArchiveError(.limitExceeded(.objectCount), "more than maxObjectCount (\(limits.maxObjectCount)) objects")
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

    /// The object describing `chain` (`$classname`, `$classes`), written once.
    func classObject(_ chain: [String]) throws -> Int {
        if let object = classObjects[chain] { return object }
        let object = try reserveObject()
        let keys = [string("$classname"), string("$classes")]
        let values = [string(chain[0]), node(.array(chain.map(string)))]
        setObject(object, node: node(.dictionary(keys: keys, values: values)))
        classObjects[chain] = object
        return object
    }

    /// An instance dictionary: `$class` and the fields (values are node indexes).
    func instanceNode(classChain: [String], fields: [(key: String, node: Int)]) throws -> Int {
        let classReference = uid(try classObject(classChain))
        return node(.dictionary(keys: [string("$class")] + fields.map { string($0.key) },
                                values: [classReference] + fields.map(\.node)))
    }

    /// Runs `body` one level deeper, refusing past `maxDepth` (writing recurses per level).
    func nested<R>(_ codingPath: [String], _ body: () throws -> R) throws -> R {
        guard depth < limits.maxDepth else {
            throw ArchiveError(.limitExceeded(.depth), "objects nest deeper than maxDepth (\(limits.maxDepth))", codingPath: codingPath)
        }
        depth += 1
        defer { depth -= 1 }
        return try body()
    }

    /// The object already written for a class instance, if any.
    func writtenObject(for instance: AnyObject) -> Int? { identities[ObjectIdentifier(instance)] }

    /// Records the object a class instance is written as, before its fields (so a cycle finds it).
    func record(_ instance: AnyObject, as object: Int) { identities[ObjectIdentifier(instance)] = object }

    /// The finished archive: a canonical binary plist with `root` under `$top`.
    func finish(root: Int) -> Data {
        let top = node(.dictionary(keys: [string("root")], values: [uid(root)]))
        let objectArray = node(.array(objects))
        let keys = ["$archiver", "$version", "$top", "$objects"].map(string)
        let values = [string("NSKeyedArchiver"), node(.integer(100_000)), top, objectArray]
        let rootNode = node(.dictionary(keys: keys, values: values))
        return Data(BinaryPropertyListWriter.write(PropertyListDocument(nodes: nodes, root: rootNode, format: .binary)))
    }
}
