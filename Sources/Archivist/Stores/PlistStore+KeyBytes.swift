import Foundation

/// Keys of a plist's root compare by their UTF-8 bytes, as every key in Archivist does
/// (``Bytewise``): "é" as U+00E9 and as "e" + U+0301 are two keys, though Swift's `==` says
/// they are one. A `[String: PlistValue]` holds only one of them, so the keyed methods of
/// ``PlistStore`` and ``Preferences`` read the other as absent and refuse to write it beside
/// the first (``StoreError/Code/notRepresentable``) rather than overwrite the first's value.
extension PlistStore {
    /// The value stored under `key`'s exact bytes, or `nil`.
    ///
    /// - Complexity: O(1) expected, plus O(n) in the key's length.
    static func entry(_ key: String, in root: [String: PlistValue]) -> PlistValue? {
        guard let index = root.index(forKey: key), Bytewise.equal(root[index].key, key) else { return nil }
        return root[index].value
    }

    /// Throws when `root` holds a key that Swift's `==` cannot tell from `key` but whose
    /// bytes differ: writing `key` would replace that key's value.
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/notRepresentable``.
    static func checkNoLookalike(of key: String, in root: [String: PlistValue], url: URL) throws {
        guard let index = root.index(forKey: key), !Bytewise.equal(root[index].key, key) else { return }
        let stored = root[index].key
        throw StoreError(
            .notRepresentable,
            "the plist holds the key \(spelled(stored)), a different spelling of \(spelled(key)) that a "
                + "[String: PlistValue] cannot hold beside it; remove that key first, or normalize keys "
                + "(precomposedStringWithCanonicalMapping)",
            fileURL: url,
            key: key
        )
    }

    /// `"café" (63 61 66 C3 A9)`: the key and its UTF-8 bytes, which tell two spellings apart.
    private static func spelled(_ key: String) -> String {
        String(reflecting: key) + " (" + key.utf8.map { String($0, radix: 16, uppercase: true) }.joined(separator: " ")
            + ")"
    }
}
