import Archivist

extension KeyedArchive: CustomStringConvertible, CustomDebugStringConvertible {
    /// One line: the root's class, the number of `$objects` entries and, for an archive read
    /// from bytes, their size — `KeyedArchive(root: NSArray, 1,204 objects, 310 KB)` — never
    /// the table itself, which `print`, `dump` of a holder or a debugger would otherwise
    /// spell out entry by entry.
    public var description: String {
        var parts = ["root: \(rootSummary)", "\(Self.grouped(objects.count)) objects"]
        if let byteCount { parts.append(Self.size(byteCount)) }
        return "KeyedArchive(\(parts.joined(separator: ", ")))"
    }

    /// The same line as ``description``.
    public var debugDescription: String { description }

    /// The root's most derived class name, or the Foundation class of a plain value.
    var rootSummary: String {
        guard let root, !root.isNull else { return "nil" }
        if let name = classChain(of: root).first { return name }
        switch self[root] {
        case .null: return "nil"
        case .nsNull: return "NSNull"
        case .string: return "NSString"
        case .integer, .unsignedInteger, .real, .bool: return "NSNumber"
        case .data: return "NSData"
        case .date: return "NSDate"
        case .uuid: return "NSUUID"
        case .url: return "NSURL"
        case .array: return "NSArray"
        case .set: return "NSSet"
        case .orderedSet: return "NSOrderedSet"
        case .dictionary: return "NSDictionary"
        case .instance(let instance): return instance.className
        case .classDescription: return "class description"
        case .plist: return "property list"
        }
    }

    /// `1,204`.
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var text = ""
        for (position, digit) in digits.enumerated() {
            if position > 0 && (digits.count - position) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return value < 0 ? "-" + text : text
    }

    /// `310 bytes`, `1.38 KB`, `310 KB`, `5.42 MB`: decimal units, three significant digits.
    static func size(_ bytes: Int) -> String {
        if bytes < 1_000 { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        var value = Double(bytes) / 1_000
        var unit = 0
        let units = ["KB", "MB", "GB", "TB"]
        while value >= 999.5 && unit < units.count - 1 {
            value /= 1_000
            unit += 1
        }
        let digits = value < 9.995 ? 2 : value < 99.95 ? 1 : 0
        return "\(fixed(value, digits)) \(units[unit])"
    }

    /// `value` with `digits` decimals, rounded half away from zero, without Foundation's formatters.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        guard digits > 0 else { return "\(scaled)" }
        let whole = scaled / Int(scale)
        var fraction = String(scaled % Int(scale))
        while fraction.count < digits { fraction = "0" + fraction }
        return "\(whole).\(fraction)"
    }
}
