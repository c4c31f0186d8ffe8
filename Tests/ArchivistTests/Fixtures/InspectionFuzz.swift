import ArchivistInspection
import ArchivistTestSupport
import Foundation

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Feeds `archivist inspect` and `convert` (with and without `--graph`) every hostile input
/// the keyed-archive reader's fuzz tests make (``KeyedArchiveFuzz``: each fixture, each truncation of it, seeded byte changes)
/// and the same for native archives, cache entry files and change logs. Runs in a child
/// process (an exit test): a trap or a stack overflow fails the test instead of the runner.
enum InspectionFuzz {
    /// Native-format inputs: archives of a graph with cycles, of models and of data, an entry
    /// file around one, and a change log with two batches.
    static func nativeCorpus() throws -> [(name: String, bytes: [UInt8])] {
        let graph = try Archive.encode(makeUser(1, letters: 3))
        let products = try Archive.encode([Product(id: 1, name: "Tea", price: 3.5)])
        let mixed = try Archive.encode(["a": [1.5, 2.5], "b": [Double.infinity]])
        let data = try Archive.encode(Data(repeating: 9, count: 300))
        var entry = EntryHeader(
            typeName: "productList",
            parameter: "/v1",
            writeDate: Date(timeIntervalSince1970: 1e9),
            expiry: Date(timeIntervalSince1970: 2e9),
            payloadLength: products.count,
            payloadChecksum: CRC32C.checksum(products)
        ).encoded()
        entry += products
        var log = Array("ARVL".utf8) + [2, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        log += withUnsafeBytes(of: CRC32C.checksum(log).littleEndian, Array.init) + [0, 0, 0, 0]
        for batch in [graph, products] {
            log += withUnsafeBytes(of: UInt32(batch.count).littleEndian, Array.init) + batch
        }
        return [
            ("graph archive", [UInt8](graph)), ("products archive", [UInt8](products)),
            ("mixed archive", [UInt8](mixed)), ("data archive", [UInt8](data)), ("entry file", entry),
            ("change log", log),
        ]
    }

    /// Inspects (text and JSON) and converts every input. Exits the process with a failure on
    /// an input that makes inspect report no kind, or convert throw something untyped.
    static func run(seed: UInt64, cases: Int, truncations: Bool, log path: String) {
        guard FileManager.default.createFile(atPath: path, contents: nil), let log = FileHandle(forWritingAtPath: path)
        else {
            fail("could not create the log \(path)")
        }
        let corpus: [(name: String, bytes: [UInt8])]
        do {
            corpus = try KeyedArchiveFuzz.corpus() + nativeCorpus()
        } catch {
            fail("could not build the corpus: \(error)")
        }
        var limits = ArchiveLimits()
        limits.maxObjectCount = 100_000
        if truncations {
            for (name, bytes) in corpus {
                attempt(bytes, "\(name) whole", limits: limits, log: log)
                let step = bytes.count <= 2_048 ? 1 : 7
                for length in stride(from: 0, to: bytes.count, by: step) {
                    attempt(Array(bytes[..<length]), "\(name) truncated to \(length)", limits: limits, log: log)
                }
            }
        }
        var rng = SplitMix64(seed: seed)
        for round in 0..<cases {
            let (name, bytes) = KeyedArchiveFuzz.mutation(of: corpus, using: &rng)
            if round % 1_000 == 0 { log.write(Data("\(name) inspect round \(round) (seed \(seed))\n".utf8)) }
            attempt(bytes, nil, limits: limits, log: log)
        }
    }

    private static func attempt(_ bytes: [UInt8], _ label: String?, limits: ArchiveLimits, log: FileHandle) {
        if let label { log.write(Data((label + "\n").utf8)) }
        let data = Data(bytes)
        let inspection = FileInspector.inspect(bytes: data, path: "input", limits: limits)
        _ = inspection.text
        _ = inspection.json.text()
        if inspection.kind.isEmpty { fail("\(label ?? "a mutation"): no kind") }
        for (format, graph) in Conversion.Format.allCases.map({ ($0, false) }) + [(.json, true)] {
            do {
                _ = try Conversion.convert(data, to: format, graph: graph, limits: limits)
            } catch is ArchiveError {
            } catch is Conversion.Failure {
            } catch {
                fail("\(label ?? "a mutation"): convert to \(format)\(graph ? " --graph" : "") threw \(error)")
            }
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(EXIT_FAILURE)
    }
}
