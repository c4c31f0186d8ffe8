// The availability gate's self-test (scripts/check-availability.sh --self-test) type-checks
// this file as part of the Archivist target. Each line marked `found` uses an API newer than
// the deployment targets and must be reported; each line marked `covered` uses one under
// `@available` or `#available` and must not be.
import Synchronization

let plantedMutex = Mutex(0)  // found

func plantedString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        _ = String(validating: bytes, as: UTF8.self)  // covered
    }
    return String(validating: bytes, as: UTF8.self)  // found
}

func plantedGuard(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return nil }
    return String(validating: bytes, as: UTF8.self)  // covered
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
struct PlantedNewer {
    let wide: Int128 = 0  // covered
}

func plantedSignature(_ wide: Int128) {}  // found

func plantedIsolation(_ stream: AsyncStream<Int>) async {
    var iterator = stream.makeAsyncIterator()
    _ = await iterator.next(isolation: nil)  // found
    for await _ in stream {}  // covered (the allowlisted implicit next(isolation:))
}
