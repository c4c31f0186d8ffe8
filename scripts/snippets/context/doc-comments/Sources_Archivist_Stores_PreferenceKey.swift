// What the examples of this Stores file take for granted (scripts/check-snippets.sh); never run.
import Archivist
import Foundation

enum Theme: String, PlistConvertible, Sendable { case light, dark }
enum Keys {
    static let launchCount = PreferenceKey<Int>("launchCount", default: 0)
    static let theme = PreferenceKey<Theme>("theme", default: .light)
}
extension PreferenceKey where Value == Bool {
    static let acceptedTerms = PreferenceKey("acceptedTerms", default: false)
}
extension PreferenceKey where Value == String {
    static let sessionToken = PreferenceKey("sessionToken", default: "")
}

struct Task: Codable, Archivable, Identifiable, Sendable {
    var id: String
    var name: String
    var isAlertEnabled = false
    var alertTime = Date()
    var created = Date()
}
struct Letter: Codable, Archivable, Identifiable, Sendable {
    var id: Int
    var isRead = false
}

var store: PlistStore { fatalError() }
var preferences: Preferences { fatalError() }
var tasks: RecordStore<Task> { fatalError() }
var letters: RecordStore<Letter> { fatalError() }
var documents: URL { URL(fileURLWithPath: "/tmp") }
var libraryPreferences: URL { URL(fileURLWithPath: "/tmp/Preferences") }
var folder: URL { URL(fileURLWithPath: "/tmp") }
var account: String { "alice" }
var value: PlistValue { .string("") }
var task: PlistValue { [:] }
var task1: PlistValue { [:] }
var task2: PlistValue { [:] }
var newTask: Task { Task(id: "t2", name: "Write") }
var oldTask: Task { Task(id: "t1", name: "Read") }
func showOnboarding() {}
func applyTheme() {}
func apply(_ theme: Theme) {}
func reloadSettingsScreen() {}
func reloadList() {}
func showError(_ error: any Error) {}
enum SettingsKeys {}
