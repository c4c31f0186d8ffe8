import CArchivistSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A few 64-bit words in a small file that every process opening a store maps with
/// `MAP_SHARED`, read and written only with the atomics of `CArchivistSupport`.
///
/// The words (each 8-byte aligned):
/// - word 0: the layout's magic number; a file with another one is reinitialised under the
///   lock (``adoptLayout()``).
/// - ``change``: bumped by every committed mutation of any process, after its journal record is
///   written. A reader that sees it unchanged knows nothing changed; this is the one atomic
///   load a memory-tier hit pays for coherence.
/// - ``epoch``: bumped whenever the journal is folded into a new snapshot and truncated; a
///   process whose epoch is older reloads the snapshot.
/// - ``intent``: set by the holder of the store's exclusive lock before it changes the disk and
///   cleared once its journal record is written. A process that takes the lock and finds it set
///   knows the previous holder died (or failed) in between, and rescans.
///
/// - The intent's target, from word 384 to the end of the core words: the entry a holder
///   setting ``intent`` is about to change, so its death costs the next holder that entry's
///   `lstat` rather than a rescan (``setIntentTarget(_:)``).
///
/// - Process slots (from word 8, three words each: pid, PID namespace, incarnation — see
///   ``TemporaryName``; then one registration time per slot): every process that has the root
///   open holds one, and frees it when its store goes away or the process exits normally (an
///   `atexit` handler frees every slot the process still holds). A slot whose owner is dead
///   means the owner was killed or crashed: the opener that finds it frees it and sweeps the
///   dead owner's temporaries in the background; it rescans only if the intent word is set
///   (see ``register(as:now:)``).
///
/// - From byte 4096: the per-type statistics of ``SharedStatistics``. A file that holds the
///   core words but not these is grown when opened (the new words read 0, a valid empty
///   table); where it cannot grow, it is mapped as it is and the statistics stay in the
///   process (``statistics`` is `nil`), so the root stays usable.
///
/// Writes to a shared mapping survive the death of the writing process (they live in the page
/// cache), so a `kill -9` between two of them leaves the other processes a consistent view.
final class SharedCounters: @unchecked Sendable {
    // Safety: `base` points at a mapping that lives as long as this object and is touched only
    // through the C11 atomics.

    static let magic: UInt64 = 0x4152_4348_5348_0001  // "ARCHSH", version 1
    /// The counters and process slots: the whole file before the statistics existed.
    static let coreLength = 4096
    /// The file's length with the statistics after the core words.
    static let length = coreLength + SharedStatistics.regionLength
    private let base: UnsafeMutablePointer<UInt64>
    /// Whether `base` is the shared mapping (rather than private memory).
    private let mapped: Bool
    /// The bytes mapped at `base`: ``length``, or ``coreLength`` for a file that could not grow.
    private let mappedLength: Int

