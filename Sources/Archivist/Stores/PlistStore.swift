import Foundation

/// Named property-list files in one folder, each holding a root dictionary: the seeds'
/// `PlistManager` (001) and the focus timer's `taskData.plist` persistence (000).
///
/// A store reads the root dictionary of `<name>.plist`, gives typed access to its fields, and
/// merges keyed writes into the file. Values are ``PlistValue``s (or any
/// ``PlistConvertible`` type), so nested dictionaries are stored as real plist dictionaries,
/// and a value that a property list cannot hold is rejected when it is built, not when the
/// file is written. Files are written in the store's ``Format`` and read in either.
///
/// **First launch.** When a file is missing on first read and `defaultFileURL` names a
/// bundled default for it, the default is read, saved as the file, and returned, as seed 000
/// does with `NSBundle`'s `taskData.plist`.
///
/// **Safety.** Every write replaces the file atomically (temporary file, `fsync`, rename), so
/// a reader sees the old root or the new one. Every read-modify-write (``set(_:forKey:in:)-(PlistValue,_,_)``,
/// ``removeValue(forKey:in:)``, ``update(_:_:)``, …) holds the file's lock — a `flock` on the
/// hidden file `.lock.<name>` beside it, respected by every store and ``Preferences`` of every
/// process — so writers of different keys never lose each other's keys, in one process or in
/// several (an app and its extensions in an app-group container, several workers of a
/// service). The lock is held only while one write checks the file and renames its new
/// version into place: the new version is written to its temporary file and synced before the
/// lock is taken, and the folder synced after it is released, so no hold waits for the disk
/// (iOS terminates a suspended app that holds a file lock in a shared container,
/// `0xdead10cc`). It is never held while idle or across a caller's closure (``update(_:_:)``
/// runs it before taking the lock, and again if the file changed meanwhile), and reads never
/// take it. Under the lock one `stat` tells whether another writer changed the file since it
/// was read: the file is never read or parsed there. Reads and writes of other files do not wait.
///
/// **Reading is cheap when nothing changed.** A store remembers the root it last read or
/// wrote for each file with the file's stamp (device, inode, size, modification time to the
/// nanosecond); a read whose `stat` shows the same stamp is served from memory, and any change
/// — by this process or another — is read from the file. Writers keep the modification times
/// of a file strictly increasing, so a stamp never comes back.
///
/// ```swift
/// let store = PlistStore(directory: documents.appendingPathComponent("MyDatas"), format: .binary,
///                        defaultFileURL: { Bundle.main.url(forResource: $0, withExtension: "plist") })
/// try store.set(2, forKey: "id", in: "MyPlist")                        // merge one key
/// try store.set(["hour": 7, "minute": 30], forKey: "alert", in: "MyPlist")  // nested dictionary
/// let root = try store["MyPlist"]                                      // the whole root
/// let hour = try store["MyPlist", "alert"]?["hour"]?.intValue          // like PlistManager
/// let id = try store.value(forKey: "id", in: "MyPlist", default: 0)    // typed, with a default
/// ```
///
/// **Keys are bytes.** The keyed methods (``value(forKey:in:)``, ``set(_:forKey:in:)-(PlistValue,_,_)``,
/// ``removeValue(forKey:in:)``, the subscripts) compare keys by their UTF-8 bytes, like every
/// key in Archivist: "é" as U+00E9 and as "e" + U+0301 are two keys, though they are equal
/// `String`s. A root is a `[String: PlistValue]`, which holds only one of two such spellings,
/// so reading the other spelling finds nothing, setting it beside the first throws
/// ``StoreError/Code/notRepresentable`` instead of overwriting the first's value, and a file
/// that holds both (written by other software) throws `notRepresentable` when read instead
/// of losing one. The root dictionary itself, and ``update(_:_:)``'s closure, compare the
/// Swift way. Normalize keys (`precomposedStringWithCanonicalMapping`) if two spellings
/// should be one key.
///
/// Names are file names, never paths: see ``fileURL(for:)``.
public final class PlistStore: Sendable {
    /// The encoding a store writes files in. Reading accepts either.
    ///
    /// ```swift
    /// let store = PlistStore(directory: folder, format: .binary)
    /// ```
    public enum Format: Sendable, Hashable {
        /// The XML property-list format: readable and diffable; dates keep whole seconds only.
        case xml
        /// The binary property-list format: smaller and faster; dates keep full precision.
        case binary
    }

