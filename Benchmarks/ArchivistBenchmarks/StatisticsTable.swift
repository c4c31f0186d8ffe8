import Archivist
import Foundation

/// Prints the per-type statistics a suite's cache counted (``CacheManager/statistics``): how
/// its reads were served, what it wrote, how long timed reads took. Printed after the timed
/// cases, so it costs them nothing.
func printStatistics(_ statistics: CacheStatistics, title: String) {
    print("\n\(title): cache statistics per type")
    var rows = [
        [
            "type", "reads", "hit rate", "memory hits", "disk hits", "misses", "stores", "read", "written",
            "avg read", "avg decode",
        ]
    ]
    let types = statistics.types.sorted { $0.key < $1.key }
    for (name, counts) in types + (types.count > 1 ? [("total", statistics.total)] : []) {
        rows.append([
            name, "\(counts.reads)", counts.hitRate.map { String(format: "%.1f %%", $0 * 100) } ?? "-",
            "\(counts.memoryHits)", "\(counts.diskHits)", "\(counts.misses)", "\(counts.stores)",
            byteText(counts.bytesRead), byteText(counts.bytesWritten),
            counts.averageReadTime.map(durationText) ?? "-", counts.averageDecodeTime.map(durationText) ?? "-",
        ])
    }
    var widths = [Int](repeating: 0, count: rows[0].count)
    for row in rows { for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) } }
    for row in rows {
        print(
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        )
    }
}

private func byteText(_ bytes: UInt64) -> String {
    bytes < 10_000 ? "\(bytes) B" : bytes < 10_000_000 ? "\(bytes / 1_000) KB" : "\(bytes / 1_000_000) MB"
}

private func durationText(_ duration: Duration) -> String {
    let nanoseconds = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
    return nanoseconds < 10_000 ? String(format: "%.0f ns", nanoseconds) : String(format: "%.1f µs", nanoseconds / 1e3)
}
