// OpenBLAS's kernel choice on virtual machines: see openblas_reexec.h.
#include "cli/openblas_reexec.h"

#include <cstdlib>

#include "compressor/openblas_core.h"
#include "decoder/cpu/cpu_features.h"

#if defined(__linux__)
#include <unistd.h>
#endif

namespace nmc::cli {

std::string openblas_core_override(const std::string& detected_core, bool cpu_has_avx2_fma, bool cpu_has_avx512) {
    // OpenBLAS's x86 cores without AVX2 kernels (names as openblas_get_corename gives them, case-insensitive there).
    static const char* const kPreAvx2Cores[] = {"prescott",    "core2",  "penryn",     "dunnington", "nehalem", "atom",
                                                "sandybridge", "katmai", "coppermine", "northwood",  "banias"};
    std::string lower;
    for (char c : detected_core) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    bool generic = false;
    for (const char* core : kPreAvx2Cores) generic = generic || lower == core;
    if (!generic || !cpu_has_avx2_fma) return "";
    return cpu_has_avx512 ? "SkylakeX" : "Haswell";
}

void reexec_with_openblas_core_if_generic(char** argv) {
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
    const CpuFeatures& cpu = cpu_features();
    const bool avx2_fma = cpu.avx2 && cpu.fma;
    const bool avx512 = cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512dq;
    const std::string core = openblas_core_override(openblas_core_name(), avx2_fma, avx512);
    if (core.empty()) return;
    if (setenv("OPENBLAS_CORETYPE", core.c_str(), 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE");  // execv failed: carry on with OpenBLAS's own choice
#else
    (void)argv;
#endif
}

}  // namespace nmc::cli
