// `_GNU_SOURCE` before any header: glibc declares `renameat2` and `RENAME_NOREPLACE` only then.
#define _GNU_SOURCE
#include "CArchivistSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

// A rename that fails with EEXIST rather than replace what is at the target: the one way to
// move a folder into a place only if no other process made one there first (plain `rename`
// silently replaces an empty folder). Used to keep and claim spare folders (SpareFolders.swift).
int archivist_rename_exclusive(int from_fd, const char *from, int to_fd, const char *to) {
#if defined(__APPLE__)
    return renameatx_np(from_fd, from, to_fd, to, RENAME_EXCL);
#elif defined(__linux__) && defined(RENAME_NOREPLACE)
    return renameat2(from_fd, from, to_fd, to, RENAME_NOREPLACE);
#elif defined(__linux__) && defined(SYS_renameat2)
    // An older C library without the wrapper: the system call itself (Linux 3.15+).
    return (int)syscall(SYS_renameat2, from_fd, from, to_fd, to, 1 /* RENAME_NOREPLACE */);
#else
    (void)from_fd; (void)from; (void)to_fd; (void)to;
    errno = ENOTSUP;
    return -1;
#endif
}
