import Archivist
import Foundation

/// `default-location <app name>`: prints `CacheRoot.defaultLocation(for:)`'s caches and
/// documents paths, one a line, as this process's environment makes them.
func defaultLocation(_ arguments: [String]) throws {
    let root = CacheRoot.defaultLocation(for: argument(arguments, 0, "app name") { $0 })
    print(root.caches.path)
    print(root.documents.path)
}
