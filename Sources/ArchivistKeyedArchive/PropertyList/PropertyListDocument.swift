/// A parsed property list kept as a flat table of nodes, the shape of a binary plist's object
/// table: containers hold indexes into ``nodes``, never nested values.
///
/// Keeping the table flat means a hostile plist whose containers share children (a "billion
/// laughs" DAG) costs memory in proportion to its bytes, not to its expansion, and every walk
/// over it can be iterative with a visited set.
struct PropertyListDocument: Sendable {
    /// One value of the table.
    enum Node: Sendable, Equatable {
        case string(String)
        case data([UInt8])
        case integer(Int64)
        /// An unsigned integer above `Int64.max` (the 16-byte form of bplist00).
        case unsignedInteger(UInt64)
        case real(Double)
        case bool(Bool)
        /// Seconds since 2001-01-01 00:00:00 UTC.
        case date(Double)
        /// A keyed-archive object reference (bplist00 marker 0x8n, XML `CF$UID` dictionary).
        case uid(UInt64)
        case array(References)
        case dictionary(keys: References, values: References)

        /// An array node of its own element indexes.
        static func array(_ elements: [Int]) -> Node { .array(References(elements)) }

        /// A dictionary node of its own key and value indexes (as many of each).
        static func dictionary(keys: [Int], values: [Int]) -> Node {
            .dictionary(keys: References(keys), values: References(values))
        }
    }

    /// The indexes a binary plist's containers refer to, all in one array (``References`` are
    /// runs of it): one allocation for the whole document, not one or two per container node,
    /// whose allocating and freeing is a visible share of decoding an archive of objects (the
    /// `keyed` suite's decodes guard it).
    ///
    /// `@unchecked Sendable`: `values` is written only while the plist is read, before the
    /// document is handed out, and never after.
    final class ReferenceStorage: @unchecked Sendable {
        /// Not checked for exclusive access: read for every reference, written once per parse.
        @exclusivity(unchecked) var values: [Int]

        init(_ values: [Int]) { self.values = values }
    }

    /// The child indexes of one container node: `count` entries of a ``ReferenceStorage`` from
    /// `start`, indexed from zero like an array.
    struct References: RandomAccessCollection, Sendable, Equatable {
        typealias Indices = Range<Int>
        let storage: ReferenceStorage
        let start: Int
        let count: Int

        /// A run of `storage` (the caller keeps it in bounds of the values `storage` will hold).
        init(storage: ReferenceStorage, start: Int, count: Int) {
            self.storage = storage
            self.start = start
            self.count = count
        }

        /// `elements` in a storage of their own.
        init(_ elements: [Int]) { self.init(storage: ReferenceStorage(elements), start: 0, count: elements.count) }

        var startIndex: Int { 0 }
        var endIndex: Int { count }

        subscript(position: Int) -> Int {
            precondition(position >= 0 && position < count, "reference index out of range")
            return storage.values[start + position]
        }

        static func == (lhs: References, rhs: References) -> Bool { lhs.elementsEqual(rhs) }
    }

    /// The source format, reported in ``KeyedArchiveSummary``.
    enum Format: Sendable { case binary, xml }

    var nodes: [Node]
    var root: Int
    var format: Format
    /// The first date node of NaN seconds (``KeyedArchiveDateRule``), noted by the binary reader
    /// as it reads each node (an XML date is ISO 8601 text, never NaN).
    var firstNaNDate: Int?

    /// The string a node holds, or `nil`.
    func string(at index: Int) -> String? {
        if case .string(let value) = nodes[index] { return value }
        return nil
    }

    /// The entry for `key` of the dictionary at `index`; `nil` when the node is not a dictionary
    /// or has no such key. Keys that are not strings never match.
    ///
    /// - Complexity: O(*n*) in the dictionary's size.
    func value(forKey key: String, inDictionaryAt index: Int) -> Int? {
        guard case .dictionary(let keys, let values) = nodes[index] else { return nil }
        for position in keys.indices where string(at: keys[position]) == key {
            return values[position]
        }
        return nil
    }

    /// The children of a container node (array elements, or dictionary keys then values).
    func children(of index: Int) -> [Int] {
        switch nodes[index] {
        case .array(let elements): Array(elements)
        case .dictionary(let keys, let values): Array(keys) + Array(values)
        default: []
        }
    }

    /// How many children ``children(of:)`` lists for the node at `index`, without listing them.
    func childCount(of index: Int) -> Int {
        switch nodes[index] {
        case .array(let elements): elements.count
        case .dictionary(let keys, let values): keys.count + values.count
        default: 0
        }
    }

    /// The child at `position` of ``children(of:)`` for the node at `index`, without listing
    /// them (a walk that reads one child per step stays linear in the children).
    func child(_ position: Int, of index: Int) -> Int {
        switch nodes[index] {
        case .array(let elements): return elements[position]
        case .dictionary(let keys, let values):
            return position < keys.count ? keys[position] : values[position - keys.count]
        default: preconditionFailure("node \(index) has no children")
        }
    }
}
