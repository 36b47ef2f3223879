// Mip generation: box-filter values on tiny planes, odd (non-power-of-two) sizes, sRGB averaging in linear
// light, normal renormalisation, and the chain load_material builds.
#include <gtest/gtest.h>

#include <cmath>

#include "material/mip_chain.h"
#include "test_support.h"

namespace nmc {
namespace {

TEST(Mips, EvenSizesAreThe2x2Average) {
    const std::vector<float> plane = {0, 1, 2, 3,  //
                                      4, 5, 6, 7};
    const auto half = downsample_box(plane, 4, 2);
    ASSERT_EQ(half.size(), 2u);
    EXPECT_FLOAT_EQ(half[0], (0 + 1 + 4 + 5) / 4.0f);
    EXPECT_FLOAT_EQ(half[1], (2 + 3 + 6 + 7) / 4.0f);
    const auto last = downsample_box(half, 2, 1);  // a side of 1 stays 1
    ASSERT_EQ(last.size(), 1u);
    EXPECT_FLOAT_EQ(last[0], 3.5f);
}

TEST(Mips, OddSizesWeighEveryTexelByItsFootprint) {
    // 5 -> 2: output texel 0 covers [0, 2.5), texel 1 covers [2.5, 5); the middle texel is split.
    const std::vector<float> row = {1, 2, 3, 4, 5};
    const auto half = downsample_box(row, 5, 1);
    ASSERT_EQ(half.size(), 2u);
    EXPECT_FLOAT_EQ(half[0], (1 + 2 + 0.5f * 3) / 2.5f);
    EXPECT_FLOAT_EQ(half[1], (0.5f * 3 + 4 + 5) / 2.5f);
    // 3x3 -> 1x1: the mean of all nine.
    const std::vector<float> square = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const auto one = downsample_box(square, 3, 3);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_NEAR(one[0], 5.0f, 1e-6f);
}

TEST(Mips, SrgbIsAveragedInLinearLight) {
    const auto half = downsample_srgb({0.0f, 1.0f}, 2, 1);
    ASSERT_EQ(half.size(), 1u);
    EXPECT_NEAR(half[0], 0.735357f, 1e-5f);  // linear 0.5 encoded, not 0.5
    EXPECT_NEAR(srgb_to_linear(linear_to_srgb(0.2f)), 0.2f, 1e-6f);
}

TEST(Mips, NormalsAreRenormalised) {
    const float s = std::sqrt(0.5f);
    std::vector<float> x = {s, -s}, y = {0, 0}, z = {s, s};
    downsample_normals(&x, &y, &z, 2, 1);
    ASSERT_EQ(x.size(), 1u);
    EXPECT_NEAR(x[0], 0.0f, 1e-6f);
    EXPECT_NEAR(z[0], 1.0f, 1e-6f);  // the plain average would be 0.707
    std::vector<float> a = {1, -1}, b = {0, 0}, c = {0, 0};
    downsample_normals(&a, &b, &c, 2, 1);
    EXPECT_EQ(c[0], 1.0f);  // opposite vectors cancel: (0, 0, 1)
}

TEST(Mips, LoadedChainHasEveryLevelAndFilterKind) {
    test::TempDir dir;
    // 5x3 material: mips 5x3, 2x1, 1x1.
    test::write_png(dir.file("t_albedo.png"), test::make_image(5, 3, 3, [](int x, int, int) { return x % 2 ? 1.0f : 0.0f; }));
    test::write_png(dir.file("t_rough.png"), test::make_image(5, 3, 1, [](int x, int, int) { return x % 2 ? 1.0f : 0.0f; }));
    const float s = std::sqrt(0.5f);
    test::write_png(dir.file("t_normal.png"), test::make_image(5, 3, 3, [&](int x, int, int c) {
                        return c == 0 ? (x % 2 ? -s : s) * 0.5f + 0.5f : c == 1 ? 0.5f : s * 0.5f + 0.5f;
                    }));
    // xy normals (the vectors are unit length, but their 8-bit codes cap a rebuilt Z at 52.9 dB, below auto's bound):
    // the channel layout below has both normal channels.
    MaterialLoadOptions xy;
    xy.normal_mode = NormalModeChoice::xy;
    auto m = load_material(dir.path(), xy);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_EQ(m->mip_count, 3);
    ASSERT_EQ(m->mips.size(), 3u);
    EXPECT_EQ(m->mips[1][0].size(), 2u);
    EXPECT_EQ(m->mips[2][0].size(), 1u);
    // Channels: albedo (grey, one channel), normal.x, normal.y, roughness. Texel 0 of mip 1 covers x in
    // [0, 2.5): ones weigh 1 of 2.5.
    ASSERT_EQ(m->channels.size(), 4u);
    EXPECT_NEAR(m->mips[1][3][0], 1.0f / 2.5f, 1e-6f);
    EXPECT_NEAR(m->mips[1][0][0], linear_to_srgb(1.0f / 2.5f), 1e-5f);
    // The normal of mip 1, texel 0: the file's vectors (8-bit codes) at x = 0, 1, 2 weighted 1, 1, 0.5,
    // averaged and renormalised.
    const auto decode = [](float v) { return 2.0f * std::floor(v * 255.0f + 0.5f) / 255.0f - 1.0f; };
    const float xp = decode(s * 0.5f + 0.5f), xm = decode(-s * 0.5f + 0.5f), y = decode(0.5f), z = decode(s * 0.5f + 0.5f);
    const float ax = (xp * 1.5f + xm) / 2.5f;
    const float len = std::sqrt(ax * ax + y * y + z * z);
    EXPECT_NEAR(m->mips[1][1][0], ax / len * 0.5f + 0.5f, 1e-5f);
    EXPECT_NEAR(m->mips[1][2][0], y / len * 0.5f + 0.5f, 1e-5f);

    MaterialLoadOptions two = xy;
    two.max_mips = 2;
    auto limited = load_material(dir.path(), two);
    ASSERT_TRUE(limited.ok());
    EXPECT_EQ(limited->mip_count, 2);
    EXPECT_EQ(limited->mips.size(), 2u);
}

}  // namespace
}  // namespace nmc
