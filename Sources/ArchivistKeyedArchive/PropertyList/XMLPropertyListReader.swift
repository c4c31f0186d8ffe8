import Archivist
import Foundation

/// Reads the XML property list format without trusting it: a small iterative scanner for the
/// plist vocabulary (`dict`, `key`, `array`, `string`, `integer`, `real`, `true`, `false`,
/// `date`, `data`), with nesting bounded by ``ArchiveLimits/maxDepth``.
///
/// The prolog (`<?xml …?>`, `<!DOCTYPE …>`) and comments are skipped, never interpreted, so no
/// entity expansion or external fetch can happen. A dictionary that is exactly
/// `{CF$UID: integer}` becomes a UID node, as CoreFoundation does.
struct XMLPropertyListReader {
    private let bytes: [UInt8]
    private let limits: ArchiveLimits
    private var position = 0
    private var nodes: [PropertyListDocument.Node] = []

    /// An open container: its start offset, tag and the indexes of children read so far.
    private struct Frame {
        var tag: String
        var offset: Int
        var children: [Int] = []
    }

    init(bytes: [UInt8], limits: ArchiveLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// Parses the document.
    ///
    /// - Throws: `ArchiveError` `.corrupt`, `.truncated`, `.limitExceeded(.depth / .elementCount)`.
    /// - Complexity: O(*n*) in the input size.
    mutating func read() throws -> PropertyListDocument {
        var stack: [Frame] = []
        var root: Int?
        var sawPlist = false
        while true {
            skipWhitespace()
            guard position < bytes.count else { break }
            guard bytes[position] == UInt8(ascii: "<") else {
                throw ArchiveError(.corrupt, "text outside an element", offset: position)
            }
            if try skipMarkup() { continue }
            let tagStart = position
            let (name, isClosing, isEmpty) = try readTag()
            if name == "plist" {
                if isClosing || isEmpty || sawPlist || !stack.isEmpty || root != nil {
                    if isClosing, stack.isEmpty, root != nil { continue }
                    throw ArchiveError(.corrupt, "misplaced <plist>", offset: tagStart)
                }
                sawPlist = true
                continue
            }
            if isClosing {
                guard var frame = stack.popLast(), frame.tag == name else {
                    throw ArchiveError(.corrupt, "unbalanced </\(name)>", offset: tagStart)
                }
                let index = try close(&frame)
                try attach(index, to: &stack, root: &root, at: tagStart)
                continue
            }
            let index: Int
            switch name {
            case "dict", "array":
                if isEmpty {
                    nodes.append(name == "dict" ? .dictionary(keys: [], values: []) : .array([]))
                    index = nodes.count - 1
                } else {
                    guard stack.count < limits.maxDepth else {
                        throw ArchiveError(
                            .limitExceeded(.depth),
                            "plist nesting deeper than \(limits.maxDepth)",
                            offset: tagStart
                        )
                    }
                    stack.append(Frame(tag: name, offset: tagStart))
                    continue
                }
            default:
                let text = isEmpty ? "" : try readText(closing: name)
                nodes.append(try scalar(name, text, at: tagStart))
                index = nodes.count - 1
            }
            try attach(index, to: &stack, root: &root, at: tagStart)
        }
        guard stack.isEmpty, let root else {
            throw ArchiveError(.truncated, "XML property list ends inside an element", offset: bytes.count)
        }
        return PropertyListDocument(nodes: nodes, root: root, format: .xml)
    }

    private mutating func attach(_ index: Int, to stack: inout [Frame], root: inout Int?, at offset: Int) throws {
        if stack.isEmpty {
            guard root == nil else { throw ArchiveError(.corrupt, "more than one root value", offset: offset) }
            root = index
            return
        }
        guard stack[stack.count - 1].children.count < limits.maxElementCount else {
            throw ArchiveError(.limitExceeded(.elementCount), "container too large", offset: offset)
        }
        stack[stack.count - 1].children.append(index)
    }

    /// Turns a finished container into a node; returns its index.
    private mutating func close(_ frame: inout Frame) throws -> Int {
        if frame.tag == "array" {
            nodes.append(.array(frame.children))
            return nodes.count - 1
        }
        guard frame.children.count.isMultiple(of: 2) else {
            throw ArchiveError(.corrupt, "dictionary with a key but no value", offset: frame.offset)
        }
        var keys: [Int] = []
        var values: [Int] = []
        for pair in stride(from: 0, to: frame.children.count, by: 2) {
            // Keys arrive as string nodes made from <key>; anything else in a key slot is corrupt.
            guard case .string = nodes[frame.children[pair]], isKey.contains(frame.children[pair]) else {
                throw ArchiveError(.corrupt, "dictionary entry without a <key>", offset: frame.offset)
            }
            keys.append(frame.children[pair])
            values.append(frame.children[pair + 1])
        }
        if keys.count == 1, nodes[keys[0]] == .string("CF$UID"), case .integer(let value) = nodes[values[0]] {
            guard value >= 0 else { throw ArchiveError(.corrupt, "negative CF$UID", offset: frame.offset) }
            nodes.append(.uid(UInt64(value)))
        } else {
            nodes.append(.dictionary(keys: keys, values: values))
        }
        return nodes.count - 1
    }

    /// Indexes of nodes that came from `<key>` elements.
    private var isKey = Set<Int>()

    private mutating func scalar(_ name: String, _ text: String, at offset: Int) throws -> PropertyListDocument.Node {
        switch name {
        case "key":
            isKey.insert(nodes.count)
            return .string(text)
        case "string": return .string(text)
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "integer":
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if let value = Int64(trimmed) { return .integer(value) }
            if let value = UInt64(trimmed) { return .unsignedInteger(value) }
            throw ArchiveError(.corrupt, "bad <integer>", offset: offset)
        case "real":
            guard let value = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw ArchiveError(.corrupt, "bad <real>", offset: offset)
            }
            return .real(value)
        case "data":
            guard let data = Data(base64Encoded: text.filter { !$0.isWhitespace }) else {
                throw ArchiveError(.corrupt, "bad base64 in <data>", offset: offset)
            }
            return .data([UInt8](data))
        case "date":
            guard let seconds = Self.referenceSeconds(iso8601: text.trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                throw ArchiveError(.corrupt, "bad <date>", offset: offset)
            }
            return .date(seconds)
        default:
            throw ArchiveError(.corrupt, "unknown element <\(name)>", offset: offset)
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` as seconds since 2001-01-01T00:00:00Z.
    static func referenceSeconds(iso8601 text: String) -> Double? {
        let digits = Array(text.utf8)
        guard digits.count == 20, digits[4] == 0x2D, digits[7] == 0x2D, digits[10] == 0x54,
            digits[13] == 0x3A, digits[16] == 0x3A, digits[19] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in digits[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        // Days from civil (Howard Hinnant), relative to 1970-01-01.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let unix = Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
        return unix - 978_307_200
    }

    // MARK: Scanning

    private mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private func hasPrefix(_ prefix: String, at offset: Int) -> Bool {
        let utf8 = Array(prefix.utf8)
        return offset + utf8.count <= bytes.count && Array(bytes[offset..<(offset + utf8.count)]) == utf8
    }

    /// Skips `<?…?>`, `<!--…-->` and `<!DOCTYPE …>`; returns whether something was skipped.
    private mutating func skipMarkup() throws -> Bool {
        let terminator: String
        if hasPrefix("<?", at: position) {
            terminator = "?>"
        } else if hasPrefix("<!--", at: position) {
            terminator = "-->"
        } else if hasPrefix("<!DOCTYPE", at: position) {
            terminator = ">"
        } else {
            return false
        }
        let start = position
        while position < bytes.count, !hasPrefix(terminator, at: position) { position += 1 }
        guard position < bytes.count else { throw ArchiveError(.truncated, "unterminated markup", offset: start) }
        position += terminator.utf8.count
        return true
    }

    /// Reads `<name …>`, `</name>` or `<name/>` (attributes are skipped).
    private mutating func readTag() throws -> (name: String, isClosing: Bool, isEmpty: Bool) {
        let start = position
        position += 1
        let isClosing = position < bytes.count && bytes[position] == UInt8(ascii: "/")
        if isClosing { position += 1 }
        let nameStart = position
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        while position < bytes.count, bytes[position] != UInt8(ascii: ">") { position += 1 }
        guard position < bytes.count, !name.isEmpty else {
            throw ArchiveError(.truncated, "unterminated tag", offset: start)
        }
        let isEmpty = bytes[position - 1] == UInt8(ascii: "/") && !isClosing
        position += 1
        return (name, isClosing, isEmpty)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
    }

    /// Reads character data up to `</name>`, decoding the five XML entities and character references.
    private mutating func readText(closing name: String) throws -> String {
        let start = position
        var out: [UInt8] = []
        while position < bytes.count, bytes[position] != UInt8(ascii: "<") {
            if bytes[position] == UInt8(ascii: "&") {
                out += try readEntity()
            } else {
                out.append(bytes[position])
                position += 1
            }
        }
        guard hasPrefix("</\(name)>", at: position) else {
            throw ArchiveError(.corrupt, "expected </\(name)>", offset: position < bytes.count ? position : start)
        }
        position += name.utf8.count + 3
        let text = String(decoding: out, as: UTF8.self)
        // Decoding repairs bad UTF-8 with U+FFFD; a repaired string no longer matches its bytes.
        guard text.utf8.elementsEqual(out) else {
            throw ArchiveError(.corrupt, "invalid UTF-8 text", offset: start)
        }
        return text
    }

    private mutating func readEntity() throws -> [UInt8] {
        let start = position
        var end = position
        while end < bytes.count, end - start < 12, bytes[end] != UInt8(ascii: ";") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";") else {
            throw ArchiveError(.corrupt, "unterminated entity", offset: start)
        }
        let name = String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
        position = end + 1
        switch name {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var value: UInt32?
            if name.hasPrefix("#x") {
                value = UInt32(name.dropFirst(2), radix: 16)
            } else if name.hasPrefix("#") {
                value = UInt32(name.dropFirst(), radix: 10)
            }
            guard let value, let scalar = Unicode.Scalar(value) else {
                throw ArchiveError(.corrupt, "unknown entity &\(name);", offset: start)
            }
            return Array(String(Character(scalar)).utf8)
        }
    }
}