    /// The folder holding the store's files; created (0700) on the first write.
    public let directory: URL
    /// The format the store writes.
    public let format: Format
    private let defaultFileURL: @Sendable (String) -> URL?
    /// The calls that write the files (tests put a recording or failing one underneath).
    let fileSystem: FileSystem
    /// The root last read or written per file path, with the file's stamp then.
    private let snapshots = Locked<[String: PlistSnapshot]>([:])
    /// How many files' roots a store remembers; beyond that, it forgets some.
    static let snapshotLimit = 32

    /// Creates a store over the plist files in `directory`.
    ///
    /// Temporary files left behind by writes that died before their rename are deleted:
    /// those whose owning process is dead, or that are older than ten minutes (see
    /// `TemporaryName`); a live process's write in progress keeps its temporary.
    ///
    /// ```swift
    /// let store = PlistStore(
    ///     directory: documents,
    ///     defaultFileURL: { name in Bundle.main.url(forResource: name, withExtension: "plist") })
    /// ```
    ///
    /// - Parameters:
    ///   - directory: the folder of the plist files.
    ///   - format: the format new and rewritten files use; XML by default.
    ///   - defaultFileURL: returns the bundled default for a plist name (without `.plist`),
    ///     or `nil` when that plist has none and starts empty.
    /// - Complexity: lists `directory` once (blocking file I/O) to sweep stale temporaries.
    public init(
        directory: URL,
        format: Format = .xml,
        defaultFileURL: @escaping @Sendable (_ name: String) -> URL? = { _ in nil }
    ) {
        self.directory = directory
        self.format = format
        self.defaultFileURL = defaultFileURL
        self.fileSystem = .posix
        StoreFile.sweepTemporaries(in: directory)
    }

    /// Creates a store whose writes go through `fileSystem` (tests put a recording or
    /// fault-injecting file system underneath); otherwise as
    /// ``init(directory:format:defaultFileURL:)``.
    package init(
        directory: URL,
        format: Format = .xml,
        defaultFileURL: @escaping @Sendable (_ name: String) -> URL? = { _ in nil },
        fileSystem: FileSystem
    ) {
        self.directory = directory
        self.format = format
        self.defaultFileURL = defaultFileURL
        self.fileSystem = fileSystem
        StoreFile.sweepTemporaries(in: directory)
    }

    /// The file that holds the plist called `name`: `directory/<name>.plist`.
    ///
    /// A name may be given with or without the `.plist` extension. It must be a plain file
    /// name: not empty, at most 200 UTF-8 bytes, without `/`, `\` or NUL, and not starting with
    /// `.`. Any other Unicode is fine (`"任务数据"`).
    ///
    /// ```swift
    /// let url = try store.fileURL(for: "taskData")   // …/taskData.plist
    /// ```
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/invalidName``.
    /// - Complexity: O(length of `name`); no file I/O.
    public func fileURL(for name: String) throws -> URL {
        directory.appendingPathComponent(try Self.baseName(name) + ".plist", isDirectory: false)
    }

    // MARK: Reading

    /// Reads the root dictionary of the plist called `name`.
    ///
    /// A missing file reads as its bundled default, which is then saved (see the type's
    /// discussion), or as an empty dictionary when there is no default; it is not an error.
    /// Changes a ``Preferences`` of this process made to the file and has not written yet
    /// are read as made (every read form of the store goes through this one).
    ///
    /// ```swift
    /// for (id, task) in try store.root(of: "taskData") { print(id, task["name"] ?? "") }
    /// ```
    ///
    /// - Parameter name: the plist's name.
    /// - Returns: the root dictionary.
    /// - Throws: ``StoreError``: `corrupt` when the file (or the default) is not a plist with a
    ///   dictionary root, or is a binary plist whose shared references name far more values
    ///   than its size could hold (64 per byte: a reference bomb, refused before Foundation's
    ///   parser expands it), `notRepresentable` when it holds an integer beyond `Int` or a
    ///   dictionary with two keys that are one Swift string (see "Keys are bytes" above),
    ///   `invalidName`, `permissionDenied` or `ioFailed`.
    /// - Complexity: One `stat` when the file is unchanged since this store last read or wrote
    ///   it; otherwise O(n) in the file's size. Blocking file I/O (a write too, when seeding).
    public func root(of name: String) throws -> [String: PlistValue] {
        var root = try snapshot(of: name).root
        PreferencesFile.applyUnwritten(to: &root, forPlistAt: try fileURL(for: name))
        return root
    }

    /// The root dictionary of the plist called `name`, as in the seed's `PlistManager`.
    ///
    /// ```swift
    /// let root = try store["MyPlist"]
    /// ```
    ///
    /// - Throws: as ``root(of:)``.
    /// - Complexity: as ``root(of:)``: blocking file I/O.
    public subscript(name: String) -> [String: PlistValue] {
        get throws { try root(of: name) }
    }

