extension Archivable where Self: Codable {
    /// Encodes through the type's `Encodable` conformance, into the native format.
    public func encode(to archive: ArchiveEncoder) throws {
        try archive.storage.pointee.chargeCodableLevel()
        try encode(to: CodableArchiveEncoder(archive: archive, target: .frame(id: archive.storage.pointee.frame.id)))
    }

    /// Decodes through the type's `Decodable` conformance, from the native format.
    public init(from archive: ArchiveDecoder) throws {
        try archive.storage.pointee.chargeCodableLevel()
        try self.init(from: CodableArchiveDecoder(archive: archive))
    }
}

extension Archivable where Self: Codable & RawRepresentable, RawValue: Archivable {
    /// Writes the raw value (the same bytes as a non-Codable raw-value enum).
    public func encode(to archive: ArchiveEncoder) throws { try encodeRawValue(to: archive) }

    /// Reads the raw value; one that names no case throws ``ArchiveError/Code/typeMismatch``.
    public init(from archive: ArchiveDecoder) throws { try self.init(rawValueFrom: archive) }
}
