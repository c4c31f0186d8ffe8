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
        /// An assignment from ``ArchiveDecoder/decodeReference(_:forKey:assign:)``.
        case assignment(DeferredAssignment)
        /// Anything else: a forward reference, decoded at the end from its definition.
        case closure(() throws -> Void)
    }

    /// The object table index the reference points at.
    var id: Int
    /// Where the reference starts, for errors.
    var start: Int
    var target: Target
}

/// A `decodeReference` closure waiting in the side table, with its parameter type erased, so a
/// deferred reference is a plain value of one concrete type: no generic metadata to look up when
/// it is made (the generic wrapper this replaced instantiated its metadata per reference, a third
/// of a back-reference's cost), and copies, growth and destruction of the table are specialized.
struct DeferredAssignment {
    /// The model's `(T?) -> Void`, called as `(AnyObject?) -> Void`. `T` is a class (it is
    /// `AnyObject`-constrained, and no protocol existential conforms to ``Archivable``), so `T?`
    /// and `AnyObject?` are both one nullable object pointer passed the same way, and the two
    /// function types have one representation. It is only ever called with `nil` or an
    /// instance of `type` (checked first).
    let body: (AnyObject?) -> Void
    /// `T`.
    let type: any Archivable.Type

    init<T: AnyObject & Archivable>(_ body: @escaping (T?) -> Void) {
        // Cast the closure inside a struct: handed to `unsafeBitCast` by itself, it would be
        // passed at the generic parameter's abstraction, through two reabstraction thunks (two
        // allocations per reference). A field of type `(T?) -> Void` with `T: AnyObject` is
        // stored as it is, so the struct's bits are the closure's.
        self.body = unsafeBitCast(Assignment(call: body), to: Assignment<AnyObject>.self).call
        type = T.self
    }

    /// A closure taking an optional object, as a struct field (see ``init(_:)``).
    private struct Assignment<T: AnyObject> {
        let call: (T?) -> Void
    }

    /// Hands object `id` to the model once the graph is decoded: the object after checking its
    /// type, an object nothing decoded yet from its definition, or `nil`.
    func resolve(_ id: Int, decoder: ArchiveDecoder, start: Int) throws {
        let s = decoder.storage
        let expected = type
        switch s.pointee.objects[id] {
        case .done(let object):
            try assign(object, decoder: decoder, start: start)
        case .absent where s.pointee.objectOffsets[id] >= 0:
            // Its decode failed inside a `try?` and nothing decoded it again.
            s.pointee.reader.end = s.pointee.bodyEnd
            body(try Self.readDefinition(of: id, as: expected, decoder: decoder, start: start))
        case .absent, .building:
            body(nil)
        }
    }

    /// Hands the complete `object` to the model after checking its type.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch` when it is not a `T`.
    @inline(__always)
    func assign(_ object: AnyObject, decoder: ArchiveDecoder, start: Int) throws {
        let expected = type
        guard
            ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(expected)
                || Self.isInstance(object, of: expected)
        else { throw decoder.referenceMismatch(object, expected: expected, at: start) }
        body(object)
    }

    /// Whether `object` is a `U` (a subclass instance; the exact class was compared before).
    private static func isInstance<U: Archivable>(_ object: AnyObject, of type: U.Type) -> Bool { object is U }

    private static func readDefinition<U: Archivable>(
        of id: Int,
        as type: U.Type,
        decoder: ArchiveDecoder,
        start: Int
    ) throws -> AnyObject {
        ClassInstance.object(try decoder.readDefinition(of: id, as: U.self, referencedAt: start))
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
            .typeMismatch,
            "reference to a \(Swift.type(of: object)) where \(expected) was expected",
            typeName: String(describing: Swift.type(of: object)),
            offset: offset
        )
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
        case .box, .assignment:
            if case .done(let object) = storage.pointee.objects[reference.id] {
                return try resolve(reference, to: object)
            }
            // Nothing to assign to a box unless the object was completed: a box holds its
            // object weakly, so one decoded only for it would be gone when the decode returns.
            if case .assignment(let assignment) = reference.target {
                try assignment.resolve(reference.id, decoder: self, start: reference.start)
            }
        case .closure(let body):
            try body()
        }
    }

    /// Runs one deferred reference whose object, `object`, is complete.
    @inline(__always)
    func resolve(_ reference: DeferredReference, to object: AnyObject) throws {
        switch reference.target {
        case .box(let box, let expected):
            guard
                ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(expected)
                    || Self.isInstance(object, of: expected)
            else { throw referenceMismatch(object, expected: expected, at: reference.start) }
            // The box was made empty for this reference: its weak reference is set once.
            box.object = object
        case .assignment(let assignment):
            try assignment.assign(object, decoder: self, start: reference.start)
        case .closure(let body):
            try body()
        }
    }
}
