import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// A node of a random graph: a payload and any number of edges, cycles allowed.
final class GraphNode: Archivable {
    var id: Int
    var payload: [String: Int]
    var edges: [GraphNode] = []

    init(id: Int, payload: [String: Int]) {
        self.id = id
        self.payload = payload
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(id, forKey: "id")
        try archive.encode(payload, forKey: "payload")
        try archive.encode(edges.count, forKey: "edgeCount")
        for (i, edge) in edges.enumerated() { try archive.encode(edge, forKey: "e\(i)") }
    }

    init(from archive: ArchiveDecoder) throws {
        id = try archive.decode(Int.self, forKey: "id")
        payload = try archive.decode([String: Int].self, forKey: "payload")
        let count = try archive.decode(Int.self, forKey: "edgeCount")
        edges = []
        for i in 0..<count {
            let slot = edges.count
            edges.append(self)  // placeholder until the deferred reference is assigned
            try archive.decodeReference(GraphNode.self, forKey: "e\(i)") { [unowned self] node in
                if let node { self.edges[slot] = node }
            }
        }
    }
}

@Suite struct ArchiveRandomGraphTests {
    @Test(arguments: [UInt64(1), 2, 3, 42, 0xDEAD_BEEF])
    func randomGraphsRoundTripWithTheSameShape(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let count = Int.random(in: 1...200, using: &rng)
        let nodes = (0..<count).map { i in
            GraphNode(id: i, payload: ["w": Int.random(in: -1_000...1_000, using: &rng)])
        }
        for node in nodes {
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                node.edges.append(nodes[Int.random(in: 0..<count, using: &rng)])
            }
        }
        let data = try Archive.encode(nodes)
        let copy = try Archive.decode([GraphNode].self, from: data)
        #expect(copy.count == count, "seed \(seed)")
        for (a, b) in zip(nodes, copy) {
            #expect(a.id == b.id && a.payload == b.payload, "seed \(seed)")
            #expect(a.edges.map(\.id) == b.edges.map(\.id), "seed \(seed) node \(a.id)")
            // Identity: the decoded edge is the decoded node with that id, not a copy.
            for edge in b.edges { #expect(edge === copy[edge.id], "seed \(seed)") }
        }
        for node in nodes + copy { node.edges = [] }
    }
}
