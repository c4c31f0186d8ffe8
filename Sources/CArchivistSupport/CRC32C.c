#include "CArchivistSupport.h"
#include <string.h>
#include <pthread.h>

// CRC-32C on the CPU's own instructions: SSE 4.2 `crc32` on x86_64, the ARMv8 CRC32
// extension (`crc32c[bhwx]`) on arm64. Only these functions are compiled for the instruction
// set extension (a function-level target attribute), so the package needs no global compiler
// flag, and `archivist_crc32c_hardware_available` asks the CPU before anything runs them.
//
// One `crc32` instruction takes 8 bytes with a latency of 3 cycles and a throughput of one a
// cycle: a single dependent stream reaches a third of what the unit can do. Large inputs are
// therefore read as three streams over consecutive blocks, and the three registers merged:
// the register is linear, so the state after A then B is shift(state after A, |B|) XOR (B's
// state from a zero register), where shift multiplies by x^(8·|B|) modulo the polynomial. The
// shift goes through four 256-entry tables per block length, built once.

/// The reflected Castagnoli polynomial.
#define CRC32C_POLY 0x82f63b78u
/// Bytes per stream in one round of the long and the short interleaved loops.
#define CRC32C_LONG 8192
#define CRC32C_SHORT 256

// MARK: - Arithmetic modulo the polynomial (reflected bit order; x^0 is the top bit)

static uint32_t multiply_mod_p(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = b & 1 ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return p;
}

/// x^n modulo the polynomial.
static uint32_t x_to_the_n_mod_p(uint64_t n) {
    uint32_t power = 1u << 30; // x^1, squared below into x^(2^k)
    uint32_t p = 1u << 31;     // x^0
    while (n) {
        if (n & 1) p = multiply_mod_p(power, p);
        power = multiply_mod_p(power, power);
        n >>= 1;
    }
    return p;
}

// MARK: - Shift tables and the CPU check, once per process

static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static int hardware_present;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void fill_shift_table(uint32_t table[4][256], size_t length) {
    uint32_t factor = x_to_the_n_mod_p(8 * (uint64_t)length);
    for (unsigned byte = 0; byte < 4; byte++)
        for (uint32_t value = 0; value < 256; value++)
            table[byte][value] = multiply_mod_p(factor, value << (8 * byte));
}

static int cpu_has_crc32c(void);
static int cpu_has_carryless(void);
static void setup_vector_folding(void);

/// x^(8·2^k) modulo the polynomial for k in 0..<64: the factors `archivist_crc32c_shift_carryless`
/// multiplies by, one per set bit of a length in bytes.
static uint32_t byte_powers[64];
static int carryless_present;

static void setup(void) {
    fill_shift_table(shift_long, CRC32C_LONG);
    fill_shift_table(shift_short, CRC32C_SHORT);
    hardware_present = cpu_has_crc32c();
    setup_vector_folding();
    uint32_t power = x_to_the_n_mod_p(8);
    for (int k = 0; k < 64; k++) {
        byte_powers[k] = power;
        power = multiply_mod_p(power, power);
    }
    carryless_present = hardware_present && cpu_has_carryless();
}

bool archivist_crc32c_carryless_available(void) {
    pthread_once(&setup_once, setup);
    return carryless_present != 0;
}

bool archivist_crc32c_hardware_available(void) {
    pthread_once(&setup_once, setup);
    return hardware_present != 0;
}

// MARK: - The instructions, per architecture

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif
#define CRC32C_TARGET __attribute__((target("sse4.2")))
#define CRC32C_HAVE_INSTRUCTIONS 1

static int cpu_has_crc32c(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

static int cpu_has_carryless(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & (1u << 1)) != 0; // PCLMULQDQ
}

#define CARRYLESS_TARGET __attribute__((target("pclmul,sse4.2")))
#define CRC32C_HAVE_CARRYLESS 1

/// The carry-less product of two 32-bit polynomials (at most 63 bits).
CARRYLESS_TARGET static inline uint64_t carryless_product(uint32_t a, uint32_t b) {
    __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b), 0x00);
    return (uint64_t)_mm_cvtsi128_si64(product);
}

CARRYLESS_TARGET static inline uint32_t crc_u32_carryless(uint32_t crc, uint32_t value) { return _mm_crc32_u32(crc, value); }

