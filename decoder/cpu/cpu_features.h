// Which instruction-set extensions this x86-64 CPU runs, read from CPUID and XGETBV: the one feature check behind
// the CPU decoder's kernel choice and the trainer's OpenBLAS core choice. Written against <cpuid.h> rather than
// __builtin_cpu_supports, whose feature names differ between compilers (Clang 14 knows neither "f16c" nor
// "avx512fp16").
#pragma once

namespace nmc {

// An extension counts only when the CPU has it and the operating system saves its registers (XCR0: the AVX state
// for AVX, AVX2, FMA and F16C; the AVX-512 state as well for AVX-512). All false on other architectures.
struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512dq = false;
    bool avx512bf16 = false;
    bool avx512fp16 = false;
};

// This CPU's features, read once.
const CpuFeatures& cpu_features();

}  // namespace nmc
