import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Converting a parsed property list to ``PlistValue`` costs no stack per level: the deepest
/// file Foundation's parser reads (512 nested containers; 600 are refused) is read through
/// `PlistStore` on a thread with a 512 KiB stack (a secondary thread's size on Apple
/// platforms), where the recursive conversion overflowed from about 300 levels in a debug
/// build; a caller's much deeper `Any` converts there too.
@Suite struct PlistValueDepthTests {
    /// The deepest nesting Foundation's parser reads: the root dictionary, `depth - 2` arrays,
    /// and a dictionary `{"k": true}`.
    static let deepestRead = 512

    /// `{"deep": [[…[{"k": true}]…]]}`, `depth` containers in all, as XML.
    static func nestedFile(depth: Int) -> Data {
        let arrays = depth - 2
        return Data(
            ("<plist version=\"1.0\"><dict><key>deep</key>" + String(repeating: "<array>", count: arrays)
                + "<dict><key>k</key><true/></dict>" + String(repeating: "</array>", count: arrays)
                + "</dict></plist>").utf8
        )
    }

    /// The number of containers from `value` down to its deepest scalar (iteratively).
    static func depth(of value: PlistValue) -> Int {
        var deepest = 0
        var pending: [(PlistValue, Int)] = [(value, 0)]
        while let (next, level) = pending.popLast() {
            switch next {
            case .array(let elements): pending += elements.map { ($0, level + 1) }
            case .dictionary(let entries): pending += entries.values.map { ($0, level + 1) }
            default: deepest = max(deepest, level)
            }
        }
        return deepest
    }

    @Test(arguments: [PlistStore.Format.xml, .binary])
    func theDeepestFileIsReadOnA512KiBThread(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        var data = Self.nestedFile(depth: Self.deepestRead)
        if format == .binary {
            let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            data = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        }
        try data.write(to: folder.file("p.plist"))
        let url = folder.url
        // The store (and the root it remembers) is made, read and dropped on the small stack.
        let depth = try onThread(stackSize: ArchiveStackDepthTests.smallStack) {
            Self.depth(of: .dictionary(try PlistStore(directory: url).root(of: "p")))
        }
        #expect(depth == Self.deepestRead)
        #expect(throws: (any Error).self, "deeper, Foundation's parser refuses the file") {
            try PropertyListSerialization.propertyList(from: Self.nestedFile(depth: 600), options: [], format: nil)
        }
    }

    /// A caller's `Any` far deeper than any file: converted on the small stack, and an
    /// offending value at the bottom is named by its whole path.
    @Test func aDeepCallerValueConvertsOnA512KiBThread() throws {
        let depth = 5_000
        func nested(around leaf: Any) -> Any {
            var value: Any = leaf
            for level in 0..<depth {
                value = level.isMultiple(of: 2) ? [value] as [Any] : ["d": value] as [String: Any]
            }
            return value
        }
        nonisolated(unsafe) let good = nested(around: "leaf")
        nonisolated(unsafe) let bad = nested(around: NSNull())
        let (converted, error) = try onThread(stackSize: ArchiveStackDepthTests.smallStack) {
            () -> (PlistValue, StoreError?) in
            let converted = try PlistValue(propertyList: good)
            let error = #expect(throws: StoreError.self) { try PlistValue(propertyList: bad) }
            return (converted, error)
        }
        #expect(Self.depth(of: converted) == depth)
        #expect(error?.code == .notRepresentable)
        let expectedPath = (0..<depth).reversed().map { $0.isMultiple(of: 2) ? "[0]" : "d" }
        #expect(error?.key == PlistValue.ConversionFailure(reason: "", path: expectedPath).pathDescription)
        withExtendedLifetime((good, bad, converted)) {}
    }

    /// `[[…[{"k": true}]…]]`: `depth` containers in all.
    static func nestedValue(depth: Int) -> PlistValue {
        var value = PlistValue.dictionary(["k": .bool(true)])
        for _ in 1..<depth { value = .array([value]) }
        return value
    }

    /// The Foundation object of a value far deeper than any file is built on the small stack.
    @Test func aDeepValuesFoundationObjectIsBuiltOnA512KiBThread() throws {
        let deep = Self.nestedValue(depth: 5_000)
        // The object goes back to this thread to be released: releasing 5,000 nested Swift
        // arrays recurses in the standard library, not in the store.
        let (back, object) = try onThread(stackSize: ArchiveStackDepthTests.smallStack) { () -> (PlistValue, Any) in
            let object = deep.propertyListObject
            return (try PlistValue(propertyList: object), object)
        }
        withExtendedLifetime(object) {}
        #expect(Self.depth(of: back) == 5_000)
        #expect(back == deep)
        #expect(deep.propertyListObject(depthLimit: 4_999) == nil)
        #expect(deep.propertyListObject(depthLimit: 5_000) != nil)
        #expect(PlistValue.int(1).propertyListObject(depthLimit: 0) as? Int == 1)
    }

    /// Writes stop at ``PlistStore/maxWrittenDepth`` with `.notRepresentable`, on a 512 KiB
    /// thread where Foundation's recursive writer would overflow a few hundred levels deeper;
    /// the deepest readable file can be read there but not rewritten, and stays as it was.
    @Test(arguments: [PlistStore.Format.xml, .binary])
    func writesDeeperThanTheLimitAreRefusedOnA512KiBThread(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let url = folder.url
        let limit = PlistStore.maxWrittenDepth
        // The root dictionary is one level, so the value under "deep" may nest limit - 1.
        let deepest = Self.nestedValue(depth: limit - 1)
        let tooDeep = Self.nestedValue(depth: limit)
        try Self.nestedFile(depth: Self.deepestRead).write(to: folder.file("read.plist"))
        let original = try Data(contentsOf: folder.file("read.plist"))
        let (stored, refused, rewrite) = try onThread(stackSize: ArchiveStackDepthTests.smallStack) {
            () -> (PlistValue?, StoreError?, StoreError?) in
            let store = PlistStore(directory: url, format: format)
            try store.set(deepest, forKey: "deep", in: "p")
            let refused = #expect(throws: StoreError.self) { try store.set(tooDeep, forKey: "deeper", in: "p") }
            let rewrite = #expect(throws: StoreError.self) { try store.set(.int(1), forKey: "x", in: "read") }
            return (try store.value(forKey: "deep", in: "p"), refused, rewrite)
        }
        #expect(stored == deepest)
        #expect(refused?.code == .notRepresentable)
        #expect(rewrite?.code == .notRepresentable)
        #expect(try PlistStore(directory: url, format: format).value(forKey: "deeper", in: "p") == nil)
        #expect(try Data(contentsOf: folder.file("read.plist")) == original)
    }
}
