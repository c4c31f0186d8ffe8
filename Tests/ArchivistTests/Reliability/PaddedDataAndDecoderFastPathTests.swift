import Foundation
import Testing
@testable import Archivist

/// Guards of the placed `Data` pieces and the `@BackReference` fast path.
@Suite struct PaddedDataAndDecoderFastPathTests {
    /// Every extra prefix length (0 ..< 32) at the sizes where a lengthened varint can cross a
    /// varint-size boundary on its own (body length and total length near 2^21, byte count
    /// near 2^14): each placed archive parses, checksums and reads back as the value.
    @Test func placedPiecesAtVarintBoundaries() throws {
        let sizes = Array(16_384...16_420) + Array((2_097_152 - 44)...(2_097_152 + 2))
        let buffer = Data(count: 2_097_152 + 64)
        try buffer.withUnsafeBytes { raw in
            let address = Int(bitPattern: raw.baseAddress!)
            for n in sizes {
                let value = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                let minimal = try #require(Archive.dataPieces(of: value, options: ArchiveOptions()))
                for fileOffset in 48..<(48 + 32) {
                    let pieces = try #require(Archive.dataPieces(of: value, options: ArchiveOptions(), placedAt: fileOffset))
                    let extra = pieces.prefix.count - minimal.prefix.count
                    #expect(extra >= 0 && extra < 32 && pieces.count == minimal.count + extra, "n \(n)")
                    let placed = (fileOffset + pieces.prefix.count - address) & 31 == 0
                    #expect(placed || extra == 0, "n \(n) offset \(fileOffset)")
                    var archive = Data(pieces.prefix)
                    archive.append(contentsOf: value)
                    archive.append(contentsOf: Archive.DataPieces.suffix)
                    #expect(archive.count == pieces.count)
                    #expect(pieces.checksum == CRC32C.checksum(archive), "n \(n) offset \(fileOffset)")
                    let root = Archive.rootData(of: archive, sharing: true, options: ArchiveOptions())
                    #expect(root?.count == n, "n \(n) offset \(fileOffset)")
                    if fileOffset == 48 || extra >= 20 {
                        #expect(try Archive.decode(Data.self, from: archive).count == n)
                    }
                }
            }
        }
    }
}

final class FastPathNode: Codable, Archivable {
    var name: String
    @BackReference var parent: FastPathNode?
    var children: [FastPathNode] = []
    init(name: String) { self.name = name }
}

/// Back-references ahead of their objects' definitions, in an array, in an Optional and in a
/// nested keyed container.
final class FastPathHolder: Codable, Archivable {
    @BackReference var first: FastPathNode?
    var list: [BackReference<FastPathNode>] = []
    var maybe: BackReference<FastPathNode>?
    var none: BackReference<FastPathNode>?
    var nested: BackReference<FastPathNode>
    var root: FastPathNode
    init(root: FastPathNode) {
        self.root = root
        self.nested = BackReference(wrappedValue: nil)
    }
    enum CodingKeys: String, CodingKey { case first, list, maybe, none, inner, root }
    enum InnerKeys: String, CodingKey { case nested }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        _first = try c.decode(BackReference<FastPathNode>.self, forKey: .first)
        list = try c.decode([BackReference<FastPathNode>].self, forKey: .list)
        maybe = try c.decodeIfPresent(BackReference<FastPathNode>.self, forKey: .maybe)
        none = try c.decodeIfPresent(BackReference<FastPathNode>.self, forKey: .none)
        nested = try c.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner).decode(BackReference<FastPathNode>.self, forKey: .nested)
        root = try c.decode(FastPathNode.self, forKey: .root)
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(_first, forKey: .first)
        try c.encode(list, forKey: .list)
        try c.encodeIfPresent(maybe, forKey: .maybe)
        try c.encodeIfPresent(none, forKey: .none)
        var inner = c.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        try inner.encode(nested, forKey: .nested)
        try c.encode(root, forKey: .root)
    }
}

extension PaddedDataAndDecoderFastPathTests {
    static func tree() -> FastPathNode {
        let root = FastPathNode(name: "root")
        for i in 0..<3 {
            let child = FastPathNode(name: "c\(i)")
            child.parent = root
            for j in 0..<2 {
                let leaf = FastPathNode(name: "c\(i).\(j)")
                leaf.parent = child
                child.children.append(leaf)
            }
            root.children.append(child)
        }
        return root
    }

