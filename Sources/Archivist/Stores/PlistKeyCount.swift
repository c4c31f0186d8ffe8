import Foundation

/// Counts the dictionary keys of a property list two ways — in the file's bytes and in what
/// Foundation's parser made of them — so that ``PlistStore`` can tell when the parser merged
/// keys.
///
/// Foundation turns a plist dictionary into a Swift dictionary, whose `String` keys compare by
/// canonical equivalence: "é" as U+00E9 and as "e" + U+0301 are one key there, as are two
/// byte-identical keys that a hand-edited or hostile file repeats. The parser keeps one of
/// them and drops the other with its value, without a word. Archivist compares keys by their
/// bytes (``Bytewise``), and a `[String: PlistValue]` cannot hold both spellings, so a file
/// whose bytes name more keys than the parsed root holds is refused instead of half read.
///
/// The file count covers the two formats a store writes: XML (`<key>` elements of the root
/// element, outside comments, CDATA sections and processing instructions, as Foundation's
/// parser reads them) and binary `bplist00` (every value reachable from the top object and
/// every dictionary key, a shared object once per reference, as the parsed tree has it). For
/// anything else, or bytes it cannot follow, it says nothing: Foundation's parse stands.
enum PlistKeyCount {
    /// Whether `data`, which Foundation parsed into `root`, names more dictionary keys than
    /// `root` holds: the parser merged (and so dropped) some.
    ///
    /// - Complexity: O(n) in the file's size for XML; O(n) in the values of `root` for
    ///   binary, whatever the file claims.
    static func fileHasMoreKeys(_ data: Data, than root: PlistValue) -> Bool {
        if let named = binaryItems(data, limit: items(in: root)) {
            return fileHasMoreKeys(binaryItems: named, than: root)
        }
        let parsed = keys(in: root)
        return data.withUnsafeBytes { raw in (xmlKeys(raw.bindMemory(to: UInt8.self), limit: parsed) ?? 0) > parsed }
    }

    /// Whether a binary plist that names `named` values and keys (``binaryItems(_:limit:)``)
    /// names more than `root`, which Foundation parsed from it, holds.
    ///
    /// - Complexity: O(n) in the values of `root`.
    static func fileHasMoreKeys(binaryItems named: Int, than root: PlistValue) -> Bool {
        named > items(in: root)
    }

