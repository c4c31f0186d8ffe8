// What the examples in the doc comments of Sources/Archivist take for granted. Never run: only
// compiled (scripts/check-snippets.sh). A file's own context (beside this one) replaces a name.
import Archivist
import Foundation

struct Product: Codable, Archivable, Sendable {
    var id: Int
    var name: String
    var price: Decimal?
}

final class User: Archivable, @unchecked Sendable {
    var name = ""
    var letters: [Letter] = []
    init() {}
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(name, forKey: "name") }
    init(from archive: ArchiveDecoder) throws { name = try archive.decode(String.self, forKey: "name") }
}

final class Letter: Archivable, @unchecked Sendable {
    var content = ""
    weak var user: User?
    init() {}
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(content, forKey: "content") }
    init(from archive: ArchiveDecoder) throws { content = try archive.decode(String.self, forKey: "content") }
}

class Animal: Codable, Archivable, @unchecked Sendable {}
final class Dog: Animal, @unchecked Sendable {}
final class Cat: Animal, @unchecked Sendable {}
struct Tree: Codable, Archivable, Sendable { var children: [Tree] }
struct Order: Codable, Archivable, Sendable { var number: String }
struct Strategy: Codable, Archivable, Sendable { var name: String }
struct Story: Codable, Archivable, Sendable { var title: String }
struct Report: Codable, Archivable, Sendable { var lines: [String] }

enum ShopCache: String, CacheType {
    case productList, userOrderList, hots, message, apiStrategy, dailyStory, lastReport
    var location: CacheLocation {
        switch self {
        case .userOrderList: .userCaches
        case .message: .userDocuments
        default: .sharedCaches
        }
    }
}

struct API: Sendable {
    func products() throws -> [Product] { [] }
    func dailyStory() throws -> Story { Story(title: "") }
    func fetchDailyStory() throws -> Story { Story(title: "") }
    func letters() async throws -> [Letter] { [] }
}

final class Label: @unchecked Sendable { var text: String? }
struct Session: Sendable { var userID: String }

var cache: CacheManager<ShopCache> { fatalError() }
var api: API { API() }
nonisolated(unsafe) var products: [Product] = []
var strategy: Strategy { Strategy(name: "") }
var story: Story { Story(title: "") }
var report: Report { Report(lines: []) }
var letters: [Letter] { [] }
var letterGraph: [Letter] { [] }
var user: User { User() }
var data: Data { Data() }
var url: URL { URL(fileURLWithPath: "/tmp/file") }
var stats: CacheStatistics { fatalError() }
var documents: URL { URL(fileURLWithPath: "/tmp") }
var temporaryFolder: URL { URL(fileURLWithPath: "/tmp") }
var tomorrowMidnight: Date { Date() }
var session: Session { Session(userID: "alice") }
let statusLabel = Label()
let sizeLabel = Label()
func showOfflineBanner(_ error: (any Error)? = nil) {}
func refreshHots() {}
func refresh() {}
func reloadFromCache() {}
func runScenario() {}
func log(_ message: Any) {}
func show(_ value: Any?) {}
func render(_ value: Any) {}

// The storage layer's examples (package API).
var store: DiskStore { fatalError() }
var root: URL { URL(fileURLWithPath: "/tmp/root") }
var rootPath: String { "/tmp/root" }
var digest: String { MD5.hexDigest(of: "productList") }
var payload: Data { Data() }
var payloadBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }
var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }
var path: String { "/tmp/root/file" }
var folder: FolderPath { FolderPath(["shared-caches"]) }
var temporary: String { "/tmp/root/.tmp-1" }
var queue: DispatchQueue { DispatchQueue(label: "changes") }
var spares: SpareFolders { fatalError() }
var signal: ChangeSignal { fatalError() }
var observation: ChangeSignal.Observation { fatalError() }
var done: Bool { true }
nonisolated(unsafe) var counter = 0
var a: [UInt8] { [] }
var b: [UInt8] { [] }
func readModifyWrite() throws {}
func replaceTheFile() throws {}
func writeOneKey() throws {}
func moveFolderToTrash() {}
func removeOneBatch() {}

// Types the examples of members extend (`<!-- snippet: member TYPE -->`).
struct Profile {
    var name: String
    var nickname: String?
    var tags: [String]
    var owner: User?
}
enum ThreeCaches { case productList, userOrderList, message }
