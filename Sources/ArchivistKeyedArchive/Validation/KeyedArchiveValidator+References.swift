import Archivist

extension KeyedArchiveValidator {
    /// Walks the object graph from `$top` without recursion and returns its depth in references.
    ///
    /// Vertices are plist nodes; a container leads to its elements (an instance's `$class`
    /// excepted: Foundation reads class descriptions, never decodes them), a UID leads to the
    /// `$objects` entry it names and counts one level. NSKeyedUnarchiver recurses once per
    /// reference level, so a cycle would recurse forever on corelibs Foundation (there is no
    /// way to hand an object out before its `init(coder:)` returns) and is refused.
    ///
    /// It also bounds the size of the tree the graph unfolds to. References may share an object
    /// (a DAG), and Foundation decodes a shared object once, but bridging the result to Swift
    /// (`NSArray` to `[Any]`, which corelibs does on first use) copies it once per path: 64
    /// levels of arrays that each hold the level below twice fit in 2.3 KB and unfold to 2^64
    /// values. Each node's unfolded size (itself plus its values' sizes, dictionary keys and
    /// `$class` excluded, a reference counting as its target) is computed once, saturating, in
    /// the same post-order walk, and may not exceed ``ArchiveLimits/maxObjectCount``.
    ///
    /// - Throws: `.unresolvedReference` for a cycle, `.limitExceeded(.depth)` past `maxDepth`,
    ///   `.limitExceeded(.objectCount)` when the unfolded tree holds more than `maxObjectCount`
    ///   values, `.disallowedType` for an `NSDictionary` or `NSOrderedSet` holding a fallible
    ///   instance on corelibs.
    /// - Complexity: O(*V* + *E*), each node and edge visited once.
    func checkReferences(_ layout: Layout) throws -> Int {
        let nodes = layout.document.nodes
        var state = [UInt8](repeating: 0, count: nodes.count)  // 0 new, 1 open, 2 done
        var height = [Int](repeating: 0, count: nodes.count)
        var unfolded = [Int](repeating: 0, count: nodes.count)
        // The first class under a node whose init(coder:) may fail (one we do not know), if any.
        var fallible = [String?](repeating: nil, count: nodes.count)
        struct Frame {
            var node: Int
            var depth: Int
            var edges: [(target: Int, weight: Int)]
            var next = 0
        }

        func edges(of node: Int) -> [(target: Int, weight: Int)] {
            if let object = layout.target(ofUIDAt: node) { return [(layout.objects[object], 1)] }
            let skipped = layout.classReference[node]
            return layout.document.children(of: node).filter { $0 != skipped }.map { ($0, 0) }
        }

        var stack = [Frame(node: layout.topNode, depth: 0, edges: edges(of: layout.topNode))]
        state[layout.topNode] = 1
        while !stack.isEmpty {
            let frame = stack[stack.count - 1]
            guard frame.next < frame.edges.count else {
                try finish(frame.node, edges: frame.edges, layout: layout, height: &height, fallible: &fallible)
                unfolded[frame.node] = try unfoldedSize(of: frame.node, layout: layout, unfolded: unfolded)
                state[frame.node] = 2
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].next += 1
            let (child, weight) = frame.edges[frame.next]
            let depth = frame.depth + weight
            switch state[child] {
            case 1:
                let name = layout.instanceClass[child].map { " (\($0))" } ?? ""
                throw ArchiveError(
                    .unresolvedReference,
                    "reference cycle back to an object\(name) still being decoded; Foundation on Linux "
                        + "recurses through init(coder:) forever on cycles",
                    typeName: layout.instanceClass[child]
                )
            case 2:
                guard depth + height[child] <= limits.maxDepth else { throw depthError() }
            default:
                guard depth <= limits.maxDepth else { throw depthError() }
                state[child] = 1
                stack.append(Frame(node: child, depth: depth, edges: edges(of: child)))
            }
        }
        return height[layout.topNode]
    }

    /// The number of values `node` unfolds to, from its finished children's sizes: 1 for a
    /// value, plus its elements (array) or values (dictionary, `$class` excluded); a reference
    /// is its target. Saturates just above the limit, so it never overflows.
    ///
    /// - Throws: `.limitExceeded(.objectCount)` past ``ArchiveLimits/maxObjectCount``.
    private func unfoldedSize(of node: Int, layout: Layout, unfolded: [Int]) throws -> Int {
        let cap = limits.maxObjectCount
        var size: Int
        switch layout.document.nodes[node] {
        case .uid:
            size = layout.target(ofUIDAt: node).map { unfolded[layout.objects[$0]] } ?? 1
        case .array(let elements):
            size = 1
            for element in elements { size = KeyedArchiveExpansion.saturating(size, unfolded[element], cap: cap) }
        case .dictionary(_, let values):
            size = 1
            let skipped = layout.classReference[node]
            for value in values where value != skipped {
                size = KeyedArchiveExpansion.saturating(size, unfolded[value], cap: cap)
            }
        default:
            size = 1
        }
        guard size <= cap else {
            let name = layout.instanceClass[node].map { " (an \($0))" } ?? ""
            throw ArchiveError(
                .limitExceeded(.objectCount),
                "an object\(name) unfolds to more than maxObjectCount (\(cap)) values: it reaches "
                    + "shared objects along exponentially many paths, and bridging it to Swift copies each path",
                typeName: layout.instanceClass[node]
            )
        }
        return size
    }

    private func depthError() -> ArchiveError {
        ArchiveError(.limitExceeded(.depth), "object references nest deeper than maxDepth (\(limits.maxDepth))")
    }

    /// Post-order step: a node's height and fallibility from its finished children.
    private func finish(
        _ node: Int,
        edges: [(target: Int, weight: Int)],
        layout: Layout,
        height: inout [Int],
        fallible: inout [String?]
    ) throws {
        var best = 0
        var failing: String?
        for (child, weight) in edges {
            best = max(best, height[child] + weight)
            failing = failing ?? fallible[child]
        }
        height[node] = best
        guard let className = layout.instanceClass[node] else {
            fallible[node] = failing
            return
        }
        if refusesFallibleDictionaryContents, Self.fragileContainerClassNames.contains(className), let failing {
            throw ArchiveError(
                .disallowedType,
                "an \(className) holding \(failing) cannot be decoded safely on Linux: if that class's "
                    + "init(coder:) fails, corelibs \(className) crashes",
                typeName: failing
            )
        }
        fallible[node] = Self.foundationValueClassNames.contains(className) ? failing : className
    }
}
