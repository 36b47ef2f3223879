// The structure measure and collapse rule of quality_measurement.h on decoded/source pairs built directly: the
// nearly flat height map of issue 31 (correlation 0.14, std 0.0022 against 0.0137, 37.4 dB) is collapsed though its
// PSNR looks fine, a flat source is never flagged, and the pooled figures follow docs/cli.md's formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "quality/quality_measurement.h"

namespace nmc {
namespace {

constexpr double kTwoPi = 6.28318530717958647692;

double psnr(double mse) {
    return -10.0 * std::log10(mse);
}

// One channel's moments from paired values.
ChannelMoments moments_of(const std::vector<double>& decoded, const std::vector<double>& source) {
    ChannelMoments m;
    for (size_t i = 0; i < decoded.size(); ++i) m.add(decoded[i], source[i]);
    return m;
}

// Alternating values a, b (mean (a + b) / 2, standard deviation |a - b| / 2), n texels.
std::vector<double> alternating(double a, double b, size_t n = 64) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = i % 2 ? b : a;
    return v;
}

// Issue 31's height map: a 16-bit map of standard deviation 0.0137 about 0.5, decoded to standard deviation 0.0022
// with correlation 0.14. Over whole periods sin and cos are uncorrelated with equal variance, so
// decoded = 0.5 + 0.0022 sqrt2 (0.14 sin + sqrt(1 - 0.14^2) cos) has exactly those figures.
TEST(Structure, NearlyFlatDecodeOfALowContrastHeightMapCollapses) {
    std::vector<double> source, decoded;
    const double r = 0.14;
    for (int i = 0; i < 4096; ++i) {
        const double phase = kTwoPi * i / 64.0;
        source.push_back(0.5 + 0.0137 * std::sqrt(2.0) * std::sin(phase));
        decoded.push_back(0.5 +
                          0.0022 * std::sqrt(2.0) * (r * std::sin(phase) + std::sqrt(1 - r * r) * std::cos(phase)));
    }
    const TextureStructure s = structure_of({moments_of(decoded, source)});
    ASSERT_TRUE(s.measured);
    EXPECT_NEAR(s.correlation, 0.14, 1e-9);
    EXPECT_NEAR(s.contrast, 0.0022 / 0.0137, 1e-9);
    // mse = var_s + var_d - 2 cov; the constant image of the source's mean errs by var_s.
    const double var_s = 0.0137 * 0.0137, var_d = 0.0022 * 0.0022;
    EXPECT_NEAR(s.psnr_db, psnr(var_s + var_d - 2 * r * 0.0137 * 0.0022), 1e-6);  // 37.35 dB: looks fine
    EXPECT_NEAR(s.constant_psnr_db, psnr(var_s), 1e-6);                           // 37.27 dB
    EXPECT_LT(s.psnr_margin_db, 0.1);
    EXPECT_TRUE(s.collapsed);
    ASSERT_EQ(s.collapse_reasons.size(), 3u);  // margin, correlation and contrast all fail
    EXPECT_EQ(collapse_message("height.png", s).rfind("height.png collapsed: PSNR 37.35 dB only 0.08 dB above", 0), 0u)
        << collapse_message("height.png", s);
}

// Correlation 1 but 40% of the contrast: the margin (4.4 dB) and correlation pass, the contrast fails alone.
TEST(Structure, LostContrastAloneCollapses) {
    const TextureStructure s = structure_of({moments_of(alternating(0.4, 0.6), alternating(0.25, 0.75))});
    ASSERT_TRUE(s.measured);
    EXPECT_NEAR(s.correlation, 1.0, 1e-12);
    EXPECT_NEAR(s.contrast, 0.4, 1e-12);
    EXPECT_NEAR(s.constant_psnr_db, psnr(0.0625), 1e-9);
    EXPECT_NEAR(s.psnr_db, psnr(0.15 * 0.15), 1e-9);
    EXPECT_NEAR(s.psnr_margin_db, 10 * std::log10(0.0625 / 0.0225), 1e-9);
    EXPECT_TRUE(s.collapsed);
    EXPECT_EQ(s.collapse_reasons, std::vector<std::string>{"contrast 0.40 < 0.50"});
}

TEST(Structure, ExactDecodeKeepsEverything) {
    const std::vector<double> v = alternating(0.25, 0.75);
    const TextureStructure s = structure_of({moments_of(v, v)});
    EXPECT_TRUE(s.measured);
    EXPECT_NEAR(s.correlation, 1.0, 1e-12);
    EXPECT_NEAR(s.contrast, 1.0, 1e-12);
    EXPECT_EQ(s.psnr_db, 99.0);
    EXPECT_FALSE(s.collapsed);
}

// A flat source (an all-white occlusion, a constant metalness) has no structure to lose: whatever the decode, it is
// not measured and not collapsed, even where the decode is off by a quarter of the range.
TEST(Structure, FlatSourceIsNeverFlagged) {
    const std::vector<double> flat(64, 0.5);
    for (const std::vector<double>& decoded : {std::vector<double>(64, 0.75), alternating(0.2, 0.8)}) {
        const TextureStructure s = structure_of({moments_of(decoded, flat)});
        EXPECT_FALSE(s.measured);
        EXPECT_FALSE(s.collapsed);
        ASSERT_EQ(s.channels.size(), 1u);
        EXPECT_TRUE(s.channels[0].flat);
    }
    // Below half an 8-bit code of spread (+-0.4/255) is flat too; one code (+-1/255) is not.
    const std::vector<double> constant(64, 0.5);
    EXPECT_FALSE(structure_of({moments_of(constant, alternating(0.5 - 0.4 / 255, 0.5 + 0.4 / 255))}).measured);
    const TextureStructure one_code =
        structure_of({moments_of(constant, alternating(0.5 - 1.0 / 255, 0.5 + 1.0 / 255))});
    EXPECT_TRUE(one_code.measured);
    EXPECT_TRUE(one_code.collapsed);
}

// Channels pool as one signal, each centred on its own mean: an exact channel and one decoded constant (equal source
// variance v) give correlation v / sqrt(2v * v) = 0.707, contrast sqrt(v / 2v) = 0.707 and a margin of
// 10 log10(2v / v) = 3.01 dB: not collapsed. A flat third channel is left out of every figure.
TEST(Structure, ChannelsPoolAndFlatChannelsAreLeftOut) {
    const std::vector<double> source = alternating(0.25, 0.75);
    const TextureStructure s =
        structure_of({moments_of(source, source), moments_of(std::vector<double>(64, 0.5), source),
                      moments_of(std::vector<double>(64, 0.3), std::vector<double>(64, 1.0))});
    ASSERT_TRUE(s.measured);
    ASSERT_EQ(s.channels.size(), 3u);
    EXPECT_FALSE(s.channels[0].flat);
    EXPECT_NEAR(s.channels[1].correlation, 0.0, 1e-12);  // a constant decode has no correlation
    EXPECT_NEAR(s.channels[1].contrast, 0.0, 1e-12);
    EXPECT_TRUE(s.channels[2].flat);
    EXPECT_NEAR(s.correlation, std::sqrt(0.5), 1e-12);
    EXPECT_NEAR(s.contrast, std::sqrt(0.5), 1e-12);
    EXPECT_NEAR(s.constant_psnr_db, psnr(0.0625), 1e-9);  // mean source variance of the two measured channels
    EXPECT_NEAR(s.psnr_db, psnr(0.0625 / 2), 1e-9);       // mean mse: 0 and 0.0625
    EXPECT_NEAR(s.psnr_margin_db, 10 * std::log10(2.0), 1e-9);
    EXPECT_FALSE(s.collapsed);
}

// Variance of a small spread about a large mean keeps its digits (the sums are taken about the first value).
TEST(Structure, SmallSpreadAboutALargeMeanIsExact) {
    const TextureStructure s =
        structure_of({moments_of(alternating(0.99, 0.998, 1 << 20), alternating(0.99, 0.998, 1 << 20))});
    EXPECT_NEAR(s.channels[0].source_std, 0.004, 1e-12);
    EXPECT_NEAR(s.correlation, 1.0, 1e-9);
}

}  // namespace
}  // namespace nmc
