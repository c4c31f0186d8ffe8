// What the examples of MemoryCache.swift take for granted (scripts/check-snippets.sh); never run.
import Archivist
import Foundation

var cache: MemoryCache<String, [Product]> { fatalError() }
var bytes: Data { Data() }
