extension ArchiveDecoder {
    /// Reads one value at the reader's position: an object (once per archive), or anything
    /// else through its `init(from:)` in a fresh value frame.
    func read<T: Archivable>(_ type: T.Type) throws -> T {
        let s = storage
        let tag = try s.pointee.reader.peekByte()
        if tag == ArchiveTag.object || tag == ArchiveTag.reference, T.self is AnyObject.Type {
            return try readObject(T.self)
        }
        let saved = try s.pointee.enterValue(T.self)
        defer { s.pointee.leaveValue(saved) }
        let value = try T(from: self)
        try s.pointee.finishValue()
        return value
    }

    /// Reads an object definition or a reference to one.
    func readObject<T: Archivable>(_ type: T.Type) throws -> T {
        let s = storage
        let start = s.pointee.reader.pos
        let tag = try s.pointee.reader.byte()
        let id = try s.pointee.reader.index(below: s.pointee.objects.count, "object id")
        if tag == ArchiveTag.reference {
            switch s.pointee.objects[id] {
            case .done(let object):
                return try cast(object, to: T.self, at: start)
            case .building:
                throw ArchiveError(
                    .unresolvedReference,
                    "object \(id) refers back to an object still being decoded; decode this field with decodeReference(_:forKey:assign:) (or @BackReference in Codable types)",
                    typeName: String(describing: T.self),
                    offset: start
                )
            case .absent:
                return try readDefinition(of: id, as: T.self, referencedAt: start)
            }
        }
        guard s.pointee.objectOffsets[id] == start else {
            throw ArchiveError(
                .corrupt,
                "object \(id) defined at \(start) but the table says \(s.pointee.objectOffsets[id])",
                offset: start
            )
        }
        switch s.pointee.objects[id] {
        case .done(let object):
            // Already decoded out of order through a forward reference: skip the definition.
            try s.pointee.reader.skipValue()
            return try cast(object, to: T.self, at: start)
        case .building:
            throw ArchiveError(.corrupt, "object \(id) is defined inside itself", offset: start)
        case .absent:
            break
        }
        // Callers route only class types here (`read` checks, references are AnyObject).
        let concrete = try concreteType(T.self)
        s.pointee.objects[id] = .building
        // No expected type for the frame: `concreteType` checked this record's type entry
        // against `concrete` already (openRecord would compare it a second time per object).
        let saved = try s.pointee.enterValue(nil)
        defer { s.pointee.leaveValue(saved) }
        do {
            let value = try concrete.init(from: self)
            try s.pointee.finishValue()
            s.pointee.objects[id] = .done(ClassInstance.object(value))
            return value
        } catch {
            s.pointee.objects[id] = .absent
            throw error
        }
    }

    /// Decodes object `id` where it is defined, later in the archive, then comes back.
    func readDefinition<T: Archivable>(of id: Int, as type: T.Type, referencedAt start: Int) throws -> T {
        let s = storage
        let offset = s.pointee.objectOffsets[id]
        guard offset >= 0 else {
            throw ArchiveError(
                .valueNotFound,
                "conditional reference to object \(id), which was never archived",
                typeName: String(describing: T.self),
                offset: start
            )
        }
        return try s.reading(from: offset, to: s.pointee.bodyEnd) {
            guard try s.pointee.reader.peekByte() == ArchiveTag.object else {
                throw ArchiveError(.corrupt, "object table points at a value that is not an object", offset: offset)
            }
            return try readObject(T.self)
        }
    }

    /// The type to instantiate for the object whose value starts at the reader: `T` itself,
    /// or an allowed subclass the archive names.
    private func concreteType<T: Archivable>(_ type: T.Type) throws -> T.Type {
        let s = storage
        var probe = s.pointee.reader
        guard try probe.byte() == ArchiveTag.record else { return T.self }
        _ = try probe.fixed(UInt32.self)
        let reference = try probe.index(below: s.pointee.types.count + 1, "type reference")
        if reference == 0 || s.pointee.typeMatches(T.self, reference: reference) { return T.self }
        let name = s.pointee.types[reference - 1].name
        guard let allowed = s.pointee.allowed[name] else {
            throw ArchiveError(
                .disallowedType,
                "archive holds \(name) where \(T.archiveTypeName) was expected; list \(name) in ArchiveOptions.allowedTypes to allow it",
                typeName: name,
                offset: s.pointee.reader.pos
            )
        }
        guard let subtype = allowed as? T.Type else {
            throw ArchiveError(
                .typeMismatch,
                "\(name) is allowed but is not a \(T.archiveTypeName)",
                typeName: name,
                offset: s.pointee.reader.pos
            )
        }
        return subtype
    }

    func cast<T>(_ object: AnyObject, to type: T.Type, at offset: Int) throws -> T {
        // The usual case, an instance of exactly `T`, skips the runtime's general cast. `T` is
        // then the object's class, so the bit cast is exact (no `T.self is AnyObject.Type`
        // check needed, which looked up metadata per reference).
        if ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(T.self) {
            return unsafeBitCast(object, to: T.self)
        }
        guard let typed = object as? T else { throw referenceMismatch(object, expected: T.self, at: offset) }
        return typed
    }

    /// Reads a reference that may be deferred until its object is complete, for
    /// ``decodeReference(_:forKey:assign:)``.
    func readReference<T: AnyObject & Archivable>(_ type: T.Type, assign: @escaping (T?) -> Void) throws {
        let s = storage
        let start = s.pointee.reader.pos
        switch try s.pointee.referenceHead() {
        case .null:
            assign(nil)
        case .building(let id):
            // A back-reference to an object whose `init(from:)` is running: hand it over at
            // the end, from the side table, without a closure of its own.
            s.pointee.deferred.append(
                DeferredReference(id: id, start: start, target: .assignment(DeferredAssignment(assign)))
            )
        case .later(let id):
            deferForwardReference(T.self, id: id, start: start, into: .closure(assign))
        case .value:
            assign(try read(T.self))
        }
    }

