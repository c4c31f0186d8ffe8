import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking file primitives for the stores: read a whole file, replace one atomically.
///
/// `writeAtomically` is a stand-in for the package's shared atomic-replacement primitive in
/// `Storage/`; it is kept to one function so that it can be swapped for that one.
enum StoreFile {
    /// The marker in the names of temporary files, `.<name>.tmp-<random>`.
    static let temporaryMarker = ".tmp-"

    /// Reads the whole file at `url`, or returns `nil` when it does not exist.
    ///
    /// - Throws: ``StoreError`` (`permissionDenied`, `ioFailed`) naming the file.
    /// - Complexity: O(n) blocking file I/O.
    static func contents(of url: URL) throws -> Data? {
        let fd = url.withUnsafeFileSystemRepresentation { path in
            path.map { open($0, O_RDONLY | O_CLOEXEC) } ?? -1
        }
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw failure(code, "cannot open for reading", url)
        }
        defer { close(fd) }
        var data = Data()
        var info = stat()
        if fstat(fd, &info) == 0, info.st_size > 0 { data.reserveCapacity(Int(info.st_size)) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(errno, "cannot read", url)
            }
            data.append(contentsOf: buffer[..<count])
        }
    }

    /// Replaces the file at `url` with `data` atomically: writes a temporary file (mode 0600)
    /// in the same folder, flushes it with `fsync`, renames it over `url`, and flushes the
    /// folder. A reader sees the old contents or the new, never a mix, even if the process
    /// dies midway; the folder (0700) is created when missing.
    ///
    /// - Throws: ``StoreError`` (`permissionDenied`, `noSpace`, `ioFailed`) naming the file.
    /// - Complexity: O(n) blocking file I/O plus two `fsync` calls.
    static func writeAtomically(_ data: Data, to url: URL) throws {
        let folder = url.deletingLastPathComponent()
        try createFolder(folder, for: url)
        let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let temporary = folder.appendingPathComponent("." + url.lastPathComponent + temporaryMarker + suffix)
        let fd = temporary.withUnsafeFileSystemRepresentation { path in
            path.map { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) } ?? -1
        }
        guard fd >= 0 else { throw failure(errno, "cannot create a temporary file", url) }
        var renamed = false
        defer {
            if !renamed { temporary.withUnsafeFileSystemRepresentation { $0.map { _ = unlink($0) } } }
        }
        do {
            defer { close(fd) }
            try data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                var offset = 0
                while offset < bytes.count {
                    let written = write(fd, base + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw failure(errno, "cannot write", url)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw failure(errno, "cannot flush", url) }
        }
        let status = temporary.withUnsafeFileSystemRepresentation { from in
            url.withUnsafeFileSystemRepresentation { to in
                guard let from, let to else { return Int32(-1) }
                return rename(from, to)
            }
        }
        guard status == 0 else { throw failure(errno, "cannot rename the temporary file into place", url) }
        renamed = true
        // Persist the rename itself; the data is already safe, so a failure here is not fatal.
        let folderFD = folder.withUnsafeFileSystemRepresentation { path in
            path.map { open($0, O_RDONLY | O_CLOEXEC) } ?? -1
        }
        if folderFD >= 0 {
            _ = fsync(folderFD)
            close(folderFD)
        }
    }

    /// Deletes temporary files left in `folder` by writes that died before their rename and
    /// that are older than `age` seconds (younger ones may belong to a write in progress).
    ///
    /// - Complexity: O(n) in the folder's entries; blocking file I/O. Errors are ignored.
    static func sweepTemporaries(in folder: URL, olderThan age: TimeInterval = 60) {
        let manager = FileManager.default
        guard
            let names = try? manager.contentsOfDirectory(atPath: folder.path)
        else { return }
        let cutoff = Date().addingTimeInterval(-age)
        for name in names where name.hasPrefix(".") && name.contains(temporaryMarker) {
            let url = folder.appendingPathComponent(name)
            let modified = (try? manager.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
            if let modified, modified < cutoff { try? manager.removeItem(at: url) }
        }
    }

    private static func createFolder(_ folder: URL, for url: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue {
                return
            }
            throw StoreError(.ioFailed, "cannot create the folder", fileURL: url, underlyingError: error)
        }
    }

    private static func failure(_ code: Int32, _ message: String, _ url: URL) -> StoreError {
        let kind: StoreError.Code =
            switch code {
            case EACCES, EPERM, EROFS: .permissionDenied
            case ENOSPC, EDQUOT: .noSpace
            default: .ioFailed
            }
        let underlying = POSIXErrorCode(rawValue: code).map { POSIXError($0) }
        return StoreError(kind, "\(message): \(String(cString: strerror(code)))", fileURL: url, underlyingError: underlying)
    }
}
