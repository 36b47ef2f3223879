// CPUID leaves and bits: Intel SDM volume 2A, "CPUID"; XCR0's state components: volume 1, section 13.
#include "decoder/cpu/cpu_features.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace nmc {

namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr uint64_t kXcr0AvxState = 0x6;      // SSE and AVX registers (bits 1, 2)
constexpr uint64_t kXcr0Avx512State = 0xe0;  // opmask, ZMM0-15 upper halves, ZMM16-31 (bits 5, 6, 7)

bool bit(unsigned reg, int index) {
    return ((reg >> index) & 1u) != 0;
}

// XGETBV as an instruction rather than _xgetbv(), which needs the XSAVE target enabled in every compiler.
uint64_t read_xcr0() {
    uint32_t lo = 0;
    uint32_t hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t{hi} << 32) | lo;
}

CpuFeatures detect() {
    CpuFeatures f;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = bit(c, 27);
    const bool avx = bit(c, 28);
    if (!osxsave || !avx) return f;
    const uint64_t xcr0 = read_xcr0();
    if ((xcr0 & kXcr0AvxState) != kXcr0AvxState) return f;
    f.fma = bit(c, 12);
    f.f16c = bit(c, 29);

    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
    const unsigned leaf7_subleaves = a;
    f.avx2 = bit(b, 5);
    if ((xcr0 & kXcr0Avx512State) != kXcr0Avx512State) return f;
    f.avx512f = bit(b, 16);
    f.avx512dq = bit(b, 17);
    f.avx512bw = bit(b, 30);
    f.avx512vl = bit(b, 31);
    f.avx512fp16 = bit(d, 23);
    if (leaf7_subleaves >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512bf16 = bit(a, 5);
    return f;
}
#else
CpuFeatures detect() {
    return {};
}
#endif

}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = detect();
    return features;
}

}  // namespace nmc
