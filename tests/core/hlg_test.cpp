// The HLG curve of HDR maps (spec 8.9): BT.2100's constants, the decoding's anchor points, and the writer's encoding as
// its inverse.
#include <gtest/gtest.h>

#include <cmath>

#include "core/hlg.h"

namespace nmc {
namespace {

TEST(Hlg, ConstantsAreBt2100s) {
    EXPECT_FLOAT_EQ(kHlgB, static_cast<float>(1.0 - 4.0 * kHlgA));
    EXPECT_FLOAT_EQ(kHlgC, static_cast<float>(0.5 - kHlgA * std::log(4.0 * kHlgA)));
}

// The square-root segment ends at e = 0.5, x = 1/12, where the logarithmic one starts; e = 1 is the peak.
TEST(Hlg, DecodingMeetsItsAnchors) {
    EXPECT_EQ(hlg_decode(0.0f), 0.0f);
    EXPECT_EQ(hlg_decode(0.5f), 0.25f / 3.0f);
    EXPECT_NEAR(hlg_decode(std::nextafter(0.5f, 1.0f)), 1.0f / 12.0f, 1e-6f);
    EXPECT_NEAR(hlg_decode(1.0f), 1.0f, 2e-6f);
    float previous = 0;
    for (int i = 1; i <= 1 << 16; ++i) {
        const float v = hlg_decode(static_cast<float>(i) / static_cast<float>(1 << 16));
        ASSERT_GT(v, previous) << i;
        previous = v;
    }
}

// The writer's targets decode back to the values: within a relative 2^-20 (float32 rounding of both curves), and
// black exactly.
TEST(Hlg, EncodingIsTheInverse) {
    EXPECT_EQ(hlg_encode(0.0f), 0.0f);
    EXPECT_EQ(hlg_encode(-3.0f), 0.0f);  // clamped to [0, 1]
    EXPECT_EQ(hlg_encode(2.0f), hlg_encode(1.0f));
    for (double x = 1e-6; x <= 1.0; x *= 1.01) {
        const float e = hlg_encode(static_cast<float>(x));
        ASSERT_GE(e, 0.0f);
        ASSERT_LE(e, 1.0f);
        EXPECT_NEAR(hlg_decode(e), x, x * 0x1p-20) << x;
    }
}

TEST(Hlg, HdrMapsAreFloatMapsBeyondOneAndNeverNegative) {
    EXPECT_TRUE(is_hdr_map(SampleType::float32, 0.0f, 16.0f));
    EXPECT_TRUE(is_hdr_map(SampleType::float16, 0.5f, 1.5f));
    EXPECT_FALSE(is_hdr_map(SampleType::float32, 0.0f, 1.0f));   // within [0, 1]: stored linear
    EXPECT_FALSE(is_hdr_map(SampleType::float32, -0.1f, 16.0f));  // signed data (displacement)
    EXPECT_FALSE(is_hdr_map(SampleType::uint16, 0.0f, 16.0f));
}

}  // namespace
}  // namespace nmc
