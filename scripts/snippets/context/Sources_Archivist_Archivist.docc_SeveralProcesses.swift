// What SeveralProcesses.md's snippets take for granted. Never run: only compiled.
import Archivist
import Foundation

enum ShopCache: String, CacheType {   // as in Caching
    case productList, userOrderList, hots, message, apiStrategy
    var location: CacheLocation { .sharedCaches }
}

struct Diligence: Codable, Archivable, Identifiable, Sendable {   // as in the Guide
    var id: Int
    var taskID: String
    var startDate: Date, endDate: Date
    var breakTimes: Int, diligenceTime: Int
}

var cache: CacheManager<ShopCache> { fatalError() }
var diligences: RecordStore<Diligence> { fatalError() }
func reloadProducts() {}
func reloadDiligences() {}

#if !canImport(Darwin)
extension FileManager {
    /// Apple platforms' app-group container, so that the snippets using it compile here.
    func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? { nil }
}
#endif