    /// The values a `bplist00` names from its top object, a shared object once per
    /// reference, plus every dictionary key — up to `limit + 1`; `nil` when `data` is not a
    /// `bplist00` or cannot be followed.
    ///
    /// - Complexity: O(min(limit, what the file names)), whatever the file claims.
    static func binaryItems(_ data: Data, limit: Int) -> Int? {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.starts(with: Array("bplist00".utf8)) else { return nil }
            var walker = BinaryWalker(bytes, limit: limit)
            return walker.count()
        }
    }

    /// The most values and keys a binary plist of `fileSize` bytes may name before it is
    /// refused unparsed. Foundation's parser expands a shared object once per reference, so
    /// a few hundred bytes of arrays that each reference the next twice name billions of
    /// values: the parse alone would take hours. A file written by Foundation shares no
    /// arrays or dictionaries, so it names at most about one value per byte; 64 per byte
    /// leaves room for other writers' sharing.
    static func binaryItemCap(fileSize: Int) -> Int {
        64 * fileSize + 4096
    }

    /// The keys of every dictionary in `value`, nested ones included.
    ///
    /// Iterative (a work list, not recursion), so that the deepest file Foundation reads is
    /// counted on a 512 KiB thread stack whatever the build's frame sizes.
    static func keys(in value: PlistValue) -> Int {
        tally(value, countingValues: false)
    }

    /// The values in `value`, itself included, plus the keys of every dictionary.
    static func items(in value: PlistValue) -> Int {
        tally(value, countingValues: true)
    }

    /// Dictionary keys, plus every value when `countingValues`, walked with a work list.
    private static func tally(_ value: PlistValue, countingValues: Bool) -> Int {
        var total = 0
        var pending = [value]
        while let next = pending.popLast() {
            if countingValues { total += 1 }
            switch next {
            case .dictionary(let entries):
                total += entries.count
                pending.append(contentsOf: entries.values)
            case .array(let elements):
                pending.append(contentsOf: elements)
            default:
                break
            }
        }
        return total
    }

    // MARK: XML

    /// The `<key>` elements (`<key/>`, `<key >` and `<key attribute="…">` too) of an XML
    /// plist's root element, read the way Foundation's parser reads them: a tag ends at its
    /// first `>` (quotes or not), comments, CDATA sections, processing instructions and the
    /// DOCTYPE hold no keys, and nothing after the root element's end counts (the parser
    /// ignores it). `nil` when the bytes do not start (after white space and a UTF-8 byte
    /// order mark) with `<`, as an OpenStep plist does not.
    private static func xmlKeys(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> Int? {
        var index = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        while index < bytes.count, isSpace(bytes[index]) { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { return nil }
        var keys = 0
        var depth = 0  // elements open
        while keys <= limit, let open = firstIndex(of: UInt8(ascii: "<"), in: bytes, from: index) {
            index = open + 1
            if matches("!--", bytes, at: index) {
                index = end(of: "-->", in: bytes, from: index + 3)
            } else if matches("![CDATA[", bytes, at: index) {
                index = end(of: "]]>", in: bytes, from: index + 8)
            } else if matches("?", bytes, at: index) {
                index = end(of: "?>", in: bytes, from: index + 1)
            } else {
                guard let close = firstIndex(of: UInt8(ascii: ">"), in: bytes, from: index) else { break }
                defer { index = close + 1 }
                if matches("!", bytes, at: index) { continue }  // <!DOCTYPE …>
                if matches("/", bytes, at: index) {
                    depth -= 1
                    if depth <= 0 { break }  // the root element ended
                    continue
                }
                if matches("key", bytes, at: index), index + 3 < bytes.count,
                    bytes[index + 3] == UInt8(ascii: ">") || bytes[index + 3] == UInt8(ascii: "/")
                        || isSpace(bytes[index + 3])
                {
                    keys += 1
                }
                if bytes[close - 1] != UInt8(ascii: "/") { depth += 1 }  // not an empty element
            }
        }
        return keys
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    private static func matches(_ text: StaticString, _ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        let count = text.utf8CodeUnitCount
        guard start + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[start + offset] != text.utf8Start[offset] { return false }
        return true
    }

    /// The index just past the next `terminator` from `start`, or the end of the bytes.
    private static func end(of terminator: StaticString, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while let candidate = firstIndex(of: terminator.utf8Start[0], in: bytes, from: index) {
            if matches(terminator, bytes, at: candidate) { return candidate + terminator.utf8CodeUnitCount }
            index = candidate + 1
        }
        return bytes.count
    }

    // MARK: Binary

    /// Follows a `bplist00` from its top object, counting each object reached (once per
    /// reference) and each dictionary key, and stops as soon as the count passes `limit`, so
    /// shared objects that fan out cost no more than the parsed tree did. Every read is
    /// bounds-checked; what it cannot follow (a bad offset, nesting past 512) is `nil`.
    private struct BinaryWalker {
        let bytes: UnsafeBufferPointer<UInt8>
        let limit: Int
        var items = 0
        var offsetSize = 0
        var referenceSize = 0
        var objectCount = 0
        var offsetTable = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int) {
            self.bytes = bytes
            self.limit = limit
        }

        /// The objects and keys reachable from the top object, up to `limit + 1`, or `nil`
        /// when the trailer or an object cannot be read.
        mutating func count() -> Int? {
            let trailer = bytes.count - 32
            guard trailer >= 8,
                let offsetSize = uint(at: trailer + 6, size: 1), let referenceSize = uint(at: trailer + 7, size: 1),
                let objectCount = uint(at: trailer + 8, size: 8), let top = uint(at: trailer + 16, size: 8),
                let offsetTable = uint(at: trailer + 24, size: 8),
                (1...8).contains(offsetSize), (1...8).contains(referenceSize), top < objectCount,
                objectCount <= bytes.count, offsetTable < trailer
            else { return nil }
            self.offsetSize = offsetSize
            self.referenceSize = referenceSize
            self.objectCount = objectCount
            self.offsetTable = offsetTable
            return visit(top) ? items : nil
        }

        /// A container being walked: where its references start, how many, the next one.
        private struct Frame {
            var references: Int
            var count: Int
            var next: Int
        }

        /// Counts `top`, its keys and everything it contains, depth first with an explicit
        /// stack (no recursion, so a small thread stack is enough at any build's frame size);
        /// `false` when an object cannot be read or nesting passes 512.
        private mutating func visit(_ top: Int) -> Bool {
            var stack: [Frame] = []
            var object = top
            while true {
                items += 1
                if items > limit { return true }  // the answer is known
                guard stack.count < 512, object < objectCount,
                    let start = uint(at: offsetTable + object * offsetSize, size: offsetSize), start < bytes.count
                else { return false }
                let marker = bytes[start]
                let kind = marker >> 4
                if kind == 0xA || kind == 0xC || kind == 0xD {  // a container: keys or values inside
                    guard let (count, first) = length(marker, at: start) else { return false }
                    if kind == 0xD { items += count }
                    stack.append(
                        Frame(references: kind == 0xD ? first + count * referenceSize : first, count: count, next: 0)
                    )
                }
                // The next reference to follow: the innermost container's next element.
                while let frame = stack.last, frame.next == frame.count { stack.removeLast() }
                guard var frame = stack.popLast() else { return true }
                if items > limit { return true }
                guard let child = uint(at: frame.references + frame.next * referenceSize, size: referenceSize) else {
                    return false
                }
                frame.next += 1
                stack.append(frame)
                object = child
            }
        }

        /// A container's element count and where its references start.
        private func length(_ marker: UInt8, at start: Int) -> (Int, Int)? {
            let small = Int(marker & 0x0F)
            guard small == 0x0F else { return (small, start + 1) }
            guard start + 1 < bytes.count, bytes[start + 1] >> 4 == 0x1 else { return nil }
            let size = 1 << Int(bytes[start + 1] & 0x0F)
            guard size <= 8, let count = uint(at: start + 2, size: size), count <= bytes.count else { return nil }
            return (count, start + 2 + size)
        }

        /// The big-endian unsigned integer of `size` bytes at `offset`, if in bounds and
        /// below `Int.max`.
        private func uint(at offset: Int, size: Int) -> Int? {
            guard offset >= 0, size >= 1, offset <= bytes.count - size else { return nil }
            var value: UInt64 = 0
            for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
    }
}
