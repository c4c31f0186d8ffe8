#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open folder being read (`opendir`, `fdopendir`): its type differs by platform.
#if canImport(Darwin)
typealias DirectoryStream = UnsafeMutablePointer<DIR>
#else
typealias DirectoryStream = OpaquePointer
#endif

/// The reads of a folder that the trash's walk and the spare area share.
enum DirectoryEntries {
    /// Where an entry's NUL-terminated name starts in its `dirent`.
    static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// The name of `entry`, valid until the next `readdir` of its stream.
    static func name(of entry: UnsafeMutablePointer<dirent>) -> UnsafePointer<CChar> {
        UnsafePointer(UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
    }

    /// Whether `name` is `.` or `..`, which every folder lists.
    static func isDotOrDotDot(_ name: UnsafePointer<CChar>) -> Bool {
        name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0))
    }

    /// Whether `stream`, read from where it stands to its end, lists nothing but `.` and `..`;
    /// `false` when a read fails.
    static func readsEmpty(_ stream: DirectoryStream) -> Bool {
        while true {
            errno = 0
            guard let entry = readdir(stream) else { return errno == 0 }
            if !isDotOrDotDot(name(of: entry)) { return false }
        }
    }
}
