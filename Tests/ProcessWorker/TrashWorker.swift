import Archivist
import ArchivistTestSupport
import Foundation

/// `empty-folder <folder>`: deletes everything inside `folder` with the trash's own walk, as a
/// store's trash queue does — while another process may be emptying the same folder.
func emptyFolder(_ arguments: [String]) throws {
    try FolderRemoval.removeContents(of: argument(arguments, 0, "folder") { $0 })
}