CRC32C_TARGET static inline uint64_t crc_u64(uint64_t crc, uint64_t value) { return _mm_crc32_u64(crc, value); }
CRC32C_TARGET static inline uint64_t crc_u8(uint64_t crc, unsigned char value) {
    return _mm_crc32_u8((uint32_t)crc, value);
}

// Carry-less multiplication folding, on CPUs with AVX-512 and VPCLMULQDQ: 256 bytes a round in
// four 512-bit accumulators, four times what `crc32` can take. A 128-bit chunk X followed by L
// bits contributes X·x^L; split X = H·x^64 + Lo (H the first eight bytes, in the low lane),
// that is H·(x^(64+L) mod P) + Lo·(x^L mod P), at most 95 bits, which is XORed into the chunk
// L bits ahead. A reflected carry-less product of a 64-bit lane and a 32-bit constant lands 33
// bits higher, hence the constants x^(L+31) and x^(L-33). The last chunk, run through `crc32`
// from a zero register, gives the register; the starting register is XORed into the first
// four bytes instead (the update is linear).
#define FOLD_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
#define FOLD_MINIMUM 1024

/// Whether the CPU and the OS support 512-bit registers and VPCLMULQDQ.
static int cpu_has_vector_folding(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)) /* OSXSAVE */) return 0;
    if (!(ecx & (1u << 1)) /* PCLMULQDQ */ || __get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(ebx & (1u << 16)) /* AVX512F */ || !(ecx & (1u << 10)) /* VPCLMULQDQ */) return 0;
#if defined(__APPLE__)
    // macOS turns the AVX-512 state on for a thread at its first AVX-512 instruction, so
    // `xgetbv` reports it off until then; the system says whether it supports it.
    int supported = 0;
    size_t size = sizeof(supported);
    return sysctlbyname("hw.optional.avx512f", &supported, &size, NULL, 0) == 0 && supported != 0;
#else
    unsigned low, high;
    __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return (low & 0xe6) == 0xe6; // SSE, AVX, opmask and both halves of the ZMM state saved
#endif
}

static int vector_folding_present;
/// Per distance in bytes (256, 192, 128, 64, 48, 32, 16): (x^(L+31), x^(L-33)) modulo P.
static uint64_t fold_constants[7][2];
static const size_t fold_distances[7] = {256, 192, 128, 64, 48, 32, 16};

static void setup_vector_folding(void) {
    for (int i = 0; i < 7; i++) {
        uint64_t bits = 8 * (uint64_t)fold_distances[i];
        fold_constants[i][0] = x_to_the_n_mod_p(bits + 31);
        fold_constants[i][1] = x_to_the_n_mod_p(bits - 33);
    }
    vector_folding_present = cpu_has_crc32c() && cpu_has_vector_folding();
}

FOLD_TARGET static inline __m512i fold_constant512(int i) {
    return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)fold_constants[i][1], (long long)fold_constants[i][0]));
}

/// `x` moved forward by the constant's distance, XORed with `data`.
FOLD_TARGET static inline __m512i fold512(__m512i x, __m512i k, __m512i data) {
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

FOLD_TARGET static inline __m128i fold128(__m128i x, int i) {
    __m128i k = _mm_set_epi64x((long long)fold_constants[i][1], (long long)fold_constants[i][0]);
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/// The CRC register of four 64-byte accumulators (`x3` the last): the first three folded into
/// the last, then its four 16-byte chunks into its last chunk, reduced with two `crc32`.
FOLD_TARGET static inline uint64_t reduce_accumulators(__m512i x0, __m512i x1, __m512i x2, __m512i x3) {
    x3 = fold512(x0, fold_constant512(1), x3);
    x3 = fold512(x1, fold_constant512(2), x3);
    x3 = fold512(x2, fold_constant512(3), x3);
    __m128i last = _mm512_extracti32x4_epi32(x3, 3);
    last = _mm_xor_si128(last, fold128(_mm512_extracti32x4_epi32(x3, 0), 4));
    last = _mm_xor_si128(last, fold128(_mm512_extracti32x4_epi32(x3, 1), 5));
    last = _mm_xor_si128(last, fold128(_mm512_extracti32x4_epi32(x3, 2), 6));
    uint64_t result = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(last));
    return _mm_crc32_u64(result, (uint64_t)_mm_extract_epi64(last, 1));
}

/// Folds whole 256-byte rounds of at least one; returns the register after them.
FOLD_TARGET static uint64_t fold_rounds(uint64_t crc, const unsigned char **cursor, size_t *length) {
    const unsigned char *p = *cursor;
    size_t n = *length;
    __m512i x0 = _mm512_loadu_si512((const void *)p), x1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(p + 128)), x3 = _mm512_loadu_si512((const void *)(p + 192));
    x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)(uint32_t)crc)));
    p += 256;
    n -= 256;
    const __m512i k256 = fold_constant512(0);
    while (n >= 256) {
        x0 = fold512(x0, k256, _mm512_loadu_si512((const void *)p));
        x1 = fold512(x1, k256, _mm512_loadu_si512((const void *)(p + 64)));
        x2 = fold512(x2, k256, _mm512_loadu_si512((const void *)(p + 128)));
        x3 = fold512(x3, k256, _mm512_loadu_si512((const void *)(p + 192)));
        p += 256;
        n -= 256;
    }
    uint64_t result = reduce_accumulators(x0, x1, x2, x3);
    *cursor = p;
    *length = n;
    return result;
}

