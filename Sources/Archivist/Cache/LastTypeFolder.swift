/// The folder a manager found last for a cache type, with what it was made from: the type's
/// name and location (the user is the manager's own), and the type's statistics tally, so an
/// operation finds both with one lock.
///
/// Reads and writes usually come in runs of one type; checking this slot costs a comparison of
/// the name's bytes, where the dictionary of every type's folder hashes the type. Nothing in it
/// is generic over the manager's `Kind`: in the manager's unspecialized code, a tuple or
/// optional made from `Kind` cost run-time metadata lookups worth more than the hash.
struct LastTypeFolder: Sendable {
    /// The type's name the folder was hashed from.
    var name: String
    /// The type's location.
    var location: CacheLocation
    /// The folder.
    var folder: FolderPath
    /// The type's statistics (``StatisticsBook``).
    var tally: TypeTally

    /// The folder, if it was made for a type of this very name (bytes) and location.
    ///
    /// - Complexity: O(length of the name).
    func folder(name: String, location: CacheLocation) -> (folder: FolderPath, tally: TypeTally)? {
        location == self.location && Bytewise.equal(name, self.name) ? (folder, tally) : nil
    }
}
