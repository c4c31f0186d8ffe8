import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the tool writes sizes, dates, ages and tables for people (the `--json` forms write
/// plain numbers and ISO 8601 dates instead).
package enum Formatting {
    /// `error` in the words of the library's public errors, for a reason beside a path the
    /// tool already shows: a storage failure's or a `CacheError`'s message, with the system's
    /// text for its `errno`; anything else as it describes itself.
    ///
    /// ```swift
    /// Formatting.reason(error)   // "not an Archivist entry (bad magic)"
    /// ```
    package static func reason(_ error: any Error) -> String {
        let cacheError: CacheError
        switch error {
        case let error as StorageError: cacheError = CacheError(error)
        case let error as CacheError: cacheError = error
        default: return "\(error)"
        }
        guard let code = cacheError.errno else { return cacheError.message }
        return "\(cacheError.message): \(String(cString: strerror(code)))"
    }

    /// What a path's `errno` means, for an error about a path a person typed: `no such file
    /// or folder` for a path that does not exist (`ENOENT`, `ENOTDIR`), the system's words for
    /// the rest.
    ///
    /// ```swift
    /// Formatting.pathProblem(ENOENT)   // "no such file or folder"
    /// ```
    package static func pathProblem(_ code: Int32) -> String {
        code == ENOENT || code == ENOTDIR ? "no such file or folder" : String(cString: strerror(code))
    }

    /// `512 B`, `1.2 KB`, `3.4 MB`, `2.1 GB` (decimal units, as Finder and most tools show).
    ///
    /// ```swift
    /// Formatting.bytes(1_234)   // "1.2 KB"
    /// ```
    package static func bytes(_ count: Int64) -> String {
        if count < 1_000 { return "\(count) B" }
        let units = ["KB", "MB", "GB", "TB", "PB"]
        var value = Double(count) / 1_000
        var unit = 0
        while value >= 999.95, unit < units.count - 1 {
            value /= 1_000
            unit += 1
        }
        return String(format: value < 9.995 ? "%.2f" : value < 99.95 ? "%.1f" : "%.0f", value) + " " + units[unit]
    }

    /// A count with thousands separators: `12,345`.
    package static func count<N: BinaryInteger>(_ value: N) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// A count with its noun, singular for one and plural otherwise: `1 entry`, `2 entries`,
    /// `0 bytes`, `12,345 bytes`. Every count the tool writes beside a noun goes through this.
    ///
    /// ```swift
    /// Formatting.count(1, "entry", plural: "entries")   // "1 entry"
    /// Formatting.count(1_000, "byte")                    // "1,000 bytes"
    /// ```
    ///
    /// - Parameters:
    ///   - value: The count.
    ///   - noun: The noun for one.
    ///   - plural: The noun for any other count; `noun` + `s` when not given.
    package static func count<N: BinaryInteger>(_ value: N, _ noun: String, plural: String? = nil) -> String {
        count(value) + " " + (value == 1 ? noun : plural ?? noun + "s")
    }

    /// `2026-11-27 19:40:34Z`: UTC, to the second.
    package static func date(_ date: Date) -> String {
        guard let seconds = calendarSeconds(date) else { return "\(date.timeIntervalSince1970) s after 1970" }
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(date.timeIntervalSince1970)" }
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02dZ",
            Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour),
            Int(parts.tm_min),
            Int(parts.tm_sec)
        )
    }

    /// `2026-11-27T19:40:34.250Z`: ISO 8601 in UTC with milliseconds, for JSON.
    package static func isoDate(_ date: Date) -> String {
        guard let seconds = calendarSeconds(date) else { return "\(date.timeIntervalSince1970) s after 1970" }
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(date.timeIntervalSince1970)" }
        let milliseconds = Int((date.timeIntervalSince1970 - floor(date.timeIntervalSince1970)) * 1_000)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour),
            Int(parts.tm_min),
            Int(parts.tm_sec),
            milliseconds
        )
    }

    /// The whole seconds since 1970 of `date`, when a calendar can show it (years 1 to 9999;
    /// a date read from a damaged file may be anything, NaN included).
    private static func calendarSeconds(_ date: Date) -> Int64? {
        let seconds = floor(date.timeIntervalSince1970)
        guard seconds.isFinite, seconds > -62_135_596_800, seconds < 253_402_300_800 else { return nil }
        return Int64(seconds)
    }

    /// A duration for people: `45 s`, `12 min`, `5 h`, `3 d`; negative ones as `in 5 min`.
    package static func age(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "\(seconds) s" }
        if seconds < 0 { return "in " + age(-seconds) }
        switch seconds {
        case ..<60: return "\(Int(seconds)) s"
        case ..<3_600: return "\(Int(seconds / 60)) min"
        case ..<172_800: return "\(Int(seconds / 3_600)) h"
        default: return "\(Int(seconds / 86_400)) d"
        }
    }

    /// A duration in the unit that suits it: `850 ns`, `12.3 µs`, `4.5 ms`, `1.2 s`.
    package static func duration(_ duration: Duration) -> String {
        let nanoseconds = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        switch nanoseconds {
        case ..<1_000: return String(format: "%.0f ns", nanoseconds)
        case ..<1_000_000: return String(format: "%.1f µs", nanoseconds / 1e3)
        case ..<1_000_000_000: return String(format: "%.1f ms", nanoseconds / 1e6)
        default: return String(format: "%.2f s", nanoseconds / 1e9)
        }
    }

    /// `rows` as columns separated by two spaces; columns listed in `rightAligned` are aligned
    /// right (numbers), the others left.
    ///
    /// - Complexity: O(cells).
    package static func table(_ rows: [[String]], rightAligned: Set<Int> = []) -> String {
        guard let width = rows.map(\.count).max() else { return "" }
        var widths = [Int](repeating: 0, count: width)
        for row in rows { for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) } }
        return rows.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                if column > 0 { line += "  " }
                line += rightAligned.contains(column) ? pad + cell : (column == row.count - 1 ? cell : cell + pad)
            }
            return line
        }.joined(separator: "\n")
    }

    /// `text` quoted, with control characters escaped, and cut after `limit` characters
    /// (`…` and the full length then follow).
    package static func quoted(_ text: String, limit: Int = 200) -> String {
        var escaped = ""
        var characters = 0
        for character in text {
            if characters == limit { break }
            characters += 1
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default:
                if let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1,
                    scalar.value < 0x20 || scalar.value == 0x7F
                {
                    escaped += String(format: "\\u{%x}", scalar.value)
                } else {
                    escaped.append(character)
                }
            }
        }
        if characters < text.count { return "\"\(escaped)…\" (\(count(text.count)) characters)" }
        return "\"\(escaped)\""
    }

    /// Up to `limit` bytes in hex, `…` after when there are more.
    package static func hex<Bytes: Collection<UInt8>>(_ bytes: Bytes, limit: Int = 16, total: Int? = nil) -> String {
        let shown = bytes.prefix(limit).map { String(format: "%02x", $0) }.joined()
        return shown + ((total ?? bytes.count) > limit ? "…" : "")
    }
}
