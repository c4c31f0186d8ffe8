extension ArchiveDecoder {
    /// Decodes a Codable value: through its `Archivable` conformance when it has one,
    /// otherwise as an anonymous value of its own.
    func readDecodable<T: Decodable>(_ type: T.Type) throws -> T {
        let s = storage
        // A failed conformance lookup is the slow kind; a model's field of a type that is not
        // Archivable (a `@BackReference` in every letter) repeats it per model.
        let id = ObjectIdentifier(T.self)
        if id == s.pointee.lastNonArchivableType {
            if let backReference = s.pointee.lastBackReferenceType {
                // `T` is that type.
                return try readBackReference(backReference, as: T.self)
            }
        } else {
            if CodablePrimitives.isInline(T.self, at: s.pointee.reader) {
                return try CodablePrimitives.read(T.self, from: &s.pointee.reader)
            }
            if let archivable = T.self as? any Archivable.Type {
                return try readOpened(archivable, as: T.self)
            }
            s.pointee.lastNonArchivableType = id
            s.pointee.lastBackReferenceType = T.self as? any BackReferenceDecoding.Type
            if let backReference = s.pointee.lastBackReferenceType {
                return try readBackReference(backReference, as: T.self)
            }
        }
        let saved = try s.pointee.enterValue(nil, weight: ArchiveLimits.codableLevelWeight)
        defer { s.pointee.leaveValue(saved) }
        let value = try T(from: CodableArchiveDecoder(archive: self))
        try s.pointee.finishValue()
        return value
    }

    /// Reads a `@BackReference` of type `B`, which is `T`, at the reader: what its
    /// `init(from:)` reads in a value frame of its own, without the frame (a reference is
    /// one value, and its reading restores the reader's bounds itself), charging the frame's
    /// depth all the same.
    private func readBackReference<B: BackReferenceDecoding, T>(_ type: B.Type, as: T.Type) throws -> T {
        let s = storage
        try s.pointee.chargeDepth(ArchiveLimits.codableLevelWeight)
        defer { s.pointee.depth -= ArchiveLimits.codableLevelWeight }
        return try B.readBackReference(from: self, as: T.self)
    }

    private func readOpened<A: Archivable, T>(_ type: A.Type, as: T.Type) throws -> T {
        // `A` is `T` opened from its metatype, so nearly always the very same type.
        if A.self == T.self { return unsafeBitCast(try read(A.self), to: T.self) }
        guard let value = try read(A.self) as? T else {
            throw ArchiveError(.typeMismatch, "\(A.self) is not \(T.self)")
        }
        return value
    }
}