    /// The value stored for `key` in the plist called `name`, or `nil` when there is none.
    ///
    /// ```swift
    /// let alert = try store["MyPlist", "alert"]?.dictionaryValue ?? [:]
    /// ```
    ///
    /// - Throws: as ``root(of:)``.
    /// - Complexity: as ``root(of:)``: blocking file I/O.
    public subscript(name: String, key: String) -> PlistValue? {
        get throws { Self.entry(key, in: try root(of: name)) }
    }

    /// Returns the value stored for `key` in the plist called `name`, or `nil` when there is
    /// none.
    ///
    /// ```swift
    /// if let story = try store.value(forKey: "today", in: "storyData") { show(story) }
    /// ```
    ///
    /// - Throws: as ``root(of:)``.
    /// - Complexity: as ``root(of:)``: blocking file I/O.
    public func value(forKey key: String, in name: String) throws -> PlistValue? {
        Self.entry(key, in: try root(of: name))
    }

    /// Returns the value stored for `key` converted to `type`, or `nil` when there is none.
    ///
    /// ```swift
    /// let alertTime = try store.value(Date.self, forKey: "alertTime", in: "taskData")
    /// ```
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/typeMismatch`` when the stored
    ///   value is of another kind (see ``PlistConvertible`` for the conversions allowed), or
    ///   as ``root(of:)``.
    /// - Complexity: as ``root(of:)``: blocking file I/O.
    public func value<Value: PlistConvertible>(
        _ type: Value.Type,
        forKey key: String,
        in name: String
    ) throws -> Value? {
        let url = try fileURL(for: name)
        guard let stored = Self.entry(key, in: try root(of: name)) else { return nil }
        return try Self.convert(stored, to: type, key: key, url: url)
    }

    /// Returns the value stored for `key` converted to the default's type, or `defaultValue`
    /// when there is none.
    ///
    /// ```swift
    /// let minutes = try store.value(forKey: "diligenceTime", in: "taskData", default: 25)
    /// ```
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/typeMismatch`` when the stored
    ///   value is of another kind (a wrong type is reported, not replaced by the default),
    ///   or as ``root(of:)``.
    /// - Complexity: as ``root(of:)``: blocking file I/O.
    public func value<Value: PlistConvertible>(
        forKey key: String,
        in name: String,
        default defaultValue: Value
    ) throws -> Value {
        try value(Value.self, forKey: key, in: name) ?? defaultValue
    }

    // MARK: Internals shared with the writing extension and Preferences

    /// The current root of the plist called `name` and its file's stamp: from memory when the
    /// file is the version this store last saw, else read; a missing file is seeded from its
    /// default (written and synced before the file's lock, renamed under it).
    func snapshot(of name: String) throws -> PlistSnapshot {
        let url = try fileURL(for: name)
        if let current = try currentSnapshot(at: url) { return current }
        guard let defaultURL = defaultFileURL(try Self.baseName(name)) else {
            return PlistSnapshot(stamp: nil, root: [:])
        }
        let root = try defaultRoot(defaultURL)
        return try replace(url, with: root) { stamp in
            stamp == nil ? .write : .keep  // another writer seeded it, or wrote, first
        }.snapshot
    }

    /// The file's current root, or `nil` when the file does not exist.
    func currentSnapshot(at url: URL) throws -> PlistSnapshot? {
        guard let stamp = try FileStamp.of(url) else {
            forget(url)
            return nil
        }
        if let known = snapshots.withLock({ $0[url.path] }), known.stamp == stamp { return known }
        guard let (data, readStamp) = try StoreFile.stampedContents(of: url) else {
            forget(url)
            return nil
        }
        let snapshot = PlistSnapshot(stamp: readStamp, root: try Self.decodeRoot(data, from: url))
        remember(snapshot, for: url)
        return snapshot
    }

    /// Reads the file, or seeds it from its default; call holding the file's lock. (Only the
    /// last resort of ``modify(_:_:)`` does; the default's write then syncs under the lock.)
    func loadOrSeed(_ name: String, at url: URL) throws -> PlistSnapshot {
        if let current = try currentSnapshot(at: url) { return current }
        guard let defaultURL = defaultFileURL(try Self.baseName(name)) else {
            return PlistSnapshot(stamp: nil, root: [:])
        }
        let root = try defaultRoot(defaultURL)
        return try write(try encode(root, for: url), of: root, to: url, replacing: nil)
    }

    /// The root of the bundled default at `defaultURL`.
    private func defaultRoot(_ defaultURL: URL) throws -> [String: PlistValue] {
        guard let data = try StoreFile.contents(of: defaultURL) else {
            throw StoreError(.ioFailed, "the default file does not exist", fileURL: defaultURL)
        }
        return try Self.decodeRoot(data, from: defaultURL)
    }

