import Foundation

@testable import ArchivistKeyedArchive

/// An acyclic keyed archive unfolded into a comparable tree, so a test can state everything a
/// fixture holds as one literal.
indirect enum KeyedArchiveTree: Equatable {
    case null, nsNull
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case data(Data)
    case date(Date)
    case uuid(String)
    case url(String)
    case array([KeyedArchiveTree])
    case set([KeyedArchiveTree])
    case orderedSet([KeyedArchiveTree])
    case dictionary([String: KeyedArchiveTree])
    case instance(String, [String: KeyedArchiveTree])
    /// A reference to an object already on the path (a cycle), by index.
    case cycle(Int)
    /// An inline (non-reference) plain plist value inside an instance.
    case plist([String: KeyedArchiveTree])

    /// Unfolds `reference`; a set's elements are sorted by description so order does not matter.
    init(_ archive: KeyedArchive, _ reference: KeyedArchiveReference, path: Set<Int> = []) throws {
        guard !path.contains(reference.index) else {
            self = .cycle(reference.index)
            return
        }
        let path = path.union([reference.index])
        func all(_ references: [KeyedArchiveReference]) throws -> [KeyedArchiveTree] {
            try references.map { try KeyedArchiveTree(archive, $0, path: path) }
        }
        func field(_ value: KeyedArchiveField) throws -> KeyedArchiveTree {
            switch value {
            case .reference(let target): try KeyedArchiveTree(archive, target, path: path)
            case .integer(let value): .integer(value)
            case .unsignedInteger(let value): .integer(Int64(bitPattern: value))
            case .real(let value): .real(value)
            case .bool(let value): .bool(value)
            case .string(let value): .string(value)
            case .data(let value): .data(value)
            case .date(let value): .date(value)
            case .array(let values): .array(try values.map(field))
            case .dictionary(let values): .plist(try values.mapValues(field))
            }
        }
        switch archive[reference] {
        case .null: self = .null
        case .nsNull: self = .nsNull
        case .string(let value): self = .string(value)
        case .integer(let value): self = .integer(value)
        case .unsignedInteger(let value): self = .integer(Int64(bitPattern: value))
        case .real(let value): self = .real(value)
        case .bool(let value): self = .bool(value)
        case .data(let value): self = .data(value)
        case .date(let value): self = .date(value)
        case .uuid(let value): self = .uuid(value.uuidString)
        case .url: self = .url(try archive.url(at: reference).absoluteString)
        case .array(let elements): self = .array(try all(elements))
        case .set(let elements):
            self = .set(try all(elements).sorted { String(describing: $0) < String(describing: $1) })
        case .orderedSet(let elements): self = .orderedSet(try all(elements))
        case .dictionary(let keys, let values):
            var entries: [String: KeyedArchiveTree] = [:]
            for (key, value) in zip(keys, values) {
                guard case .string(let name) = archive[key] else { throw TreeError.nonStringKey }
                entries[name] = try KeyedArchiveTree(archive, value, path: path)
            }
            self = .dictionary(entries)
        case .instance(let instance):
            self = .instance(instance.className, try instance.fields.mapValues(field))
        case .classDescription(let chain): self = .instance("$class", ["chain": .array(chain.map { .string($0) })])
        case .plist(let value): self = try field(value)
        }
    }

    enum TreeError: Error { case nonStringKey }
}
