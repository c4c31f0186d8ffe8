import Foundation
import Testing

@testable import Archivist

/// Version 1 of a profile: a single `name`.
struct ProfileV1: Archivable {
    static var archiveTypeName: String { "Profile" }
    static var archiveVersion: Int { 1 }
    var name: String
    var legacy: Int
    init(name: String, legacy: Int) {
        self.name = name
        self.legacy = legacy
    }
    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encode(legacy, forKey: "legacy")
    }
    init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        legacy = try archive.decode(Int.self, forKey: "legacy")
    }
}

/// Version 2 splits the name, drops `legacy` and adds an optional `email`.
struct ProfileV2: Archivable, Equatable {
    static var archiveTypeName: String { "Profile" }
    static var archiveVersion: Int { 2 }
    var first: String
    var last: String
    var email: String?
    init(first: String, last: String, email: String?) {
        self.first = first
        self.last = last
        self.email = email
    }
    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(first, forKey: "first")
        try archive.encode(last, forKey: "last")
        try archive.encode(email, forKey: "email")
    }
    init(from archive: ArchiveDecoder) throws {
        if archive.version < 2 {
            let parts = try archive.decode(String.self, forKey: "name").split(separator: " ", maxSplits: 1)
            first = parts.first.map(String.init) ?? ""
            last = parts.count > 1 ? String(parts[1]) : ""
        } else {
            first = try archive.decode(String.self, forKey: "first")
            last = try archive.decode(String.self, forKey: "last")
        }
        email = try archive.decodeIfPresent(String.self, forKey: "email")
    }
}

/// The same model after its Swift type was renamed.
struct Account: Codable, Archivable, Equatable {
    static var formerArchiveTypeNames: [String] { ["LegacyAccount"] }
    var id: Int
}

struct LegacyAccount: Codable, Archivable {
    var id: Int
    var obsolete = "dropped"
}

@Suite struct ArchiveSchemaEvolutionTests {
    @Test func versionDrivenMigrationReadsOldArchives() throws {
        let old = try Archive.encode(ProfileV1(name: "Ada Lovelace", legacy: 3))
        let migrated = try Archive.decode(ProfileV2.self, from: old)
        #expect(migrated == ProfileV2(first: "Ada", last: "Lovelace", email: nil))
    }

    @Test func addedOptionalFieldDecodesAsNilAndRemovedFieldIsIgnored() throws {
        let current = ProfileV2(first: "Grace", last: "Hopper", email: "grace@example.com")
        #expect(try Archive.decode(ProfileV2.self, from: Archive.encode(current)) == current)
        let withoutEmail = ProfileV2(first: "A", last: "B", email: nil)
        #expect(try Archive.decode(ProfileV2.self, from: Archive.encode(withoutEmail)).email == nil)
    }

    @Test func missingRequiredFieldIsKeyNotFound() throws {
        let old = try Archive.encode(ProfileV1(name: "x", legacy: 1))
        struct NeedsAge: Archivable {
            static var archiveTypeName: String { "Profile" }
            var age: Int
            func encode(to archive: ArchiveEncoder) throws { try archive.encode(age, forKey: "age") }
            init(from archive: ArchiveDecoder) throws { age = try archive.decode(Int.self, forKey: "age") }
        }
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(NeedsAge.self, from: old) }
        #expect(error?.code == .keyNotFound)
        #expect(error?.codingPath == ["age"])
    }

    @Test func renamedTypeDecodesThroughFormerNames() throws {
        let old = try Archive.encode([LegacyAccount(id: 4)])
        #expect(try Archive.decode([Account].self, from: old) == [Account(id: 4)])
    }

    @Test func renamedTypeDecodesThroughTheOptionsRenameMap() throws {
        struct Wallet: Codable, Archivable, Equatable { var id: Int }
        let old = try Archive.encode([LegacyAccount(id: 5)])
        let refused = #expect(throws: ArchiveError.self) { try Archive.decode([Wallet].self, from: old) }
        #expect(refused?.code == .typeMismatch)
        let options = ArchiveOptions(renamedTypes: ["LegacyAccount": "Wallet"])
        #expect(try Archive.decode([Wallet].self, from: old, options: options) == [Wallet(id: 5)])
    }

    @Test func typeNameAndVersionAreReadable() throws {
        struct Probe: Archivable {
            static var archiveTypeName: String { "Profile" }
            var seen: (String?, Int) = (nil, 0)
            func encode(to archive: ArchiveEncoder) throws {}
            init(from archive: ArchiveDecoder) throws { seen = (archive.typeName, archive.version) }
        }
        let probe = try Archive.decode(Probe.self, from: Archive.encode(ProfileV1(name: "n", legacy: 0)))
        #expect(probe.seen.0 == "Profile" && probe.seen.1 == 1)
    }
}
