#include "CArchivistSupport.h"
#include <fcntl.h>

// Why C, on a descriptor, and numbers without an SDK name:
//
// - The class is set on the descriptor just opened (`F_SETPROTECTIONCLASS`), which the
//   storage layer often opened below its root's descriptor (`openat`): the very file, with no
//   second lookup of a path that may name another file by then. Foundation's ways are by
//   path: `FileManager.setAttributes([.protectionKey: FileProtectionType...], ofItemAtPath:)`,
//   and `URLResourceValues.fileProtection`, which is read-only. And the class is only lowered
//   from A or B, read first on the same descriptor (`F_GETPROTECTIONCLASS`).
// - `F_GETPROTECTIONCLASS` and `F_SETPROTECTIONCLASS` are in the SDK's <sys/fcntl.h>, but the
//   class values they take are not: `PROTECTION_CLASS_A`… are defined in xnu's
//   <sys/content_protection.h>, under `#ifdef PRIVATE`, which the SDK does not ship. These are
//   xnu's values, with the `FileProtectionType` each one is:
#define PROTECTION_CLASS_A 1   // FileProtectionType.complete
#define PROTECTION_CLASS_B 2   // FileProtectionType.completeUnlessOpen
#define PROTECTION_CLASS_C 3   // FileProtectionType.completeUntilFirstUserAuthentication
//   (4, D, is `.none`.) Verified only by reading: nothing here has Data Protection.

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
