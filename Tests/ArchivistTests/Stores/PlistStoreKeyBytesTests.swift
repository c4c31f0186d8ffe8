import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Plist keys compare by their UTF-8 bytes, as cache keys do (`CacheKeyBytesTests`). "é" as
/// U+00E9 and as "e" + U+0301 are equal `String`s, so before, setting one spelling silently
/// replaced the other's value, and Foundation's parser silently kept one of the two when a
/// file held both.
@Suite struct PlistStoreKeyBytesTests {
    static let precomposed = "caf\u{E9}"  // é as one scalar
    static let decomposed = "cafe\u{301}"  // e + combining acute accent
    static let formats: [PlistStore.Format] = [.xml, .binary]

    /// Whether `root` holds a key with exactly `key`'s bytes.
    private func holdsKey(_ root: [String: PlistValue], _ key: String) -> Bool {
        root.keys.contains { $0.utf8.elementsEqual(key.utf8) }
    }

    @Test(arguments: formats)
    func eachSpellingRoundTripsWithItsOwnBytes(format: PlistStore.Format) throws {
        for key in [Self.precomposed, Self.decomposed] {
            let folder = try ScratchFolder()
            try PlistStore(directory: folder.url, format: format).set(1, forKey: key, in: "p")
            let root = try PlistStore(directory: folder.url)["p"]  // a fresh store reads the file
            #expect(
                root.count == 1 && holdsKey(root, key),
                "written as \(Array(key.utf8)), read \(root.keys.map { Array($0.utf8) })"
            )
            #expect(try PlistStore(directory: folder.url)["p", key] == 1)
        }
    }

    @Test(arguments: formats)
    func theOtherSpellingIsAnotherKey(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        try store.set(1, forKey: Self.precomposed, in: "p")
        #expect(try store.value(forKey: Self.decomposed, in: "p") == nil)
        #expect(try store["p", Self.decomposed] == nil)
        #expect(try store.value(Int.self, forKey: Self.decomposed, in: "p") == nil)
        #expect(try store.value(forKey: Self.decomposed, in: "p", default: -1) == -1)
        #expect(try store.removeValue(forKey: Self.decomposed, in: "p") == nil)
        #expect(try store.value(forKey: Self.precomposed, in: "p") == 1, "removing the other spelling removed nothing")
    }

    @Test(arguments: formats)
    func settingTheOtherSpellingThrowsAndKeepsTheFirst(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        try store.set(1, forKey: Self.precomposed, in: "p")
        let error = try #require(throws: StoreError.self) { try store.set(2, forKey: Self.decomposed, in: "p") }
        #expect(error.code == .notRepresentable)
        #expect(error.key.map { Bytewise.equal($0, Self.decomposed) } == true)
        #expect(error.fileURL == (try store.fileURL(for: "p")))
        let root = try PlistStore(directory: folder.url)["p"]
        #expect(root.count == 1 && holdsKey(root, Self.precomposed) && root[Self.precomposed] == 1)
        // The way to change spelling: remove the stored one, then set the other.
        #expect(try store.removeValue(forKey: Self.precomposed, in: "p") == 1)
        try store.set(2, forKey: Self.decomposed, in: "p")
        let respelled = try PlistStore(directory: folder.url)["p"]
        #expect(respelled.count == 1 && holdsKey(respelled, Self.decomposed) && respelled[Self.decomposed] == 2)
    }

    /// A file another program wrote with two spellings of one key in one dictionary:
    /// Foundation's parser keeps one of them; the store refuses the file instead.
    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary], [false, true])
    func aFileWithBothSpellingsIsRefusedNotHalfRead(
        format: PropertyListSerialization.PropertyListFormat,
        nested: Bool
    ) throws {
        let folder = try ScratchFolder()
        let data = try Self.fileWithBothSpellings(format, nested: nested)
        let parsed = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        let list = ((parsed as? [String: Any])?["inner"] as? [String: Any])?["list"] as? [Any]
        let both = nested ? list?.last as? [String: Any] : parsed as? [String: Any]
        #expect(both?.count == 1, "Foundation alone merges the two keys")
        try data.write(to: folder.file("p.plist"))
        let store = PlistStore(directory: folder.url)
        let error = try #require(throws: StoreError.self) { try store.root(of: "p") }
        #expect(error.code == .notRepresentable)
        #expect(error.fileURL == folder.file("p.plist"))
        #expect(throws: StoreError.self) { try store.set(4, forKey: "new", in: "p") }
        #expect(throws: StoreError.self) { try Preferences(store: store, name: "p") }
        #expect(try Data(contentsOf: folder.file("p.plist")) == data, "the file is left as it is")
    }

    /// A plist with the keys `\u{E9}e\u{301}` and `e\u{301}\u{E9}` ("éé" spelled two ways, as
    /// long in UTF-16) in one dictionary, at the root or nested. A Swift dictionary cannot
    /// hold both, so the binary file is written with two other keys of that length and
    /// patched; the XML one is written as text.
    private static func fileWithBothSpellings(
        _ format: PropertyListSerialization.PropertyListFormat,
        nested: Bool
    ) throws -> Data {
        let spellings = ["\u{E9}e\u{301}", "e\u{301}\u{E9}"]
        guard format == .binary else {
            let both =
                "<dict><key>\(spellings[0])</key><integer>1</integer><key>\(spellings[1])</key><integer>2</integer></dict>"
            return Data(
                xml(
                    nested
                        ? "<key>other</key><integer>3</integer><key>inner</key><dict><key>list</key><array><integer>1</integer>\(both)</array></dict>"
                        : String(both.dropFirst(6).dropLast(7))
                ).utf8
            )
        }
        let placeholders = ["\u{E9}e\u{302}", "o\u{301}\u{E9}"]  // "éê", "óé": two keys
        let both: [String: Any] = [placeholders[0]: 1, placeholders[1]: 2]
        let root: [String: Any] = nested ? ["other": 3, "inner": ["list": [1, both] as [Any]] as [String: Any]] : both
        var bytes = [UInt8](try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0))
        for (placeholder, spelling) in zip(placeholders, spellings) {
            let from = utf16BigEndian(placeholder)
            let to = utf16BigEndian(spelling)
            let at = try #require(
                (0...(bytes.count - from.count)).first { Array(bytes[$0..<($0 + from.count)]) == from }
            )
            bytes.replaceSubrange(at..<(at + from.count), with: to)
        }
        return Data(bytes)
    }

    private static func utf16BigEndian(_ string: String) -> [UInt8] {
        string.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// The same key twice, byte for byte (a hand-edited file): also refused, not half read.
    @Test func aKeyRepeatedByteForByteIsRefused() throws {
        let folder = try ScratchFolder()
        try Data(Self.xml("<key>a</key><integer>1</integer><key>a</key><integer>2</integer>").utf8)
            .write(to: folder.file("p.plist"))
        let error = try #require(throws: StoreError.self) { try PlistStore(directory: folder.url).root(of: "p") }
        #expect(error.code == .notRepresentable)
    }

    /// What looks like a key in a comment, a CDATA section or a string is not one.
    @Test func keysInCommentsCDATAAndStringsAreNotCounted() throws {
        let folder = try ScratchFolder()
        try Data(
            Self.xml(
                """
                <!-- <key>x</key> <key/> --><key>a</key><string><![CDATA[<key>y</key>]]></string>
                <key>b</key><string>&lt;key&gt;z&lt;/key&gt;</string><key>\(Self.precomposed)</key><true/>
                """
            ).utf8
        ).write(to: folder.file("p.plist"))
        let root = try PlistStore(directory: folder.url).root(of: "p")
        #expect(root == ["a": "<key>y</key>", "b": "<key>z</key>", Self.precomposed: true])
    }

    /// Foundation's parser also reads `<key >`, `<key/>`, `<key />`, a key tag split by a line
    /// break or with an attribute as a key: a repeat spelled that way is refused too, not
    /// silently merged.
    @Test(arguments: ["<key >a</key>", "<key\n>a</key>", "<key x='1'>a</key>", "<key x='/'>a</key >"])
    func aRepeatInAnotherTagSpellingIsRefused(spelling: String) throws {
        let folder = try ScratchFolder()
        try Data(Self.xml("\(spelling)<integer>1</integer><key>a</key><integer>2</integer>").utf8)
            .write(to: folder.file("p.plist"))
        let error = try #require(throws: StoreError.self) { try PlistStore(directory: folder.url).root(of: "p") }
        #expect(error.code == .notRepresentable)
    }

    @Test(arguments: ["<key/>", "<key />", "<key></key>"])
    func anEmptyKeyRepeatedIsRefusedAndReadAloneIsKept(spelling: String) throws {
        let folder = try ScratchFolder()
        try Data(Self.xml("\(spelling)<integer>1</integer>").utf8).write(to: folder.file("p.plist"))
        #expect(try PlistStore(directory: folder.url).root(of: "p") == ["": 1])
        try Data(Self.xml("\(spelling)<integer>1</integer><key></key><integer>2</integer>").utf8).write(
            to: folder.file("p.plist")
        )
        let error = try #require(throws: StoreError.self) { try PlistStore(directory: folder.url).root(of: "p") }
        #expect(error.code == .notRepresentable)
    }

    /// What Foundation's parser skips holds no keys: a processing instruction (before the root
    /// or inside a dictionary), whatever follows the root element, and what looks like a key
    /// inside a tag (a tag ends at its first `>`, quotes or not). Such files are read, not
    /// refused.
    @Test(arguments: [
        ("<?xml version=\"1.0\"?><?note <key>x</key> ?>", "<key>a</key><integer>1</integer>", ""),
        ("", "<key>a</key><?note <key>x</key> ?><integer>1</integer>", ""),
        ("", "<key>a</key><integer>1</integer>", "<key>x</key>"),
        ("", "<key>a</key><integer>1</integer>", "<!-- c --><key>x</key><key>y</key>"),
        ("", "<key>a</key><string x='<key>'>1</string>", ""),  // the string is "'>1"
        ("<!-- <key>x</key> -->", "<key>a</key><integer>1</integer>", ""),
    ])
    func keysWhereTheParserSeesNoneAreNotCounted(prolog: String, body: String, tail: String) throws {
        let folder = try ScratchFolder()
        let text = prolog + "<plist version=\"1.0\"><dict>" + body + "</dict></plist>" + tail
        try Data(text.utf8).write(to: folder.file("p.plist"))
        #expect(try Array(PlistStore(directory: folder.url).root(of: "p").keys) == ["a"])
    }

    /// A plist without the `<plist>` element: what follows the root dictionary does not count.
    @Test func aBareRootDictionaryEndsTheCount() throws {
        let folder = try ScratchFolder()
        try Data("<dict><key>a</key><integer>1</integer></dict><key>x</key>".utf8).write(to: folder.file("p.plist"))
        #expect(try PlistStore(directory: folder.url).root(of: "p") == ["a": 1])
    }

    /// Legitimate files of every shape Foundation writes count exactly: nested dictionaries,
    /// arrays of dictionaries, empty dictionaries and keys, keys that look like markup.
    @Test(arguments: formats)
    func filesFoundationWritesAreNeverRefused(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let root: [String: PlistValue] = [
            "": 0, "<key>": "</key><key>", "a": ["b": ["c": [:]], "d": [["e": 1], ["f": ["g": true]], [:]]],
            "list": [[["h": "<!-- <key> -->"]], "<![CDATA[<key>]]>"], Self.precomposed: .data(Data("<key>".utf8)),
        ]
        let store = PlistStore(directory: folder.url, format: format)
        try store.write(root, to: "p")
        #expect(try PlistStore(directory: folder.url).root(of: "p") == root)
    }

    /// The key count follows offsets the file claims: damaged bytes end it, never trap it.
    @Test func damagedBinaryPlistsNeverTrapTheKeyCount() throws {
        let root: PlistValue = [
            "a": [1, ["b": "c", "d": [true, 2.5]]], "e": .data(Data(count: 40)), "f": ["g": [:]],
        ]
        let valid = [UInt8](
            try PropertyListSerialization.data(fromPropertyList: root.propertyListObject, format: .binary, options: 0)
        )
        #expect(!PlistKeyCount.fileHasMoreKeys(Data(valid), than: root))
        var rng = SplitMix64(seed: 0x9A7E)
        for _ in 0..<3_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 8..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            if Bool.random(using: &rng) { bytes.removeLast(Int.random(in: 0..<bytes.count - 8, using: &rng)) }
            _ = PlistKeyCount.fileHasMoreKeys(Data(bytes), than: root)
        }
    }

    /// At the deepest nesting Foundation reads (511 containers around a dictionary; 600 are
    /// refused), the count still follows the file and finds the repeated key, on a thread with
    /// a 512 KiB stack (a secondary thread's size on Apple platforms).
    @Test(arguments: [false, true])
    func theDeepestNestingIsCountedOnASmallStack(binary: Bool) throws {
        let depth = 511
        let data =
            binary
            ? Self.binaryNesting(depth)
            : Data(
                (String(repeating: "<array>", count: depth) + "<dict><key>k</key><true/><key>k</key><true/></dict>"
                    + String(repeating: "</array>", count: depth)).utf8
            )
        let root = try PlistValue.convert(PropertyListSerialization.propertyList(from: data, options: [], format: nil))
        #expect(PlistKeyCount.keys(in: root) == 1, "Foundation merged the two keys")
        let found = try onThread(stackSize: ArchiveStackDepthTests.smallStack) {
            PlistKeyCount.fileHasMoreKeys(data, than: root)
        }
        #expect(found == true)
        #expect(throws: (any Error).self, "far deeper, Foundation refuses the file") {
            try PropertyListSerialization.propertyList(
                from: binary
                    ? Self.binaryNesting(600)
                    : Data(
                        (String(repeating: "<array>", count: 600) + "<dict/>"
                            + String(repeating: "</array>", count: 600)).utf8
                    ),
                options: [],
                format: nil
            )
        }
    }

    /// A `bplist00` of `depth` one-element arrays nested around a dictionary that names the
    /// key "k" twice (two references to one string object).
    private static func binaryNesting(_ depth: Int) -> Data {
        var objects = (0..<depth).map { [0xA1] + bigEndian($0 + 1, 4) }
        objects.append(
            [0xD2] + bigEndian(depth + 1, 4) + bigEndian(depth + 1, 4) + bigEndian(depth + 2, 4)
                + bigEndian(depth + 2, 4)
        )
        objects.append([0x51, UInt8(ascii: "k")])  // "k"
        objects.append([0x09])  // true
        return bplist(objects, size: 4)
    }

    /// `value` as `size` big-endian bytes.
    private static func bigEndian(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) }
    }

    /// A `bplist00` of `objects` (encoded objects, the first the top one), with offsets and
    /// references of `size` bytes.
    private static func bplist(_ objects: [[UInt8]], size: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += bigEndian(offset, size) }
        bytes +=
            [0, 0, 0, 0, 0, 0, UInt8(size), UInt8(size)] + bigEndian(objects.count, 8) + bigEndian(0, 8)
            + bigEndian(table, 8)
        return Data(bytes)
    }

    /// A binary plist of under 300 bytes, of arrays that each reference the next twice names 2^30
    /// values; Foundation's parser expands every reference (2^20 took over a second), so the
    /// file is refused before the parse. A Foundation-written file with as many values as the
    /// bomb's size allows stays readable.
    @Test func aReferenceBombIsRefusedBeforeTheParse() throws {
        let folder = try ScratchFolder()
        let bomb = Self.binaryFanOut(depth: 30)
        #expect(bomb.count < 300)
        #expect(try #require(PlistKeyCount.binaryItems(bomb, limit: 1_000)) == 1_001, "the count stops past its limit")
        try bomb.write(to: folder.file("p.plist"))
        let error = try #require(throws: StoreError.self) { try PlistStore(directory: folder.url).root(of: "p") }
        #expect(error.code == .corrupt)
        // 2^8 leaves: within the cap, read as Foundation reads it.
        try Self.binaryFanOut(depth: 8).write(to: folder.file("small.plist"))
        let small = try PlistStore(directory: folder.url).root(of: "small")
        #expect(PlistKeyCount.items(in: .dictionary(small)) == 2 + (1 << 9) - 1)
    }

    /// `{"k": a1}` where a_i = [a_(i+1), a_(i+1)] and the last is `true`: 2^depth leaves.
    private static func binaryFanOut(depth: Int) -> Data {
        var objects: [[UInt8]] = [[0xD1] + bigEndian(depth + 2, 2) + bigEndian(1, 2)]
        for level in 1...depth { objects.append([0xA2] + bigEndian(level + 1, 2) + bigEndian(level + 1, 2)) }
        objects.append([0x09])  // true
        objects.append([0x51, UInt8(ascii: "k")])  // "k"
        return bplist(objects, size: 2)
    }

    @Test func preferencesKeysAreBytesToo() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        let stored = PreferenceKey<Int>(Self.precomposed, default: -1)
        let other = PreferenceKey<Int>(Self.decomposed, default: -1)
        try preferences.set(1, for: stored)
        #expect(preferences[other] == -1)
        #expect(try preferences.storedValue(for: other) == nil)
        let error = try #require(throws: StoreError.self) { try preferences.set(2, for: other) }
        #expect(error.code == .notRepresentable)
        try preferences.removeValue(for: other)
        #expect(preferences[stored] == 1, "removing the other spelling removed nothing")
        try preferences.flush()
        let reopened = try Preferences(store: PlistStore(directory: folder.url))
        #expect(reopened[stored] == 1 && reopened[other] == -1)
    }

    private static func xml(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>\(body)</dict>
        </plist>
        """
    }
}
