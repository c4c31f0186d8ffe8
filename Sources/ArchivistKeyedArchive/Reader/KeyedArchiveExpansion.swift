import Archivist

/// How many values decoding an object of a ``KeyedArchive`` can produce, computed on the table
/// before any Swift value is built.
///
/// Value types copy a shared object once for each path that reaches it, so an archive of a few
/// kilobytes whose objects each hold the one below twice (a "billion laughs" DAG) unfolds to
/// 2^64 values. Counting them while decoding stops such an archive only after
/// ``ArchiveLimits/maxObjectCount`` values have been built — seconds of work for a 2.3 KB
/// input. This computes the unfolded size instead: each object's, once, from its children's —
/// 1, plus its elements (arrays, sets), keys and values (dictionaries) and fields (instances,
/// inline values counted as they are nested), a reference counting as what it names — and
/// refuses the decode when the object it starts at unfolds to more than `maxObjectCount`. The
/// bridge's validator bounds the same quantity on the property list.
///
/// A reference back to an object still being counted (a cycle) counts 1: a decode that
/// follows it re-enters the cycle at most ``ArchiveLimits/maxDepth`` levels deep, and the
/// decoders' own value budget still stops what that re-entry produces.
enum KeyedArchiveExpansion {
    /// Throws when the objects reachable from `root` unfold to more than `maxObjectCount` values.
    ///
    /// - Throws: `.limitExceeded(.objectCount)`, its path the `$top` key.
    /// - Complexity: O(*n*) in the objects and fields reachable from `root`; iterative.
    static func check(_ archive: KeyedArchive, from root: KeyedArchiveReference, topKey: String) throws {
        let cap = archive.limits.maxObjectCount
        let objects = archive.objects
        // 0: not reached yet; -1: being counted (on the stack); otherwise its unfolded size.
        var sizes = [Int](repeating: 0, count: objects.count)
        // The objects being counted, each with its run of `children` and its inline values.
        var frames: [(index: Int, start: Int, next: Int, inline: Int)] = []
        var children: [Int] = []

        func open(_ index: Int) {
            sizes[index] = -1
            let start = children.count
            let inline = appendChildren(of: objects[index], to: &children)
            frames.append((index, start, start, inline))
        }

        open(root.index)
        while let frame = frames.last {
            if frame.next < children.count {
                frames[frames.count - 1].next += 1
                let child = children[frame.next]
                if sizes[child] == 0 { open(child) }
                continue
            }
            var size = saturating(1, frame.inline, cap: cap)
            for child in children[frame.start...] { size = saturating(size, max(sizes[child], 1), cap: cap) }
            guard size <= cap else {
                throw ArchiveError(
                    .limitExceeded(.objectCount),
                    "object @\(frame.index) unfolds to more than maxObjectCount (\(cap)) values: it reaches shared objects "
                        + "along exponentially many paths, and decoding copies each path into the value types that hold it",
                    codingPath: [topKey], typeName: archive.classChains[frame.index].first)
            }
            sizes[frame.index] = size
            children.removeSubrange(frame.start...)
            frames.removeLast()
        }
    }

    /// `first + second`, or just above `cap` when that is more (never overflowing, whatever `cap`).
    @inline(__always)
    static func saturating(_ first: Int, _ second: Int, cap: Int) -> Int {
        let (sum, overflow) = first.addingReportingOverflow(second)
        guard overflow || sum > cap else { return sum }
        return cap == .max ? cap : cap + 1
    }

    /// Appends the objects `object` refers to and returns how many inline values it holds.
    private static func appendChildren(of object: KeyedArchiveObject, to children: inout [Int]) -> Int {
        switch object {
        case .array(let elements), .set(let elements), .orderedSet(let elements):
            for element in elements { children.append(element.index) }
            return 0
        case .dictionary(let keys, let values):
            for key in keys { children.append(key.index) }
            for value in values { children.append(value.index) }
            return 0
        case .instance(let instance):
            var inline = 0
            for field in instance.table.values { inline += appendReferences(in: field, to: &children) }
            return inline
        case .plist(.array(let elements)):
            var inline = 0
            for element in elements { inline += appendReferences(in: element, to: &children) }
            return inline
        case .plist(.dictionary(let entries)):
            var inline = 0
            for value in entries.values { inline += appendReferences(in: value, to: &children) }
            return inline
        case .plist(let field):
            return appendReferences(in: field, to: &children)
        case .null, .nsNull, .string, .integer, .unsignedInteger, .real, .bool, .data, .date, .uuid, .url, .classDescription:
            return 0
        }
    }

    /// Appends the references an inline field holds and returns how many inline values it is.
    /// Recursive over inline nesting, which the table reader bounded by `maxDepth`.
    private static func appendReferences(in field: KeyedArchiveField, to children: inout [Int]) -> Int {
        switch field {
        case .reference(let target):
            children.append(target.index)
            return 0
        case .array(let elements):
            var inline = 1
            for element in elements { inline += appendReferences(in: element, to: &children) }
            return inline
        case .dictionary(let entries):
            var inline = 1
            for value in entries.values { inline += appendReferences(in: value, to: &children) }
            return inline
        case .integer, .unsignedInteger, .real, .bool, .string, .data, .date:
            return 1
        }
    }
}
