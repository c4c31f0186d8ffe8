import Foundation

extension PersistentIndex {
    /// What the index knows about one entry file.
    struct Record: Hashable, Sendable {
        var logical: Int64
        var allocated: Int64
        /// Seconds since 1970 of the last read or write, for least-recently-accessed eviction.
        var lastAccess: Double

        /// In a folder's ``IndexNode/entries``: the entry the snapshot file holds is gone.
        static let removed = Record(logical: -1, allocated: -1, lastAccess: 0)
        var isRemoved: Bool { logical < 0 }
    }

    /// A folder in the index: its subfolders, its entries, and the usage of everything inside.
    final class IndexNode {
        var usage = DiskUsage()
        var children: [String: IndexNode] = [:]
        /// The entries set, read or removed since the snapshot was saved (a removed one the
        /// snapshot holds as ``Record/removed``), and every entry of a folder the snapshot does
        /// not hold. Keyed by trivially destroyable names, so dropping a folder of 100,000 entries
        /// frees one buffer rather than 100,000 strings.
        var entries: [EntryName: Record] = [:]
        /// The folder's entries in the snapshot's layers, read on demand; `nil` when no layer
        /// that counts for the folder holds any.
        var saved: SavedStack?

        /// The entry `name`'s record: the one set since the snapshot, else the snapshot's.
        func record(_ name: EntryName) -> Record? {
            if let set = entries[name] { return set.isRemoved ? nil : set }
            if case .hashed(let digest) = name, let saved { return saved.record(digest) }
            return nil
        }
    }

    /// The size index: a tree of folders mirroring the disk, each carrying the total usage
    /// below it, so any folder's size is a walk of a few components. The records of a loaded
    /// snapshot stay in its file and are read when asked for (``SnapshotFile``); what changed
    /// since is in memory, folder by folder.
    ///
    /// Not thread-safe; ``DiskStore`` keeps it behind its state lock.
    struct SizeIndex {
        var root = IndexNode()
        /// The newest layer file of the snapshot the folders' saved records are read from
        /// (``IndexNode/saved``); `nil` for an index built in memory (a scan, or a root without
        /// a snapshot).
        var file: SnapshotFile?
        /// The older layer files `file` stacks on, newest first.
        var bases: [SnapshotFile] = []
        /// Whether a page of a layer file failed its checksum: what the index answers for its
        /// entries cannot be trusted until a rescan.
        var isDamaged: Bool { (file?.isDamaged ?? false) || bases.contains { $0.isDamaged } }
        /// The folder an entry was last set in, and its nodes from the root down: sets run in
        /// one folder (a cache type being filled), and this spares each of them the walk — a
        /// `String`-keyed dictionary lookup per component and the path's array. Dropped when a
        /// folder leaves the tree (``detach(_:)``); a node, once in the tree, stays there until
        /// then.
        ///
        /// Held in an object: checking an optional tuple copies it, retaining the folder's array
        /// and string and the path on every set, the journal's replayed ones included. The
        /// `cache-manager` suite's 1 KB set guards both.
        private var lastWalk: Walk?

        /// A folder and its nodes from the root down, for ``lastWalk``.
        private final class Walk {
            let folder: FolderPath
            let path: [IndexNode]
            init(_ folder: FolderPath, _ path: [IndexNode]) { (self.folder, self.path) = (folder, path) }
        }

        /// The node for `folder`, created when `create` is set.
        private func node(_ folder: FolderPath, create: Bool) -> [IndexNode]? {
            // The folders compare by their arrays' and strings' storage first: the caller's
            // `FolderPath` is usually the very value the last set had.
            if let lastWalk, lastWalk.folder == folder { return lastWalk.path }
            // Sized once: grown append by append, the array was reallocated on every set.
            var path: [IndexNode] = []
            path.reserveCapacity(folder.components.count + 1)
            path.append(root)
            var node = root
            for component in folder.components {
                if let child = node.children[component] {
                    node = child
                } else if create {
                    let child = IndexNode()
                    node.children[component] = child
                    node = child
                } else {
                    return nil
                }
                path.append(node)
            }
            return path
        }

        /// The usage of `folder` and everything inside it.
        ///
        /// - Complexity: O(number of components).
        func usage(of folder: FolderPath) -> DiskUsage {
            node(folder, create: false)?.last?.usage ?? DiskUsage()
        }

        /// The record for `key`, if the index has one.
        ///
        /// - Complexity: O(number of components); for an entry only the snapshot file holds,
        ///   O(log n) and a page read when its page is not cached.
        func record(_ key: DiskKey) -> Record? {
            node(key.folder, create: false)?.last?.record(key.name)
        }

