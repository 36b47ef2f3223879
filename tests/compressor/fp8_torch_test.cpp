// The trainer's E4M3 rounding in LibTorch operations must be bit-exact with core's float_to_fp8_e4m3, or the
// trained model would not be the model the file stores.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compressor/compressor.h"
#include "core/number_formats.h"

namespace nmc {
namespace {

void expect_matches_core(const std::vector<float>& values) {
    const std::vector<float> rounded = round_to_fp8_e4m3_torch(values);
    ASSERT_EQ(rounded.size(), values.size());
    size_t mismatches = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        const float expected = round_to_fp8_e4m3(values[i]);
        const bool same = std::isnan(expected) ? std::isnan(rounded[i]) : float_bits(expected) == float_bits(rounded[i]);
        if (!same && ++mismatches <= 5)
            ADD_FAILURE() << "x = " << values[i] << " (0x" << std::hex << float_bits(values[i]) << std::dec
                          << "): core " << expected << ", torch " << rounded[i];
    }
    EXPECT_EQ(mismatches, 0u);
}

// Every 61st float32 bit pattern of both signs from 0 to beyond 2^10 (past the saturation point), about
// 36 million values: every exponent of E4M3's range at a fine mantissa spacing.
TEST(Fp8Torch, DenseSweepMatchesCore) {
    std::vector<float> values;
    const uint32_t end = float_bits(1024.0f);
    values.reserve(2 * (end / 61 + 1));
    for (uint32_t b = 0; b <= end; b += 61) {
        values.push_back(float_from_bits(b));
        values.push_back(float_from_bits(b | 0x80000000u));
    }
    expect_matches_core(values);
}

// The rounding ties and their neighbours: the midpoint between every pair of adjacent E4M3 values (where
// ties-to-even decides), one float below and above it, and the special values.
TEST(Fp8Torch, TiesNeighboursAndSpecialsMatchCore) {
    std::vector<float> values;
    for (uint32_t code = 0; code < 0x7E; ++code) {
        const float a = fp8_e4m3_to_float(static_cast<uint8_t>(code));
        const float b = fp8_e4m3_to_float(static_cast<uint8_t>(code + 1));
        const float mid = a + (b - a) * 0.5f;
        for (float x : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1000.0f), b}) {
            values.push_back(x);
            values.push_back(-x);
        }
    }
    const float inf = std::numeric_limits<float>::infinity();
    for (float x : {0.0f, -0.0f, 448.0f, 449.0f, 464.0f, 465.0f, 1e30f, inf, -inf,
                    std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                    std::numeric_limits<float>::max(), std::nanf("")})
        values.push_back(x);
    expect_matches_core(values);
}

}  // namespace
}  // namespace nmc
