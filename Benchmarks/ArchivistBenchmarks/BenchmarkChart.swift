import Foundation

/// Draws one table's speed ratios as a hand-written SVG bar chart (no dependencies): a bar per
/// case from the 1× line (the baseline), green when faster, red when slower, under the heading
/// of the workload it belongs to.
///
/// The label column is as wide as the longest label. The axis suits the rows: linear from 0
/// when every ratio lies between 0.1× and 10×, so that ratios near 1 are told apart; else a
/// log scale over whole decades, its ticks written short (`1k×`, `1M×`) so that they never run
/// together.
enum BenchmarkChart {
    /// One bar: what it measures, and how many times faster than its baseline it is.
    struct Bar {
        var label: String
        var ratio: Double
    }

    /// A workload's bars, under its heading.
    struct Section {
        var heading: String
        var bars: [Bar]
    }

    /// The chart of `sections` under `title`; `nil` when there is nothing to draw.
    static func svg(title: String, sections: [Section]) -> String? {
        let sections = sections.map {
            Section(heading: $0.heading, bars: $0.bars.filter { $0.ratio.isFinite && $0.ratio > 0 })
        }
        .filter { !$0.bars.isEmpty }
        let bars = sections.flatMap(\.bars)
        guard !bars.isEmpty else { return nil }
        let characterWidth = 6.2
        let rowHeight = 20.0
        let headingHeight = 22.0
        let top = 46.0
        let barWidth = 420.0
        let valueRoom = 70.0
        let labelWidth = max(120, Double(bars.map(\.label.count).max() ?? 0) * characterWidth + 16)
        let low = min(1, bars.map(\.ratio).min() ?? 1)
        let high = max(1, bars.map(\.ratio).max() ?? 1)
        let scale = Scale(low: low, high: high)
        func x(_ value: Double) -> Double { labelWidth + barWidth * scale.position(value) }

        var body = ""
        var y = top
        for section in sections {
            if !section.heading.isEmpty {
                body += "<text x=\"8\" y=\"\(y + 15)\" class=\"heading\">\(escape(section.heading))</text>\n"
                y += headingHeight
            }
            for bar in section.bars {
                let one = x(1)
                let end = x(bar.ratio)
                let (left, width) = end >= one ? (one, end - one) : (end, one - end)
                let color = bar.ratio >= 1 ? "#2e7d32" : "#c62828"
                body += "<text x=\"\(labelWidth - 8)\" y=\"\(y + 14)\" class=\"label\">\(escape(bar.label))</text>\n"
                body +=
                    "<rect x=\"\(left)\" y=\"\(y + 4)\" width=\"\(max(width, 1))\" height=\"\(rowHeight - 8)\" fill=\"\(color)\"/>\n"
                body += "<text x=\"\(max(end, one) + 4)\" y=\"\(y + 14)\" class=\"value\">\(format(bar.ratio))</text>\n"
                y += rowHeight
            }
        }
        var axis = ""
        for tick in scale.ticks {
            let tx = x(tick)
            axis +=
                "<line x1=\"\(tx)\" y1=\"\(top - 6)\" x2=\"\(tx)\" y2=\"\(y + 2)\" class=\"\(tick == 1 ? "one" : "grid")\"/>\n"
            axis += "<text x=\"\(tx)\" y=\"\(top - 10)\" class=\"tick\">\(scale.label(tick))</text>\n"
        }
        let caption = scale.isLogarithmic ? "log scale" : "linear scale"
        let heading = "\(title): speed against the baseline (\(caption); right of the dashed 1× line is faster)"
        let textWidth = Double(([heading] + sections.map(\.heading)).map(\.count).max() ?? 0) * 6.8 + 16
        let width = Int(max(labelWidth + barWidth + valueRoom, textWidth))
        let height = Int(y + 12)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" font-family="Helvetica, Arial, sans-serif" font-size="11">
            <style>
            .title { font-weight: bold; font-size: 12px; }
            .heading { font-style: italic; }
            .label { text-anchor: end; }
            .value { fill: #333; }
            .tick { text-anchor: middle; fill: #555; }
            .grid { stroke: #ddd; }
            .one { stroke: #555; stroke-dasharray: 3 2; }
            </style>
            <rect width="100%" height="100%" fill="white"/>
            <text x="8" y="16" class="title">\(escape(heading))</text>
            \(axis)\(body)</svg>

            """
    }

    /// Where a ratio lies on the axis, from 0 at its left end to 1 at its right end.
    struct Scale {
        let isLogarithmic: Bool
        let minimum: Double, maximum: Double
        let ticks: [Double]

        /// An axis that holds `low` … `high` (which include 1).
        init(low: Double, high: Double) {
            if low >= 0.1 && high <= 10 {
                isLogarithmic = false
                let step = Scale.step(for: high)
                minimum = 0
                maximum = (high * 1.05 / step).rounded(.up) * step
                ticks = stride(from: 0, through: maximum + step / 2, by: step).map { $0 }
            } else {
                isLogarithmic = true
                minimum = pow(10, log10(low).rounded(.down))
                maximum = pow(10, log10(high).rounded(.up))
                var ticks: [Double] = []
                var tick = minimum
                while tick <= maximum * 1.0001 {
                    ticks.append(tick)
                    tick *= 10
                }
                self.ticks = ticks
            }
        }

        func position(_ value: Double) -> Double {
            let value = max(minimum, min(value, maximum))
            if isLogarithmic { return log10(value / minimum) / log10(maximum / minimum) }
            return (value - minimum) / (maximum - minimum)
        }

        /// A tick's text: `0.5×`, `2×`, `100×`, `10k×`, `1M×`.
        func label(_ tick: Double) -> String {
            switch tick {
            case 1_000_000...: return String(format: "%gM×", tick / 1_000_000)
            case 1_000...: return String(format: "%gk×", tick / 1_000)
            default: return String(format: "%g×", tick)
            }
        }

        /// A step that gives four to eight ticks up to `high`.
        static func step(for high: Double) -> Double {
            for step in [0.25, 0.5, 1, 2] where high / step <= 8 { return step }
            return 2
        }
    }

    /// Two significant decimals where they matter: 0.94×, 23.4×, 8539×.
    static func format(_ ratio: Double) -> String {
        String(format: ratio >= 100 ? "%.0f×" : ratio >= 10 ? "%.1f×" : "%.2f×", ratio)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
