// What docs/Guide.md's snippets take for granted. Never run: only compiled.
import Archivist
import Foundation

class Animal: Archivable {
    var name: String
    init(name: String) { self.name = name }
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(name, forKey: "name") }
    required init(from archive: ArchiveDecoder) throws { name = try archive.decode(String.self, forKey: "name") }
    class var archiveTypeName: String { "Animal" }
}

final class Dog: Animal {
    override class var archiveTypeName: String { "Dog" }
}

struct Strategy: Codable, Archivable, Sendable { var retries: Int }
struct Session: Sendable { var userID: String }
struct API: Sendable { func hots() async throws -> [Product] { [] } }
enum Theme: String, PlistConvertible { case light, dark }

@MainActor final class Model {
    func show(_ products: [Product]) {}
    func reload(from diligences: RecordStore<Diligence>) {}
}

var products: [Product] { [] }
var orders: [Order] { [] }
var data: Data { Data() }
var documents: URL { URL(fileURLWithPath: NSTemporaryDirectory()) }
var libraryPreferences: URL { documents }
var session: Session { Session(userID: "alice") }
var api: API { API() }
var strategy: Strategy { Strategy(retries: 3) }
var story: [Product] { [] }
var tomorrowMidnight: Date { Date() }
var record: Diligence { fatalError() }
var downloaded: [Diligence] { [] }
var cache: CacheManager<ShopCache> { fatalError() }
@MainActor var model: Model { Model() }
func showOfflineBanner(_ error: (any Error)?) {}
func showOnboarding() {}
func applyTheme(_ theme: Theme) {}
var diligences: RecordStore<Diligence> { fatalError() }
var store: PlistStore { fatalError() }

#if !canImport(Darwin)
extension FileManager {
    /// Apple platforms' app-group container, so that the snippets using it compile here.
    func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? { nil }
}
#endif
