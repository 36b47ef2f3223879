// The CUDA decoder's FP8 E4M3 rounding must be the spec's (core's reference conversion) for every float class:
// normals, subnormals, ties, saturation, zeros, infinities and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/number_formats.h"
#include "cuda/cuda_device.h"
#include "decoder/cuda/cuda_decoder.h"
#include "tests/cuda/gpu_requirement.h"

namespace nmc {
namespace {

bool require_device() {
    return test::gpu_requirement_met(cuda_device_count() > 0, "no CUDA device was found");
}

TEST(CudaNumerics, DeviceQueryIsConsistent) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    auto info = query_cuda_device(0);
    ASSERT_TRUE(info.ok()) << info.status().to_string();
    EXPECT_GT(info->multiprocessors, 0);
    EXPECT_GE(info->compute_major, 7);
    auto missing = query_cuda_device(cuda_device_count());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), StatusCode::backend_unavailable);
}

TEST(CudaNumerics, Fp8RoundingMatchesSpecReference) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    // Every sign/exponent/high-mantissa combination with low mantissa bits that produce exact values, ties,
    // and values just beside ties, plus random floats.
    std::vector<float> in;
    const uint32_t low_patterns[] = {0x00000, 0x00001, 0x7FFFF, 0x80000, 0x80001, 0xFFFFF};
    for (uint32_t high = 0; high < (1u << 12); ++high)
        for (uint32_t low : low_patterns) in.push_back(float_from_bits(high << 20 | low));
    std::mt19937 rng(7);
    for (int i = 0; i < (1 << 20); ++i) in.push_back(float_from_bits(rng()));
    std::vector<float> out(in.size());
    Status s = cuda_round_to_fp8_e4m3(0, in.data(), out.data(), in.size());
    ASSERT_TRUE(s.ok()) << s.to_string();
    size_t mismatches = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const float expected = round_to_fp8_e4m3(in[i]);
        const bool same = (std::isnan(expected) && std::isnan(out[i])) ||
                          (expected == out[i] && std::signbit(expected) == std::signbit(out[i]));
        if (!same && mismatches++ < 10) ADD_FAILURE() << "x=" << in[i] << " expected " << expected << " got " << out[i];
    }
    EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace nmc
