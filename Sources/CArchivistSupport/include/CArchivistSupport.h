// The small C part of Archivist: what Swift cannot reach without a package dependency.
//
// - Atomic operations on memory that several processes map (a shared change counter file):
//   Swift's `Synchronization.Atomic` lives only inside Swift values, never at an address in a
//   memory-mapped file, so these wrap C11 `<stdatomic.h>` on a plain pointer.
// - CRC-32C on the CPU's instructions (SSE 4.2 on x86_64, the ARMv8 CRC32 extension on arm64):
//   Swift reaches them only with a CPU flag for the whole module, and the Swift 6.3.1 compiler
//   crashes on `_mm_crc32_u64` without one.
// - A file's size and mode without its time stamps (`statx` on Linux, which Glibc declares for C
//   only with `_GNU_SOURCE`), and a rename that never replaces (`renameat2`, likewise).
// - Apple's Data Protection class of an open file (`F_SETPROTECTIONCLASS`), which Foundation
//   sets only on files it writes itself.
#ifndef CARCHIVIST_SUPPORT_H
#define CARCHIVIST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Sequentially consistent load of the 64-bit word at `address` (8-byte aligned).
uint64_t archivist_atomic_load_u64(const uint64_t *address);

/// Sequentially consistent store of `value` into the 64-bit word at `address` (8-byte aligned).
void archivist_atomic_store_u64(uint64_t *address, uint64_t value);

/// Atomically adds `delta` to the 64-bit word at `address` (8-byte aligned); returns the new value.
uint64_t archivist_atomic_add_u64(uint64_t *address, uint64_t delta);

/// Whether the 64-bit words at `first` and `second` (8-byte aligned) are equal, each loaded
/// atomically (sequentially consistent, as `archivist_atomic_load_u64`): a memory-tier hit's
/// coherence check. Inline in the header, so a hit pays two loads rather than a call.
static inline bool archivist_atomic_equal_u64(const uint64_t *first, const uint64_t *second) {
    return __atomic_load_n(first, __ATOMIC_SEQ_CST) == __atomic_load_n(second, __ATOMIC_SEQ_CST);
}

/// Relaxed atomic load of the 64-bit word at `address` (8-byte aligned): a plain load on
/// x86_64 and arm64, inline, for a check on every field a Codable model decodes (see
/// `CachedKeyedReader`). Pair it with `archivist_atomic_add_u64` for the writes.
static inline uint64_t archivist_atomic_load_relaxed_u64(const uint64_t *address) {
    return __atomic_load_n(address, __ATOMIC_RELAXED);
}

/// Relaxed atomic store of `value` into the 64-bit word at `address` (8-byte aligned): a plain
/// store on x86_64 and arm64, inline. With `archivist_atomic_load_relaxed_u64`, a counter of
/// several threads that may lose an update but is never torn (which reads of a cache type to
/// time, see `TypeTally`).
static inline void archivist_atomic_store_relaxed_u64(uint64_t *address, uint64_t value) {
    __atomic_store_n(address, value, __ATOMIC_RELAXED);
}

/// Atomically replaces the 64-bit word at `address` (8-byte aligned) with `desired` if it
/// holds `expected`; returns the value it held before (equal to `expected` on success).
uint64_t archivist_atomic_compare_exchange_u64(uint64_t *address, uint64_t expected, uint64_t desired);

/// Whether this CPU has CRC-32C instructions that `archivist_crc32c_hardware` can use.
/// Asks the CPU once per process (cpuid on x86_64, the auxiliary vector on Linux arm64).
bool archivist_crc32c_hardware_available(void);

/// The CRC-32C (Castagnoli) of `count` bytes at `bytes`, continuing from `seed` (0, or the
/// result for the bytes before), computed with the CPU's CRC-32C instructions.
///
/// Call only after `archivist_crc32c_hardware_available()` returned true: on a CPU without
/// the instructions this traps with an illegal instruction.
uint32_t archivist_crc32c_hardware(uint32_t seed, const void *bytes, size_t count);

/// Whether this CPU has a carry-less multiply (PCLMULQDQ on x86_64, PMULL on arm64) next to
/// its CRC-32C instructions, so `archivist_crc32c_shift_carryless` can run.
bool archivist_crc32c_carryless_available(void);

/// `crc` multiplied by x^(8·`length`) modulo the Castagnoli polynomial (reflected bit order):
/// a checksum moved past `length` further bytes, the core of `crc32_combine`. One carry-less
/// multiplication per set bit of `length` (by a precomputed x^(8·2^k)), each reduced with one
/// `crc32` instruction.
///
/// Call only after `archivist_crc32c_carryless_available()` returned true.
uint32_t archivist_crc32c_shift_carryless(uint32_t crc, uint64_t length);

/// What `archivist_fstat_sizes` reports of a file.
struct archivist_file_sizes {
    /// `st_mode`: the type and permission bits.
    uint32_t mode;
    /// `st_size`: the bytes the file holds.
    int64_t size;
    /// `st_blocks`: the 512-byte units the file system allocated for it.
    int64_t blocks;
    /// `st_dev`: the device holding the file.
    uint64_t device;
    /// `st_ino`: the file's inode number.
    uint64_t inode;
};

/// `fstat(fd)` for the type, mode, size, allocated blocks, device and inode only, into `out`; 0, or -1 with
/// `errno` set. On Linux a `statx` that asks for no time stamps, so the file is not marked as
/// having had its times read (see FileStatus.c for why that matters); `fstat` elsewhere.
int archivist_fstat_sizes(int fd, struct archivist_file_sizes *out);

/// Renames `from` (relative to the folder `from_fd`, or the working folder for `AT_FDCWD`) to
/// `to` (relative to `to_fd`) only if nothing is at `to`: `renameat2(..., RENAME_NOREPLACE)` on
/// Linux, `renameatx_np(..., RENAME_EXCL)` on Apple platforms. 0, or -1 with `errno` set:
/// `EEXIST` when `to` exists; `EINVAL`, `ENOSYS` or `ENOTSUP` where the kernel or the file
/// system cannot do it (the caller falls back).
int archivist_rename_exclusive(int from_fd, const char *from, int to_fd, const char *to);

/// Lowers the Data Protection class of the open file or folder `fd` to C
/// (`completeUntilFirstUserAuthentication`) when it is A (`complete`) or B
/// (`completeUnlessOpen`), so that another process of the app — a widget, a notification
/// extension — can open and map it while the device is locked; C and D are left as they are.
/// A folder's class is the default of the files made in it. 0, or -1 with `errno` set (for
/// example while the device is locked, when the class cannot be changed). Does nothing and
/// returns 0 where there is no Data Protection (Linux, volumes without it).
int archivist_allow_access_after_first_unlock(int fd);

#ifdef __cplusplus
}
#endif

#endif
