import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// `$classhints` names classes Foundation instantiates when the `$classname` class is missing,
/// so every hint must be in the allowlist too: an archive whose `$classname` is allowed but
/// whose hints name another class is refused before anything is unarchived.
@Suite struct KeyedArchiveClassHintsTests {
    /// An archive whose root is an empty `NSArray`, its class description carrying `hints`.
    static func emptyArray(hints: [String]) -> Data {
        var nodes: [PropertyListDocument.Node] = []
        func add(_ node: PropertyListDocument.Node) -> Int {
            nodes.append(node)
            return nodes.count - 1
        }
        let null = add(.string("$null"))
        let instance = add(
            .dictionary(
                keys: [add(.string("$class")), add(.string("NS.objects"))],
                values: [add(.uid(2)), add(.array([]))]
            )
        )
        let classDescription = add(
            .dictionary(
                keys: [add(.string("$classname")), add(.string("$classes")), add(.string("$classhints"))],
                values: [
                    add(.string("NSArray")), add(.array([add(.string("NSArray")), add(.string("NSObject"))])),
                    add(.array(hints.map { add(.string($0)) })),
                ]
            )
        )
        let objects = add(.array([null, instance, classDescription]))
        let top = add(.dictionary(keys: [add(.string("root"))], values: [add(.uid(1))]))
        let root = add(
            .dictionary(
                keys: [
                    add(.string("$archiver")), add(.string("$version")), add(.string("$top")), add(.string("$objects")),
                ],
                values: [add(.string("NSKeyedArchiver")), add(.integer(100_000)), top, objects]
            )
        )
        return Data(BinaryPropertyListWriter.write(PropertyListDocument(nodes: nodes, root: root, format: .binary)))
    }

    @Test func allowedHintsValidateAndUnarchive() throws {
        let data = Self.emptyArray(hints: ["NSArray"])
        #expect(try KeyedArchiverBridge.validate(data).classNames.contains("NSArray"))
        #expect((try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data) as? NSArray)?.count == 0)
    }

    @Test(arguments: [["Evil"], ["NSArray", "Evil"]])
    func aHintOutsideTheAllowlistIsRefused(hints: [String]) throws {
        let data = Self.emptyArray(hints: hints)
        let validation = #expect(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(data) }
        #expect(validation?.code == .disallowedType)
        #expect(validation?.typeName == "Evil")
        let unarchiving = #expect(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
        }
        #expect(unarchiving?.code == .disallowedType)
        // Allowing the hinted class is what lets it through.
        #expect(throws: Never.self) { try KeyedArchiverBridge.validate(data, allowedClassNames: ["Evil"]) }
    }
}
