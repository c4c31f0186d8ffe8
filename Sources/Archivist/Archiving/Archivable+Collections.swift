// Archivable conformances of the standard containers. Elements keep their own tags, so
// arrays of models, of optionals and of arrays nest freely.

extension Optional: Archivable where Wrapped: Archivable {
    /// Writes `nil` or the wrapped value.
    public func encode(to archive: ArchiveEncoder) throws {
        switch self {
        case .none: try archive.encodeNil()
        case .some(let value): try archive.encodeSingleValue(value)
        }
    }

    /// Reads `nil` or the wrapped value.
    public init(from archive: ArchiveDecoder) throws {
        self = try archive.decodeNil() ? nil : archive.decodeSingleValue(Wrapped.self)
    }
}

extension Array: Archivable where Element: Archivable {
    /// Writes the elements in order.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodeElements(self) }

    /// Reads the elements.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodeElements(Element.self) }
}

extension ContiguousArray: Archivable where Element: Archivable {
    /// Writes the elements in order (the same bytes as an `Array`).
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodeElements(self) }

    /// Reads the elements.
    public init(from archive: ArchiveDecoder) throws {
        self = ContiguousArray(try archive.decodeElements(Element.self))
    }
}

extension Set: Archivable where Element: Archivable {
    /// Writes the elements as an array.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodeElements(self) }

    /// Reads the elements; a repeated element means the input is corrupt.
    public init(from archive: ArchiveDecoder) throws {
        let elements = try archive.decodeElements(Element.self)
        self.init(elements)
        guard count == elements.count else {
            throw ArchiveError(.corrupt, "\(elements.count - count) repeated set elements")
        }
    }
}

extension Dictionary: Archivable where Key: Archivable, Value: Archivable {
    /// Writes the pairs; keys of any archivable type (strings, integers, UUIDs, enums...).
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePairs(self) }

    /// Reads the pairs; a repeated key means the input is corrupt.
    public init(from archive: ArchiveDecoder) throws {
        self = try archive.decodeDictionary(Key.self, Value.self)
    }
}

extension Archivable where Self: RawRepresentable, RawValue: Archivable {
    /// Writes the raw value.
    public func encode(to archive: ArchiveEncoder) throws { try encodeRawValue(to: archive) }

    /// Reads the raw value; one that names no case throws ``ArchiveError/Code/typeMismatch``.
    public init(from archive: ArchiveDecoder) throws { try self.init(rawValueFrom: archive) }
}

extension RawRepresentable where Self: Archivable, RawValue: Archivable {
    /// The raw-value enum encoding, shared by the plain and the Codable conformances.
    func encodeRawValue(to archive: ArchiveEncoder) throws { try archive.encodeSingleValue(rawValue) }

    init(rawValueFrom archive: ArchiveDecoder) throws {
        let raw = try archive.decodeSingleValue(RawValue.self)
        guard let value = Self(rawValue: raw) else {
            throw ArchiveError(
                .typeMismatch,
                "\(raw) is not a raw value of \(Self.self)",
                typeName: String(describing: Self.self)
            )
        }
        self = value
    }
}
