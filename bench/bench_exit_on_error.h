// Error handling shared by the benchmark programs: a failed CUDA call or nmc Status prints what failed and ends
// the program with exit code 1 (a benchmark has nothing to recover to).
#pragma once

#include <cstdio>
#include <cstdlib>

#include "core/status.h"

#define BENCH_CHECK(call)                                                                                       \
    do {                                                                                                        \
        const cudaError_t e_ = (call);                                                                          \
        if (e_ != cudaSuccess) {                                                                                \
            std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(1);                                                                                       \
        }                                                                                                       \
    } while (0)

namespace nmc::bench {

// `what`: the step that failed, for the message ("loading the material").
inline void exit_on_error(const Status& s, const char* what) {
    if (s.ok()) return;
    std::fprintf(stderr, "error while %s: %s\n", what, s.to_string().c_str());
    std::exit(1);
}

}  // namespace nmc::bench
