import Foundation

// Non-generic overloads for the field types models use most. They write the value inline,
// skipping the generic value frame, which keeps hand-written `encode(to:)` fast. Each behaves
// exactly like the generic ``ArchiveEncoder/encode(_:forKey:)-(T,_)``.

extension ArchiveEncoder {
    /// Writes a `Bool` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Bool, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Bool` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Bool?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `Int` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Int, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Int` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Int?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `Int32` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Int32, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Int32` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Int32?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `Int64` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Int64, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Int64` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Int64?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `UInt32` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: UInt32, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `UInt32` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: UInt32?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `UInt64` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: UInt64, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `UInt64` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: UInt64?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `Double` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Double, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Double` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Double?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `Float` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Float, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Float` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Float?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `String` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: String, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `String` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: String?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `Data` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Data, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Data` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Data?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }

    /// Writes a `Date` under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `invalidValue` if this value already wrote a
    ///   single value.
    public func encode(_ value: Date, forKey key: String) throws { try encodePrimitive(value, forKey: key) }

    /// Writes a `Date` under `key` unless it is `nil`.
    ///
    /// - Throws: as ``encode(_:forKey:)-(T,_)``.
    public func encode(_ value: Date?, forKey key: String) throws {
        if let value { try encodePrimitive(value, forKey: key) }
    }
}