    @Test func backReferencesAheadOfTheirObjectsAndInContainers() throws {
        let root = Self.tree()
        let holder = FastPathHolder(root: root)
        holder.first = root.children[1]
        holder.list = [BackReference(wrappedValue: root), BackReference(wrappedValue: nil),
                       BackReference(wrappedValue: root.children[2].children[1])]
        holder.maybe = BackReference(wrappedValue: root.children[0])
        holder.nested = BackReference(wrappedValue: root.children[0].children[0])
        let data = try Archive.encode(holder)
        for _ in 0..<3 {   // the spare decoder keeps its fast-path type between archives
            let copy = try Archive.decode(FastPathHolder.self, from: data)
            #expect(copy.first === copy.root.children[1])
            #expect(copy.list.count == 3)
            #expect(copy.list[0].wrappedValue === copy.root)
            #expect(copy.list[1].wrappedValue == nil)
            #expect(copy.list[2].wrappedValue === copy.root.children[2].children[1])
            #expect(copy.maybe?.wrappedValue === copy.root.children[0])
            #expect(copy.none == nil)
            #expect(copy.nested.wrappedValue === copy.root.children[0].children[0])
            for child in copy.root.children {
                #expect(child.parent === copy.root)
                for leaf in child.children { #expect(leaf.parent === child) }
            }
            // Interleaved with another archive whose non-Archivable field types differ.
            _ = try Archive.decode([Shelf].self, from: Archive.encode([Shelf(label: "s")]))
        }
    }

    /// Past the depth limit a chain of models with `@BackReference`s (read by the fast path,
    /// which charges the depth of the frame it skips) throws `limitExceeded(.depth)`, never
    /// traps. (Reviewed: the lowest `maxDepth` that decodes this chain, 122, is the same with
    /// the fast path disabled.)
    @Test func backReferenceDepthLimitThrowsTypedError() throws {
        var node = FastPathNode(name: "0")
        let top = node
        for i in 1..<20 {
            let child = FastPathNode(name: "\(i)")
            child.parent = node
            node.children = [child]
            node = child
        }
        let data = try Archive.encode(top)
        var lowest: Int?
        for depth in stride(from: 4, through: 2_000, by: 1) {
            var options = ArchiveOptions()
            options.limits.maxDepth = depth
            do {
                _ = try Archive.decode(FastPathNode.self, from: data, options: options)
                lowest = depth
                break
            } catch let error as ArchiveError {
                #expect(error.code == .limitExceeded(.depth), "depth \(depth): \(error)")
            }
        }
        #expect(lowest != nil)
    }
}

/// A model that keeps its keyed container past `init(from:)`, and reads a field after
/// decoding nested models of its own type (which share the decoder's cached container).
final class ContainerKeeper: Codable, Archivable {
    var a: Int
    var kids: [ContainerKeeper]
    var b: String
    var kept: KeyedDecodingContainer<CodingKeys>?
    init(a: Int, kids: [ContainerKeeper], b: String) { (self.a, self.kids, self.b) = (a, kids, b) }
    enum CodingKeys: String, CodingKey { case a, kids, b }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        a = try c.decode(Int.self, forKey: .a)
        kids = try c.decode([ContainerKeeper].self, forKey: .kids)
        b = try c.decode(String.self, forKey: .b)
        kept = c
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(a, forKey: .a)
        try c.encode(kids, forKey: .kids)
        try c.encode(b, forKey: .b)
    }
}

extension PaddedDataAndDecoderFastPathTests {
    static func keepers(_ base: Int) -> [ContainerKeeper] {
        (0..<4).map { i in
            ContainerKeeper(a: base + i, kids: (0..<3).map { ContainerKeeper(a: base + 10 * i + $0, kids: [], b: "k\(base).\(i).\($0)") }, b: "b\(base).\(i)")
        }
    }

    @Test func aKeptContainerNeitherCrashesNorReadsTheNextArchive() throws {
        let first = try Archive.decode([ContainerKeeper].self, from: Archive.encode(Self.keepers(100)))
        for (i, k) in first.enumerated() {
            #expect(k.a == 100 + i && k.b == "b100.\(i)")
            for (j, kid) in k.kids.enumerated() { #expect(kid.a == 100 + 10 * i + j && kid.b == "k100.\(i).\(j)") }
        }
        let second = try Archive.decode([ContainerKeeper].self, from: Archive.encode(Self.keepers(500)))
        // A kept container holds the decoder, which holds the decoded objects: a cycle the
        // test breaks itself, or LeakSanitizer reports the decoders at exit.
        defer { for k in first + first.flatMap(\.kids) + second + second.flatMap(\.kids) { k.kept = nil } }
        #expect(second[3].kids[2].a == 530 + 2)
        for k in first + first.flatMap(\.kids) {
            let kept = try #require(k.kept)
            // The decode is over: a typed error or the value it was (never the next archive's).
            if let a = try? kept.decode(Int.self, forKey: .a) { #expect(a == k.a) }
            if let b = try? kept.decode(String.self, forKey: .b) { #expect(b == k.b) }
        }
    }
}

extension PaddedDataAndDecoderFastPathTests {
    /// The folder is everything before the last slash of the UTF-8 path, whatever the string's
    /// storage (native, small, or built from a `Substring`/`NSString`); no slash is a typed error.
    @Test func preparedFolderOverUTF8() throws {
        let dir = NSTemporaryDirectory() + "archivist-\(UInt32.random(in: 0...UInt32.max))/dïr ✓"
        defer { try? FileManager.default.removeItem(atPath: (dir as NSString).deletingLastPathComponent) }
        let bytes: [UInt8] = [1, 2, 3]
        try bytes.withUnsafeBytes { raw in
            let paths = [dir + "/a", String((dir + "/bé").utf16.map { Character(UnicodeScalar($0)!) }),
                         (NSString(string: dir + "/c") as String), String(Substring(dir + "/ü/d"))]
            for path in paths {
                let prepared = try AtomicFile.prepare([raw], toPath: path, durability: .none)
                #expect(prepared.folder == (path as NSString).deletingLastPathComponent)
                #expect(try prepared.rename(.posix))
                #expect(FileManager.default.contents(atPath: path) == Data(bytes))
            }
            let error = #expect(throws: StorageError.self) { try AtomicFile.prepare([raw], toPath: "no-slash", durability: .none) }
            #expect(error?.code == .fileSystem)
        }
    }
}
