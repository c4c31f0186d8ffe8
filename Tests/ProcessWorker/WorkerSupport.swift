import ArchivistTestSupport
import Foundation

/// The argument at `index` converted by `convert`, or a usage failure naming `what`.
func argument<T>(_ arguments: [String], _ index: Int, _ what: String, _ convert: (String) -> T?) -> T {
    guard index < arguments.count, let value = convert(arguments[index]) else {
        fail("missing or bad argument: \(what)")
    }
    return value
}
