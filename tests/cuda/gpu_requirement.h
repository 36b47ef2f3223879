// The GPU tests' precondition: a test that finds no GPU (or no CUDA backend) is skipped on CPU-only machines and
// fails where the build requires a GPU (NMC_REQUIRE_GPU, which scripts/gpu-check.sh sets), so a GPU run can
// never pass by skipping.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace nmc::test {

// `present`: whether what the test needs is here. When it is not, records a failure under NMC_REQUIRE_GPU naming
// `missing`, and returns false: the caller then skips or returns.
inline bool gpu_requirement_met(bool present, const std::string& missing) {
    if (present) return true;
#ifdef NMC_REQUIRE_GPU
    ADD_FAILURE() << "NMC_REQUIRE_GPU is set but " << missing;
#else
    (void)missing;
#endif
    return false;
}

}  // namespace nmc::test
