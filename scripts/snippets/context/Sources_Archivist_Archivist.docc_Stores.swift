// What Stores.md's snippets take for granted. Never run: only compiled.
import Archivist
import Foundation

var documents: URL { URL(fileURLWithPath: NSTemporaryDirectory()) }
var libraryFolder: URL { documents }
var downloaded: [Task] { [] }
func showOnboarding() {}
