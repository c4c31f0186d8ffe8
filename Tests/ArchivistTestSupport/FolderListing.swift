import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every regular file under `url` (relative paths) with its size, the store's own
/// `.archivist` folder aside: the cache entries, as a test or a checking worker counts them
/// against the size index.
public func entryFiles(under url: URL) -> [String: Int] {
    var files: [String: Int] = [:]
    let root = url.standardizedFileURL.path
    guard let walker = FileManager.default.enumerator(atPath: root) else { return files }
    while let relative = walker.nextObject() as? String {
        if relative.hasPrefix(".archivist") {
            // Not entries; and a store's trash queue may be deleting inside it during the walk.
            walker.skipDescendants()
            continue
        }
        var status = stat()
        guard lstat(root + "/" + relative, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
        files[relative] = Int(status.st_size)
    }
    return files
}

/// Every path under `url`, files and folders, relative.
public func allPaths(under url: URL) -> [String] {
    (FileManager.default.enumerator(atPath: url.path)?.allObjects as? [String]) ?? []
}
