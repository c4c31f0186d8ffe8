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
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// The source format, reported in ``KeyedArchiveSummary``.
    enum Format: Sendable { case binary, xml }

    var nodes: [Node]
    var root: Int
    var format: Format

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
        for (position, keyIndex) in keys.enumerated() where string(at: keyIndex) == key {
            return values[position]
        }
        return nil
    }

    /// The children of a container node (array elements, or dictionary keys then values).
    func children(of index: Int) -> [Int] {
        switch nodes[index] {
        case .array(let elements): elements
        case .dictionary(let keys, let values): keys + values
        default: []
        }
    }
}
