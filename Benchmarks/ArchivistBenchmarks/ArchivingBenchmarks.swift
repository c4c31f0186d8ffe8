import Archivist
import Foundation

/// Seed workloads through every encoder, one suite each (`--suite archiving` runs all three):
/// (a) 10,000 tasks, (b) 1,000 users × 20 letters with back-references, (c) a story with a
/// 1 MB image. Ratios are to JSONEncoder/JSONDecoder.
func runTaskArchivingBenchmarks(_ harness: Harness) throws {
    let tasks = (0..<(harness.options.quick ? 2_000 : 10_000)).map(HandTask.init)
    try compare(
        harness,
        suite: "archiving.tasks",
        title: "(a) \(tasks.count) tasks",
        hand: tasks,
        codable: tasks.map(CodableTask.init),
        objects: tasks.map(ObjectTask.init) as NSArray,
        objectClasses: [NSArray.self, ObjectTask.self, NSString.self, NSDate.self]
    )
}

func runLetterArchivingBenchmarks(_ harness: Harness) throws {
    let users = (0..<(harness.options.quick ? 200 : 1_000)).map { HandUser($0, letters: 20) }
    try compare(
        harness,
        suite: "archiving.letters",
        title: "(b) \(users.count) users × 20 letters with back-references",
        hand: users,
        codable: users.map(CodableUser.init),
        objects: users.map(ObjectUser.init) as NSArray,
        objectClasses: [NSArray.self, ObjectUser.self, ObjectLetter.self, NSString.self]
    )
    for user in users { user.letters.removeAll() }
}

func runStoryArchivingBenchmarks(_ harness: Harness) throws {
    let story = Story(imageBytes: 1_000_000)
    try compare(
        harness,
        suite: "archiving.story",
        title: "(c) a story with a 1 MB image",
        hand: story,
        codable: story,
        objects: ObjectStory(story),
        objectClasses: [ObjectStory.self, NSString.self, NSDate.self, NSData.self]
    )
}

private func compare<Hand: Archivable, Model: Codable & Archivable>(
    _ harness: Harness,
    suite: String,
    title: String,
    hand: Hand,
    codable: Model,
    objects: NSObject,
    objectClasses: [AnyClass]
) throws {
    let json = try JSONEncoder().encode(codable)
    let handData = try Archive.encode(hand)
    let codableData = try Archive.encode(codable)
    let plist = PropertyListEncoder()
    plist.outputFormat = .binary
    let plistData = try plist.encode(codable)
    // Round-robin, so that a burst of load elsewhere on the machine slows JSON and Archivist
    // alike rather than all samples of one of them.
    harness.measureInterleaved(
        suite,
        [
            ("JSON encode", { try? JSONEncoder().encode(codable).count }),
            (
                "JSON decode",
                {
                    _ = try? JSONDecoder().decode(Model.self, from: json)
                    return json.count
                }
            ),
            ("Archivist hand-written encode", { try? Archive.encode(hand).count }),
            (
                "Archivist hand-written decode",
                {
                    _ = try? Archive.decode(Hand.self, from: handData)
                    return handData.count
                }
            ),
            ("Archivist Codable encode", { try? Archive.encode(codable).count }),
            (
                "Archivist Codable decode",
                {
                    _ = try? Archive.decode(Model.self, from: codableData)
                    return codableData.count
                }
            ),
            ("PropertyList(binary) encode", { try? plist.encode(codable).count }),
            (
                "PropertyList(binary) decode",
                {
                    _ = try? PropertyListDecoder().decode(Model.self, from: plistData)
                    return plistData.count
                }
            ),
        ]
    )

    let keyed = try NSKeyedArchiver.archivedData(withRootObject: objects, requiringSecureCoding: true)
    // One cold sample: Foundation's archiver is slower than the others by so large a factor
    // that one sample settles its ratio, and more would take most of the run.
    harness.measure(suite, "NSKeyedArchiver encode", samples: 1, warmUp: false) {
        try? NSKeyedArchiver.archivedData(withRootObject: objects, requiringSecureCoding: true).count
    }
    harness.measure(suite, "NSKeyedUnarchiver decode", samples: 1, warmUp: false) {
        _ = try? NSKeyedUnarchiver.unarchivedObject(ofClasses: objectClasses, from: keyed)
        return keyed.count
    }
    // Sanity: the decoded values are real, so no case measured a failure path.
    guard (try? Archive.decode(Hand.self, from: handData)) != nil,
        (try? Archive.decode(Model.self, from: codableData)) != nil
    else { throw ArchiveError(.invalidValue, "\(suite): round trip failed") }
    harness.printTable(suite, title: title) { $0.hasSuffix("encode") ? "JSON encode" : "JSON decode" }
}

/// (d) One model per archive, the shape of a cache entry: 1,000 tasks, each encoded into (and
/// decoded from) an archive of its own, so the fixed cost of an archive counts once per model.
/// Encoders and decoders are made once and reused where the API allows it. Times are for all
/// 1,000; bytes are one archive's average.
func runSingleModelArchivingBenchmarks(_ harness: Harness) throws {
    let hand = (0..<1_000).map(HandTask.init)
    let codable = hand.map(CodableTask.init)
    let jsonEncoder = JSONEncoder()
    let jsonDecoder = JSONDecoder()
    let plistEncoder = PropertyListEncoder()
    plistEncoder.outputFormat = .binary
    let plistDecoder = PropertyListDecoder()
    let json = try codable.map { try jsonEncoder.encode($0) }
    let handData = try hand.map { try Archive.encode($0) }
    let codableData = try codable.map { try Archive.encode($0) }
    let plist = try codable.map { try plistEncoder.encode($0) }
    func average(_ archives: [Data]) -> Int { archives.reduce(0) { $0 + $1.count } / archives.count }

    let suite = "archiving.single"
    harness.measureInterleaved(
        suite,
        [
            ("JSON encode", { (try? codable.map { try jsonEncoder.encode($0) }).map(average) }),
            (
                "JSON decode",
                {
                    for data in json { _ = try? jsonDecoder.decode(CodableTask.self, from: data) }
                    return average(json)
                }
            ),
            ("Archivist hand-written encode", { (try? hand.map { try Archive.encode($0) }).map(average) }),
            (
                "Archivist hand-written decode",
                {
                    for data in handData { _ = try? Archive.decode(HandTask.self, from: data) }
                    return average(handData)
                }
            ),
            ("Archivist Codable encode", { (try? codable.map { try Archive.encode($0) }).map(average) }),
            (
                "Archivist Codable decode",
                {
                    for data in codableData { _ = try? Archive.decode(CodableTask.self, from: data) }
                    return average(codableData)
                }
            ),
            ("PropertyList(binary) encode", { (try? codable.map { try plistEncoder.encode($0) }).map(average) }),
            (
                "PropertyList(binary) decode",
                {
                    for data in plist { _ = try? plistDecoder.decode(CodableTask.self, from: data) }
                    return average(plist)
                }
            ),
        ]
    )
    guard (try? Archive.decode(HandTask.self, from: handData[0])) != nil,
        (try? Archive.decode(CodableTask.self, from: codableData[0])) != nil
    else { throw ArchiveError(.invalidValue, "\(suite): round trip failed") }
    harness.printTable(suite, title: "(d) 1000 tasks, one archive each (bytes: one archive)") {
        $0.hasSuffix("encode") ? "JSON encode" : "JSON decode"
    }
}
