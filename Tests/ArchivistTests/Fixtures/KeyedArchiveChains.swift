@testable import Archivist
@testable import ArchivistKeyedArchive

/// Keyed archives of nested NSArrays (`[[[…]]]`), built without Foundation so their depth is
/// not limited by Foundation's own encoder.
enum KeyedArchiveChains {
    /// `$objects`: `$null`, the NSArray class description, then `depth` arrays, each holding the next.
    static func binaryChain(depth: Int) -> [UInt8] {
        typealias Node = PropertyListDocument.Node
        // Fixed nodes 0…13; object `level` of the chain is $objects[level + 2].
        var nodes: [Node] = [
            .string("$null"), .string("$classname"), .string("NSArray"), .string("$class"),
            .string("NS.objects"), .string("$archiver"), .string("NSKeyedArchiver"),
            .string("$version"), .integer(100_000), .string("$top"), .string("root"),
            .string("$objects"), .uid(1), .dictionary(keys: [1], values: [2]),
        ]
        let classUID = 12
        var objects = [0, 13]
        for level in 0..<depth {
            var elements: [Int] = []
            if level + 1 < depth {
                nodes.append(.uid(UInt64(level + 3)))
                elements.append(nodes.count - 1)
            }
            nodes.append(.array(elements))
            nodes.append(.dictionary(keys: [3, 4], values: [classUID, nodes.count - 1]))
            objects.append(nodes.count - 1)
        }
        nodes.append(.array(objects))
        let objectsNode = nodes.count - 1
        nodes.append(.uid(2))
        nodes.append(.dictionary(keys: [10], values: [nodes.count - 1]))
        let topNode = nodes.count - 1
        nodes.append(.dictionary(keys: [5, 7, 9, 11], values: [6, 8, topNode, objectsNode]))
        return BinaryPropertyListWriter.write(
            PropertyListDocument(nodes: nodes, root: nodes.count - 1, format: .binary)
        )
    }

    /// The same chain as an XML property list.
    static func xmlChain(depth: Int) -> String {
        func uid(_ value: Int) -> String { "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        var objects = "<string>$null</string><dict><key>$classname</key><string>NSArray</string></dict>"
        for level in 0..<depth {
            let inner = level + 1 < depth ? uid(level + 3) : ""
            objects += "<dict><key>$class</key>\(uid(1))<key>NS.objects</key><array>\(inner)</array></dict>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(2))</dict>\
            <key>$objects</key><array>\(objects)</array></dict></plist>
            """
    }
}
