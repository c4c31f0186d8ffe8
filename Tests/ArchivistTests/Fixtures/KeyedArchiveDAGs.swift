@testable import Archivist
@testable import ArchivistKeyedArchive

/// Keyed archives whose objects share what they hold ("billion laughs" DAGs): small on disk,
/// exponential once unfolded into a tree. Built without Foundation, like ``KeyedArchiveChains``.
enum KeyedArchiveDAGs {
    /// The container each level of a DAG is made of.
    enum Shape: String, CaseIterable, Sendable {
        /// NSArray holding the level below twice.
        case array = "NSArray"
        /// NSDictionary with two keys whose values are both the level below.
        case dictionary = "NSDictionary"
        /// NSSet holding the level below and an NSSet of the level below (a set may not hold an
        /// array: corelibs traps casting such a set to `Set<AnyHashable>`, so the validator refuses it).
        case set = "NSSet"
    }

    /// `levels` objects of `shape`, each reaching the one below along two paths; the root
    /// unfolds to about 2^`levels` values. The bottom level is an empty container.
    static func doubling(_ shape: Shape, levels: Int) -> [UInt8] {
        var builder = Builder()
        let container = builder.classDescription(shape.rawValue)
        let keys = [builder.object(.string("left")), builder.object(.string("right"))]
        var below: Int?
        for _ in 0..<levels {
            let inner = (below.map { [$0, $0] } ?? []).map { builder.uid($0) }
            switch shape {
            case .array:
                below = builder.instance(container, ["NS.objects": .array(inner)])
            case .dictionary:
                let keyReferences = below == nil ? [] : keys.map { builder.uid($0) }
                below = builder.instance(container, ["NS.keys": .array(keyReferences), "NS.objects": .array(inner)])
            case .set:
                var members: [Int] = []
                if let below {
                    let wrapperElement = builder.uid(below)
                    let wrapped = builder.instance(container, ["NS.objects": .array([wrapperElement])])
                    members = [builder.uid(below), builder.uid(wrapped)]
                }
                below = builder.instance(container, ["NS.objects": .array(members)])
            }
        }
        return builder.write(root: below ?? 0)
    }

    /// An `NSArray` whose `NS.objects` is one plist array shared by itself `levels` deep: the
    /// sharing is in the binary plist's object table, not in `$objects` references.
    static func plistLevelDoubling(levels: Int) -> [UInt8] {
        var builder = Builder()
        let container = builder.classDescription("NSArray")
        var node = builder.node(.array([]))
        for _ in 0..<levels { node = builder.node(.array([node, node])) }
        let nested = builder.object(.nodeIndex(node))
        let element = builder.uid(nested)
        let root = builder.instance(container, ["NS.objects": .array([element])])
        return builder.write(root: root)
    }

    /// A minimal keyed-archive builder over ``PropertyListDocument`` nodes.
    struct Builder {
        typealias Node = PropertyListDocument.Node
        /// A field value: a node to add, or one already added.
        enum Value {
            case array([Int])
            case string(String)
            case nodeIndex(Int)
        }

        var nodes: [Node] = [.string("$null")]
        var objects: [Int] = [0]
        private var strings: [String: Int] = ["$null": 0]

        /// Adds a node; returns its index.
        mutating func node(_ node: Node) -> Int {
            nodes.append(node)
            return nodes.count - 1
        }

        /// The index of a (shared) string node.
        mutating func string(_ value: String) -> Int {
            if let index = strings[value] { return index }
            let index = node(.string(value))
            strings[value] = index
            return index
        }

        /// A new UID node referring to object `object`.
        mutating func uid(_ object: Int) -> Int { node(.uid(UInt64(object))) }

        private mutating func add(_ value: Value) -> Int {
            switch value {
            case .array(let elements): node(.array(elements))
            case .string(let text): string(text)
            case .nodeIndex(let index): index
            }
        }

        /// Appends an `$objects` entry; returns its object number.
        mutating func object(_ value: Value) -> Int {
            objects.append(add(value))
            return objects.count - 1
        }

        /// A class description object for `name`.
        mutating func classDescription(_ name: String) -> Int {
            let keys = [string("$classname"), string("$classes")]
            let values = [string(name), node(.array([string(name), string("NSObject")]))]
            return object(.nodeIndex(node(.dictionary(keys: keys, values: values))))
        }

        /// An instance object of the class described by object `classObject`.
        mutating func instance(_ classObject: Int, _ fields: KeyValuePairs<String, Value>) -> Int {
            var keys = [string("$class")]
            var values = [uid(classObject)]
            for (key, value) in fields {
                keys.append(string(key))
                values.append(add(value))
            }
            return object(.nodeIndex(node(.dictionary(keys: keys, values: values))))
        }

        /// The archive as a binary plist with `root` under `$top`.
        func write(root: Int) -> [UInt8] {
            var copy = self
            let top = copy.node(.dictionary(keys: [copy.string("root")], values: [copy.uid(root)]))
            let objectArray = copy.node(.array(copy.objects))
            let keys = ["$archiver", "$version", "$top", "$objects"].map { copy.string($0) }
            let values = [copy.string("NSKeyedArchiver"), copy.node(.integer(100_000)), top, objectArray]
            let rootNode = copy.node(.dictionary(keys: keys, values: values))
            return BinaryPropertyListWriter.write(
                PropertyListDocument(nodes: copy.nodes, root: rootNode, format: .binary)
            )
        }
    }
}
