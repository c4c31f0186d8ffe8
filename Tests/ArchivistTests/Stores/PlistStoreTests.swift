import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct PlistStoreTests {
    static let formats: [PlistStore.Format] = [.xml, .binary]

    // MARK: Round trips

    @Test(arguments: formats)
    func everyKindRoundTrips(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        let wholeSecond = Date(timeIntervalSince1970: 1_700_000_000)
        let values: [String: PlistValue] = [
            "string": "héllo", "int": .int(.min), "big": .int(.max), "double": -0.125, "bool": false,
            "date": .date(wholeSecond), "data": .data(Data((0...255).map { UInt8($0) })), "empty": [],
            "array": [1, "two", 3.5, [true]], "dictionary": ["nested": ["deeper": ["x": 1]]],
            "emptyDictionary": [:],
        ]
        for (key, value) in values { try store.set(value, forKey: key, in: "kinds") }
        #expect(try store.root(of: "kinds") == values)
        #expect(try store.value(forKey: "array", in: "kinds") == [1, "two", 3.5, [true]])
    }

    @Test func binaryKeepsFullDatePrecisionAndXMLWholeSeconds() throws {
        let folder = try ScratchFolder()
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let binary = PlistStore(directory: folder.url.appendingPathComponent("b"), format: .binary)
        let xml = PlistStore(directory: folder.url.appendingPathComponent("x"), format: .xml)
        try binary.set(date, forKey: "at", in: "dates")
        try xml.set(date, forKey: "at", in: "dates")
        #expect(try binary.value(Date.self, forKey: "at", in: "dates") == date)
        #expect(try xml.value(Date.self, forKey: "at", in: "dates") == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test(arguments: formats)
    func storeWritesItsFormatAndReadsEither(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        try store.set(1, forKey: "a", in: "p")
        let bytes = try Data(contentsOf: try store.fileURL(for: "p"))
        #expect(bytes.starts(with: Array((format == .xml ? "<?xml" : "bplist00").utf8)))
        let other = PlistStore(directory: folder.url, format: format == .xml ? .binary : .xml)
        #expect(try other["p", "a"] == 1)
    }

    @Test func setMergesIntoTheFileAndNestedDictionariesStayDictionaries() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try store.set(2, forKey: "id", in: "MyPlist")
        try store.set(["user": ["name": "小明", "age": 7], "list": [["a": 1]]], forKey: "data", in: "MyPlist")
        try store.set("x", forKey: "other", in: "MyPlist")
        #expect(try store["MyPlist"].keys.sorted() == ["data", "id", "other"])
        #expect(try store["MyPlist", "data"]?["user"]?["name"] == "小明")
        // On disk it is a real nested <dict>, not the seed's JSON string.
        let raw =
            try PropertyListSerialization.propertyList(
                from: Data(contentsOf: try store.fileURL(for: "MyPlist")),
                format: nil
            ) as? [String: Any]
        let data = raw?["data"] as? [String: Any]
        #expect((data?["user"] as? [String: Any])?["age"] as? Int == 7)
    }

    @Test func writeReplacesTheRootAndRemoveValueDropsOneKey() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try store.write(["a": 1, "b": 2, "c": 3], to: "p")
        #expect(try store.removeValue(forKey: "b", in: "p") == 2)
        #expect(try store.removeValue(forKey: "b", in: "p") == nil)
        #expect(try store["p"] == ["a": 1, "c": 3])
        try store.write(["z": 0], to: "p")
        #expect(try store["p"] == ["z": 0])
    }

    @Test func updateReturnsItsResultAndWritesOnlyWhenChanged() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let count = try store.update("tasks") { tasks in tasks.count }
        #expect(count == 0)
        #expect(!FileManager.default.fileExists(atPath: try store.fileURL(for: "tasks").path))
        try store.update("tasks") { $0["t1"] = ["name": "Read"] }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.update("tasks") { tasks in
                tasks["t2"] = 1
                throw Abort()
            }
        }
        #expect(try store["tasks"].keys.sorted() == ["t1"])
    }

    // MARK: Typed access

    @Test func typedReadsReturnTheDefaultOnlyWhenMissing() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try store.set(["n": 3, "real": 2.0, "tags": ["a", "b"]], forKey: "task", in: "t")
        #expect(try store.value(forKey: "missing", in: "t", default: 25) == 25)
        #expect(try store.value(forKey: "missing", in: "never-written", default: "x") == "x")
        #expect(try store.value(Int.self, forKey: "missing", in: "t") == nil)
        #expect(try store.value(forKey: "task", in: "t", default: [String: PlistValue]())["n"] == 3)
        try store.set(2.0, forKey: "whole", in: "t")
        #expect(try store.value(forKey: "whole", in: "t", default: 0) == 2, "an exact real reads as an Int")
        try store.set(["a", "b"], forKey: "tags", in: "t")
        #expect(try store.value([String].self, forKey: "tags", in: "t") == ["a", "b"])
    }

    @Test(arguments: [
        (PlistValue.string("true"), "Bool"),
        (PlistValue.int(1), "Bool"),
        (PlistValue.string("12"), "Int"),
        (PlistValue.double(2.5), "Int"),
        (PlistValue.bool(true), "Int"),
        (PlistValue.array([1, "x"]), "[String]"),
        (PlistValue.dictionary(["a": 1]), "Data"),
        (PlistValue.data(Data([1])), "Date"),
        (PlistValue.date(.distantFuture), "String"),
    ])
    func wrongTypesThrowTypeMismatchNamingKeyAndFile(stored: PlistValue, wanted: String) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try store.set(stored, forKey: "field", in: "p")
        let error = #expect(throws: StoreError.self) {
            switch wanted {
            case "Bool": _ = try store.value(forKey: "field", in: "p", default: false)
            case "Int": _ = try store.value(forKey: "field", in: "p", default: 0)
            case "[String]": _ = try store.value([String].self, forKey: "field", in: "p")
            case "Data": _ = try store.value(Data.self, forKey: "field", in: "p")
            case "Date": _ = try store.value(Date.self, forKey: "field", in: "p")
            default: _ = try store.value(String.self, forKey: "field", in: "p")
            }
        }
        #expect(error?.code == .typeMismatch)
        #expect(error?.key == "field")
        #expect(error?.fileURL == (try store.fileURL(for: "p")))
        #expect(error?.message.contains(stored.kindName) == true)
    }

    // MARK: Names and keys

    @Test(arguments: [PlistStore.Format.xml, .binary])
    func unicodeNamesKeysAndValuesRoundTrip(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        let keys = ["名字", "émoji 🎉", "", " spaces ", "<xml&amp;>", "\u{1F1EF}\u{1F1F5}", "e\u{301}"]
        for (index, key) in keys.enumerated() { try store.set(.string(key + "→\(index)"), forKey: key, in: "任务数据") }
        let root = try store["任务数据.plist"]
        #expect(root.count == keys.count)
        for (index, key) in keys.enumerated() { #expect(root[key] == .string(key + "→\(index)"), "key \(key)") }
        #expect(try store.fileURL(for: "任务数据").lastPathComponent == "任务数据.plist")
    }

    @Test(arguments: [
        "", ".plist", "../escape", "a/b", "..", ".hidden", "nul\0byte", "back\\slash",
        String(repeating: "x", count: 201),
    ])
    func namesThatAreNotPlainFileNamesAreRejected(name: String) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let error = #expect(throws: StoreError.self) { try store.set(1, forKey: "k", in: name) }
        #expect(error?.code == .invalidName)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    // MARK: First launch

    @Test func missingFileWithoutDefaultReadsEmptyAndIsNotCreated() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url.appendingPathComponent("not-yet"))
        #expect(try store["taskData"].isEmpty)
        #expect(try store["taskData", "anything"] == nil)
        #expect(!FileManager.default.fileExists(atPath: try store.fileURL(for: "taskData").path))
    }

    @Test func firstReadSeedsFromTheDefaultAndSavesIt() throws {
        let folder = try ScratchFolder()
        let bundle = folder.url.appendingPathComponent("Bundle")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let defaultURL = bundle.appendingPathComponent("taskData.plist")
        try PropertyListSerialization.data(
            fromPropertyList: ["t0": ["name": "Focus", "diligenceTime": 25, "isRestMode": true]],
            format: .xml,
            options: 0
        ).write(to: defaultURL)
        let asked = Locked<[String]>([])
        let store = PlistStore(directory: folder.url.appendingPathComponent("Documents"), format: .binary) { name in
            asked.withLock { $0.append(name) }
            return name == "taskData" ? defaultURL : nil
        }
        #expect(try store["taskData.plist", "t0"]?["diligenceTime"] == 25)
        #expect(asked.withLock { $0 } == ["taskData"])
        // Saved in the store's own format, and the default is no longer consulted.
        let saved = try Data(contentsOf: try store.fileURL(for: "taskData"))
        #expect(saved.starts(with: Array("bplist00".utf8)))
        try FileManager.default.removeItem(at: defaultURL)
        try store.set(["name": "Write"], forKey: "t1", in: "taskData")
        #expect(try store["taskData"].keys.sorted() == ["t0", "t1"])
        #expect(try store["storyData"].isEmpty)
    }

    @Test func firstWriteMergesIntoTheDefault() throws {
        let folder = try ScratchFolder()
        let defaultURL = try folder.writePlist(["shipped": 1], named: "default.plist")
        let store = PlistStore(directory: folder.url.appendingPathComponent("Docs")) { _ in defaultURL }
        try store.set(2, forKey: "mine", in: "settings")
        #expect(try store["settings"] == ["shipped": 1, "mine": 2])
    }

    @Test func corruptOrMissingDefaultIsReported() throws {
        let folder = try ScratchFolder()
        let corrupt = folder.file("corrupt.plist")
        try Data("not a plist <<<".utf8).write(to: corrupt)
        let missing = folder.file("missing.plist")
        let store = PlistStore(directory: folder.url.appendingPathComponent("Docs")) { $0 == "a" ? corrupt : missing }
        let first = #expect(throws: StoreError.self) { try store.root(of: "a") }
        #expect(first?.code == .corrupt)
        #expect(first?.fileURL == corrupt)
        let second = #expect(throws: StoreError.self) { try store.root(of: "b") }
        #expect(second?.code == .ioFailed)
        #expect(second?.fileURL == missing)
    }

    // MARK: Damage

    static let corruptContents: [(String, Data)] = [
        ("garbage", Data("this is <not> a plist {".utf8)),
        ("empty", Data()),
        ("truncated binary", Data("bplist00".utf8) + Data([0xD1, 0x01, 0x02])),
        ("truncated xml", Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key>".utf8)),
        ("array root", Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><array/></plist>".utf8)),
        ("string root", Data("hello".utf8)),
        ("random bytes", Data((0..<512).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 97 &+ 13) })),
    ]

    @Test(arguments: corruptContents)
    func corruptFileThrowsAndIsLeftUntouched(label: String, contents: Data) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let url = try store.fileURL(for: "damaged")
        try contents.write(to: url)
        let read = #expect(throws: StoreError.self, "\(label)") { try store["damaged"] }
        #expect(read?.code == .corrupt, "\(label): \(String(describing: read))")
        #expect(read?.fileURL == url)
        let write = #expect(throws: StoreError.self, "\(label)") { try store.set(1, forKey: "k", in: "damaged") }
        #expect(write?.code == .corrupt)
        #expect(try Data(contentsOf: url) == contents, "a failed merge must not overwrite the file")
        try store.removeFile(named: "damaged")
        try store.set(1, forKey: "k", in: "damaged")
        #expect(try store["damaged"] == ["k": 1])
    }

    @Test func integerBeyondIntInAFileIsReportedWithItsPath() throws {
        let folder = try ScratchFolder()
        try folder.writePlist(["outer": ["big": UInt64.max]], named: "huge.plist")
        let store = PlistStore(directory: folder.url)
        let error = #expect(throws: StoreError.self) { try store["huge"] }
        #expect(error?.code == .notRepresentable)
        #expect(error?.key == "outer.big")
    }

    @Test func folderThatIsAFileFailsWithIOError() throws {
        let folder = try ScratchFolder()
        try Data([1]).write(to: folder.file("occupied"))
        let store = PlistStore(directory: folder.file("occupied"))
        let error = #expect(throws: StoreError.self) { try store.set(1, forKey: "k", in: "p") }
        #expect(error?.code == .ioFailed)
        // In the store's words: the POSIX error behind it, no internal layer's type.
        #expect((error?.underlyingError as? POSIXError)?.code == .ENOTDIR, "\(String(describing: error))")
        let text = error.map { "\($0)" } ?? ""
        #expect(!text.contains("StorageError") && text.contains(String(cString: strerror(ENOTDIR))), "\(text)")
    }

    @Test(.enabled(if: geteuid() != 0, "root ignores file permissions"))
    func readOnlyFolderFailsWithPermissionDenied() throws {
        let folder = try ScratchFolder()
        let locked = folder.file("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: locked.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locked.path) }
        let error = #expect(throws: StoreError.self) { try PlistStore(directory: locked).set(1, forKey: "k", in: "p") }
        #expect(error?.code == .permissionDenied)
    }

    // MARK: Files

    @Test func writesLeaveNoTemporariesAndUsePrivateModes() throws {
        let folder = try ScratchFolder()
        let directory = folder.url.appendingPathComponent("Plists")
        let store = PlistStore(directory: directory)
        for index in 0..<5 { try store.set(.int(index), forKey: "k\(index)", in: "p") }
        // The plist, and the empty lock file every process writing it locks.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [".lock.p", "p.plist"])
        let fileMode =
            try FileManager.default.attributesOfItem(atPath: try store.fileURL(for: "p").path)[.posixPermissions]
            as? Int
        let lockMode =
            try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(".lock.p").path)[
                .posixPermissions
            ] as? Int
        #expect(lockMode == 0o600)
        let folderMode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(folderMode == 0o700)
    }

    @Test func openingSweepsStaleTemporariesOnly() throws {
        let folder = try ScratchFolder()
        let stale = folder.file(".tmp-00000000000000aa")
        let fresh = folder.file(".tmp-00000000000000bb")
        let unrelated = folder.file(".keep-me")
        for url in [stale, fresh, unrelated] { try Data([0]).write(to: url) }
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-3_600)],
            ofItemAtPath: stale.path
        )
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-3_600)],
            ofItemAtPath: unrelated.path
        )
        _ = PlistStore(directory: folder.url)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(FileManager.default.fileExists(atPath: fresh.path))
        #expect(FileManager.default.fileExists(atPath: unrelated.path))
    }

    // MARK: Concurrency

    @Test func concurrentWritersOfOneFileAllLand() async throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: .binary)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<20 {
                        try store.set(.int(writer * 100 + index), forKey: "w\(writer)-\(index)", in: "shared")
                        try store.set(.int(index), forKey: "own", in: "private-\(writer)")
                        _ = try store["shared"]
                    }
                }
            }
            try await group.waitForAll()
        }
        let shared = try PlistStore(directory: folder.url)["shared"]
        #expect(shared.count == 160)
        for writer in 0..<8 {
            #expect(shared["w\(writer)-19"] == .int(writer * 100 + 19))
            #expect(try store["private-\(writer)", "own"] == 19)
        }
    }

    @Test func storesOnTheSameFolderShareTheFileLock() async throws {
        let folder = try ScratchFolder()
        let stores = (0..<4).map { _ in PlistStore(directory: folder.url, format: .binary) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    for key in 0..<25 { try store.set(.int(key), forKey: "s\(index)-\(key)", in: "shared") }
                }
            }
            try await group.waitForAll()
        }
        #expect(try stores[0]["shared"].count == 100)
    }

    @Test func concurrentFirstReadsSeedOnceWithoutLosingAWrite() async throws {
        let folder = try ScratchFolder()
        let defaultURL = try folder.writePlist(["seeded": true], named: "default.plist")
        let store = PlistStore(directory: folder.url.appendingPathComponent("Docs")) { _ in defaultURL }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    if worker.isMultiple(of: 2) {
                        try store.set(.int(worker), forKey: "w\(worker)", in: "p")
                    } else {
                        #expect(try store["p", "seeded"] == true)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store["p"] == ["seeded": true, "w0": 0, "w2": 2, "w4": 4, "w6": 6])
    }
}
