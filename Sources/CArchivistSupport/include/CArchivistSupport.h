// The small C part of Archivist: what Swift cannot reach without a package dependency.
//
// - Atomic operations on memory that several processes map (a shared change counter file):
//   Swift's `Synchronization.Atomic` lives only inside Swift values, never at an address in a
//   memory-mapped file, so these wrap C11 `<stdatomic.h>` on a plain pointer.
#ifndef CARCHIVIST_SUPPORT_H
#define CARCHIVIST_SUPPORT_H

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

#ifdef __cplusplus
}
#endif

#endif
