// What README.md's snippets take for granted. Never run: only compiled.
import Archivist
import Foundation

struct Diligence: Codable, Archivable, Identifiable, Sendable {   // as in docs/Guide.md
    var id: Int
    var taskID: String
    var startDate: Date, endDate: Date
    var breakTimes: Int, diligenceTime: Int
}

var products: [Product] { [] }
var documents: URL { URL(fileURLWithPath: NSTemporaryDirectory()) }
var diligence: Diligence { fatalError() }
