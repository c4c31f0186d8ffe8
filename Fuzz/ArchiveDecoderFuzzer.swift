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
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
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

/// The input with the total length (bytes 8..<16) and CRC32C (bytes 24..<28) made to match,
/// as a writer would have produced them; `nil` when it is shorter than the 28-byte header.
private func resign(_ data: Data) -> Data? {
    let headerSize = 28
    guard data.count >= headerSize else { return nil }
    var bytes = [UInt8](data)
    withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { raw in
        for i in 0..<8 { bytes[8 + i] = raw[i] }
    }
    let sum = bytes[headerSize...].withUnsafeBytes { CRC32C.checksum($0) }
    withUnsafeBytes(of: sum.littleEndian) { raw in
        for i in 0..<4 { bytes[24 + i] = raw[i] }
    }
    return Data(bytes)
}
