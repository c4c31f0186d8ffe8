/// A reference assignment that waits until the whole graph is decoded: a back-reference to an
/// object whose `init(from:)` is still running, or a forward reference to an object defined
/// later in the archive.
///
/// A plain value in the decoder's side table rather than a closure per reference: a graph of
/// 20,000 letters pointing back at their users made 20,000 closure contexts (each holding the
/// decoder unowned, the user's closure and the reference's position) and called each through
/// two closure levels.
struct DeferredReference {
    enum Target {
        /// A `@BackReference` box: gets the object when it is an instance of `expected` (a
        /// class), else the decode throws `typeMismatch`.
        case box(BackReferenceBox, expected: AnyObject.Type)
        /// A typed assignment from ``ArchiveDecoder/decodeReference(_:forKey:assign:)``.
        case assignment(any DeferredAssignment)
        /// Anything else: a forward reference, decoded at the end from its definition.
        case closure(() throws -> Void)
    }

    /// The object table index the reference points at.
    var id: Int
    /// Where the reference starts, for errors.
    var start: Int
    var target: Target
}

/// A deferred `decodeReference` assignment that knows its object's type.
protocol DeferredAssignment {
    /// Hands object `id` to the model once the graph is decoded: the object after checking its
    /// type, an object nothing decoded yet from its definition, or `nil`.
    func resolve(_ id: Int, decoder: ArchiveDecoder, start: Int) throws
}

/// A `decodeReference` closure with its type: two words, so it fits an existential's inline
/// buffer and a deferred reference needs no allocation of its own.
struct TypedDeferredAssignment<T: AnyObject & Archivable>: DeferredAssignment {
    let body: (T?) -> Void

    func resolve(_ id: Int, decoder: ArchiveDecoder, start: Int) throws {
        let s = decoder.storage
        switch s.pointee.objects[id] {
        case .done(let object):
            body(try decoder.castObject(object, to: T.self, at: start))
        case .absent where s.pointee.objectOffsets[id] >= 0:
            // Its decode failed inside a `try?` and nothing decoded it again.
            s.pointee.reader.end = s.pointee.bodyEnd
            body(try decoder.readDefinition(of: id, as: T.self, referencedAt: start))
        case .absent, .building:
            body(nil)
        }
    }
}

/// The shared storage of a ``BackReference``: a weak reference to a class instance, not generic,
/// so making one (twice per model: the property's default value, then the decoded one) looks
/// up no generic metadata.
final class BackReferenceBox {
    weak var object: AnyObject?

    init(_ object: AnyObject?) { self.object = object }
}

extension ArchiveDecoder {
    /// `object` as a `T`: an exact-type compare first, the runtime's cast for a subclass.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch`.
    @inline(__always)
    func castObject<T: AnyObject>(_ object: AnyObject, to type: T.Type, at offset: Int) throws -> T {
        if ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(T.self) {
            return unsafeDowncast(object, to: T.self)
        }
        return try castSubclass(object, to: T.self, at: offset)
    }

    @inline(never)
    private func castSubclass<T: AnyObject>(_ object: AnyObject, to type: T.Type, at offset: Int) throws -> T {
        guard let typed = object as? T else { throw referenceMismatch(object, expected: T.self, at: offset) }
        return typed
    }

    func referenceMismatch(_ object: AnyObject, expected: Any.Type, at offset: Int) -> ArchiveError {
        ArchiveError(
            .typeMismatch, "reference to a \(Swift.type(of: object)) where \(expected) was expected",
            typeName: String(describing: Swift.type(of: object)), offset: offset)
    }

    /// Whether `object` is an instance of the class `expected` or of a subclass of it.
    static func isInstance(_ object: AnyObject, of expected: AnyObject.Type) -> Bool {
        let target = ObjectIdentifier(expected)
        var type: AnyClass? = Swift.type(of: object)
        while let current = type {
            if ObjectIdentifier(current) == target { return true }
            type = _getSuperclass(current)
        }
        return false
    }

    /// Runs one deferred reference, once every object that is going to be complete is.
    func resolve(_ reference: DeferredReference) throws {
        switch reference.target {
        case .box(let box, let expected):
            // Nothing to assign unless the object was completed: a box holds its object
            // weakly, so one decoded only for it would be gone when the decode returns.
            guard case .done(let object) = storage.pointee.objects[reference.id] else { return }
            guard ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(expected)
                || Self.isInstance(object, of: expected)
            else { throw referenceMismatch(object, expected: expected, at: reference.start) }
            // The box was made empty for this reference: its weak reference is set once.
            box.object = object
        case .assignment(let assignment):
            try assignment.resolve(reference.id, decoder: self, start: reference.start)
        case .closure(let body):
            try body()
        }
    }
}