#elif defined(__aarch64__) || defined(__arm64__)
// The CRC32 extension is optional in ARMv8.0: Apple's A7, A8 and A9 (the iPad of the 5th
// generation and the first iPad Pro on iPadOS 16, the Apple TV HD) lack it, every later core
// has it. So the instructions are compiled for a function-level target and the CPU is asked at
// run time, on Apple platforms as on Linux. The compiler's builtins are called rather than
// <arm_acle.h>'s `__crc32c*`, which some clangs declare only when the whole file is compiled
// for the feature (not so for iOS, whose default CPU is an A7).
#define CRC32C_TARGET __attribute__((target("crc")))
#define CRC32C_HAVE_INSTRUCTIONS 1

#if defined(__APPLE__)
#include <sys/sysctl.h>
/// The integer sysctl `name`, or `fallback` when the system has no such name.
static int sysctl_integer(const char *name, int fallback) {
    int value = 0;
    size_t size = sizeof(value);
    return sysctlbyname(name, &value, &size, NULL, 0) == 0 ? value : fallback;
}
// `hw.optional.arm.FEAT_CRC32` is the current name of the feature flag; older systems have
// only `hw.optional.armv8_crc32`.
static int cpu_has_crc32c(void) {
    return sysctl_integer("hw.optional.arm.FEAT_CRC32", 0) != 0 || sysctl_integer("hw.optional.armv8_crc32", 0) != 0;
}
// Every Apple arm64 core from the A7 on has the cryptography extension with PMULL; the
// system is asked where it names the feature.
static int cpu_has_carryless(void) { return sysctl_integer("hw.optional.arm.FEAT_PMULL", 1) != 0; }
#elif defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1 << 4)
#endif
static int cpu_has_crc32c(void) { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
static int cpu_has_carryless(void) { return (getauxval(AT_HWCAP) & HWCAP_PMULL) != 0; }
#else
static int cpu_has_crc32c(void) { return 0; }
static int cpu_has_carryless(void) { return 0; }
#endif

#include <arm_neon.h>
#define CARRYLESS_TARGET __attribute__((target("crc,aes")))
#define CRC32C_HAVE_CARRYLESS 1

/// The carry-less product of two 32-bit polynomials (at most 63 bits).
CARRYLESS_TARGET static inline uint64_t carryless_product(uint32_t a, uint32_t b) {
    return (uint64_t)vmull_p64((poly64_t)a, (poly64_t)b);
}

CARRYLESS_TARGET static inline uint32_t crc_u32_carryless(uint32_t crc, uint32_t value) { return __builtin_arm_crc32cw(crc, value); }

#define FOLD_MINIMUM SIZE_MAX
static const int vector_folding_present = 0;
static void setup_vector_folding(void) {}
static uint64_t fold_rounds(uint64_t crc, const unsigned char **cursor, size_t *length) { (void)cursor; (void)length; return crc; }
static uint64_t fold_and_crc_rounds(uint64_t crc, const unsigned char **cursor, size_t *length) { (void)cursor; (void)length; return crc; }
#define FOLD_AND_CRC_MINIMUM SIZE_MAX

CRC32C_TARGET static inline uint64_t crc_u64(uint64_t crc, uint64_t value) { return __builtin_arm_crc32cd((uint32_t)crc, value); }
CRC32C_TARGET static inline uint64_t crc_u8(uint64_t crc, unsigned char value) {
    return __builtin_arm_crc32cb((uint32_t)crc, value);
}

#else
static int cpu_has_crc32c(void) { return 0; }
static int cpu_has_carryless(void) { return 0; }
static void setup_vector_folding(void) {}
#endif

// MARK: - Shifting a register by a number of bytes

#if CRC32C_HAVE_CARRYLESS
/// a·b modulo the polynomial, in reflected order. The reflected carry-less product of two
/// 32-bit values sits one bit low in a 64-bit word whose top bit is x^0, hence the shift. Its
/// high half is then the x^0…x^31 part as it stands; its low half L stands for L·x^32, which a
/// `crc32` instruction from a zero register (no inversions) reduces modulo the polynomial.
CARRYLESS_TARGET static inline uint32_t multiply_carryless(uint32_t a, uint32_t b) {
    uint64_t product = carryless_product(a, b) << 1;
    return crc_u32_carryless(0, (uint32_t)product) ^ (uint32_t)(product >> 32);
}

CARRYLESS_TARGET uint32_t archivist_crc32c_shift_carryless(uint32_t crc, uint64_t length) {
    pthread_once(&setup_once, setup); // the powers
    for (int k = 0; length; k++, length >>= 1)
        if (length & 1) crc = multiply_carryless(byte_powers[k], crc);
    return crc;
}
#else
uint32_t archivist_crc32c_shift_carryless(uint32_t crc, uint64_t length) {
    // Never called: archivist_crc32c_carryless_available() is false here. Correct anyway.
    pthread_once(&setup_once, setup);
    for (int k = 0; length; k++, length >>= 1)
        if (length & 1) crc = multiply_mod_p(byte_powers[k], crc);
    return crc;
}
#endif

// MARK: - The checksum

#if CRC32C_HAVE_INSTRUCTIONS
/// A register multiplied by x^(8·block) through the block's four byte tables.
static inline uint32_t shift(const uint32_t table[4][256], uint32_t crc) {
    return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^ table[2][(crc >> 16) & 0xff] ^ table[3][crc >> 24];
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t value;
    memcpy(&value, p, 8);
    return value; // both targets are little-endian, the order the instruction expects
}

/// Rounds of three streams of `block` bytes each while the input lasts, merged through `table`.
CRC32C_TARGET static inline uint64_t interleaved(
    uint64_t crc0, const unsigned char **cursor, size_t *length, size_t block, const uint32_t table[4][256]) {
    const unsigned char *p = *cursor;
    size_t n = *length;
    while (n >= 3 * block) {
        uint64_t crc1 = 0, crc2 = 0;
        const unsigned char *end = p + block;
        do {
            crc0 = crc_u64(crc0, load64(p));
            crc1 = crc_u64(crc1, load64(p + block));
            crc2 = crc_u64(crc2, load64(p + 2 * block));
            p += 8;
        } while (p < end);
        crc0 = shift(table, (uint32_t)crc0) ^ (uint32_t)crc1;
        crc0 = shift(table, (uint32_t)crc0) ^ (uint32_t)crc2;
        p += 2 * block;
        n -= 3 * block;
    }
    *cursor = p;
    *length = n;
    return crc0;
}

#if defined(__x86_64__)
// Folding keeps the vector unit busy (its carry-less multiplies bound it, whatever the number
// of accumulators) and leaves the integer unit's `crc32` idle. So long inputs are split in
// two: the first 256·m bytes are folded, 256 a round, while three `crc32` streams take the
// rest, 3 × FOLD_STREAM_BYTES a round, in the same loop (the core runs both at once); the
// streams' registers are then appended to the folded one with one carry-less multiply each.
// The two units' work overlaps instead of adding up (the `crc32c` suite guards it).

/// Bytes each `crc32` stream takes per folding round (5 words; the balance between the
/// streams and the folding is flat around it, and the `crc32c` suite guards it).
#define FOLD_STREAM_BYTES 40
/// Bytes of one round of `fold_and_crc_rounds`.
#define FOLD_AND_CRC_ROUND (256 + 3 * FOLD_STREAM_BYTES)
/// The shortest input split so: below it, appending the streams' registers costs about what
/// running them beside the folding saves.
#define FOLD_AND_CRC_MINIMUM 6144

/// Whole rounds of folding and three `crc32` streams, at least two; returns the register
/// after them, past which `cursor` and `length` are moved (fewer than a round's bytes left).
FOLD_TARGET static uint64_t fold_and_crc_rounds(uint64_t crc, const unsigned char **cursor, size_t *length) {
    size_t rounds = *length / FOLD_AND_CRC_ROUND;
    if (rounds < 2) return crc;
    const size_t stream = FOLD_STREAM_BYTES * rounds;
    const unsigned char *p = *cursor;
    const unsigned char *s0 = p + 256 * rounds, *s1 = s0 + stream, *s2 = s1 + stream;
    uint64_t c0 = 0, c1 = 0, c2 = 0;
    __m512i x0 = _mm512_loadu_si512((const void *)p), x1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(p + 128)), x3 = _mm512_loadu_si512((const void *)(p + 192));
    x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)(uint32_t)crc)));
    p += 256;
    const __m512i k256 = fold_constant512(0);
    for (size_t round = 0; round < rounds; round++) {
        if (round > 0) { // the first round's 256 bytes were loaded above
            x0 = fold512(x0, k256, _mm512_loadu_si512((const void *)p));
            x1 = fold512(x1, k256, _mm512_loadu_si512((const void *)(p + 64)));
            x2 = fold512(x2, k256, _mm512_loadu_si512((const void *)(p + 128)));
            x3 = fold512(x3, k256, _mm512_loadu_si512((const void *)(p + 192)));
            p += 256;
        }
        for (int word = 0; word < FOLD_STREAM_BYTES / 8; word++) {
            c0 = crc_u64(c0, load64(s0));
            c1 = crc_u64(c1, load64(s1));
            c2 = crc_u64(c2, load64(s2));
            s0 += 8;
            s1 += 8;
            s2 += 8;
        }
    }
    uint64_t folded = reduce_accumulators(x0, x1, x2, x3);
    // The register after A then a stream S is shift(A, |S|) XOR S's register from zero.
    uint32_t power = archivist_crc32c_shift_carryless(1u << 31, stream); // x^(8·|S|): x^0 shifted
    uint32_t result = multiply_carryless(power, (uint32_t)folded) ^ (uint32_t)c0;
    result = multiply_carryless(power, result) ^ (uint32_t)c1;
    result = multiply_carryless(power, result) ^ (uint32_t)c2;
    *cursor = s2;
    *length -= FOLD_AND_CRC_ROUND * rounds;
    return result;
}
#endif