    /// The deepest nesting a store writes, counting the root dictionary as one level: Foundation's
    /// parser reads 512, but its writer recurses once per level and overflows a 512 KiB thread
    /// (a secondary thread's stack on Apple platforms) a few hundred levels down, short of 512,
    /// so writing a deeper root throws `.notRepresentable` instead of crashing the process
    /// (`PlistValueDepthTests` guards it).
    static let maxWrittenDepth = 256

    /// Forgets the remembered root of the file at `url`.
    func forget(_ url: URL) {
        snapshots.withLock { $0[url.path] = nil }
    }

    func remember(_ snapshot: PlistSnapshot, for url: URL) {
        guard snapshot.stamp != nil else { return forget(url) }
        snapshots.withLock { snapshots in
            if snapshots[url.path] == nil, snapshots.count >= Self.snapshotLimit, let any = snapshots.keys.first {
                snapshots[any] = nil
            }
            snapshots[url.path] = snapshot
        }
    }

    /// Encodes `root` in the store's format.
    ///
    /// A root nesting more than ``maxWrittenDepth`` containers throws `.notRepresentable`.
    func encode(_ root: [String: PlistValue], for url: URL) throws -> Data {
        guard let object = PlistValue.dictionary(root).propertyListObject(depthLimit: Self.maxWrittenDepth) else {
            throw StoreError(
                .notRepresentable,
                "the property list nests containers more than \(Self.maxWrittenDepth) deep, the most a store writes "
                    + "(Foundation's writer recurses once per level and overflows a 512 KiB thread's stack near 360)",
                fileURL: url
            )
        }
        do {
            return try PropertyListSerialization.data(
                fromPropertyList: object,
                format: format == .xml ? .xml : .binary,
                options: 0
            )
        } catch {
            throw StoreError(.notRepresentable, "cannot encode the property list", fileURL: url, underlyingError: error)
        }
    }

    static func decodeRoot(_ data: Data, from url: URL) throws -> [String: PlistValue] {
        // Counted before the parse, which would expand a reference bomb; reused after it.
        let cap = PlistKeyCount.binaryItemCap(fileSize: data.count)
        let binaryItems = PlistKeyCount.binaryItems(data, limit: cap)
        if let binaryItems, binaryItems > cap {
            throw StoreError(
                .corrupt,
                "the binary plist's shared references name more than \(cap) values, "
                    + "far more than \(data.count) bytes hold (a reference bomb)",
                fileURL: url
            )
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw StoreError(.corrupt, "not a property list", fileURL: url, underlyingError: error)
        }
        let root: PlistValue
        do {
            root = try PlistValue.convert(object)
        } catch {
            throw StoreError(.notRepresentable, error.reason, fileURL: url, key: error.pathDescription)
        }
        guard case .dictionary(let entries) = root else {
            throw StoreError(.corrupt, "the root is \(root.kindName), not a dictionary", fileURL: url)
        }
        let merged =
            binaryItems.map { PlistKeyCount.fileHasMoreKeys(binaryItems: $0, than: root) }
            ?? PlistKeyCount.fileHasMoreKeys(data, than: root)
        if merged {
            throw StoreError(
                .notRepresentable,
                "a dictionary in the file has two keys that are one Swift string (the same bytes twice, or two "
                    + "spellings such as \"\u{E9}\" as U+00E9 and as e + U+0301); reading it would drop one of them",
                fileURL: url
            )
        }
        return entries
    }

    static func convert<Value: PlistConvertible>(
        _ stored: PlistValue,
        to type: Value.Type,
        key: String,
        url: URL
    ) throws -> Value {
        guard let value = Value(plistValue: stored) else {
            throw StoreError(
                .typeMismatch,
                "expected \(Value.self), found \(stored.kindName)",
                fileURL: url,
                key: key
            )
        }
        return value
    }

    static func baseName(_ name: String) throws -> String {
        let base = name.hasSuffix(".plist") ? String(name.dropLast(".plist".count)) : name
        guard !base.isEmpty, base.utf8.count <= 200, !base.hasPrefix("."),
            !base.contains(where: { $0 == "/" || $0 == "\\" || $0 == "\0" })
        else {
            throw StoreError(.invalidName, "\(String(reflecting: name)) is not a plain file name")
        }
        return base
    }
}

/// A plist file's root dictionary and the ``FileStamp`` of the version it was read from or
/// written as (`nil` when the file does not exist or changed while it was read).
struct PlistSnapshot: Sendable {
    var stamp: FileStamp?
    var root: [String: PlistValue]
}
