// `_GNU_SOURCE` before any header: glibc declares `statx` only then.
#define _GNU_SOURCE
#include "CArchivistSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif

// Linux 6.13 and later (multigrain time stamps): asking for a file's change or modification
// time marks it "queried", and the file's next change then takes a fine-grained time stamp,
// which moves forward the coarse clock every later change on the machine sees. A writer that
// `fstat`s each temporary it wrote therefore makes the next append to any other file (the
// store's journal) find a new time and dirty its inode in the file system's journal: on ext4,
// every journal `pwrite` then pays for an inode update as well (the `cache-manager` suite's
// 1 KB set guards it). `statx` with a mask that leaves the times out does not mark the file;
// where there is no `statx`, `fstat` does the job.
//
// A sandbox may refuse `statx` itself (older container seccomp profiles answered EPERM, old
// kernels ENOSYS): then this process uses `fstat` from the first refusal on.
#if defined(__linux__) && defined(STATX_BLOCKS)
static int statx_refused;
#endif

int archivist_fstat_sizes(int fd, struct archivist_file_sizes *out) {
#if defined(__linux__) && defined(STATX_BLOCKS)
    if (!__atomic_load_n(&statx_refused, __ATOMIC_RELAXED)) {
        struct statx status;
        const unsigned int wanted = STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_BLOCKS | STATX_INO;
        if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, wanted, &status) == 0) {
            if ((status.stx_mask & wanted) == wanted) {
                out->mode = status.stx_mode;
                out->size = (int64_t)status.stx_size;
                out->blocks = (int64_t)status.stx_blocks;
                // As glibc's own `fstat` built on `statx` makes `st_dev`, so it compares
                // equal with an `lstat` of the same file.
                out->device = (uint64_t)makedev(status.stx_dev_major, status.stx_dev_minor);
                out->inode = (uint64_t)status.stx_ino;
                return 0;
            }
            // A file system that could not fill a field: the plain call below.
        } else if (errno == ENOSYS || errno == EPERM) {
            __atomic_store_n(&statx_refused, 1, __ATOMIC_RELAXED);
        } else {
            return -1;
        }
    }
#endif
    struct stat plain;
    if (fstat(fd, &plain) != 0) return -1;
    out->mode = (uint32_t)plain.st_mode;
    out->size = (int64_t)plain.st_size;
    out->blocks = (int64_t)plain.st_blocks;
    out->device = (uint64_t)plain.st_dev;
    out->inode = (uint64_t)plain.st_ino;
    return 0;
}
