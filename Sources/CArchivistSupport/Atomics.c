#include "CArchivistSupport.h"
#include <stdatomic.h>

// The casts are sound for naturally aligned 64-bit words: on every platform Archivist builds
// for, _Atomic uint64_t has the size and alignment of uint64_t and is lock-free, so the same
// word can be shared through a memory-mapped file by several processes.
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t), "atomic word size");
// A platform whose 64-bit atomics take a lock would keep that lock in each process's own
// memory, so two processes updating one mapped word would not exclude each other: the shared
// change counter would silently lose bumps. Refuse to build there instead.
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free to be shared between processes");
_Static_assert(__atomic_always_lock_free(sizeof(uint64_t), 0), "64-bit atomics must be lock-free to be shared between processes");

uint64_t archivist_atomic_load_u64(const uint64_t *address) {
    return atomic_load_explicit((const _Atomic uint64_t *)address, memory_order_seq_cst);
}

void archivist_atomic_store_u64(uint64_t *address, uint64_t value) {
    atomic_store_explicit((_Atomic uint64_t *)address, value, memory_order_seq_cst);
}

uint64_t archivist_atomic_add_u64(uint64_t *address, uint64_t delta) {
    return atomic_fetch_add_explicit((_Atomic uint64_t *)address, delta, memory_order_seq_cst) + delta;
}

uint64_t archivist_atomic_compare_exchange_u64(uint64_t *address, uint64_t expected, uint64_t desired) {
    atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)address, &expected, desired,
                                            memory_order_seq_cst, memory_order_seq_cst);
    return expected;
}
