import Foundation
import Testing

@testable import Archivist

@Suite struct ArchiveGraphTests {
    @Test func sharedReferenceIsWrittenOnceAndDecodedAsOneInstance() throws {
        let shared = Node("shared")
        let pair = [shared, shared, Node("other")]
        let decoded = try Archive.decode([Node].self, from: Archive.encode(pair))
        #expect(decoded.count == 3)
        #expect(decoded[0] === decoded[1])
        #expect(decoded[0] !== decoded[2])
        #expect(decoded[0].name == "shared")
    }

    @Test func userLetterBackReferencesRoundTrip() throws {
        let users = (0..<5).map { makeUser($0, letters: 20) }
        let decoded = try Archive.decode([User].self, from: Archive.encode(users))
        #expect(decoded.count == 5)
        for (original, copy) in zip(users, decoded) {
            #expect(copy.account == original.account)
            #expect(copy.letters.count == 20)
            for (a, b) in zip(original.letters, copy.letters) {
                #expect(b.content == a.content && b.pkNumber == a.pkNumber && b.date == a.date)
                #expect(b.user === copy)
            }
        }
    }

    @Test func conditionalReferenceToAnUnarchivedObjectDecodesAsNil() throws {
        let user = makeUser(1, letters: 3)
        let lonely = try Archive.decode([Letter].self, from: Archive.encode(user.letters))
        #expect(lonely.count == 3)
        #expect(lonely.allSatisfy { $0.user == nil })
    }

    @Test func conditionalReferenceBeforeTheDefinitionResolves() throws {
        // The letter (with its conditional user) comes first; the user is archived after it.
        struct Bundle: Archivable {
            var letter: Letter
            var user: User
            init(letter: Letter, user: User) {
                self.letter = letter
                self.user = user
            }
            func encode(to archive: ArchiveEncoder) throws {
                try archive.encode(letter, forKey: "letter")
                try archive.encode(user, forKey: "user")
            }
            init(from archive: ArchiveDecoder) throws {
                letter = try archive.decode(Letter.self, forKey: "letter")
                user = try archive.decode(User.self, forKey: "user")
            }
        }
        let user = makeUser(2, letters: 2)
        let copy = try Archive.decode(Bundle.self, from: Archive.encode(Bundle(letter: user.letters[1], user: user)))
        #expect(copy.letter.user === copy.user)
        #expect(copy.user.letters[1] === copy.letter)
    }

    @Test func fieldsReadOutOfOrderStillShareObjects() throws {
        struct Pair: Archivable {
            var first: Node
            var second: Node
            init(first: Node, second: Node) {
                self.first = first
                self.second = second
            }
            func encode(to archive: ArchiveEncoder) throws {
                try archive.encode(first, forKey: "first")
                try archive.encode(second, forKey: "second")
            }
            init(from archive: ArchiveDecoder) throws {
                second = try archive.decode(Node.self, forKey: "second")  // a reference, read first
                first = try archive.decode(Node.self, forKey: "first")  // the definition, read later
            }
        }
        let node = Node("n")
        let copy = try Archive.decode(Pair.self, from: Archive.encode(Pair(first: node, second: node)))
        #expect(copy.first === copy.second)
    }

    @Test func selfLoopRoundTrips() throws {
        let node = Node("loop")
        node.next = node
        let copy = try Archive.decode(Node.self, from: Archive.encode(node))
        #expect(copy.next === copy)
        node.next = nil
        copy.next = nil
    }

    @Test func threeCycleRoundTrips() throws {
        let a = Node("a")
        let b = Node("b")
        let c = Node("c")
        a.next = b
        b.next = c
        c.next = a
        let copy = try Archive.decode(Node.self, from: Archive.encode(a))
        #expect(copy.name == "a" && copy.next?.name == "b" && copy.next?.next?.name == "c")
        #expect(copy.next?.next?.next === copy)
        a.next = nil
        b.next = nil
        c.next = nil
        copy.next?.next?.next = nil
    }