        /// Records `key` with `record`, replacing any previous record, which it returns. With
        /// `keepingLaterAccess`, a previous record's later last access is kept.
        ///
        /// - Parameter previous: What a journal record says `key` held before (for an entry
        ///   the snapshot file may hold and nothing since has set: the file is then not read);
        ///   `.lookUp` to read it.
        /// - Complexity: O(number of components), amortized; O(1) for the folder of the last set.
        @discardableResult
        mutating func set(
            _ key: DiskKey,
            _ record: Record,
            keepingLaterAccess: Bool = false,
            previous: Previous = .lookUp
        ) -> Record? {
            guard let path = node(key.folder, create: true), let leaf = path.last else { return nil }
            if lastWalk?.folder != key.folder { lastWalk = Walk(key.folder, path) }
            let (old, delta) = Self.setEntry(
                key.name,
                record,
                in: leaf,
                keepingLaterAccess: keepingLaterAccess,
                previous: previous
            )
            for node in path { node.usage.add(delta) }
            return old
        }

        /// Sets `name` in `leaf`, as ``set(_:_:keepingLaterAccess:previous:)`` does; returns the
        /// record it replaced and what the folder's usage gains.
        private static func setEntry(
            _ name: EntryName,
            _ record: Record,
            in leaf: IndexNode,
            keepingLaterAccess: Bool,
            previous: Previous
        ) -> (old: Record?, delta: DiskUsage) {
            var record = record
            let old: Record?
            if let set = leaf.entries.updateValue(record, forKey: name) {
                old = set.isRemoved ? nil : set
            } else {
                old = saved(name, in: leaf, previous: previous)
            }
            if keepingLaterAccess, let old, old.lastAccess > record.lastAccess {
                record.lastAccess = old.lastAccess
                leaf.entries[name] = record
            }
            var delta = DiskUsage()
            delta.add(
                logical: record.logical - (old?.logical ?? 0),
                allocated: record.allocated - (old?.allocated ?? 0),
                entries: old == nil ? 1 : 0
            )
            return (old, delta)
        }

        /// Forgets `key`; returns its record if it had one.
        ///
        /// - Parameter previous: As for ``set(_:_:keepingLaterAccess:previous:)``.
        /// - Complexity: O(number of components).
        @discardableResult
        mutating func remove(_ key: DiskKey, previous: Previous = .lookUp) -> Record? {
            guard let path = node(key.folder, create: false), let leaf = path.last,
                let old = Self.removeEntry(key.name, in: leaf, previous: previous)
            else { return nil }
            for node in path { node.usage.add(logical: -old.logical, allocated: -old.allocated, entries: -1) }
            return old
        }

        /// Forgets `name` in `leaf`, as ``remove(_:previous:)`` does; returns its record if it
        /// had one.
        private static func removeEntry(_ name: EntryName, in leaf: IndexNode, previous: Previous) -> Record? {
            let old: Record?
            if let set = leaf.entries[name] {
                old = set.isRemoved ? nil : set
            } else {
                old = saved(name, in: leaf, previous: previous)
            }
            guard let old else { return nil }
            if leaf.saved != nil, case .hashed = name {
                leaf.entries[name] = .removed  // the file's record must not show through
            } else {
                leaf.entries[name] = nil
            }
            return old
        }

        /// A replay of journal records in progress (``replay(_:before:in:)``): the folder of the
        /// run of records being replayed, its nodes from the root down, and what the run added
        /// to its usage so far, not yet added to those nodes.
        struct Replay {
            fileprivate var folder: FolderPath?
            fileprivate var path: [IndexNode] = []
            fileprivate var pending = DiskUsage()
            /// How many records are to come, until the first run's folder is sized for them.
            fileprivate var expected: Int

            /// A replay of about `records` records: the first run's folder table is sized for
            /// them once (at 1,024 or more), not doubled a dozen times on the way.
            init(expecting records: Int = 0) { expected = records }
        }

        /// Applies a journal record's change, as ``apply(_:previous:)`` does with the entry's
        /// previous record known, but walking to a folder once per run of records in it and
        /// adding the run's usage to the folders above it once, when the run ends
        /// (``finish(_:)``, which must follow the last record). An open replays up to
        /// ``PersistentIndex/compactionThreshold`` bytes of records, nearly all in one folder; a walk
        /// and usage updates per record were most of its time (the `scale` suite's open of a
        /// million entries guards it).
        ///
        /// - Complexity: O(1) amortized for a record in the folder of the one before.
        mutating func replay(_ change: PersistentIndex.Change, before: Record?, in run: inout Replay) {
            switch change {
            case .set(let key, let record):
                guard let leaf = runLeaf(key.folder, create: true, &run) else { return }
                run.pending.add(
                    Self.setEntry(key.name, record, in: leaf, keepingLaterAccess: true, previous: .known(before)).delta
                )
            case .remove(let key):
                guard let leaf = runLeaf(key.folder, create: false, &run),
                    let old = Self.removeEntry(key.name, in: leaf, previous: .known(before))
                else { return }
                run.pending.add(logical: -old.logical, allocated: -old.allocated, entries: -1)
            case .clear:
                finish(&run)  // the clear may detach the run's folder
                apply(change)
            }
        }