CRC32C_TARGET uint32_t archivist_crc32c_hardware(uint32_t seed, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t crc = ~seed;
    // Byte steps up to an 8-byte boundary, so the word loads below never straddle a line
    // more often than they must.
    while (count && ((uintptr_t)p & 7)) {
        crc = crc_u8(crc, *p++);
        count--;
    }
    if (count >= 3 * CRC32C_SHORT) {
        pthread_once(&setup_once, setup); // the shift tables and fold constants
        if (count >= FOLD_MINIMUM && vector_folding_present) {
            if (count >= FOLD_AND_CRC_MINIMUM) crc = fold_and_crc_rounds(crc, &p, &count);
            if (count >= 256) crc = fold_rounds(crc, &p, &count);
        }
        crc = interleaved(crc, &p, &count, CRC32C_LONG, shift_long);
        crc = interleaved(crc, &p, &count, CRC32C_SHORT, shift_short);
    }
    while (count >= 8) {
        crc = crc_u64(crc, load64(p));
        p += 8;
        count -= 8;
    }
    while (count) {
        crc = crc_u8(crc, *p++);
        count--;
    }
    return ~(uint32_t)crc;
}
#else
uint32_t archivist_crc32c_hardware(uint32_t seed, const void *bytes, size_t count) {
    // Never called: archivist_crc32c_hardware_available() is false here. Correct anyway.
    const unsigned char *p = bytes;
    uint32_t crc = ~seed;
    while (count--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = crc & 1 ? (crc >> 1) ^ CRC32C_POLY : crc >> 1;
    }
    return ~crc;
}
#endif