    @Test func eagerBackReferenceThrowsUnresolvedReference() throws {
        final class Eager: Archivable {
            var me: Eager?
            init() {}
            func encode(to archive: ArchiveEncoder) throws { try archive.encode(me, forKey: "me") }
            init(from archive: ArchiveDecoder) throws { me = try archive.decodeIfPresent(Eager.self, forKey: "me") }
        }
        let loop = Eager()
        loop.me = loop
        let data = try Archive.encode(loop)
        loop.me = nil
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Eager.self, from: data) }
        #expect(error?.code == .unresolvedReference)
        #expect(error?.codingPath == ["me"])
    }

    @Test func polymorphicReferenceDecodesOnlyAllowedSubclasses() throws {
        let pets: [Animal] = [Dog(name: "Rex", goodBoy: true), Animal(name: "generic")]
        let data = try Archive.encode(pets)
        let refused = #expect(throws: ArchiveError.self) { try Archive.decode([Animal].self, from: data) }
        #expect(refused?.code == .disallowedType)
        #expect(refused?.typeName == "Dog")
        let allowed = try Archive.decode([Animal].self, from: data, options: ArchiveOptions(allowedTypes: [Dog.self]))
        #expect((allowed[0] as? Dog)?.goodBoy == true)
        #expect(allowed[0].name == "Rex")
        #expect(type(of: allowed[1]) == Animal.self)
    }

    @Test func allowedTypeThatIsNotASubclassIsATypeMismatch() throws {
        let data = try Archive.encode([Animal]([Dog(name: "Rex", goodBoy: false)]))
        let error = #expect(throws: ArchiveError.self) {
            try Archive.decode([Node].self, from: data, options: ArchiveOptions(allowedTypes: [Dog.self]))
        }
        #expect(error?.code == .typeMismatch)
    }

    @Test func deepChainWithinTheLimitRoundTrips() throws {
        var chain: Chain? = nil
        for _ in 0..<90 { chain = Chain(next: chain) }  // a level counts 2 of the default 200
        let data = try Archive.encode(chain)
        var copy = try Archive.decode(Chain?.self, from: data)
        var length = 0
        while let link = copy {
            length += 1
            copy = link.next
        }
        #expect(length == 90)
        unlink(chain)
    }

    @Test func hundredThousandDeepChainThrowsInsteadOfOverflowing() throws {
        var chain: Chain? = nil
        for _ in 0..<100_000 { chain = Chain(next: chain) }
        let error = #expect(throws: ArchiveError.self) { try Archive.encode(chain) }
        #expect(error?.code == .limitExceeded(.depth))
        unlink(chain)
    }

    @Test func decoderDepthLimitRejectsDeepArchives() throws {
        var chain: Chain? = nil
        for _ in 0..<90 { chain = Chain(next: chain) }
        let data = try Archive.encode(chain)
        let error = #expect(throws: ArchiveError.self) {
            try Archive.decode(Chain?.self, from: data, options: ArchiveOptions(limits: ArchiveLimits(maxDepth: 100)))
        }
        #expect(error?.code == .limitExceeded(.depth))
        unlink(chain)
    }

    @Test func craftedHundredThousandDeepArchiveThrowsWhenDecoded() throws {
        // Build the bytes by hand (the encoder refuses such depth): records nested 100,000
        // deep, each holding the next under key 0 ("next"). A level is 7 bytes: tag, u32
        // length, type reference 0, key index 0; the innermost record is empty.
        let depth = 100_000
        var bytes = [UInt8](repeating: 0, count: depth * 7 + 6)
        var offset = bytes.count - 6
        bytes.replaceSubrange(offset..<bytes.count, with: [ArchiveTag.record, 1, 0, 0, 0, 0])
        var inner = 6
        for _ in 0..<depth {
            offset -= 7
            bytes[offset] = ArchiveTag.record
            withUnsafeBytes(of: UInt32(inner + 2).littleEndian) { for i in 0..<4 { bytes[offset + 1 + i] = $0[i] } }
            inner += 7
        }
        let tables: [UInt8] = [0, 1, 4] + Array("next".utf8) + [0]
        var archive: [UInt8] = [0x89, 0x41, 0x52, 0x56, 1, 0, 0, 0]
        let total = UInt64(ArchiveFormat.version1HeaderSize + bytes.count + tables.count)
        withUnsafeBytes(of: total.littleEndian) { archive += $0 }
        withUnsafeBytes(of: UInt64(ArchiveFormat.version1HeaderSize + bytes.count).littleEndian) { archive += $0 }
        let sum = CRC32C.checksum(bytes + tables)
        withUnsafeBytes(of: sum.littleEndian) { archive += $0 }
        archive += bytes + tables
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Chain.self, from: Data(archive)) }
        #expect(error?.code == .limitExceeded(.depth))
    }

    /// Releases a long chain iteratively (a recursive deinit of 100,000 links would overflow).
    private func unlink(_ chain: Chain?) {
        var link = chain
        while let current = link {
            link = current.next
            current.next = nil
        }
    }
}
