import Archivist

extension KeyedArchiveTableReader {
    /// Notes that a field reads the plist container `node`, and counts what the `$objects`
    /// entries unfold to the first time a container is read again.
    ///
    /// A binary plist can share a container between two parents (Foundation's archivers never
    /// write that), and the table copies a shared container into each field that reaches it: a
    /// 2 KB plist whose arrays each hold the one below twice would be refused only after
    /// `maxObjectCount` values had been copied, work out of all proportion to its size
    /// (`KeyedArchiveExpansionTests` guards it). Until a container is read twice every copy is
    /// of a distinct node, so the table holds no more than the input does; at the first repeat,
    /// before copying that container again, the exact count (``checkUnfoldedSize(of:in:cap:)``)
    /// refuses an archive that would unfold past the limit, in time proportional to the input.
    /// Nothing is counted for an archive without sharing (the usual one), so reading it pays
    /// one flag test per container field.
    ///
    /// - Throws: `.corrupt` for a container that contains itself; `.limitExceeded(.objectCount)`
    ///   when the entries unfold to more than `maxObjectCount` values.
    mutating func noteContainerRead(_ node: Int) throws {
        guard !sharingChecked else { return }
        if readContainers.isEmpty { readContainers = [Bool](repeating: false, count: document.nodes.count) }
        guard readContainers[node] else {
            readContainers[node] = true
            return
        }
        sharingChecked = true
        try Self.checkUnfoldedSize(of: objectNodes, in: document.nodes, cap: limits.maxObjectCount)
    }

    /// Throws when the `entries` unfold to more than `cap` plist values: each node's size is 1,
    /// plus its elements' (arrays) or values' (dictionaries), computed once, in post-order.
    private static func checkUnfoldedSize(
        of entries: PropertyListDocument.References,
        in nodes: [PropertyListDocument.Node],
        cap: Int
    ) throws {
        // 0: not reached yet; -1: on the stack; otherwise the unfolded size.
        var sizes = [Int](repeating: 0, count: nodes.count)
        var stack: [(node: Int, next: Int)] = []
        var total = 0
        func children(of node: Int) -> PropertyListDocument.References? {
            switch nodes[node] {
            case .array(let elements): elements
            case .dictionary(_, let values): values
            default: nil
            }
        }
        for entry in entries {
            if sizes[entry] == 0 {
                sizes[entry] = -1
                stack.append((entry, 0))
            }
            while let frame = stack.last {
                let childNodes = children(of: frame.node)
                if let childNodes, frame.next < childNodes.count {
                    stack[stack.count - 1].next += 1
                    let child = childNodes[frame.next]
                    switch sizes[child] {
                    case -1: throw ArchiveError(.corrupt, "property list container contains itself")
                    case 0:
                        sizes[child] = -1
                        stack.append((child, 0))
                    default: continue
                    }
                    continue
                }
                var size = 1
                for child in childNodes ?? PropertyListDocument.References([]) {
                    size = KeyedArchiveExpansion.saturating(size, sizes[child], cap: cap)
                }
                sizes[frame.node] = size
                stack.removeLast()
            }
            total = KeyedArchiveExpansion.saturating(total, sizes[entry], cap: cap)
            guard total <= cap else {
                throw ArchiveError(
                    .limitExceeded(.objectCount),
                    "the archive's fields unfold to more than maxObjectCount (\(cap)) values: its property list "
                        + "shares containers along exponentially many paths",
                    codingPath: ["$objects"]
                )
            }
        }
    }

    /// A bound on what any object of the table unfolds to, when one follows from the reading
    /// alone: with no object that refers to others referenced twice, objects that hold others
    /// appear once when decoding unfolds the graph, and the rest once per reference, so nothing
    /// unfolds past the objects, the references and the inline values together.
    /// ``KeyedArchiveExpansion`` then has nothing to count. `nil` when such an object is
    /// shared (a DAG; Foundation's archivers write those for shared class instances).
    static func unfoldedBound(
        _ objects: [KeyedArchiveObject],
        referrers: [UInt8],
        references: Int,
        inlineValues: Int
    ) -> Int? {
        for index in referrers.indices where referrers[index] == 2 {
            switch objects[index] {
            case .null, .nsNull, .string, .integer, .unsignedInteger, .real, .bool, .data, .date, .uuid, .url,
                .classDescription:
                continue
            case .array, .set, .orderedSet, .dictionary, .instance, .plist:
                return nil
            }
        }
        let (partial, overflow) = objects.count.addingReportingOverflow(references)
        let (bound, overflowAgain) = partial.addingReportingOverflow(inlineValues)
        return overflow || overflowAgain ? nil : bound
    }
}
