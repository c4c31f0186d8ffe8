import Archivist
import Foundation

/// The one rule for dates in keyed archives, shared by the bridge's validator, the pure-Swift
/// reader and the writer: a date of NaN seconds — a plist date, an `NSDate`'s `NS.time` —
/// is never read or written.
///
/// Such a `Date` traps when described (FoundationEssentials), and never equals itself, so an
/// `NSDictionary` keyed by one cannot find its own key (corelibs force-unwraps that lookup when
/// describing it), even though an `NSDate` on Apple platforms can hold one. Readers refuse it
/// as `.corrupt` wherever it is in the property list, read or not, so that the validator and
/// the reader accept exactly the same archives; the writer refuses it as `.invalidValue`.
enum KeyedArchiveDateRule {
    /// Whether a date of `seconds` since 2001 may be read or written.
    @inline(__always)
    static func allows(_ seconds: Double) -> Bool { !seconds.isNaN }

    /// The date of `seconds`, or `.corrupt` at `codingPath` when the rule refuses it.
    @inline(__always)
    static func date(_ seconds: Double, codingPath: @autoclosure () -> [String]) throws -> Date {
        guard allows(seconds) else { throw refusal(codingPath: codingPath()) }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// The error for a NaN date read at `codingPath`.
    static func refusal(codingPath: [String] = [], node: Int? = nil) -> ArchiveError {
        let place = node.map { " (plist object \($0))" } ?? ""
        return ArchiveError(.corrupt, "a date that is not a number (NaN)\(place)", codingPath: codingPath)
    }

    /// Checks every date node of `document`, reachable or not.
    ///
    /// - Throws: `.corrupt` naming the first NaN date's node.
    /// - Complexity: O(*n*) in the document's nodes.
    static func check(_ document: PropertyListDocument) throws {
        for (index, node) in document.nodes.enumerated() {
            if case .date(let seconds) = node, !allows(seconds) { throw refusal(node: index) }
        }
    }

    /// The writer's refusal of a NaN date.
    static func writeRefusal(codingPath: [String]) -> ArchiveError {
        ArchiveError(.invalidValue, "a date that is not a number (NaN) cannot be read back", codingPath: codingPath)
    }
}
