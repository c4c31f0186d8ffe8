import Foundation

/// The two folders a ``CacheManager`` works in: one for caches, one for documents.
///
/// ```swift
/// let root = CacheRoot.defaultLocation(for: "Shop")        // platform folders
/// let test = CacheRoot(directory: temporaryFolder)          // both in one folder
/// ```
public struct CacheRoot: Sendable, Hashable {
    /// Where ``CacheLocation/sharedCaches`` and ``CacheLocation/userCaches`` live.
    public var caches: URL
    /// Where ``CacheLocation/userDocuments`` lives.
    public var documents: URL

    /// Explicit folders for caches and documents; they may be the same folder.
    public init(caches: URL, documents: URL) {
        self.caches = caches
        self.documents = documents
    }

    /// Caches and documents in one folder (locations keep them apart inside it).
    public init(directory: URL) {
        self.init(caches: directory, documents: directory)
    }

    /// The platform's folders for an app named `appName`.
    ///
    /// On Linux (the XDG rule): `$XDG_CACHE_HOME/<appName>`, else `$HOME/.cache/<appName>`, and
    /// `$XDG_DATA_HOME/<appName>`, else `$HOME/.local/share/<appName>`; relative values are
    /// ignored, and without an absolute `$HOME` the password database's home is used. On
    /// Apple platforms: `Caches/<appName>` and `Application Support/<appName>` of the user
    /// domain — except on tvOS, which gives apps no durable local storage beyond a small
    /// allowance: there both are `Caches/<appName>`, which the system may purge when the app is
    /// not running, so keep on tvOS only what can be fetched again (docs/Platforms.md).
    ///
    /// `appName` is a programmer's constant used as a folder name as is; an empty name, or one
    /// containing `/` or NUL, or `.` or `..`, is a programming error and traps.
    ///
    /// - Complexity: O(1); no file I/O (folders are created on first use).
    public static func defaultLocation(for appName: String) -> CacheRoot {
        precondition(
            !appName.isEmpty && appName != "." && appName != ".."
                && !appName.contains("/") && !appName.contains("\0"),
            "CacheRoot.defaultLocation(for:) needs a plain folder name"
        )
        #if canImport(Darwin)
        let manager = FileManager.default
        let caches =
            manager.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? manager.temporaryDirectory
        #if os(tvOS)
        let support = caches
        #else
        let support =
            manager.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? manager.temporaryDirectory
        #endif
        #else
        let environment = ProcessInfo.processInfo.environment
        // `$HOME` first: under `sudo -H`, a service account or a container it is the home the
        // process was given; NSHomeDirectory() reads the password database instead.
        let home = URL(
            fileURLWithPath: environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory(),
            isDirectory: true
        )
        func xdg(_ variable: String, _ fallback: String) -> URL {
            // The XDG spec says relative values are invalid and must be ignored.
            if let value = environment[variable], value.hasPrefix("/") {
                return URL(fileURLWithPath: value, isDirectory: true)
            }
            return home.appendingPathComponent(fallback, isDirectory: true)
        }
        let caches = xdg("XDG_CACHE_HOME", ".cache")
        let support = xdg("XDG_DATA_HOME", ".local/share")
        #endif
        return CacheRoot(
            caches: caches.appendingPathComponent(appName, isDirectory: true),
            documents: support.appendingPathComponent(appName, isDirectory: true)
        )
    }
}
