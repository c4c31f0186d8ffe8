import Foundation

// Non-generic overloads for the field types models use most; each behaves exactly like the
// generic ``ArchiveDecoder/decode(_:forKey:)-(T.Type,_)`` and
// ``ArchiveDecoder/decodeIfPresent(_:forKey:)-(T.Type,_)``.

extension ArchiveDecoder {
    /// Decodes the `Bool` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Bool.Type, forKey key: String) throws -> Bool {
        try decodePrimitive(Bool.self, forKey: key)
    }

    /// Decodes the `Bool` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Bool.Type, forKey key: String) throws -> Bool? {
        try decodePrimitiveIfPresent(Bool.self, forKey: key)
    }

    /// Decodes the `Int` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Int.Type, forKey key: String) throws -> Int {
        try decodePrimitive(Int.self, forKey: key)
    }

    /// Decodes the `Int` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Int.Type, forKey key: String) throws -> Int? {
        try decodePrimitiveIfPresent(Int.self, forKey: key)
    }

    /// Decodes the `Int32` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Int32.Type, forKey key: String) throws -> Int32 {
        try decodePrimitive(Int32.self, forKey: key)
    }

    /// Decodes the `Int32` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Int32.Type, forKey key: String) throws -> Int32? {
        try decodePrimitiveIfPresent(Int32.self, forKey: key)
    }

    /// Decodes the `Int64` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Int64.Type, forKey key: String) throws -> Int64 {
        try decodePrimitive(Int64.self, forKey: key)
    }

    /// Decodes the `Int64` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Int64.Type, forKey key: String) throws -> Int64? {
        try decodePrimitiveIfPresent(Int64.self, forKey: key)
    }

    /// Decodes the `UInt32` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: UInt32.Type, forKey key: String) throws -> UInt32 {
        try decodePrimitive(UInt32.self, forKey: key)
    }

    /// Decodes the `UInt32` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: UInt32.Type, forKey key: String) throws -> UInt32? {
        try decodePrimitiveIfPresent(UInt32.self, forKey: key)
    }

    /// Decodes the `UInt64` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: UInt64.Type, forKey key: String) throws -> UInt64 {
        try decodePrimitive(UInt64.self, forKey: key)
    }

    /// Decodes the `UInt64` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: UInt64.Type, forKey key: String) throws -> UInt64? {
        try decodePrimitiveIfPresent(UInt64.self, forKey: key)
    }

    /// Decodes the `Double` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Double.Type, forKey key: String) throws -> Double {
        try decodePrimitive(Double.self, forKey: key)
    }

    /// Decodes the `Double` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Double.Type, forKey key: String) throws -> Double? {
        try decodePrimitiveIfPresent(Double.self, forKey: key)
    }

    /// Decodes the `Float` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Float.Type, forKey key: String) throws -> Float {
        try decodePrimitive(Float.self, forKey: key)
    }

    /// Decodes the `Float` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Float.Type, forKey key: String) throws -> Float? {
        try decodePrimitiveIfPresent(Float.self, forKey: key)
    }

    /// Decodes the `String` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: String.Type, forKey key: String) throws -> String {
        try decodePrimitive(String.self, forKey: key)
    }

    /// Decodes the `String` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: String.Type, forKey key: String) throws -> String? {
        try decodePrimitiveIfPresent(String.self, forKey: key)
    }

    /// Decodes the `Data` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Data.Type, forKey key: String) throws -> Data {
        try decodePrimitive(Data.self, forKey: key)
    }

    /// Decodes the `Data` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Data.Type, forKey key: String) throws -> Data? {
        try decodePrimitiveIfPresent(Data.self, forKey: key)
    }

    /// Decodes the `Date` stored under `key`.
    ///
    /// - Throws: ``ArchiveError`` with code `keyNotFound` or `typeMismatch`.
    public func decode(_ type: Date.Type, forKey key: String) throws -> Date {
        try decodePrimitive(Date.self, forKey: key)
    }

    /// Decodes the `Date` stored under `key`, or `nil` when it is missing or `nil`.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    public func decodeIfPresent(_ type: Date.Type, forKey key: String) throws -> Date? {
        try decodePrimitiveIfPresent(Date.self, forKey: key)
    }
}
