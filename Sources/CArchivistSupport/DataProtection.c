#include "CArchivistSupport.h"
#include <fcntl.h>

// Apple's Data Protection classes as `F_GETPROTECTIONCLASS` reports them (<sys/fcntl.h>
// names them only in the kernel's headers): A is `complete`, B `completeUnlessOpen`, C
// `completeUntilFirstUserAuthentication`, D `none`.
#define PROTECTION_CLASS_A 1
#define PROTECTION_CLASS_B 2
#define PROTECTION_CLASS_C 3

int archivist_allow_access_after_first_unlock(int fd) {
#if defined(__APPLE__) && defined(F_GETPROTECTIONCLASS) && defined(F_SETPROTECTIONCLASS)
    int current = fcntl(fd, F_GETPROTECTIONCLASS);
    if (current != PROTECTION_CLASS_A && current != PROTECTION_CLASS_B) return 0;
    return fcntl(fd, F_SETPROTECTIONCLASS, PROTECTION_CLASS_C) == 0 ? 0 : -1;
#else
    (void)fd;
    return 0;
#endif
}
