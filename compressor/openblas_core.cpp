// OpenBLAS's core and thread count: see openblas_core.h.
#include "compressor/openblas_core.h"

#include <mutex>

#if defined(__linux__)
#include <dlfcn.h>
#endif

namespace nmc {

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