        /// Ends a replay's run: adds its usage to the folders above it.
        mutating func finish(_ run: inout Replay) {
            if run.pending != DiskUsage() {
                for node in run.path { node.usage.add(run.pending) }
            }
            run = Replay()
        }

        /// The leaf of `folder` for a replay's run: the run's own when it is in that folder;
        /// else the run ends and one in `folder` starts (`nil` when `folder` does not exist and
        /// `create` is not set).
        private mutating func runLeaf(_ folder: FolderPath, create: Bool, _ run: inout Replay) -> IndexNode? {
            if let current = run.folder, current == folder { return run.path.last }
            let expected = run.expected
            finish(&run)
            guard let path = node(folder, create: create), let leaf = path.last else { return nil }
            run.folder = folder
            run.path = path
            if expected >= 1_024 { leaf.entries.reserveCapacity(leaf.entries.count + expected) }
            return leaf
        }

        /// What the snapshot file holds for `name` in `leaf`, which has nothing set for it
        /// since: `previous` when a journal record says.
        private static func saved(_ name: EntryName, in leaf: IndexNode, previous: Previous) -> Record? {
            guard let saved = leaf.saved, case .hashed(let digest) = name else { return nil }
            switch previous {
            case .lookUp: return saved.record(digest)
            case .known(let record): return record
            }
        }

        /// What a change's entry held before it, for ``set(_:_:keepingLaterAccess:previous:)``.
        enum Previous {
            /// Read it from the index (the snapshot file's page, if need be).
            case lookUp
            /// The journal record says: this record, or none.
            case known(Record?)
        }

        /// Notes a read of `key` at `time`.
        mutating func touch(_ key: DiskKey, at time: Double) {
            guard let leaf = node(key.folder, create: false)?.last else { return }
            // One lookup: a read holds the state lock for this, and readers on several threads
            // wait for each other there (the `cache-manager` suite's two-thread reads guard it).
            if let known = leaf.entries.index(forKey: key.name) {
                if !leaf.entries.values[known].isRemoved { leaf.entries.values[known].lastAccess = time }
            } else if case .hashed(let digest) = key.name, var saved = leaf.saved?.record(digest) {
                saved.lastAccess = time
                leaf.entries[key.name] = saved
                touchedSaved += 1
            }
        }

        /// How many records of the snapshot file a read brought into memory (``touch(_:at:)``):
        /// a process that reads many entries and writes few would otherwise hold them all. The
        /// store folds the index past ``PersistentIndex/touchFoldThreshold``, after which they are
        /// read from the new file again.
        private(set) var touchedSaved = 0

        /// Drops `folder` and everything inside it; returns what it held.
        ///
        /// - Complexity: O(number of components): the subtree is unlinked, not walked.
        mutating func detach(_ folder: FolderPath) -> DiskUsage {
            guard let last = folder.components.last,
                let path = node(FolderPath(Array(folder.components.dropLast())), create: false),
                let parent = path.last, let gone = parent.children.removeValue(forKey: last)
            else { return DiskUsage() }
            lastWalk = nil  // it may run through the folder just detached
            for node in path {
                node.usage.add(
                    logical: -gone.usage.logicalBytes,
                    allocated: -gone.usage.allocatedBytes,
                    entries: -gone.usage.entryCount
                )
            }
            return gone.usage
        }

        /// The entries directly in `folder`, least recently accessed first.
        ///
        /// - Complexity: O(n log n) in the folder's entries, the snapshot file's read whole.
        func leastRecentlyAccessed(in folder: FolderPath) -> [(EntryName, Record)] {
            guard let leaf = node(folder, create: false)?.last else { return [] }
            var all: [(EntryName, Record)] = leaf.entries.filter { !$0.value.isRemoved }.map { ($0.key, $0.value) }
            _ = leaf.saved?.forEach { digest, record in
                if leaf.entries[.hashed(digest)] == nil { all.append((.hashed(digest), record)) }
            }
            return all.sorted { $0.1.lastAccess < $1.1.lastAccess }
        }

        /// Adds a folder of a snapshot at load: its hashed entries in the layers, its single
        /// entry and the usage of both. `false` when the folder was loaded already.
        mutating func load(_ folder: FolderPath, saved: SavedStack?, single: Record?, usage: DiskUsage) -> Bool {
            guard let path = node(folder, create: true), let leaf = path.last,
                leaf.saved == nil, leaf.entries.isEmpty
            else { return false }
            leaf.saved = saved
            if let single { leaf.entries[.single] = single }
            for node in path {
                node.usage.add(logical: usage.logicalBytes, allocated: usage.allocatedBytes, entries: usage.entryCount)
            }
            return true
        }
    }
}
