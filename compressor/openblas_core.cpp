// OpenBLAS's kernel choice on virtual machines: see openblas_core.h.
#include "compressor/openblas_core.h"

#include <cstdlib>
#include <mutex>

#include "decoder/cpu/cpu_features.h"

#if defined(__linux__)
#include <dlfcn.h>
#include <unistd.h>
#endif

namespace nmc {

std::string openblas_core_override(const std::string& detected_core, bool cpu_has_avx2_fma, bool cpu_has_avx512) {
    // OpenBLAS's x86 cores without AVX2 kernels (names as openblas_get_corename gives them, case-insensitive there).
    static const char* const kPreAvx2Cores[] = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
                                                "sandybridge", "katmai", "coppermine", "northwood", "banias"};
    std::string lower;
    for (char c : detected_core) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    bool generic = false;
    for (const char* core : kPreAvx2Cores) generic = generic || lower == core;
    if (!generic || !cpu_has_avx2_fma) return "";
    return cpu_has_avx512 ? "SkylakeX" : "Haswell";
}

std::string openblas_core_name() {
#if defined(__linux__)
    using CoreName = char* (*)();
    if (auto name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) {
        const char* core = name();
        return core ? core : "";
    }
#endif
    return "";
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

namespace {

using GetThreads = int (*)();
using SetThreads = void (*)(int);

template <typename F>
F openblas_function(const char* name) {
#if defined(__linux__)
    return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
#else
    (void)name;
    return nullptr;
#endif
}

std::mutex pin_mutex;
int pin_holders = 0;
int threads_before_pin = 0;

}  // namespace

OneOpenBlasThread::OneOpenBlasThread() {
    const auto get = openblas_function<GetThreads>("openblas_get_num_threads");
    const auto set = openblas_function<SetThreads>("openblas_set_num_threads");
    if (!get || !set) return;
    const std::lock_guard<std::mutex> lock(pin_mutex);
    if (pin_holders++ == 0) {
        threads_before_pin = get();
        set(1);
    }
}

OneOpenBlasThread::~OneOpenBlasThread() {
    const auto set = openblas_function<SetThreads>("openblas_set_num_threads");
    if (!set) return;
    const std::lock_guard<std::mutex> lock(pin_mutex);
    if (--pin_holders == 0) set(threads_before_pin);
}

int openblas_threads() {
    const auto get = openblas_function<GetThreads>("openblas_get_num_threads");
    return get ? get() : 0;
}

}  // namespace nmc
