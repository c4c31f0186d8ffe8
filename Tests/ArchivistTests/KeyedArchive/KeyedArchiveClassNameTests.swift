import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// The class name `KeyedArchiveWriter` gives a ``KeyedArchiveEncodable`` type by default is the
/// name Apple's `NSKeyedUnarchiver` looks up: `NSStringFromClass`'s. For a top-level type that
/// is `Module.Name`; a nested, generic, `private` or local type has no such name (Apple names
/// those classes by their mangled runtime name, which only the Apple runtime knows), so writing
/// one under its default name is refused — except a class on Apple platforms, which is written
/// under `NSStringFromClass` itself. An explicit `keyedArchiveClassChain` is written as given.
@Suite struct KeyedArchiveClassNameTests {
    static func rootClassName(_ data: Data) throws -> String? {
        let archive = try KeyedArchive(data: data)
        return archive.classChain(of: try #require(archive.root)).first
    }

    @Test func aTopLevelTypeIsNamedModuleDotName() throws {
        #expect(TopLevelKeyedNote().keyedArchiveClassChain == ["ArchivistTests.TopLevelKeyedNote", "NSObject"])
        #expect(
            try Self.rootClassName(try KeyedArchiveWriter.archive(TopLevelKeyedNote()))
                == "ArchivistTests.TopLevelKeyedNote"
        )
        // A class: the name Foundation gives it and finds it by, on every platform.
        #expect(TopLevelKeyedClass().keyedArchiveClassChain.first == NSStringFromClass(TopLevelKeyedClass.self))
        #expect(NSClassFromString(TopLevelKeyedClass().keyedArchiveClassChain[0]) == TopLevelKeyedClass.self)
    }

    @Test func aDefaultNameFoundationCannotLookUpIsRefused() throws {
        struct Local: KeyedArchiveEncodable {
            func encode(with archiver: KeyedArchiveArchiver) throws {}
        }
        var writes: [(String, () throws -> Data)] = [
            ("nested", { try KeyedArchiveWriter.archive(KeyedNoteNamespace.Nested()) }),
            ("generic", { try KeyedArchiveWriter.archive(GenericKeyedNote<Int>()) }),
            ("private", { try KeyedArchiveWriter.archive(PrivateKeyedNote()) }),
            ("local", { try KeyedArchiveWriter.archive(Local()) }),
            ("nested inside an array", { try KeyedArchiveWriter.archive([KeyedNoteNamespace.Nested()]) }),
        ]
        if KeyedArchiveValidator.isCorelibsFoundation {
            writes.append(("nested class", { try KeyedArchiveWriter.archive(KeyedNoteNamespace.NestedClass()) }))
        }
        for (name, write) in writes {
            let error = #expect(throws: ArchiveError.self, "\(name)") { try write() }
            #expect(error?.code == .invalidValue, "\(name): \(String(describing: error))")
            #expect(error?.message.contains("keyedArchiveClassChain") == true, "\(name): \(String(describing: error))")
        }
    }

    /// On Apple platforms a nested class's default name is its `NSStringFromClass` (the mangled
    /// runtime name), which Apple's `NSKeyedUnarchiver` resolves.
    @Test(
        .enabled(
            if: !KeyedArchiveValidator.isCorelibsFoundation,
            "NSStringFromClass names nested classes on Apple platforms only"
        )
    )
    func aNestedClassIsNamedByTheRuntimeOnApplePlatforms() throws {
        let name = try Self.rootClassName(try KeyedArchiveWriter.archive(KeyedNoteNamespace.NestedClass()))
        #expect(name == NSStringFromClass(KeyedNoteNamespace.NestedClass.self))
    }

    @Test func anExplicitNameIsWrittenAsGiven() throws {
        #expect(try Self.rootClassName(try KeyedArchiveWriter.archive(KeyedNoteNamespace.Named())) == "MyApp.Note")
    }
}

struct TopLevelKeyedNote: KeyedArchiveEncodable {
    func encode(with archiver: KeyedArchiveArchiver) throws { archiver.encode(1, forKey: "x") }
}

final class TopLevelKeyedClass: NSObject, KeyedArchiveEncodable {
    func encode(with archiver: KeyedArchiveArchiver) throws {}
}

struct GenericKeyedNote<Value>: KeyedArchiveEncodable {
    func encode(with archiver: KeyedArchiveArchiver) throws {}
}

private struct PrivateKeyedNote: KeyedArchiveEncodable {
    func encode(with archiver: KeyedArchiveArchiver) throws {}
}

enum KeyedNoteNamespace {
    struct Nested: KeyedArchiveEncodable {
        func encode(with archiver: KeyedArchiveArchiver) throws {}
    }

    final class NestedClass: NSObject, KeyedArchiveEncodable {
        func encode(with archiver: KeyedArchiveArchiver) throws {}
    }

    struct Named: KeyedArchiveEncodable {
        var keyedArchiveClassChain: [String] { ["MyApp.Note", "NSObject"] }
        func encode(with archiver: KeyedArchiveArchiver) throws {}
    }
}
