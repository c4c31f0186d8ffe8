import Foundation
import Testing

@testable import Archivist

/// The privacy manifest `Archivist` ships as a resource (`PrivacyInfo.xcprivacy`): App Store
/// Connect reads it from the app's bundle and rejects an app whose code calls a Required-Reason
/// API that no manifest declares. docs/Platforms.md says why each category and reason applies.
struct PrivacyManifestTests {
    /// The manifest as the resource bundle holds it, parsed as a property list.
    static func manifest() throws -> [String: Any] {
        let url = try #require(
            Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"),
            "PrivacyInfo.xcprivacy is not a resource of Archivist"
        )
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil)
        return try #require(plist as? [String: Any])
    }

    @Test func declaresNoTrackingAndNoCollectedData() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        #expect((manifest["NSPrivacyCollectedDataTypes"] as? [Any])?.isEmpty == true)
    }

    /// `stat`, `fstat`, `lstat` and `fstatat` read the modification times of the files the
    /// library keeps in the folders the app gives it: the file-timestamp category, reason C617.1.
    @Test func declaresFileTimestampsWithTheContainerReason() throws {
        let types = try #require(try Self.manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var reasons: [String: [String]] = [:]
        for entry in types {
            let category = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            reasons[category] = try #require(entry["NSPrivacyAccessedAPITypeReasons"] as? [String])
        }
        #expect(reasons == ["NSPrivacyAccessedAPICategoryFileTimestamp": ["C617.1"]])
    }
}
