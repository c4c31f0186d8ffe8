import Archivist

/// A record with a polymorphic field, for the tests of a `RecordStore` whose readers allow
/// different types: a ``PetDog`` decodes where a ``Pet`` is declared only when
/// `ArchiveOptions.allowedTypes` lists `PetDog`.
public struct PetRecord: Archivable, Identifiable, Sendable {
    /// The record's id.
    public var id: String
    /// A ``Pet`` or a ``PetDog``.
    public var pet: Pet

    /// A record with the given fields.
    public init(id: String, pet: Pet) {
        self.id = id
        self.pet = pet
    }

    /// Writes the id and the pet.
    public func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(id, forKey: "id")
        try archive.encode(pet, forKey: "pet")
    }

    /// Reads the id and the pet.
    public init(from archive: ArchiveDecoder) throws {
        id = try archive.decode(String.self, forKey: "id")
        pet = try archive.decode(Pet.self, forKey: "pet")
    }

    /// What a writer that stores dogs opens its store with.
    public static let allowingDogs = RecordStore<PetRecord>.Configuration(
        durability: .none,
        archiveOptions: ArchiveOptions(allowedTypes: [PetDog.self])
    )
    /// What a reader that never expects dogs opens the same store with.
    public static let refusingDogs = RecordStore<PetRecord>.Configuration(durability: .none)

    /// The record `pet-<index>`: a ``PetDog`` when `index` is odd, else a ``Pet``.
    public static func numbered(_ index: Int, name: String = "") -> PetRecord {
        let name = name.isEmpty ? "pet \(index)" : name
        return PetRecord(id: "pet-\(index)", pet: index % 2 == 1 ? PetDog(name: name) : Pet(name: name))
    }
}

/// An animal with a name (immutable, so `Sendable`).
public class Pet: Archivable, @unchecked Sendable {
    // Safety: every stored property is a `let` of a `Sendable` type.
    /// The pet's name.
    public let name: String

    /// A pet called `name`.
    public init(name: String) { self.name = name }

    /// `Pet`.
    public class var archiveTypeName: String { "Pet" }

    /// Writes the name.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encode(name, forKey: "name") }

    /// Reads the name.
    public required init(from archive: ArchiveDecoder) throws { name = try archive.decode(String.self, forKey: "name") }
}

/// A subclass of ``Pet``: stored where a `Pet` is declared, decoded only where allowed.
public final class PetDog: Pet, @unchecked Sendable {
    /// `PetDog`.
    override public class var archiveTypeName: String { "PetDog" }
}
