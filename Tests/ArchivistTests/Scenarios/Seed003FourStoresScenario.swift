import Archivist
import Foundation
import Testing

/// Seed 003: the four-store demo — file helpers, a user-defaults flag, a keyed model archive
/// and an SQLite record cache (batch save in a transaction, latest N, update one) behind a
/// serial queue with re-entrant sync — done with Archivist, from many threads at once.
/// Public API only.
@Suite struct Seed003FourStoresScenario {
    enum DemoCache: String, CacheType {
        case person, download
        var location: CacheLocation { self == .person ? .userDocuments : .sharedCaches }
    }

    /// The NSKeyedArchiver model of the demo, written by hand.
    struct Person: Archivable, Sendable, Equatable {
        var name: String
        var age: Int
        var avatar: Data
        init(name: String, age: Int, avatar: Data) {
            self.name = name
            self.age = age
            self.avatar = avatar
        }
        func encode(to archive: ArchiveEncoder) throws {
            try archive.encode(name, forKey: "name")
            try archive.encode(age, forKey: "age")
            try archive.encode(avatar, forKey: "avatar")
        }
        init(from archive: ArchiveDecoder) throws {
            name = try archive.decode(String.self, forKey: "name")
            age = try archive.decode(Int.self, forKey: "age")
            avatar = try archive.decode(Data.self, forKey: "avatar")
        }
    }

    /// A row of the demo's SQLite table.
    struct Item: Codable, Archivable, Identifiable, Sendable, Equatable {
        var id: Int  // uid
        var title: String
        var date: Date
    }

    @Test func fourStoresFromManyThreads() async throws {
        try await withTemporaryDirectory { folder in
            let cache = try CacheManager<DemoCache>(root: CacheRoot(directory: folder), user: "demo")
            let preferences = try Preferences(store: PlistStore(directory: folder.appendingPathComponent("prefs")))
            let firstLogin = PreferenceKey<Bool>("firstLogin", default: false)
            let items = try RecordStore<Item>(directory: folder.appendingPathComponent("items"))

            // 1. File helpers: exists, size, delete.
            #expect(!cache.contains(.download))
            try await cache.store(Data(repeating: 7, count: 10_000), for: .download)
            #expect(cache.contains(.download))
            #expect(try await cache.info(for: .download)?.size ?? 0 >= 10_000)
            #expect(cache.size(of: .download) >= 10_000)
            #expect(try await cache.removeValue(for: .download))
            #expect(!cache.contains(.download))

            // 2. The flag.
            #expect(preferences[firstLogin] == false)
            try preferences.set(true, for: firstLogin)

            // 3. The model archive.
            let person = Person(name: "李雷", age: 30, avatar: Data(repeating: 1, count: 256))
            try await cache.store(person, for: .person)
            #expect(try await cache.value(Person.self, for: .person) == person)

            // 4. The record cache: batch save in one transaction, latest N, update one.
            let start = Date(timeIntervalSinceReferenceDate: 0)
            try items.upsert(
                contentsOf: (1...100).map {
                    Item(id: $0, title: "item \($0)", date: start.addingTimeInterval(Double($0)))
                }
            )
            #expect(items.latest(5).map(\.id) == [100, 99, 98, 97, 96])
            try items.update(id: 50) { $0.title = "updated" }
            #expect(items.latest(1).first?.title == "updated")

            // All four from 8 threads at once, re-entrantly: a completion uses the stores again.
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for i in 0..<25 {
                            let id = 1_000 + worker * 100 + i
                            try? items.upsert(
                                Item(id: id, title: "w\(worker)", date: start.addingTimeInterval(Double(id)))
                            )
                            _ = items.latest(3)
                            try? preferences.set(i, for: PreferenceKey<Int>("worker\(worker)", default: 0))
                            try? await cache.store(Person(name: "w\(worker)", age: i, avatar: Data()), for: .person)
                            _ = try? await cache.value(Person.self, for: .person)
                            _ = cache.totalSize
                        }
                        await withCheckedContinuation { continuation in
                            items.save(RecordBatch(upserting: [Item(id: 9_000 + worker, title: "bg", date: start)])) {
                                _ in
                                // Re-entrant: the completion writes and reads the same store.
                                _ = try? items.update(id: 9_000 + worker) { $0.title = "bg-done" }
                                continuation.resume()
                            }
                        }
                    }
                }
            }
            #expect(items.count == 100 + 8 * 25 + 8)
            #expect(items.records(where: { $0.title == "bg-done" }).count == 8)
            for worker in 0..<8 { #expect(preferences[PreferenceKey<Int>("worker\(worker)", default: 0)] == 24) }
            #expect(try await cache.value(Person.self, for: .person)?.age == 24)
            try await preferences.flush()  // sets reach the file in the background
            #expect(try Preferences(store: PlistStore(directory: folder.appendingPathComponent("prefs")))[firstLogin])
        }
    }
}
