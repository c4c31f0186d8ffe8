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

    /// A stream reading the folder open as `fd`, which it takes over (`closedir` closes it);
    /// `nil` when `fd` is -1, or when `fdopendir` fails — then `fd` is closed here — with
    /// `errno` saying why.
    static func stream(taking fd: Int32) -> DirectoryStream? {
        guard fd >= 0 else { return nil }
        guard let stream = fdopendir(fd) else {
            let code = errno
            _ = close(fd)
            errno = code
            return nil
        }
        return stream
    }

    /// A stream reading the folder at `path`, opened from `root` when one is given
    /// (``openFolder(_:below:noFollow:)``); `nil` with `errno` set when it cannot be.
    static func open(_ path: String, below root: AtomicFile.Root?, noFollow: Bool = false) -> DirectoryStream? {
        stream(taking: openFolder(path, below: root, noFollow: noFollow))
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
