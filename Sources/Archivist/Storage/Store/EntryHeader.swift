import Foundation

/// The header in front of every entry file's payload, checked in full on every read.
///
/// All integers are little-endian; the header format has its own version, separate from the
/// package version and from the archive format of the payload.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `ARCE` |
/// | 4 | 2 | header version, 1 |
/// | 6 | 2 | flags: bit 0 has a parameter, bit 1 has an expiry |
/// | 8 | 4 | byte length of the type name |
/// | 12 | 4 | byte length of the parameter |
/// | 16 | 8 | write date, seconds since 1970 as a Float64 bit pattern |
/// | 24 | 8 | expiry date, same encoding (0 when there is none) |
/// | 32 | 8 | payload length |
/// | 40 | 4 | CRC32C of the payload |
/// | 44 | 4 | CRC32C of bytes 0..<44 followed by the two names |
/// | 48 | … | type name (UTF-8), then parameter (UTF-8), then the payload |
///
/// The names are the caller's original strings, so an MD5 collision or a file copied to the
/// wrong place is detected: the path says which key, the header must agree.
///
/// ```swift
/// let header = EntryHeader(typeName: "hots", parameter: nil, writeDate: Date(), expiry: nil,
///                          payload: payloadBytes)
/// let bytes = header.encoded() + payloadBytes
/// ```
package struct EntryHeader: Sendable, Equatable {
    /// The cache type's stable name.
    package var typeName: String
    /// The entry's parameter, `nil` for the type's single entry.
    package var parameter: String?
    /// When the entry was written.
    package var writeDate: Date
    /// When the entry stops being fresh, if ever.
    package var expiry: Date?
    /// The payload's length in bytes.
    package var payloadLength: Int
    /// CRC32C of the payload.
    package var payloadChecksum: UInt32

    /// `ARCE`.
    static let magic: [UInt8] = [0x41, 0x52, 0x43, 0x45]
    /// ``magic`` as the word its four bytes load as, in this machine's byte order.
    static let magicWord = UInt32(littleEndian: 0x4543_5241)
    /// The header format this code writes and reads.
    static let version: UInt16 = 1
    /// Bytes before the names.
    static let fixedSize = 48
    /// The longest type name, in bytes of UTF-8, that is written or read back (a damaged
    /// length cannot ask for a huge allocation). Writer and reader both use this constant.
    package static let maxTypeNameLength = 64 * 1024
    /// The longest parameter, in bytes of UTF-8, that is written or read back.
    package static let maxParameterLength = 16 * 1024 * 1024

    /// Refuses names the reader would reject, before anything is written.
    ///
    /// - Throws: ``StorageError`` `keyTooLong` when the type name is over ``maxTypeNameLength``
    ///   or the parameter over ``maxParameterLength`` bytes of UTF-8.
    /// - Complexity: O(1) for native strings.
    package static func checkLengths(typeName: String, parameter: String?) throws {
        let nameLength = typeName.utf8.count
        if nameLength > maxTypeNameLength {
            throw StorageError(
                .keyTooLong,
                "the type name is \(nameLength) bytes of UTF-8; an entry records at most \(maxTypeNameLength)"
            )
        }
        let parameterLength = parameter?.utf8.count ?? 0
        if parameterLength > maxParameterLength {
            throw StorageError(
                .keyTooLong,
                "the parameter is \(parameterLength) bytes of UTF-8; an entry records at most \(maxParameterLength)"
            )
        }
    }

    /// A header describing `payload`. Pass `payloadChecksum` when the caller already knows
    /// the payload's CRC32C (a freshly encoded archive), to skip a pass over the bytes.
    package init(
        typeName: String,
        parameter: String?,
        writeDate: Date,
        expiry: Date?,
        payload: UnsafeRawBufferPointer,
        payloadChecksum: UInt32? = nil
    ) {
        self.typeName = typeName
        self.parameter = parameter
        self.writeDate = writeDate
        self.expiry = expiry
        self.payloadLength = payload.count
        self.payloadChecksum = payloadChecksum ?? CRC32C.checksum(payload)
    }

    /// A header describing a payload of `payloadLength` bytes whose CRC32C is `payloadChecksum`
    /// (a payload written in pieces, whose checksum the caller computed over them).
    package init(
        typeName: String,
        parameter: String?,
        writeDate: Date,
        expiry: Date?,
        payloadLength: Int,
        payloadChecksum: UInt32
    ) {
        self.typeName = typeName
        self.parameter = parameter
        self.writeDate = writeDate
        self.expiry = expiry
        self.payloadLength = payloadLength
        self.payloadChecksum = payloadChecksum
    }

    /// The length in bytes of the header ``encoded()`` writes for these names: where the
    /// payload starts in the entry file.
    ///
    /// - Complexity: O(1) for native strings.
    package static func encodedCount(typeName: String, parameter: String?) -> Int {
        fixedSize + typeName.utf8.count + (parameter?.utf8.count ?? 0)
    }

    /// The header's bytes, to be followed by the payload.
    ///
    /// Written in place into one buffer of the exact size: copying the names into arrays of
    /// their own and appending field by field costs every write several allocations and copies.
    /// The buffer is temporary memory, copied into the array once filled: an array made with
    /// `init(unsafeUninitializedCapacity:)` is allocated by `Array`'s unspecialized code,
    /// which looks its storage type's metadata up at run time. The `cache-manager` suite's
    /// 1 KB set guards both.
    ///
    /// - Complexity: O(length of the names).
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        withEncoded { bytes = Array($0) }
        return bytes
    }

    /// Calls `body` with the header's bytes (``encoded()``'s) in temporary memory — the stack
    /// for all but huge names. (`DiskStore.write` takes the array instead: handed its write
    /// closure, this function was specialized for it, and the specialization copied the
    /// closure's captured strings about ten times a write — more than the array costs.)
    ///
    /// - Complexity: O(length of the names).
    package func withEncoded(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var name = typeName
        var param = parameter ?? ""
        return try name.withUTF8 { name in
            try param.withUTF8 { param in
                try withUnsafeTemporaryAllocation(byteCount: Self.fixedSize + name.count + param.count, alignment: 8) {
                    out in
                    func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
                        out.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
                    }
                    out.copyBytes(from: Self.magic)
                    put(Self.version, at: 4)
                    put(UInt16((parameter != nil ? 1 : 0) | (expiry != nil ? 2 : 0)), at: 6)
                    put(UInt32(name.count), at: 8)
                    put(UInt32(param.count), at: 12)
                    put(writeDate.timeIntervalSince1970.bitPattern, at: 16)
                    put((expiry?.timeIntervalSince1970 ?? 0).bitPattern, at: 24)
                    put(UInt64(payloadLength), at: 32)
                    put(payloadChecksum, at: 40)
                    UnsafeMutableRawBufferPointer(rebasing: out[Self.fixedSize...]).copyBytes(from: name)
                    UnsafeMutableRawBufferPointer(rebasing: out[(Self.fixedSize + name.count)...]).copyBytes(
                        from: param
                    )
                    var sum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: out[0..<44]))
                    sum = CRC32C.checksum(UnsafeRawBufferPointer(name), seed: sum)
                    put(CRC32C.checksum(UnsafeRawBufferPointer(param), seed: sum), at: 44)
                    return try body(UnsafeRawBufferPointer(out))
                }
            }
        }
    }

    /// Parses and checks the header at the start of `bytes`; with `payloadIncluded`, also checks
    /// that exactly the payload follows and that its checksum matches.
    ///
    /// - Returns: The header and its length in bytes (where the payload starts).
    /// - Throws: ``StorageError`` with code `corruptEntry` (and `path`) for any inconsistency.
    /// - Complexity: O(n) when the payload is checked, O(length of the names) otherwise.
    ///
    /// With `expected` names, an entry recording other names throws `entryMismatch`, and the
    /// names are compared as bytes instead of being decoded into new strings. With
    /// `fileChecksum`, the CRC32C of all of `bytes` (computed as they were read), the payload's
    /// is derived from it and the header's, without another pass over the payload.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer,
        payloadIncluded: Bool,
        path: String,
        expected: (typeName: String, parameter: String?)? = nil,
        fileChecksum: UInt32? = nil
    ) throws -> (EntryHeader, Int) {
        func corrupt(_ why: String) -> StorageError {
            StorageError(.corruptEntry, why, fileURL: URL(fileURLWithPath: path))
        }
        guard bytes.count >= fixedSize else { throw corrupt(bytes.isEmpty ? "empty entry file" : "truncated header") }
        // One load, not the generic `elementsEqual` over the array, on every read (the
        // `cache-manager` suite's 1 KB get guards it).
        guard bytes.loadUnaligned(as: UInt32.self) == magicWord else {
            throw corrupt("not an Archivist entry (bad magic)")
        }
        func load<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        guard load(4, as: UInt16.self) == version else { throw corrupt("unsupported entry header version") }
        let flags = load(6, as: UInt16.self)
        let nameLength = Int(clamping: load(8, as: UInt32.self))
        let paramLength = Int(clamping: load(12, as: UInt32.self))
        guard flags & ~3 == 0, nameLength <= maxTypeNameLength, paramLength <= maxParameterLength,
            flags & 1 != 0 || paramLength == 0
        else { throw corrupt("bad header fields") }
        let headerLength = fixedSize + nameLength + paramLength
        guard bytes.count >= headerLength else { throw corrupt("truncated header") }
        let namesRange = fixedSize..<headerLength
        let sum = CRC32C.checksum(
            UnsafeRawBufferPointer(rebasing: bytes[namesRange]),
            seed: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<44]))
        )
        guard sum == load(44, as: UInt32.self) else { throw corrupt("header checksum mismatch") }
        let written = Double(bitPattern: load(16, as: UInt64.self))
        let expires = Double(bitPattern: load(24, as: UInt64.self))
        let payloadLength = load(32, as: UInt64.self)
        guard written.isFinite, expires.isFinite, payloadLength <= UInt64(Int.max) else {
            throw corrupt("bad header values")
        }
        let nameBytes = bytes[fixedSize..<(fixedSize + nameLength)]
        let paramBytes = bytes[(fixedSize + nameLength)..<headerLength]
        let name: String
        let parameter: String?
        if let expected {
            guard Bytewise.equal(expected.typeName, UnsafeRawBufferPointer(rebasing: nameBytes)),
                (flags & 1 != 0) == (expected.parameter != nil),
                Bytewise.equal(expected.parameter ?? "", UnsafeRawBufferPointer(rebasing: paramBytes))
            else {
                throw StorageError(
                    .entryMismatch,
                    "the entry belongs to another key (MD5 collision or misplaced file)",
                    fileURL: URL(fileURLWithPath: path)
                )
            }
            name = expected.typeName
            parameter = expected.parameter
        } else {
            guard let decodedName = String(validatingUTF8Bytes: nameBytes),
                let decodedParameter = String(validatingUTF8Bytes: paramBytes)
            else { throw corrupt("names are not UTF-8") }
            name = decodedName
            parameter = flags & 1 != 0 ? decodedParameter : nil
        }
        var header = EntryHeader(
            typeName: name,
            parameter: parameter,
            writeDate: Date(timeIntervalSince1970: written),
            expiry: flags & 2 != 0 ? Date(timeIntervalSince1970: expires) : nil,
            payload: UnsafeRawBufferPointer(start: nil, count: 0)
        )
        header.payloadLength = Int(payloadLength)
        header.payloadChecksum = load(40, as: UInt32.self)
        if payloadIncluded {
            let payload = UnsafeRawBufferPointer(rebasing: bytes[headerLength...])
            guard payload.count == header.payloadLength else {
                throw corrupt(
                    payload.count < header.payloadLength ? "truncated payload" : "trailing bytes after payload"
                )
            }
            // CRC(header ‖ payload) = shift(CRC(header), payload length) ^ CRC(payload).
            let sum =
                fileChecksum.map {
                    $0
                        ^ CRC32C.combine(
                            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[..<headerLength])),
                            0,
                            length: payload.count
                        )
                } ?? CRC32C.checksum(payload)
            guard sum == header.payloadChecksum else { throw corrupt("payload checksum mismatch") }
        }
        return (header, headerLength)
    }
}
