import Archivist
import Foundation

/// PlistStore against PropertyListSerialization used directly, on a 1,000-key plist (a settings
/// file at scale) in both formats. The target is a ratio of at least 0.83 (within 1.2×). Then
/// `Preferences.set` against `UserDefaults.set` (``runPreferencesBenchmarks(_:)``).
func runStoreBenchmarks(_ harness: Harness) throws {
    let keyCount = harness.options.quick ? 200 : 1_000
    let root = makeStoreRoot(keys: keyCount)
    let foundationRoot = PlistValue.dictionary(root).propertyListObject
    for (format, foundationFormat) in [
        (PlistStore.Format.xml, PropertyListSerialization.PropertyListFormat.xml), (.binary, .binary),
    ] {
        let suite = "stores.plist.\(format)"
        let folder = harness.scratch.appendingPathComponent(suite, isDirectory: true)
        let store = PlistStore(directory: folder, format: format)
        try store.write(root, to: "big")
        let directURL = folder.appendingPathComponent("direct.plist")
        try PropertyListSerialization.data(fromPropertyList: foundationRoot, format: foundationFormat, options: 0)
            .write(to: directURL, options: .atomic)

        // Each case returns the bytes it read or wrote (the store's: the file's size after).
        let storeFile = try store.fileURL(for: "big")
        try harness.measure(suite, "PropertyListSerialization read") {
            let data = try Data(contentsOf: directURL)
            _ = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
            return data.count
        }
        try harness.measure(suite, "PlistStore read") {
            _ = try store.root(of: "big")
            return nil
        }
        try harness.measure(suite, "PropertyListSerialization write") {
            let data = try PropertyListSerialization.data(
                fromPropertyList: foundationRoot,
                format: foundationFormat,
                options: 0
            )
            try data.write(to: directURL, options: .atomic)
            return data.count
        }
        try harness.measure(suite, "PlistStore write") {
            try store.write(root, to: "big")
            return nil
        }
        var counter = 0
        try harness.measure(suite, "PropertyListSerialization set one key") {
            counter += 1
            var object =
                try PropertyListSerialization.propertyList(from: Data(contentsOf: directURL), format: nil)
                as? [String: Any] ?? [:]
            object["key1"] = counter
            let data = try PropertyListSerialization.data(
                fromPropertyList: object,
                format: foundationFormat,
                options: 0
            )
            try data.write(to: directURL, options: .atomic)
            return data.count
        }
        try harness.measure(suite, "PlistStore set one key") {
            counter += 1
            try store.set(.int(counter), forKey: "key1", in: "big")
            return nil
        }
        print("  (PlistStore's file: \(Harness.formatBytes(try Data(contentsOf: storeFile).count)))")

        // Sanity: every case did its work, so none measured a failure path.
        guard try store.root(of: "big").count == keyCount else {
            throw StoreError(.ioFailed, "\(suite): the store lost keys")
        }
        harness.printTable(suite, title: "PlistStore vs PropertyListSerialization, \(keyCount) keys, \(format)") {
            name in
            name.hasPrefix("PlistStore ")
                ? name.replacingOccurrences(of: "PlistStore", with: "PropertyListSerialization") : nil
        }
    }
    try runPreferencesBenchmarks(harness)
}

/// `Preferences.set` — the default, deferred set, and a durable one — against corelibs'
/// `UserDefaults.set`, one small settings file each, measured round-robin operation by
/// operation (``Harness/measureInterleavedOperations(_:samples:count:perOperation:beforeRound:_:)``)
/// so that load from elsewhere falls on every case alike. Each row is one set.
private func runPreferencesBenchmarks(_ harness: Harness) throws {
    let suite = "stores.preferences"
    let folder = harness.scratch.appendingPathComponent(suite, isDirectory: true)
    let preferences = try Preferences(store: PlistStore(directory: folder, format: .binary), name: "Deferred")
    let durable = try Preferences(store: PlistStore(directory: folder, format: .binary), name: "Durable")
    let domain = "ArchivistBenchmarks.\(ProcessInfo.processInfo.processIdentifier)"
    guard let defaults = UserDefaults(suiteName: domain) else { throw StoreError(.ioFailed, "no UserDefaults suite") }
    defer { defaults.removePersistentDomain(forName: domain) }
    let keys = (0..<20).map { PreferenceKey<Int>("setting\($0)", default: 0) }
    for key in keys {  // twenty settings in each file, as an app's preferences hold
        try preferences.set(0, for: key)
        try durable.set(0, for: key, durability: .fileAndFolder)
        defaults.set(0, forKey: key.name)
    }
    try preferences.flush()
    var failure: (any Error)?
    let count = harness.options.quick ? 50 : 200
    harness.measureInterleavedOperations(
        suite,
        count: count,
        perOperation: true,
        [
            ("UserDefaults.set", { i in defaults.set(i, forKey: keys[i % keys.count].name) }),
            (
                "Preferences.set",
                { i in
                    do { try preferences.set(i, for: keys[i % keys.count]) } catch { failure = error }
                }
            ),
            (
                "Preferences.set durable (.fileAndFolder)",
                { i in
                    do { try durable.set(i, for: keys[i % keys.count], durability: .fileAndFolder) } catch {
                        failure = error
                    }
                }
            ),
        ]
    )
    try preferences.flush()
    if let failure { throw failure }
    print("  (deferred sets: \(preferences.fileWrites) file writes in all)")
    // Sanity: every case did its work.
    guard preferences[keys[(count - 1) % keys.count]] == count - 1,
        try PlistStore(directory: folder)["Durable"]["setting\((count - 1) % keys.count)"] == .int(count - 1),
        defaults.integer(forKey: keys[(count - 1) % keys.count].name) == count - 1
    else { throw StoreError(.ioFailed, "\(suite): a case lost its last set") }
    harness.printTable(suite, title: "Preferences.set vs UserDefaults.set, 20 settings") { name in
        name.hasPrefix("Preferences") ? "UserDefaults.set" : nil
    }
}

/// A mixed root: strings, integers, reals, Booleans, dates and small nested dictionaries.
private func makeStoreRoot(keys: Int) -> [String: PlistValue] {
    var root: [String: PlistValue] = [:]
    for index in 0..<keys {
        let value: PlistValue =
            switch index % 6 {
            case 0: .string("value number \(index)")
            case 1: .int(index)
            case 2: .double(Double(index) / 3)
            case 3: .bool(index.isMultiple(of: 2))
            case 4: .date(Date(timeIntervalSince1970: Double(index)))
            default: ["a": .int(index), "b": "x"]
            }
        root["key\(index)"] = value
    }
    return root
}