    /// Reads a `@BackReference`'s reference into its (empty) box, now or once the graph is
    /// decoded.
    func readReference<T: AnyObject & Archivable>(_ type: T.Type, into box: BackReferenceBox) throws {
        let s = storage
        let start = s.pointee.reader.pos
        switch try s.pointee.referenceHead() {
        case .null:
            break
        case .building(let id):
            s.pointee.deferred.append(DeferredReference(id: id, start: start, target: .box(box, expected: T.self)))
        case .later(let id):
            deferForwardReference(T.self, id: id, start: start, into: .box(box))
        case .value:
            box.object = try read(T.self)
        }
    }

    /// Where a forward reference goes: a model's closure or a `@BackReference` box.
    enum ReferenceSink<T: AnyObject> {
        case closure((T?) -> Void)
        case box(BackReferenceBox)

        @inline(__always)
        func callAsFunction(_ object: T?) {
            switch self {
            case .closure(let assign): assign(object)
            case .box(let box): if let object { box.object = object }
            }
        }
    }

    /// Decodes object `id`, defined later in the archive, at the end, when decoding it can't run
    /// into an object that is half-built (rare: the encoder writes a definition before its
    /// references unless fields are written out of order).
    private func deferForwardReference<T: AnyObject & Archivable>(
        _ type: T.Type,
        id: Int,
        start: Int,
        into sink: ReferenceSink<T>
    ) {
        storage.pointee.deferred.append(
            DeferredReference(
                id: id,
                start: start,
                target: .closure { [unowned self] in
                    switch self.storage.pointee.objects[id] {
                    case .done(let object):
                        sink(try self.castObject(object, to: T.self, at: start))
                    case .absent:
                        self.storage.pointee.reader.end = self.storage.pointee.bodyEnd
                        sink(try self.readDefinition(of: id, as: T.self, referencedAt: start))
                    case .building:
                        sink(nil)
                    }
                }
            )
        )
    }

    /// Runs the deferred reference assignments once every object is complete. An object
    /// defined only in a field nobody read is decoded here, from its definition.
    func resolveDeferred() throws {
        let s = storage
        // Resolving a forward reference decodes its object, which may defer references of its
        // own: those are appended to the (emptied) table and resolved in the next round.
        var batch: [DeferredReference] = []
        while !s.pointee.deferred.isEmpty {
            swap(&batch, &s.pointee.deferred)
            try batch.withUnsafeBufferPointer { try resolve($0) }
            let kept = batch.count <= Self.keptDeferredCapacity
            batch.removeAll(keepingCapacity: kept)
            if kept, s.pointee.deferred.isEmpty { swap(&batch, &s.pointee.deferred) }
        }
    }

    /// Resolves `references` in order. A model's back-references come in runs to one object
    /// (the 20 letters of a user), so a run reads the object's slot once and hands the same
    /// reference to each, instead of copying it out of the table (a retain and a release, on
    /// the slow path for an object with weak references) per reference. Entries are read in
    /// place, not copied.
    private func resolve(_ references: UnsafeBufferPointer<DeferredReference>) throws {
        let s = storage
        var index = 0
        while index < references.count {
            let id = references[index].id
            guard case .done(let object) = s.pointee.objects[id] else {
                try resolve(references[index])
                index += 1
                continue
            }
            repeat {
                try resolve(references[index], to: object)
                index += 1
            } while index < references.count && references[index].id == id
        }
    }

    /// Deferred-reference tables up to this many entries keep their memory between archives.
    static let keptDeferredCapacity = 64

    /// Makes any later use of this decoder throw instead of touching released memory.
    func invalidate() {
        let s = storage
        s.pointee.decoding = false
        s.pointee.reader = ByteReader(base: s.pointee.reader.base, start: 0, end: 0)
        s.pointee.frame = DecoderStorage.Frame()
        s.pointee.deferred.removeAll()
        // The cached containers hold this decoder: drop them, so it can be reused or freed.
        s.pointee.endEpoch()
    }
}

/// What a reference field holds, as far as deferring it goes (see
/// ``DecoderStorage/referenceHead()``).
enum ReferenceHead {
    /// `nil`, or a conditional reference to an object that was never archived (consumed).
    case null
    /// A reference to object `id`, whose `init(from:)` is running (consumed).
    case building(Int)
    /// A reference to object `id`, defined later in the archive and not decoded yet (consumed).
    case later(Int)
    /// Anything else, left unread: a definition, or a reference to a complete object.
    case value
}

extension DecoderStorage {
    /// Classifies the reference at the reader without generic code, so the hot path of a
    /// back-reference (`decodeReference`, `@BackReference`) needs no metadata of its type.
    @inline(__always)
    mutating func referenceHead() throws -> ReferenceHead {
        let tag = try reader.peekByte()
        if tag == ArchiveTag.null {
            reader.pos &+= 1
            return .null
        }
        guard tag == ArchiveTag.reference else { return .value }
        var probe = reader
        probe.pos &+= 1
        let id = try probe.index(below: objects.count, "object id")
        switch objects[id] {
        case .done:
            return .value
        case .building:
            reader.pos = probe.pos
            return .building(id)
        case .absent:
            reader.pos = probe.pos
            return objectOffsets[id] < 0 ? .null : .later(id)
        }
    }
}
