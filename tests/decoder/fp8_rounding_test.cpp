// The decoder's vectorised FP8 E4M3 rounding (portable and AVX-512) against core's scalar float_to_fp8_e4m3 for
// a dense sweep of float32 bit patterns: every 4096th pattern and its neighbours, which includes every rounding
// midpoint, the subnormal range, the saturation boundary, infinities and NaNs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/number_formats.h"
#include "decoder/cpu/decoder_model.h"

namespace nmc {
namespace {

std::vector<float> sweep_inputs() {
    std::vector<float> inputs;
    for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4096) {
        for (int delta = -1; delta <= 1; ++delta) {
            const auto bits = static_cast<uint32_t>(b + static_cast<uint64_t>(delta));  // wraps at 0, harmless
            inputs.push_back(float_from_bits(bits));
        }
    }
    for (float x : {0.0f, -0.0f, 448.0f, -448.0f, 464.0f, 480.0f, 0.015625f, 0.0009765625f, 0.001953125f,
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::quiet_NaN()}) {
        inputs.push_back(x);
    }
    return inputs;
}

// Compares bit patterns, so -0.0 and +0.0 and NaN payloads count.
void expect_matches_core(const std::vector<float>& inputs, const std::vector<float>& rounded) {
    size_t mismatches = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const float expected = round_to_fp8_e4m3(inputs[i]);
        if (float_bits(rounded[i]) != float_bits(expected)) {
            if (++mismatches <= 10) {
                ADD_FAILURE() << "input 0x" << std::hex << float_bits(inputs[i]) << " (" << inputs[i] << "): got 0x"
                              << float_bits(rounded[i]) << ", core gives 0x" << float_bits(expected);
            }
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of " << inputs.size() << " inputs";
}

TEST(Fp8Rounding, PortableMatchesCoreOnDenseSweep) {
    const std::vector<float> inputs = sweep_inputs();
    std::vector<float> rounded(inputs.size());
    cpu_detail::round_to_fp8_portable(inputs.data(), rounded.data(), inputs.size());
    expect_matches_core(inputs, rounded);
}

#if NMC_HAVE_X86_KERNELS
TEST(Fp8Rounding, Avx2MatchesCoreOnDenseSweep) {
    if (!cpu_detail::avx2_supported()) GTEST_SKIP() << "this CPU lacks AVX2 and FMA";
    std::vector<float> inputs = sweep_inputs();
    inputs.resize(inputs.size() - 5);  // an odd count exercises the tail
    std::vector<float> rounded(inputs.size());
    cpu_detail::round_to_fp8_avx2(inputs.data(), rounded.data(), inputs.size());
    expect_matches_core(inputs, rounded);
}

TEST(Fp8Rounding, Avx512MatchesCoreOnDenseSweep) {
    if (!cpu_detail::avx512bf16_supported()) GTEST_SKIP() << "this CPU lacks AVX-512 BF16";
    std::vector<float> inputs = sweep_inputs();
    inputs.resize(inputs.size() - 5);  // an odd count exercises the masked tail
    std::vector<float> rounded(inputs.size());
    cpu_detail::round_to_fp8_avx512(inputs.data(), rounded.data(), inputs.size());
    expect_matches_core(inputs, rounded);
}
#endif

}  // namespace
}  // namespace nmc
