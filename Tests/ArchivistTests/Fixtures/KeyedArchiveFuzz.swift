import ArchivistTestSupport
import Foundation

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Feeds the bridge every fixture, every truncation of it and seeded random byte changes. Run
/// inside an exit test: a trap or stack overflow kills only the child process. Before each
/// input a line naming it goes to a log file, so the parent can name the culprit after a crash
/// (a failed exit test hands back no output).
enum KeyedArchiveFuzz {
    /// The seed of the committed test's random byte changes; printed with any failure.
    static let seed: UInt64 = 0xA5C1_1BE5

    /// A longer campaign asked for through the environment, or `nil`:
    /// `ARCHIVIST_FUZZ_SEEDS=1,2,3 ARCHIVIST_FUZZ_FLIPS=40000 swift test --filter longFlipCampaign`.
    static var campaign: (seeds: [UInt64], flips: Int)? {
        let environment = ProcessInfo.processInfo.environment
        guard let seeds = environment["ARCHIVIST_FUZZ_SEEDS"]?.split(separator: ",").compactMap({ UInt64($0) }),
            !seeds.isEmpty
        else { return nil }
        return (seeds, environment["ARCHIVIST_FUZZ_FLIPS"].flatMap { Int($0) } ?? 40_000)
    }

    /// Every fixture and two generated archives, in a fixed order (the seeds depend on it).
    static func corpus() throws -> [(name: String, bytes: [UInt8])] {
        var corpus: [(name: String, bytes: [UInt8])] = []
        for path in KeyedArchiveFixtures.paths {
            corpus.append((path, [UInt8](try KeyedArchiveFixtures.data(path))))
        }
        let values = NSArray(array: FoundationValue.allCases.map(\.object) + [SecureLetter(content: "x", sent: Date())])
        corpus.append(("generated values", [UInt8](try KeyedArchiverBridge.archive(values))))
        corpus.append(("generated xml chain", Array(KeyedArchiveChains.xmlChain(depth: 20).utf8)))
        return corpus
    }

    /// Runs the whole corpus, its truncations, then `flips` rounds of 1–5 random byte changes
    /// for each seed. Exits the process with a failure on an error that is not an `ArchiveError`.
    static func run(seeds: [UInt64], flips: Int, log path: String) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let log = FileHandle(forWritingAtPath: path)
        else {
            fail("could not create the log \(path)")
        }
        let corpus: [(name: String, bytes: [UInt8])]
        do {
            corpus = try self.corpus()
        } catch {
            fail("could not build the corpus: \(error)")
        }
        for (name, bytes) in corpus {
            attempt(Data(bytes), "\(name) whole", log: log)
            let step = bytes.count <= 2_048 ? 1 : 7
            for length in stride(from: 0, to: bytes.count, by: step) {
                attempt(Data(bytes[..<length]), "\(name) truncated to \(length)", log: log)
            }
        }
        for seed in seeds {
            var rng = SplitMix64(seed: seed)
            for round in 0..<flips {
                let (name, bytes) = mutation(of: corpus, using: &rng)
                attempt(Data(bytes), "\(name) flip round \(round) (seed \(seed))", log: log)
            }
        }
    }

    /// Mutation fuzzing of the pure-Swift reader alone (no Foundation, so it is fast): `cases`
    /// rounds of 1–5 byte changes per seed, each read into a table and decoded through the
    /// `Decoder`. Exits the process with a failure on an error that is not an `ArchiveError`.
    static func runReader(seeds: [UInt64], cases: Int, log path: String) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let log = FileHandle(forWritingAtPath: path)
        else {
            fail("could not create the log \(path)")
        }
        let corpus: [(name: String, bytes: [UInt8])]
        do {
            corpus = try self.corpus()
        } catch {
            fail("could not build the corpus: \(error)")
        }
        var limits = ArchiveLimits()
        limits.maxObjectCount = 100_000
        for seed in seeds {
            var rng = SplitMix64(seed: seed)
            for round in 0..<cases {
                let (name, bytes) = mutation(of: corpus, using: &rng)
                // The round number alone reproduces the input from the seed; logging every
                // 1,000th keeps the log cheap, and the last one bounds where to replay from.
                if round % 1_000 == 0 { log.write(Data("\(name) reader round \(round) (seed \(seed))\n".utf8)) }
                do {
                    let archive = try KeyedArchive(data: Data(bytes), limits: limits)
                    _ = try? archive.decode(KeyedArchiveAnyValue.self)
                } catch is ArchiveError {
                    continue
                } catch {
                    fail("\(name) reader round \(round) (seed \(seed)): untyped error \(error)")
                }
            }
        }
    }

    /// One round: a corpus entry with 1–5 bytes replaced by random values.
    static func mutation(of corpus: [(name: String, bytes: [UInt8])], using rng: inout SplitMix64) -> (String, [UInt8])
    {
        let (name, original) = corpus[Int.random(in: 0..<corpus.count, using: &rng)]
        var bytes = original
        for _ in 0...Int.random(in: 0..<4, using: &rng) {
            bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        }
        return (name, bytes)
    }

    /// The last lines of a log `run` wrote: the input being decoded when the child died.
    static func lastLines(of path: String, count: Int = 3) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "no log at \(path)" }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(count).joined(separator: " | ")
    }

    private static func attempt(_ data: Data, _ label: String, log: FileHandle) {
        log.write(Data((label + "\n").utf8))
        do {
            // The pure-Swift reader first: it must give a typed answer for every input too.
            var limits = ArchiveLimits()
            limits.maxObjectCount = 100_000
            if let archive = try? KeyedArchive(data: data, limits: limits) {
                _ = try? archive.decode(KeyedArchiveAnyValue.self)
            }
            _ = try KeyedArchiverBridge.unarchiveObject(ofClasses: [SecureLetter.self], from: data)
        } catch is ArchiveError {
            // A typed error is a correct answer.
        } catch {
            log.write(Data("untyped error \(error)\n".utf8))
            fail("\(label): untyped error \(error)")
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(EXIT_FAILURE)
    }
}

/// Decodes whatever a keyed archive holds through the pure-Swift reader's `Decoder`, walking
/// every container, so fuzzing reaches the whole decoding path.
struct KeyedArchiveAnyValue: Decodable {
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: AnyKey.self) {
            for key in container.allKeys { _ = try? container.decode(KeyedArchiveAnyValue.self, forKey: key) }
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            while !container.isAtEnd, (try? container.decode(KeyedArchiveAnyValue.self)) != nil {}
            return
        }
        let single = try decoder.singleValueContainer()
        _ = try? single.decode(String.self)
        _ = try? single.decode(Double.self)
        _ = try? single.decode(Date.self)
        _ = try? single.decode(URL.self)
    }
}
