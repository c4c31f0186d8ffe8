// libFuzzer target for the native archive decoder. Build and run with `Fuzz/run.sh archive`.
//
// Each input is decoded as every model of `ArchiveFuzzModels.swift`, twice: as given (so the
// header, length and checksum checks are fuzzed) and with the header's length and CRC32C
// rewritten to match the input (so mutations get past the checksum into the structural
// checks). Anything but a value or an `ArchiveError` — a trap, an ASan report, a hang, an
// allocation over libFuzzer's limit — is a finding.

import Foundation

/// With `ARCHIVIST_FUZZ_WRITE_SEEDS=<folder>`, writes the sample archives there and exits:
/// `run.sh` builds the seed corpus this way.
@_cdecl("LLVMFuzzerInitialize")
public func archiveFuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
) -> Int32 {
    guard let folder = ProcessInfo.processInfo.environment["ARCHIVIST_FUZZ_WRITE_SEEDS"] else { return 0 }
    do {
        for (name, data) in try ArchiveFuzzSamples.all() {
            try data.write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(name).arv"))
        }
    } catch {
        fatalError("could not write the seeds: \(error)")
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func archiveFuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let input = Data(UnsafeBufferPointer(start: start, count: count))
    ArchiveFuzzSamples.decodeAll(input)
    if let resigned = resign(input), resigned != input {
        ArchiveFuzzSamples.decodeAll(resigned)
    }
    return 0
}

/// The input with the header's total length and CRC32C made to match, as a writer would have
/// produced them; `nil` when it is too short to hold a header. Version 1 (byte 4 = 1) keeps
/// its fixed 28-byte header; anything else is given a version 2 header: the input's second
/// header varint (the body length) is kept and the total length varint rewritten.
private func resign(_ data: Data) -> Data? {
    var bytes = [UInt8](data)
    if bytes.count >= 28, bytes[4] == 1 {
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { raw in
            for i in 0..<8 { bytes[8 + i] = raw[i] }
        }
        let sum = bytes[28...].withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: sum.littleEndian) { raw in
            for i in 0..<4 { bytes[24 + i] = raw[i] }
        }
        return Data(bytes)
    }
    let fixed = ArchiveFormat.fixedHeaderSize
    guard bytes.count > fixed else { return nil }
    // Skip the old total length varint; keep the body length varint and everything after it.
    var index = fixed
    while index < bytes.count, bytes[index] >= 0x80 { index += 1 }
    guard index < bytes.count else { return nil }
    let rest = bytes[(index + 1)...]
    var length = 1
    while length != ByteBuffer.varintSize(UInt64(fixed + length + rest.count)) { length += 1 }
    var total = [UInt8]()
    var value = UInt64(fixed + length + rest.count)
    while value >= 0x80 {
        total.append(UInt8(truncatingIfNeeded: value) | 0x80)
        value >>= 7
    }
    total.append(UInt8(value))
    var result = Array(bytes[0..<fixed]) + total + rest
    result[4] = 2
    result[5] = 0
    let sum = result[fixed...].withUnsafeBytes { CRC32C.checksum($0) }
    withUnsafeBytes(of: sum.littleEndian) { raw in
        for i in 0..<4 { result[6 + i] = raw[i] }
    }
    return Data(result)
}
