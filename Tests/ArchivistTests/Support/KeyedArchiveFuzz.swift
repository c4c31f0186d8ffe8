import Foundation
@testable import Archivist

/// Feeds the bridge every fixture, every truncation of it and seeded random byte changes. Run
/// inside an exit test: a trap or stack overflow kills only the child process. Before each
/// input a line naming it goes to standard error, so the parent can report the culprit.
enum KeyedArchiveFuzz {
    /// The seed of the random byte changes; printed with any failure.
    static let seed: UInt64 = 0xA5C1_1BE5

    static func run(seed: UInt64, flips: Int) {
        var corpus: [(name: String, bytes: [UInt8])] = []
        do {
            for path in KeyedArchiveFixtures.paths {
                corpus.append((path, [UInt8](try KeyedArchiveFixtures.data(path))))
            }
            let values = NSArray(array: FoundationValue.allCases.map(\.object) + [Letter(content: "x", sent: Date())])
            corpus.append(("generated values", [UInt8](try KeyedArchiverBridge.archive(values))))
            corpus.append(("generated xml chain", Array(KeyedArchiveChains.xmlChain(depth: 20).utf8)))
        } catch {
            fail("could not build the corpus: \(error)")
        }
        for (name, bytes) in corpus {
            attempt(Data(bytes), "\(name) whole")
            let step = bytes.count <= 2_048 ? 1 : 7
            for length in stride(from: 0, to: bytes.count, by: step) {
                attempt(Data(bytes[..<length]), "\(name) truncated to \(length)")
            }
        }
        var rng = SplitMix64(seed: seed)
        for round in 0..<flips {
            let (name, original) = corpus[Int.random(in: 0..<corpus.count, using: &rng)]
            var bytes = original
            for _ in 0...Int.random(in: 0..<4, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            attempt(Data(bytes), "\(name) flip round \(round) (seed \(seed))")
        }
    }

    private static func attempt(_ data: Data, _ label: String) {
        FileHandle.standardError.write(Data((label + "\n").utf8))
        do {
            _ = try KeyedArchiverBridge.unarchiveObject(ofClasses: [Letter.self], from: data)
        } catch is ArchiveError {
            // A typed error is a correct answer.
        } catch {
            fail("\(label): untyped error \(error)")
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(EXIT_FAILURE)
    }
}
