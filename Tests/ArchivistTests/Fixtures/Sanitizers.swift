#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sanitizer this test process runs under, if any, so that long randomized tests can run
/// fewer rounds where each costs several times more (CI runs the suite plain, under
/// ThreadSanitizer and under AddressSanitizer). Found by looking up the sanitizer runtime's
/// entry point in the process, which is there exactly when the binary was built with
/// `-sanitize=thread` or `-sanitize=address` (an exit test's child is the same binary).
enum Sanitizer: String, Sendable {
    case address
    case thread

    /// The active sanitizer, or `nil` in a plain build.
    static let active: Sanitizer? = {
        guard let process = dlopen(nil, RTLD_NOW) else { return nil }
        if dlsym(process, "__asan_init") != nil { return .address }
        if dlsym(process, "__tsan_init") != nil { return .thread }
        return nil
    }()
}
