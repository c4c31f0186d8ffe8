// What docs/FoundationBridge.md's snippets take for granted. Never run: only compiled.
import Foundation

var data: Data { Data() }
