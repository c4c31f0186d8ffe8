import Foundation
@testable import ArchivistKeyedArchive

/// Foundation's `NSKeyedArchiver.archivedData(withRootObject:requiringSecureCoding:)`, one
/// thread at a time as the bridge calls it (``FoundationArchiving``): corelibs' archiver traps
/// when two threads — two tests running in parallel — archive at once.
func foundationArchivedData(withRootObject root: Any, requiringSecureCoding: Bool) throws -> Data {
    try FoundationArchiving.serialized {
        try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: requiringSecureCoding)
    }
}
