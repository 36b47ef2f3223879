// OpenBLAS's kernel override for virtual machines (cli/openblas_reexec.h): which detected cores get one.
#include "cli/openblas_reexec.h"

#include <gtest/gtest.h>

namespace nmc::cli {
namespace {

TEST(OpenblasCore, GenericCoresOnAvx2CpusGetTheMatchingKernels) {
    EXPECT_EQ(openblas_core_override("Prescott", true, false), "Haswell");
    EXPECT_EQ(openblas_core_override("Prescott", true, true), "SkylakeX");
    EXPECT_EQ(openblas_core_override("NEHALEM", true, false), "Haswell");      // OpenBLAS's names are case-free
    EXPECT_EQ(openblas_core_override("Sandybridge", true, true), "SkylakeX");  // AVX without AVX2 kernels
}

TEST(OpenblasCore, RecognisedCoresAndOlderCpusKeepOpenblasChoice) {
    EXPECT_EQ(openblas_core_override("Haswell", true, false), "");
    EXPECT_EQ(openblas_core_override("SkylakeX", true, true), "");
    EXPECT_EQ(openblas_core_override("Zen", true, false), "");
    EXPECT_EQ(openblas_core_override("Cooperlake", true, true), "");
    EXPECT_EQ(openblas_core_override("Prescott", false, false), "");  // the CPU really is pre-AVX2
    EXPECT_EQ(openblas_core_override("", true, true), "");            // not OpenBLAS
}

}  // namespace
}  // namespace nmc::cli
