import Foundation
import Testing

@testable import Archivist

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
        nested = try c.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner).decode(
            BackReference<FastPathNode>.self,
            forKey: .nested
        )
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

/// `@BackReference`s read by the decoder's fast path: ahead of their objects, inside
/// containers, and past the depth limit.
@Suite struct BackReferenceFastPathTests {
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
        holder.list = [
            BackReference(wrappedValue: root), BackReference(wrappedValue: nil),
            BackReference(wrappedValue: root.children[2].children[1]),
        ]
        holder.maybe = BackReference(wrappedValue: root.children[0])
        holder.nested = BackReference(wrappedValue: root.children[0].children[0])
        let data = try Archive.encode(holder)
        for _ in 0..<3 {  // the spare decoder keeps its fast-path type between archives
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
    /// which charges the depth of the frame it skips, as the slow path does) throws
    /// `limitExceeded(.depth)`, never traps.
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
