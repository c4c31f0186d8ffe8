import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A record for the fault sweeps.
struct FaultRecord: Codable, Archivable, Identifiable, Sendable, Equatable {
    var id: Int
    var text: String
}

/// Every RecordStore operation under every single injected fault (as ``CacheFaultTests``):
/// the call throws a `StoreError` whose code matches the errno or succeeds; the records in
/// memory are the old ones or the new ones; the store stays usable, and what it holds in
/// memory — including a batch saved after the fault — is exactly what a reopening reads; no
/// temporary or descriptor is left behind.
@Suite struct RecordStoreFaultTests {
    enum Scenario: String, CaseIterable, CustomTestStringConvertible {
        case save, saveThatCompacts, compact, removeAll, openWithTornTail, openEmptyFolder

        var testDescription: String { rawValue }
    }

    static let initial = (1...5).map { FaultRecord(id: $0, text: "old \($0)") }

    @Test(arguments: Scenario.allCases)
    func everyFaultLeavesTheStoreConsistent(scenario: Scenario) throws {
        var faults = 0
        var runs = 0
        try withTemporaryDirectory { folder in
            for template in FaultInjector.plans(n: 1) {
                faults += try FaultInjector.sweep({ n in
                    var plan = template
                    plan.n = n
                    return plan
                }) { plan in
                    runs += 1
                    let dir = folder.appendingPathComponent("run-\(runs)")
                    defer { try? FileManager.default.removeItem(at: dir) }
                    return try Self.run(scenario, plan, in: dir)
                }
            }
        }
        print("RecordStoreFaultTests.\(scenario.rawValue): \(faults) faults injected in \(runs) runs")
        #expect(faults > 0)
    }

    static func describe(_ records: [FaultRecord]) -> [String] { records.map { "\($0.id):\($0.text)" } }

    static func run(_ scenario: Scenario, _ plan: FaultInjector.Plan, in dir: URL) throws -> Int {
        let injector = FaultInjector()
        let configuration = RecordStore<FaultRecord>.Configuration(
            durability: .file,
            compactionThreshold: scenario == .saveThatCompacts ? 0 : 1 << 20
        )
        func open(_ fileSystem: FileSystem) throws -> RecordStore<FaultRecord> {
            try RecordStore<FaultRecord>(directory: dir, configuration: configuration, fileSystem: fileSystem)
        }
        let context = "\(scenario.rawValue), \(plan)"
        var store: RecordStore<FaultRecord>?
        var before: [String] = []
        if scenario != .openEmptyFolder {
            let setup = try open(injector.fileSystem)
            try setup.upsert(contentsOf: initial)
            try setup.compact()
            try setup.upsert(FaultRecord(id: 6, text: "logged 6"))
            before = describe(setup.all())
            if scenario == .openWithTornTail {
                // What a crash mid-append leaves: a length prefix with half its entry.
                let log = FileHandle(forWritingAtPath: dir.path + "/records.log")
                log?.seekToEndOfFile()
                log?.write(Data([200, 0, 0, 0, 1, 2, 3]))
                try log?.close()
            } else {
                store = setup
            }
        }
        var after = before
        var batch = RecordBatch<FaultRecord>(upserting: [
            FaultRecord(id: 2, text: "new 2"), FaultRecord(id: 7, text: "new 7"),
        ])
        batch.delete(id: 1)

        injector.arm(plan)
        var thrown: (any Error)?
        do {
            switch scenario {
            case .save, .saveThatCompacts:
                after = describe(
                    initial.filter { $0.id > 2 } + [
                        FaultRecord(id: 6, text: "logged 6"),
                        FaultRecord(id: 2, text: "new 2"), FaultRecord(id: 7, text: "new 7"),
                    ]
                )
                try store?.save(batch)
            case .compact:
                try store?.compact()
            case .removeAll:
                after = []
                try store?.removeAll()
            case .openWithTornTail, .openEmptyFolder:
                store = try open(injector.fileSystem)
            }
        } catch {
            thrown = error
        }
        let injected = injector.disarm()

        var failures: [String] = []
        // Only a failed folder sync after a snapshot's rename leaves the new state, and says so.
        let inPlace = thrown.map { "\($0)".contains("in place") } ?? false
        if let thrown {
            if let error = thrown as? StoreError {
                if error.code != storeCode(for: plan.errno) {
                    failures.append("threw \(error.code), expected \(storeCode(for: plan.errno)): \(error)")
                }
            } else {
                failures.append("threw a \(type(of: thrown)), not a StoreError: \(thrown)")
            }
            if injected == 0 { failures.append("threw without an injected fault: \(thrown)") }
        }
        if let live = store {
            let now = describe(live.all())
            let expected = thrown == nil || inPlace ? after : before
            if now != expected { failures.append("holds \(now), expected \(expected)") }
            // The store must stay usable, and everything it says it holds must survive.
            do {
                try live.upsert(FaultRecord(id: 100, text: "after the fault"))
            } catch {
                failures.append("a save after the fault threw \(error)")
            }
        }
        let inMemory = store.map { describe($0.all()) }
        store = nil
        do {
            let reopened = try open(.posix)
            let onDisk = describe(reopened.all())
            if let inMemory, onDisk != inMemory {
                failures.append("reopened with \(onDisk), but held \(inMemory) in memory")
            }
            if inMemory == nil && onDisk != before { failures.append("reopened with \(onDisk), expected \(before)") }
        } catch {
            failures.append("reopening threw \(error)")
        }
        let leftovers = temporaries(under: dir)
        if !leftovers.isEmpty { failures.append("temporaries left: \(leftovers)") }
        if !injector.openDescriptors.isEmpty { failures.append("descriptors leaked: \(injector.openDescriptors)") }
        let open = openDescriptors(under: dir)
        if !open.isEmpty { failures.append("open descriptors under the folder: \(open)") }
        for failure in failures { Issue.record("\(context): \(failure)") }
        return injected
    }
}
