import Foundation
import Testing

@testable import Archivist

/// The seeds' plist and defaults jobs, end to end on the public API.
@Suite struct StoreSeedScenarioTests {
    /// Seed 000: the focus timer's three plists, with `taskData.plist` shipped as a default,
    /// tasks added, updated, deleted and queried, diligence records per task, and a story that
    /// keeps only the latest value.
    @Test func focusTimerTablesWithBundledDefaults() throws {
        let folder = try ScratchFolder()
        let bundle = folder.url.appendingPathComponent("Bundle")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let shippedAlert = Date(timeIntervalSince1970: 1_500_000_000)
        try PropertyListSerialization.data(
            fromPropertyList: [
                "0": [
                    "id": "0", "name": "Focus", "color": "#FF6666", "diligenceTime": 25,
                    "isRestMode": true, "restTime": 5, "isFocusMode": false, "musicName": "rain",
                    "isMusicEnabled": true, "isAlertEnabled": false, "alertTime": shippedAlert,
                ] as [String: Any]
            ],
            format: .xml,
            options: 0
        ).write(to: bundle.appendingPathComponent("taskData.plist"))
        let store = PlistStore(directory: folder.url.appendingPathComponent("Documents"), format: .binary) { name in
            let url = bundle.appendingPathComponent(name + ".plist")
            return FileManager.default.fileExists(atPath: url.path) ? url : nil
        }

        // First launch: the shipped task is there, and now saved in Documents.
        let tasks = try store.root(of: "taskData")
        #expect(tasks["0"]?["alertTime"] == .date(shippedAlert))
        #expect(try store.value(forKey: "0", in: "taskData", default: [String: PlistValue]())["isRestMode"] == true)

        // Add, update, delete.
        try store.update("taskData") { tasks in
            tasks["1"] = ["id": "1", "name": "Read", "color": "#66FF66", "diligenceTime": 50, "isRestMode": false]
            tasks["2"] = ["id": "2", "name": "Run", "color": "#6666FF", "diligenceTime": 30, "isRestMode": false]
        }
        try store.update("taskData") { tasks in
            guard case .dictionary(var task)? = tasks["1"] else { return }
            task["diligenceTime"] = 45
            tasks["1"] = .dictionary(task)
        }
        try store.removeValue(forKey: "2", in: "taskData")
        let names = try store.root(of: "taskData").values.compactMap { $0["name"]?.stringValue }.sorted()
        #expect(names == ["Focus", "Read"])
        #expect(try store["taskData", "1"]?["diligenceTime"]?.intValue == 45)

        // Diligence records: task id -> records, appended and queried.
        for (index, breaks) in [0, 2, 1].enumerated() {
            let start = Date(timeIntervalSince1970: 1_600_000_000 + Double(index) * 3_600)
            try store.update("diligenceData") { records in
                var list = records["1"]?.arrayValue ?? []
                list.append([
                    "id": "1", "startDate": .date(start), "endDate": .date(start.addingTimeInterval(1_500)),
                    "breakTimes": .int(breaks), "diligenceTime": 25,
                ])
                records["1"] = .array(list)
            }
        }
        let records = try #require(try store.value([PlistValue].self, forKey: "1", in: "diligenceData"))
        #expect(records.count == 3)
        #expect(records.compactMap { $0["breakTimes"]?.intValue }.reduce(0, +) == 3)

        // Today's story keeps only the latest one, image bytes included.
        for day in 1...3 {
            try store.write(
                [
                    "dateToday": .date(Date(timeIntervalSince1970: Double(day) * 86_400)),
                    "title": .string("Day \(day)"),
                    "attribute": "Bing", "para1": "故事", "image": .data(Data(repeating: UInt8(day), count: 4_096)),
                ],
                to: "storyData"
            )
        }
        let story = try store.root(of: "storyData")
        #expect(story["title"] == "Day 3")
        #expect(story["image"]?.dataValue == Data(repeating: 3, count: 4_096))
    }

    /// Seed 001: `PlistManager.defaltManager.set(value: 2, forKey: "id", plistName: "MyPlis")`,
    /// then the root and a field read by subscript, with a nested dictionary kept as such.
    @Test func plistManagerUsage() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url.appendingPathComponent("MyDatas"))
        try store.set(2, forKey: "id", in: "MyPlis")
        let legacy: [String: Any] = ["user": ["name": "Ann", "tags": ["a", "b"]], "count": 3]
        try store.set(try PlistValue(propertyList: legacy), forKey: "data", in: "MyPlis")
        #expect(try store["MyPlis"]["id"] == 2)
        #expect(try store["MyPlis", "data"]?.dictionaryValue?["count"] == 3)
        #expect(try store["MyPlis", "data"]?["user"]?["tags"]?[1] == "b")
        // The seed's JSON-string workaround existed because of NSNull; here it is an error.
        let withNull: [String: Any] = ["user": ["name": NSNull()]]
        let error = #expect(throws: StoreError.self) { try PlistValue(propertyList: withNull) }
        #expect(error?.key == "user.name")
        // And missing things are defaults, not crashes.
        #expect(try store["Nope"].isEmpty)
        #expect(try store.value(forKey: "missing", in: "MyPlis", default: "") == "")
    }

    /// Seed 003: the first-login flag and the plist cache (`saveJSON:` / `loadCache`).
    @Test func fourStoresDemoFlagAndPlistCache() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let preferences = try Preferences(store: store)
        #expect(preferences[PreferenceKey<Bool>("firstLogin", default: false)] == false)
        try preferences.set(true, for: PreferenceKey<Bool>("firstLogin", default: false))
        try preferences.flush()
        #expect(try Preferences(store: store)[PreferenceKey<Bool>("firstLogin", default: false)])

        #expect(try store.root(of: "cache").isEmpty, "loadCache before any save")
        try store.write(["items": [["uid": 1, "title": "a"], ["uid": 2, "title": "b"]]], to: "cache")
        #expect(try store["cache", "items"]?[1]?["title"] == "b")
    }

    @Test(arguments: [PlistStore.Format.xml, .binary])
    func specialDoublesRoundTrip(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        try store.write(
            [
                "nan": .double(.nan), "inf": .double(.infinity), "ninf": .double(-.infinity),
                "tiny": .double(.leastNonzeroMagnitude), "third": .double(1.0 / 3),
            ],
            to: "d"
        )
        let root = try store.root(of: "d")
        #expect(root["nan"]?.doubleValue?.isNaN == true)
        #expect(root["inf"] == .double(.infinity))
        #expect(root["ninf"] == .double(-.infinity))
        #expect(root["tiny"] == .double(.leastNonzeroMagnitude))
        #expect(root["third"] == .double(1.0 / 3), "reals keep every bit, in XML too")
    }
}
