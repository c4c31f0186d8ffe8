import Foundation

/// Keeps the folders a store makes for itself — `.archivist` (the index, journal, locks, the
/// trash and spare folders in it) and `.archivist-temporaries` — out of device backups:
/// their contents are rebuilt from the entries, or are on their way to the trash, and a
/// backup of them only costs the user's iCloud space and restore time.
///
/// On Apple platforms the folder's `isExcludedFromBackup` resource value is set (an extended
/// attribute that iCloud and iTunes/Finder backups honour; it covers everything inside).
/// Linux has no device backup, so nothing is done there — verified by reading only, as
/// nothing here runs on Apple platforms.
///
/// ```swift
/// BackupExclusion.exclude(folder: root + "/.archivist")
/// ```
enum BackupExclusion {
    /// Marks the folder at `path` as excluded from backups (Apple platforms). Best effort: a
    /// folder that is missing, or a file system that refuses the attribute, is left as it is.
    ///
    /// - Complexity: One `setxattr` on Apple platforms; nothing elsewhere.
    static func exclude(folder path: String) {
        #if canImport(Darwin)
        var url = URL(fileURLWithPath: path, isDirectory: true)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try? url.setResourceValues(values)
        #endif
    }

    /// Whether the folder at `path` is marked excluded from backups; `nil` where there is no
    /// such mark (Linux) or it cannot be read.
    static func isExcluded(folder path: String) -> Bool? {
        #if canImport(Darwin)
        let url = URL(fileURLWithPath: path, isDirectory: true)
        return (try? url.resourceValues(forKeys: [.isExcludedFromBackupKey]))?.isExcludedFromBackup
        #else
        return nil
        #endif
    }
}
