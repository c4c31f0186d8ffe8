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

/// x^(8·n) modulo the polynomial.
static uint32_t x_to_the_8n_mod_p(size_t n) {
    uint32_t power = 1u << 30; // x^1, squared below into x^(2^k)
    uint32_t p = 1u << 31;     // x^0
    for (int k = 0; k < 3; k++) power = multiply_mod_p(power, power);
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
    uint32_t factor = x_to_the_8n_mod_p(length);
    for (unsigned byte = 0; byte < 4; byte++)
        for (uint32_t value = 0; value < 256; value++)
            table[byte][value] = multiply_mod_p(factor, value << (8 * byte));
}

static int cpu_has_crc32c(void);

static void setup(void) {
    fill_shift_table(shift_long, CRC32C_LONG);
    fill_shift_table(shift_short, CRC32C_SHORT);
    hardware_present = cpu_has_crc32c();
}

bool archivist_crc32c_hardware_available(void) {
    pthread_once(&setup_once, setup);
    return hardware_present != 0;
}

// MARK: - The instructions, per architecture

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#define CRC32C_TARGET __attribute__((target("sse4.2")))
#define CRC32C_HAVE_INSTRUCTIONS 1

static int cpu_has_crc32c(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

CRC32C_TARGET static inline uint64_t crc_u64(uint64_t crc, uint64_t value) { return _mm_crc32_u64(crc, value); }
CRC32C_TARGET static inline uint64_t crc_u8(uint64_t crc, unsigned char value) {
    return _mm_crc32_u8((uint32_t)crc, value);
}

#elif defined(__aarch64__) || defined(__arm64__)
#include <arm_acle.h>
#if defined(__ARM_FEATURE_CRC32)
#define CRC32C_TARGET
#else
#define CRC32C_TARGET __attribute__((target("crc")))
#endif
#define CRC32C_HAVE_INSTRUCTIONS 1

#if defined(__APPLE__) || defined(__ARM_FEATURE_CRC32)
// Every Apple arm64 CPU has the CRC32 extension (it is mandatory from ARMv8.1).
static int cpu_has_crc32c(void) { return 1; }
#elif defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
static int cpu_has_crc32c(void) { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
#else
static int cpu_has_crc32c(void) { return 0; }
#endif

CRC32C_TARGET static inline uint64_t crc_u64(uint64_t crc, uint64_t value) { return __crc32cd((uint32_t)crc, value); }
CRC32C_TARGET static inline uint64_t crc_u8(uint64_t crc, unsigned char value) {
    return __crc32cb((uint32_t)crc, value);
}

#else
static int cpu_has_crc32c(void) { return 0; }
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
        pthread_once(&setup_once, setup); // the shift tables
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
