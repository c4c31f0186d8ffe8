import Archivist

/// How many values decoding an object of a ``KeyedArchive`` can produce, computed on the table
/// before any Swift value is built.
///
/// Value types copy a shared object once for each path that reaches it, so an archive of a few
/// kilobytes whose objects each hold the one below twice (a "billion laughs" DAG) unfolds to
/// 2^64 values. Counting them while decoding stops such an archive only after
/// ``ArchiveLimits/maxObjectCount`` values have been built — work out of all proportion to a
/// 2.3 KB input (`KeyedArchiveExpansionTests` guards it). This computes the unfolded size
/// instead: each object's, once, from its children's — 1, plus its elements (arrays, sets),
/// keys and values (dictionaries) and fields (instances, inline values counted as they are
/// nested), a reference counting as what it names — and refuses the decode when the object it
/// starts at unfolds to more than `maxObjectCount`. The bridge's validator bounds the same
/// quantity on the property list.
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
        // The reader's bound, when it has one, settles it without a walk (the usual archive:
        // only strings and numbers shared).
        if let bound = archive.unfoldedBound, bound <= archive.limits.maxObjectCount { return }
        let objects = archive.objects
        var counter = Counter(cap: archive.limits.maxObjectCount, count: objects.count)
        var frames: [Frame] = []
        var next = root.index
        while true {
            // Open `next` (when there is one): a frame to finish once the children not counted
            // yet are, or, for one that has none (strings, numbers, objects of shared leaves:
            // most objects), its size at once.
            if next >= 0 {
                let start = counter.pending.count
                let known = counter.add(childrenOf: objects[next])
                if counter.pending.count > start {
                    counter.sizes[next] = -1
                    frames.append(Frame(index: next, start: start, next: start, known: known))
                } else {
                    counter.sizes[next] = counter.sum(1, known)
                    guard counter.sizes[next] <= counter.cap else { throw refusal(next, archive, topKey) }
                }
                next = -1
            }
            guard let frame = frames.last else { return }
            if frame.next < counter.pending.count {
                frames[frames.count - 1].next = frame.next + 1
                let child = counter.pending[frame.next]
                if counter.sizes[child] == 0 { next = child }
                continue
            }
            var size = counter.sum(1, frame.known)
            for position in frame.start..<counter.pending.count {
                size = counter.sum(size, max(counter.sizes[counter.pending[position]], 1))
            }
            guard size <= counter.cap else { throw refusal(frame.index, archive, topKey) }
            counter.sizes[frame.index] = size
            counter.pending.removeSubrange(frame.start...)
            frames.removeLast()
        }
    }

    /// An object being counted: its run of the pending children, the next of them to visit,
    /// and what its other children and inline values add up to.
    private struct Frame {
        var index: Int
        var start: Int
        var next: Int
        var known: Int
    }

    /// The sizes found so far and the children still to count.
    private struct Counter {
        let cap: Int
        /// 0: not reached yet; -1: being counted (on the stack); otherwise the unfolded size.
        var sizes: [Int]
        /// The children of the objects being counted whose size was not known when they were met.
        var pending: [Int] = []

        init(cap: Int, count: Int) {
            self.cap = cap
            sizes = [Int](repeating: 0, count: count)
            pending.reserveCapacity(64)
        }

        /// `first + second`, saturating just above `cap`. (Never called with a mutating call
        /// among its arguments: `self` would be copied first, and every append then copied
        /// `pending`.)
        @inline(__always)
        func sum(_ first: Int, _ second: Int) -> Int { KeyedArchiveExpansion.saturating(first, second, cap: cap) }

        /// Pends `child` when its size is not known yet, and returns what it adds otherwise (a
        /// reference back to an object being counted adds 1).
        @inline(__always)
        mutating func add(child: Int) -> Int {
            let size = sizes[child]
            if size == 0 {
                pending.append(child)
                return 0
            }
            return max(size, 1)
        }

        /// Adds the objects `object` refers to; returns what its known children and inline
        /// values add up to.
        mutating func add(childrenOf object: borrowing KeyedArchiveObject) -> Int {
            var known = 0
            switch object {
            case .array(let elements), .set(let elements), .orderedSet(let elements):
                for element in elements {
                    let added = add(child: element.index)
                    known = sum(known, added)
                }
            case .dictionary(let keys, let values):
                for key in keys {
                    let added = add(child: key.index)
                    known = sum(known, added)
                }
                for value in values {
                    let added = add(child: value.index)
                    known = sum(known, added)
                }
            case .instance(let instance):
                for field in instance.table.values {
                    let added = add(field: field)
                    known = sum(known, added)
                }
            case .plist(.array(let elements)):
                for element in elements {
                    let added = add(field: element)
                    known = sum(known, added)
                }
            case .plist(.dictionary(let entries)):
                for value in entries.values {
                    let added = add(field: value)
                    known = sum(known, added)
                }
            case .plist(let field):
                known = add(field: field)
            case .null, .nsNull, .string, .integer, .unsignedInteger, .real, .bool, .data, .date, .uuid, .url,
                .classDescription:
                break
            }
            return known
        }

        /// Adds the references an inline field holds; returns what it adds besides them (its
        /// inline values, and its known children). Recursive over inline nesting, which the
        /// table reader bounded by `maxDepth`.
        mutating func add(field: KeyedArchiveField) -> Int {
            switch field {
            case .reference(let target):
                return add(child: target.index)
            case .array(let elements):
                var known = 1
                for element in elements {
                    let added = add(field: element)
                    known = sum(known, added)
                }
                return known
            case .dictionary(let entries):
                var known = 1
                for value in entries.values {
                    let added = add(field: value)
                    known = sum(known, added)
                }
                return known
            case .integer, .unsignedInteger, .real, .bool, .string, .data, .date:
                return 1
            }
        }
    }

    private static func refusal(_ index: Int, _ archive: KeyedArchive, _ topKey: String) -> ArchiveError {
        let cap = archive.limits.maxObjectCount
        return ArchiveError(
            .limitExceeded(.objectCount),
            "object @\(index) unfolds to more than maxObjectCount (\(cap)) values: it reaches shared objects "
                + "along exponentially many paths, and decoding copies each path into the value types that hold it",
            codingPath: [topKey],
            typeName: archive.classChains[index].first
        )
    }

    /// `first + second`, or just above `cap` when that is more (never overflowing, whatever `cap`).
    @inline(__always)
    static func saturating(_ first: Int, _ second: Int, cap: Int) -> Int {
        let (sum, overflow) = first.addingReportingOverflow(second)
        guard overflow || sum > cap else { return sum }
        return cap == .max ? cap : cap + 1
    }
}
