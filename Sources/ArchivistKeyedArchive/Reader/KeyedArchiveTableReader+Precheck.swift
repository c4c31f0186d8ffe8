import Archivist

extension KeyedArchiveTableReader {
    /// What the table reader checks before it builds anything: when the binary plist shares a
    /// container between two parents (which Foundation's archivers never write), the number of
    /// plist values the `$objects` entries unfold to, each shared container counted once per
    /// path — the values the table would copy into fields. It also hands back the first date
    /// node the rule refuses (``KeyedArchiveDateRule``, the validator's rule), read or not, which
    /// the binary reader noted: the caller refuses it after reading, so that a date it reads is
    /// reported with its path.
    ///
    /// Without it, a 2 KB plist whose arrays each hold the one below twice was refused only
    /// after `maxObjectCount` values had been copied (seconds of work, 20 s in a debug build).
    ///
    /// - Returns: The index of the first NaN date node, if any.
    /// - Throws: `.corrupt` for a container that contains itself; `.limitExceeded(.objectCount)`
    ///   when the entries unfold to more than `maxObjectCount` values.
    /// - Complexity: O(*n*) in the document's nodes and references; iterative.
    static func precheck(_ document: PropertyListDocument, objects: PropertyListDocument.References, limits: ArchiveLimits) throws -> Int? {
        // Only the binary reader's documents share nodes or hold NaN dates: an XML property
        // list makes a node of each element, and its dates are ISO 8601 text.
        guard let references = document.sharedReferences else { return nil }
        let nodes = document.nodes
        // How often each node is a container's element, key or value, saturating at 2: counted
        // over the one array every container's references are runs of, which reads no node. A
        // key counts too, so a container that is also a key counts as shared (and is then
        // counted exactly, below).
        var parents = [UInt8](repeating: 0, count: nodes.count)
        for child in references.values where parents[child] < 2 { parents[child] += 1 }
        // Shared strings and numbers are the rule; a shared container is what can outgrow the input.
        for index in parents.indices where parents[index] == 2 {
            switch nodes[index] {
            case .array, .dictionary:
                try checkUnfoldedSize(of: objects, in: nodes, cap: limits.maxObjectCount)
                return document.firstNaNDate
            default:
                continue
            }
        }
        return document.firstNaNDate
    }

    /// Throws when the `entries` unfold to more than `cap` plist values: each node's size is 1,
    /// plus its elements' (arrays) or values' (dictionaries), computed once, in post-order.
    private static func checkUnfoldedSize(
        of entries: PropertyListDocument.References, in nodes: [PropertyListDocument.Node], cap: Int
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
                throw ArchiveError(.limitExceeded(.objectCount),
                                   "the archive's fields unfold to more than maxObjectCount (\(cap)) values: its property list "
                                       + "shares containers along exponentially many paths", codingPath: ["$objects"])
            }
        }
    }

    /// A bound on what any object of the table unfolds to, when one follows from the reading
    /// alone: with no object that refers to others referenced twice, objects that hold others
    /// appear once when decoding unfolds the graph, and the rest once per reference, so nothing
    /// unfolds past the objects, the references and the inline values together.
    /// ``KeyedArchiveExpansion`` then has nothing to count. `nil` when such an object is
    /// shared (a DAG; Foundation's archivers write those for shared class instances).
    static func unfoldedBound(_ objects: [KeyedArchiveObject], referrers: [UInt8], references: Int, inlineValues: Int) -> Int? {
        for index in referrers.indices where referrers[index] == 2 {
            switch objects[index] {
            case .null, .nsNull, .string, .integer, .unsignedInteger, .real, .bool, .data, .date, .uuid, .url, .classDescription:
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