    /// Maps (creating it 0600 if needed) the file at `path`; with `readOnly` (a root that
    /// refuses writes, which no process can change) the counters are private memory instead.
    ///
    /// - Throws: ``StorageError`` when the file cannot be created, sized or mapped.
    init(path: String, fileSystem: FileSystem, readOnly: Bool, below root: AtomicFile.Root? = nil) throws {
        if readOnly {
            base = .allocate(capacity: Self.length / 8)
            base.initialize(repeating: 0, count: Self.length / 8)
            mapped = false
            mappedLength = Self.length
            return
        }
        mapped = true
        let fd = fileSystem.openCreatingPrivately(path, O_RDWR | O_CLOEXEC, below: root)
        guard fd >= 0 else { throw StorageError.posix("open shared counters", path: path, errno: errno) }
        defer { _ = fileSystem.close(fd) }
        var status = stat()
        guard fileSystem.fstat(fd, &status) == 0 else { throw StorageError.posix("fstat", path: path, errno: errno) }
        var length = Self.length
        if status.st_size < Self.length, fileSystem.ftruncate(fd, off_t(Self.length)) != 0 {
            // A file that cannot grow to the statistics' length opens without shared statistics.
            guard status.st_size >= Self.coreLength else {
                throw StorageError.posix("size shared counters", path: path, errno: errno)
            }
            length = Self.coreLength
        }
        mappedLength = length
        guard let raw = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), raw != MAP_FAILED else {
            throw StorageError.posix("mmap shared counters", path: path, errno: errno)
        }
        base = raw.bindMemory(to: UInt64.self, capacity: length / 8)
        // The layout is checked (and a fresh file claimed) under the lock: ``adoptLayout()``.
    }

    /// Under the exclusive lock, before anything else reads the words: claims a fresh (zeroed)
    /// file — zero words are valid initial values — or, when the first word is not this
    /// layout's magic (another version of the format, or garbage), reinitialises the file:
    /// clears the intent word and every slot, and keeps the change counter and epoch, which
    /// the caller's rescan then moves on from whatever they held, so no process that read
    /// them before mistakes the new state for the one it knew.
    ///
    /// - Returns: Whether the words were already this layout's (or fresh); `false` when they
    ///   were reinitialised and the caller must rescan.
    func adoptLayout() -> Bool {
        guard mapped else { return true }
        let found = archivist_atomic_compare_exchange_u64(base, 0, Self.magic)
        if found == 0 || found == Self.magic { return true }
        for word in 3..<mappedLength / 8 { archivist_atomic_store_u64(base + word, 0) }
        archivist_atomic_store_u64(base, Self.magic)
        return false
    }

    deinit {
        if mapped { munmap(base, mappedLength) } else { base.deallocate() }
    }

    /// The statistics words after the core ones (shared, or private for a read-only root);
    /// `nil` when the file could not grow to hold them.
    var statistics: UnsafeMutablePointer<UInt64>? {
        mappedLength >= Self.length ? base + Self.coreLength / 8 : nil
    }

    /// Where ``change`` lives, for a hit path that loads it directly.
    var changeAddress: UnsafePointer<UInt64> { UnsafePointer(base + 1) }

    /// The change counter.
    var change: UInt64 { archivist_atomic_load_u64(base + 1) }
    /// Bumps the change counter; returns the new value.
    @discardableResult
    func bumpChange() -> UInt64 { archivist_atomic_add_u64(base + 1, 1) }

    /// The journal epoch.
    var epoch: UInt64 { archivist_atomic_load_u64(base + 2) }
    /// Bumps the journal epoch; returns the new value.
    func bumpEpoch() -> UInt64 { archivist_atomic_add_u64(base + 2, 1) }

    static let firstSlot = 8
    static let slotCount = 64
    /// Each slot's registration time (seconds since 1970), one word per slot after the slots.
    /// Files written before these words existed read 0 there: such slots look old.
    private static let firstSlotTime = firstSlot + 3 * slotCount
    /// How old a slot whose owner cannot be judged (another PID namespace) must be before an
    /// opener that finds every slot taken may reuse it: by then every temporary of its owner
    /// is abandoned by age anyway (``TemporaryName/abandonAge``).
    static let unjudgedSlotAge = TemporaryName.abandonAge

    /// Under the exclusive lock: frees the slots of processes that died with the root open, and
    /// takes one for `owner` (this process, but for tests).
    ///
    /// A dead owner is no crash to repair by itself: a kill between a file change and its
    /// journal record leaves the ``intent`` word set, which every lock holder checks (and then
    /// rescans); a kill anywhere else can only leave temporaries, which a sweep of dead
    /// owners' temporaries removes. So the caller sweeps when this reports a dead owner, and
    /// never rescans for it. (A rescan here once hid a test that counted a killed writer's
    /// temporary as disk usage before that sweep had run: docs/Reliability.md, *Crash tests*.)
    ///
    /// When every slot is taken, the oldest slot of an owner that cannot be judged is reused
    /// once it is ``unjudgedSlotAge`` old; failing that the process works without a slot.
    ///
    /// - Returns: The slot taken (`nil` when none was free), and whether temporaries of a
    ///   dead owner may be left behind (a dead owner's slot was freed, or no slot could be
    ///   taken, so this process's own temporaries would go unnoticed): the caller sweeps then.
    func register(
        as owner: TemporaryName.Owner = TemporaryName.identity,
        now: Double = TemporaryName.currentTime()
    ) -> (slot: Int?, sweep: Bool) {
        var sweep = false
        var free: Int?
        var oldestUnjudged: (slot: Int, time: UInt64)?
        for i in 0..<Self.slotCount {
            let word = base + Self.firstSlot + 3 * i
            let incarnation = archivist_atomic_load_u64(word + 2)
            if incarnation == 0 {
                if free == nil { free = i }
                continue
            }
            let holder = TemporaryName.Owner(
                pid: pid_t(truncatingIfNeeded: archivist_atomic_load_u64(word)),
                namespace: archivist_atomic_load_u64(word + 1),
                incarnation: incarnation
            )
            if holder == owner { continue }
            if TemporaryName.isDead(holder) {
                sweep = true
                archivist_atomic_store_u64(word + 2, 0)
                if free == nil { free = i }
            } else if holder.namespace != TemporaryName.identity.namespace || !TemporaryName.judgesOtherProcesses {
                let time = archivist_atomic_load_u64(base + Self.firstSlotTime + i)
                if oldestUnjudged.map({ time < $0.time }) ?? true { oldestUnjudged = (i, time) }
            }
        }
        if free == nil, let (slot, time) = oldestUnjudged, now - Double(time) > Self.unjudgedSlotAge {
            free = slot
            sweep = true
        }
        guard let slot = free else { return (nil, true) }
        let word = base + Self.firstSlot + 3 * slot
        archivist_atomic_store_u64(word + 2, 0)
        archivist_atomic_store_u64(word, UInt64(UInt32(bitPattern: owner.pid)))
        archivist_atomic_store_u64(word + 1, owner.namespace)
        archivist_atomic_store_u64(base + Self.firstSlotTime + slot, UInt64(max(0, now)))
        archivist_atomic_store_u64(word + 2, owner.incarnation)
        if owner == TemporaryName.identity { Self.held.withLock { $0[ObjectIdentifier(self)] = (self, slot) } }
        _ = Self.freeAtExit
        return (slot, sweep)
    }

    /// The slots this process holds, freed by ``freeAtExit`` when it exits normally.
    private static let held = Locked<[ObjectIdentifier: (counters: SharedCounters, slot: Int)]>([:])

    /// Installs, once, the `atexit` handler that frees this process's slots: a process that
    /// exits without closing its stores (a global `CacheManager` is never deallocated) then
    /// does not look killed to the next opener, which would rescan the root.
    private static let freeAtExit: Void = {
        atexit {
            for (counters, slot) in SharedCounters.held.withLock({ Array($0.values) }) { counters.unregister(slot) }
        }
    }()

    /// Frees `slot` (the store is going away) if this process still holds it: a slot reused
    /// by another opener (see ``register(as:now:)``) stays theirs.
    func unregister(_ slot: Int) {
        Self.held.withLock { held in
            if held[ObjectIdentifier(self)]?.slot == slot { held[ObjectIdentifier(self)] = nil }
        }
        let word = base + Self.firstSlot + 3 * slot
        guard archivist_atomic_load_u64(word) == UInt64(UInt32(bitPattern: TemporaryName.identity.pid)) else { return }
        _ = archivist_atomic_compare_exchange_u64(word + 2, TemporaryName.identity.incarnation, 0)
    }

    /// The owner registered in `slot`, or `nil` when it is free.
    func owner(ofSlot slot: Int) -> TemporaryName.Owner? {
        let word = base + Self.firstSlot + 3 * slot
        let incarnation = archivist_atomic_load_u64(word + 2)
        guard incarnation != 0 else { return nil }
        return TemporaryName.Owner(
            pid: pid_t(truncatingIfNeeded: archivist_atomic_load_u64(word)),
            namespace: archivist_atomic_load_u64(word + 1),
            incarnation: incarnation
        )
    }

    /// Whether a lock holder's disk change is not yet in the journal. Setting it either way
    /// drops the intent's target first (``setIntentTarget(_:)``): a target names the change of
    /// the intent it was set for, after the word, and nothing else — a holder that dies before
    /// naming one leaves a rescan.
    var intent: Bool {
        get { archivist_atomic_load_u64(base + 3) != 0 }
        set {
            archivist_atomic_store_u64(base + Self.firstTargetWord, 0)
            archivist_atomic_store_u64(base + 3, newValue ? 1 : 0)
        }
    }

    /// The first word of the intent's target: the entry a lock holder is about to change, as
    /// the bytes of a journal record naming it, written right after ``intent`` is set. A holder
    /// that dies with the word set leaves the next one the one entry to look at, rather than
    /// the whole root to rescan (``PersistentIndex/repairIntentTarget(_:)``). Past the process slots,
    /// in the core words, which files of this layout always had (as zeros: no target).
    private static let firstTargetWord = 384
    /// The bytes a target may take: the words after the length word, to the core's end.
    static let targetCapacity = (coreLength / 8 - firstTargetWord - 1) * 8

    /// Sets the intent's target to `bytes` (`nil`, or more than ``targetCapacity``: none, so
    /// a holder that dies leaves a rescan), its length last. Under the exclusive lock, right
    /// after ``intent`` is set.
    func setIntentTarget(_ bytes: UnsafeRawBufferPointer?) {
        let header = base + Self.firstTargetWord
        guard let bytes, bytes.count > 0, bytes.count <= Self.targetCapacity else {
            archivist_atomic_store_u64(header, 0)
            return
        }
        var word = 0
        while word * 8 < bytes.count {
            var value: UInt64 = 0
            for i in 0..<min(8, bytes.count - word * 8) { value |= UInt64(bytes[word * 8 + i]) << (8 * UInt64(i)) }
            archivist_atomic_store_u64(header + 1 + word, value)
            word += 1
        }
        archivist_atomic_store_u64(header, UInt64(bytes.count))
    }

    /// The intent's target bytes (see ``setIntentTarget(_:)``); `nil` when there is none. The
    /// bytes carry their own checksum (a journal record's), which the caller checks.
    var intentTarget: [UInt8]? {
        let header = base + Self.firstTargetWord
        let count = Int(truncatingIfNeeded: archivist_atomic_load_u64(header))
        guard count > 0, count <= Self.targetCapacity else { return nil }
        return (0..<count).map { i in
            UInt8(truncatingIfNeeded: archivist_atomic_load_u64(header + 1 + i / 8) >> (8 * UInt64(i % 8)))
        }
    }
}
