import Testing

@testable import Archivist

/// `Bytewise` compares eight bytes at a time with overlapping loads for the tail, and hashes
/// raw bytes: every length up to a few words, every position of a difference, small and
/// heap strings, and the one-spelling rule.
@Suite struct BytewiseTests {
    /// `count` ASCII bytes that are not all the same, so a misplaced load would show.
    static func text(_ count: Int) -> String {
        String(decoding: (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }, as: UTF8.self)
    }

    @Test func equalStringsOfEveryLengthAreEqualAndHashAlike() {
        for count in 0...40 {
            let a = Self.text(count)
            var b = Self.text(count)
            b.append("")  // a second value, not the same storage
            #expect(Bytewise.equal(a, b))
            #expect(hash(a) == hash(b))
        }
    }

    @Test func oneDifferentByteAnywhereMakesThemDifferent() {
        for count in 1...40 {
            let base = Array(Self.text(count).utf8)
            for position in 0..<count {
                var changed = base
                changed[position] = UInt8(ascii: "Z")
                #expect(
                    !Bytewise.equal(String(decoding: base, as: UTF8.self), String(decoding: changed, as: UTF8.self)),
                    "length \(count), byte \(position)"
                )
            }
        }
    }

    @Test func differentLengthsAndNilAreDifferent() {
        #expect(!Bytewise.equal("abc", "abcd"))
        #expect(!Bytewise.equal("", "a"))
        #expect(Bytewise.equal(nil as String?, nil))
        #expect(!Bytewise.equal(nil, ""))
        #expect(!Bytewise.equal("", nil))
        #expect(Bytewise.equal("" as String?, ""))
    }

    @Test func canonicallyEquivalentSpellingsAreDifferent() {
        #expect(!Bytewise.equal("caf\u{E9}", "cafe\u{301}"))
        // Same length, same scalars in another order: equal under `==`, not here.
        let first = "a\u{301}\u{316}"
        let second = "a\u{316}\u{301}"
        #expect(first == second)
        #expect(!Bytewise.equal(first, second))
    }

    @Test func memoryKeysMatchOnlyOnEveryPart() {
        let key = MemoryKey(name: "blobs", location: .sharedCaches, parameter: Self.text(30))
        #expect(key == MemoryKey(name: "blobs", location: .sharedCaches, parameter: Self.text(30)))
        #expect(key != MemoryKey(name: "blobz", location: .sharedCaches, parameter: Self.text(30)))
        #expect(key != MemoryKey(name: "blobs", location: .userCaches, parameter: Self.text(30)))
        #expect(key != MemoryKey(name: "blobs", location: .sharedCaches, parameter: Self.text(29)))
        #expect(key != MemoryKey(name: "blobs", location: .sharedCaches, parameter: nil))
        #expect(key.hashValue == MemoryKey(name: "blobs", location: .sharedCaches, parameter: Self.text(30)).hashValue)
    }

    /// The memory tier's seeded hash sees bytes only: the same bytes hash alike whatever the
    /// storage (small, heap, over-allocated heap, an array of bytes), at every length across
    /// the short keys' padded words and the long keys' rounds.
    @Test func seededHashDependsOnTheBytesAlone() {
        let seed: UInt64 = 0x1234_5678_9ABC_DEF0
        for count in 0...70 {
            let small = Self.text(count)
            var heap = String()
            heap.reserveCapacity(200)
            heap.append(small)
            let bytes = Array(small.utf8)
            let expected = Bytewise.seededHash(small, seed: seed)
            #expect(Bytewise.seededHash(heap, seed: seed) == expected, "length \(count)")
            #expect(
                Bytewise.seededHash(String(decoding: bytes, as: UTF8.self), seed: seed) == expected,
                "length \(count)"
            )
            #expect(bytes.withUnsafeBytes { Bytewise.seededHash($0.baseAddress, count: count, seed: seed) } == expected)
            #expect(Bytewise.slowSeededHash(small, seed: seed) == expected, "length \(count)")
        }
    }

    /// Every byte, the length and the seed change the hash (for these fixed inputs; a
    /// collision would be a 2^-64 accident, or a byte the padded words or rounds dropped).
    @Test func seededHashSeesEveryByteTheLengthAndTheSeed() {
        let seed: UInt64 = 0x0F0F_1234_ABCD_0001
        var seen = Set<UInt64>()
        for count in 1...50 {
            let base = Array(Self.text(count).utf8)
            let hash = Bytewise.seededHash(String(decoding: base, as: UTF8.self), seed: seed)
            #expect(seen.insert(hash).inserted, "length \(count)")
            #expect(Bytewise.seededHash(String(decoding: base, as: UTF8.self), seed: seed &+ 1) != hash)
            // A trailing NUL: the same padded words, another length.
            #expect(Bytewise.seededHash(String(decoding: base + [0], as: UTF8.self), seed: seed) != hash)
            for position in 0..<count {
                var changed = base
                changed[position] = UInt8(ascii: "Z")
                #expect(
                    Bytewise.seededHash(String(decoding: changed, as: UTF8.self), seed: seed) != hash,
                    "length \(count), byte \(position)"
                )
            }
        }
        #expect(!seen.contains(Bytewise.seededHash("", seed: seed)))
    }

    /// Canonically equivalent spellings are different bytes, so different hashes (the tier
    /// keeps them apart anyway, by comparing bytes).
    @Test func seededHashTellsCanonicallyEquivalentSpellingsApart() {
        #expect(Bytewise.seededHash("caf\u{E9}", seed: 7) != Bytewise.seededHash("cafe\u{301}", seed: 7))
    }

    private func hash(_ string: String) -> Int {
        var hasher = Hasher()
        Bytewise.hash(string, into: &hasher)
        return hasher.finalize()
    }
}
