import Foundation

/// Draws the speed ratios of a run as a hand-written SVG bar chart (no dependencies): one bar
/// per case, grouped by table, on a log scale where 1× is the baseline.
enum BenchmarkChart {
    static func svg(_ ratios: [(title: String, name: String, baseline: String, ratio: Double)]) -> String {
        let labelWidth = 430.0, barWidth = 460.0, rowHeight = 18.0, titleHeight = 26.0
        let minimum = 0.01
        let maximum = max(10, (ratios.map(\.ratio).max() ?? 10) * 1.5)
        let decades = log10(maximum / minimum)
        func x(_ value: Double) -> Double {
            labelWidth + barWidth * log10(max(minimum, min(value, maximum)) / minimum) / decades
        }
        var body = ""
        var y = 40.0
        var currentTitle = ""
        for entry in ratios {
            if entry.title != currentTitle {
                currentTitle = entry.title
                y += 8
                body += "<text x=\"8\" y=\"\(y + 14)\" class=\"title\">\(escape(entry.title))</text>\n"
                y += titleHeight
            }
            let one = x(1)
            let end = x(entry.ratio)
            let (left, width) = end >= one ? (one, end - one) : (end, one - end)
            let color = entry.ratio >= 1 ? "#2e7d32" : "#c62828"
            body += "<text x=\"\(labelWidth - 8)\" y=\"\(y + 13)\" class=\"label\">\(escape(entry.name)) vs \(escape(entry.baseline))</text>\n"
            body += "<rect x=\"\(left)\" y=\"\(y + 3)\" width=\"\(max(width, 1))\" height=\"\(rowHeight - 6)\" fill=\"\(color)\"/>\n"
            // Slower cases get their figure just right of the 1× line, clear of the labels.
            body += "<text x=\"\(entry.ratio >= 1 ? end + 4 : one + 4)\" y=\"\(y + 13)\" class=\"value\">\(String(format: "%.2f×", entry.ratio))</text>\n"
            y += rowHeight
        }
        var axis = ""
        var tick = minimum
        while tick <= maximum * 1.0001 {
            let tx = x(tick)
            axis += "<line x1=\"\(tx)\" y1=\"30\" x2=\"\(tx)\" y2=\"\(y + 4)\" class=\"\(tick == 1 ? "one" : "grid")\"/>\n"
            axis += "<text x=\"\(tx)\" y=\"24\" class=\"tick\">\(tick < 1 ? String(format: "%g×", tick) : "\(Int(tick))×")</text>\n"
            tick *= 10
        }
        let width = labelWidth + barWidth + 80
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(y + 16))" viewBox="0 0 \(Int(width)) \(Int(y + 16))" font-family="Helvetica, Arial, sans-serif" font-size="11">
            <style>
            .title { font-weight: bold; font-size: 12px; }
            .label { text-anchor: end; }
            .value { fill: #333; }
            .tick { text-anchor: middle; fill: #555; }
            .grid { stroke: #ddd; }
            .one { stroke: #555; stroke-dasharray: 3 2; }
            </style>
            <rect width="100%" height="100%" fill="white"/>
            <text x="8" y="14" class="title">Speed relative to the baseline of each table (log scale; right of the dashed line is faster)</text>
            \(axis)\(body)</svg>

            """
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
