// FP8 E4M3 and binary16 conversions, exhaustively: every code decodes to the value computed here
// independently (double arithmetic from the bit fields), every code round-trips, and rounding follows
// spec 2.1/2.2 (ties to even, saturation, NaN, signed zero, subnormals).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/number_formats.h"

namespace nmc {
namespace {

// E4M3 value from the spec's formulas, in double by repeated halving/doubling (no ldexp, no tables).
double e4m3_reference(unsigned code) {
    const int sign = (code >> 7) & 1;
    const int exponent = static_cast<int>((code >> 3) & 0xF);
    const int mantissa = static_cast<int>(code & 7);
    double scale = 1.0;
    double magnitude;
    if (exponent == 0) {
        for (int i = 0; i < 9; ++i) scale /= 2.0;
        magnitude = mantissa * scale;
    } else {
        for (int i = 0; i < exponent; ++i) scale *= 2.0;
        for (int i = 0; i < 7; ++i) scale /= 2.0;
        magnitude = (1.0 + mantissa / 8.0) * scale;
    }
    return sign ? -magnitude : magnitude;
}

double fp16_reference(unsigned code) {
    const int sign = (code >> 15) & 1;
    const int exponent = static_cast<int>((code >> 10) & 0x1F);
    const int mantissa = static_cast<int>(code & 0x3FF);
    double scale = 1.0;
    double magnitude;
    if (exponent == 0) {
        for (int i = 0; i < 24; ++i) scale /= 2.0;
        magnitude = mantissa * scale;
    } else {
        for (int i = 0; i < exponent; ++i) scale *= 2.0;
        for (int i = 0; i < 15; ++i) scale /= 2.0;
        magnitude = (1.0 + mantissa / 1024.0) * scale;
    }
    return sign ? -magnitude : magnitude;
}

bool is_e4m3_nan(unsigned code) {
    return (code & 0x7F) == 0x7F;
}

bool same_bits(float a, float b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(Fp8E4M3, EveryCodeDecodesToTheSpecValue) {
    for (unsigned code = 0; code < 256; ++code) {
        const float v = fp8_e4m3_to_float(static_cast<uint8_t>(code));
        if (is_e4m3_nan(code)) {
            EXPECT_TRUE(std::isnan(v)) << code;
            continue;
        }
        EXPECT_EQ(static_cast<double>(v), e4m3_reference(code)) << "code " << code;
        EXPECT_EQ(std::signbit(v), code >= 0x80) << code;
    }
    EXPECT_EQ(fp8_e4m3_to_float(0x7E), 448.0f);
    EXPECT_EQ(fp8_e4m3_to_float(0x38), 1.0f);
    EXPECT_EQ(fp8_e4m3_to_float(0x08), 0.015625f);     // smallest normal 2^-6
    EXPECT_EQ(fp8_e4m3_to_float(0x01), 0.001953125f);  // smallest subnormal 2^-9
    EXPECT_EQ(fp8_e4m3_to_float(0xC0), -2.0f);
}

TEST(Fp8E4M3, EveryCodeRoundTrips) {
    for (unsigned code = 0; code < 256; ++code) {
        if (is_e4m3_nan(code)) continue;
        EXPECT_EQ(float_to_fp8_e4m3(fp8_e4m3_to_float(static_cast<uint8_t>(code))), code) << code;
    }
}

TEST(Fp8E4M3, MidpointsRoundToEvenAndNeighboursToNearest) {
    // Consecutive non-negative codes c, c + 1 are consecutive values; the even code has the even mantissa.
    for (unsigned c = 0; c + 1 < 0x7F; ++c) {
        for (const unsigned sign : {0u, 0x80u}) {
            const float a = fp8_e4m3_to_float(static_cast<uint8_t>(c | sign));
            const float b = fp8_e4m3_to_float(static_cast<uint8_t>((c + 1) | sign));
            const float mid = (a + b) / 2;  // exact: few significant bits
            const unsigned even = (c % 2 == 0) ? c : c + 1;
            EXPECT_EQ(float_to_fp8_e4m3(mid), even | sign) << "midpoint of " << c;
            EXPECT_EQ(float_to_fp8_e4m3(std::nextafter(mid, a)), c | sign) << "just below midpoint of " << c;
            EXPECT_EQ(float_to_fp8_e4m3(std::nextafter(mid, b)), (c + 1) | sign) << "just above midpoint of " << c;
        }
    }
}

TEST(Fp8E4M3, SaturatesAbove448) {
    for (const float x : {448.5f, 464.0f, 480.0f, 1e6f, 3.4e38f, INFINITY}) {
        EXPECT_EQ(float_to_fp8_e4m3(x), 0x7E) << x;
        EXPECT_EQ(float_to_fp8_e4m3(-x), 0xFE) << -x;
    }
    EXPECT_EQ(round_to_fp8_e4m3(1000.0f), 448.0f);
}

TEST(Fp8E4M3, NanZeroAndSubnormals) {
    EXPECT_EQ(float_to_fp8_e4m3(std::nanf("")), 0x7F);
    EXPECT_EQ(float_to_fp8_e4m3(0.0f), 0x00);
    EXPECT_EQ(float_to_fp8_e4m3(-0.0f), 0x80);
    const float tiny = 0.001953125f;                  // 2^-9
    EXPECT_EQ(float_to_fp8_e4m3(tiny / 2), 0x00);     // tie between 0 and 1: even is 0
    EXPECT_EQ(float_to_fp8_e4m3(tiny * 1.5f), 0x02);  // tie between 1 and 2: even is 2
    EXPECT_EQ(float_to_fp8_e4m3(std::nextafter(tiny / 2, 1.0f)), 0x01);
    EXPECT_EQ(float_to_fp8_e4m3(1e-30f), 0x00);
    EXPECT_EQ(float_to_fp8_e4m3(-1e-30f), 0x80);      // sign kept when rounding to zero
    EXPECT_EQ(float_to_fp8_e4m3(tiny * 7.5f), 0x08);  // tie between 7 and the smallest normal (8)
}

TEST(Fp16, EveryCodeDecodesAndRoundTrips) {
    for (unsigned code = 0; code < 65536; ++code) {
        const auto c = static_cast<uint16_t>(code);
        const float v = fp16_to_float(c);
        const bool nan = (code & 0x7C00) == 0x7C00 && (code & 0x3FF) != 0;
        if (nan) {
            ASSERT_TRUE(std::isnan(v)) << code;
            ASSERT_EQ(float_to_fp16(v) & 0x7C00, 0x7C00) << code;
            continue;
        }
        if ((code & 0x7FFF) == 0x7C00) {
            ASSERT_TRUE(std::isinf(v)) << code;
        } else {
            ASSERT_EQ(static_cast<double>(v), fp16_reference(code)) << code;
        }
        ASSERT_EQ(float_to_fp16(v), c) << code;
    }
}

TEST(Fp16, MidpointsRoundToEven) {
    for (unsigned c = 0; c < 0x7BFF; ++c) {
        const float a = fp16_to_float(static_cast<uint16_t>(c));
        const float b = fp16_to_float(static_cast<uint16_t>(c + 1));
        const float mid = (a + b) / 2;  // exact: 12 significant bits at most
        ASSERT_EQ(float_to_fp16(mid), (c % 2 == 0) ? c : c + 1) << "midpoint of " << c;
        ASSERT_EQ(float_to_fp16(std::nextafter(mid, a)), c) << c;
        ASSERT_EQ(float_to_fp16(std::nextafter(mid, b)), c + 1) << c;
    }
}

TEST(Fp16, OverflowNanAndSignedZero) {
    EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
    EXPECT_EQ(float_to_fp16(65519.0f), 0x7BFF);
    EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);  // the midpoint to 65536 ties to even: infinity
    EXPECT_EQ(float_to_fp16(-1e10f), 0xFC00);
    EXPECT_EQ(float_to_fp16(INFINITY), 0x7C00);
    EXPECT_EQ(float_to_fp16(std::nanf("")), 0x7E00);
    EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
    EXPECT_TRUE(same_bits(fp16_to_float(0x8000), -0.0f));
    EXPECT_EQ(float_to_fp16(5.9604645e-08f / 2), 0x0000);  // half the smallest subnormal ties to 0
}

}  // namespace
}  // namespace nmc
