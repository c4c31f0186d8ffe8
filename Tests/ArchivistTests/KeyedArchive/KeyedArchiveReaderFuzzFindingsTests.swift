import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Inputs the reader's libFuzzer target (`Fuzz/run.sh reader`) crashed on, rebuilt by hand.
/// Each runs in a child process: before the fix, the runner itself would have died.
@Suite struct KeyedArchiveReaderFuzzFindingsTests {
    /// A keyed archive whose root instance has one inline date field, `when`, of `seconds`.
    static func archive(withInlineDate seconds: Double) -> Data {
        var nodes: [PropertyListDocument.Node] = []
        func add(_ node: PropertyListDocument.Node) -> Int {
            nodes.append(node)
            return nodes.count - 1
        }
        let null = add(.string("$null"))
        let instance = add(
            .dictionary(
                keys: [add(.string("$class")), add(.string("when"))],
                values: [add(.uid(2)), add(.date(seconds))]
            )
        )
        let classDescription = add(
            .dictionary(
                keys: [add(.string("$classname")), add(.string("$classes"))],
                values: [add(.string("Note")), add(.array([add(.string("Note")), add(.string("NSObject"))]))]
            )
        )
        let objects = add(.array([null, instance, classDescription]))
        let top = add(.dictionary(keys: [add(.string("root"))], values: [add(.uid(1))]))
        let root = add(
            .dictionary(
                keys: [
                    add(.string("$archiver")), add(.string("$version")), add(.string("$top")), add(.string("$objects")),
                ],
                values: [add(.string("NSKeyedArchiver")), add(.integer(100_000)), top, objects]
            )
        )
        return Data(BinaryPropertyListWriter.write(PropertyListDocument(nodes: nodes, root: root, format: .binary)))
    }

    // An exit test (a child process): macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// libFuzzer, reader target: an inline date of NaN seconds read where a keyed container was
    /// expected. The `.typeMismatch` message described the field with string interpolation,
    /// and `Date.description` traps on such a date (FoundationEssentials). The message now
    /// names the field's kind only; a NaN date is refused as `.corrupt` when the archive is
    /// read, as the bridge's validator refuses it (`KeyedArchiveNaNDateTests`).
    @Test func anInlineDateOutOfRangeIsATypeMismatchNotATrap() async {
        await #expect(processExitsWith: .success) {
            struct Note: Decodable {
                struct Inner: Decodable { var x: Int }
                var when: Inner
            }
            for seconds in [Double.nan, -.nan, .infinity, 1e300, -1e300] {
                do {
                    _ = try KeyedArchive(data: KeyedArchiveReaderFuzzFindingsTests.archive(withInlineDate: seconds))
                        .decode(Note.self)
                    exit(2)
                } catch let error as ArchiveError where error.code == (seconds.isNaN ? .corrupt : .typeMismatch) {
                    continue
                } catch {
                    exit(3)
                }
            }
        }
    }
    #endif
}
