// measure_quality() on packs whose decoded values are known by hand (constant network outputs, see
// constant_pack.h) against in-memory sources with exactly representable values, so every MSE below is exact
// and the expected PSNRs are worked out from spec 8.10's definitions independently of the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "material/material.h"
#include "quality/quality_measurement.h"
#include "tests/validate/constant_pack.h"

namespace nmc {
namespace {

using testing::constant_channel;
using testing::constant_pack;
using testing::from_pack;
using testing::normal_z_channel;
using testing::texture_layout;

// spec 8.10, written out again: PSNR = -10 log10(MSE), 99 for lossless.
double psnr(double mse) {
    return mse <= 0 ? 99.0 : -10.0 * std::log10(mse);
}

// The 8-bit code of spec 8.10 for a value in [0, 1].
double code8(double v) {
    return std::floor(std::min(std::max(v, 0.0), 1.0) * 255.0 + 0.5);
}

// The sources as validate would load them from files, built from in-memory images instead.
ReferenceMaterial reference_in_memory(const Pack& pack, const std::vector<Image>& images) {
    std::vector<PackChannel> channels(pack.channels.size());
    for (size_t c = 0; c < channels.size(); ++c) {
        channels[c].name = pack.channels[c].name;
        channels[c].lo = pack.channels[c].lo;
        channels[c].hi = pack.channels[c].hi;
    }
    auto material =
        material_from_images(pack.material.name, "", pack.textures, channels, pack.material.mip_count, images);
    EXPECT_TRUE(material.ok()) << material.status().to_string();
    ReferenceMaterial ref;
    ref.material = std::move(material.value());
    ref.source_images = images;
    ref.source_sha256.assign(images.size(), "");
    return ref;
}

Result<QualityMeasurement> measure(const Pack& pack, const ReferenceMaterial& ref) {
    auto decoder = CpuDecoder::create(pack, {1, CpuIsa::automatic});
    if (!decoder.ok()) return decoder.status();
    return measure_quality(cpu_pack_decoder(decoder.value()), pack, ref);
}

TEST(PsnrFromMse, DefinitionAndLosslessCap) {
    EXPECT_EQ(psnr_from_mse(0.0), 99.0);     // lossless is written as 99 (spec 5.8)
    EXPECT_EQ(psnr_from_mse(-1e-12), 99.0);  // never produced, but must not give NaN
    EXPECT_NEAR(psnr_from_mse(1.0), 0.0, 1e-12);
    EXPECT_NEAR(psnr_from_mse(0.01), 20.0, 1e-12);
    EXPECT_NEAR(psnr_from_mse(1e-3), 30.0, 1e-12);
    EXPECT_NEAR(psnr_from_mse(0.0625), 12.041199826559248, 1e-12);
    EXPECT_EQ(psnr_from_mse(1e-12), 99.0);                       // 120 dB is reported as the lossless 99
    EXPECT_NEAR(psnr_from_mse(4.0), -6.020599913279624, 1e-12);  // errors beyond the range give negative dB
}

// Four pack channels decoding to 0.5, 0.25, 1.0 (all [0, 1]) and 1.0 in a [-1, 3] range, i.e. 0.5 normalised.
//   texture mat_Color (uint8, linear): pack channels 0, 1, 2. Source: a 0.25 / 0.875 checkerboard, 0.375, 1.0.
//   texture mat_Height (float32): pack channel 3 and the constant 0.25. Source: 2.0 (0.75 normalised), 0.5.
// Mips (8x8, 4x4, 2x2, 1x1): the box filter turns the checkerboard into 0.5625 at every mip above 0.
struct KnownCase {
    Pack pack;
    std::vector<Image> images;
};

KnownCase known_case() {
    KnownCase k;
    k.pack = constant_pack(8, 8, 4, {{"albedo.r", 0, 1}, {"albedo.g", 0, 1}, {"albedo.b", 0, 1}, {"height", -1, 3}},
                           {0.5f, 0.25f, 1.0f, 0.5f});
    k.pack.textures = {texture_layout("mat_Color.png", SampleType::uint8, ColorSpace::linear,
                                      {from_pack(0, Semantic::albedo), from_pack(1, Semantic::albedo),
                                       from_pack(2, Semantic::albedo)}),
                       texture_layout("mat_Height.exr", SampleType::float32, ColorSpace::linear,
                                      {from_pack(3, Semantic::height), constant_channel(0.25f)})};
    Image color(8, 8, 3), height(8, 8, 2, SampleType::float32);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
            color.at(x, y, 0) = (x + y) % 2 ? 0.875f : 0.25f;
            color.at(x, y, 1) = 0.375f;
            color.at(x, y, 2) = 1.0f;
            height.at(x, y, 0) = 2.0f;
            height.at(x, y, 1) = 0.5f;
        }
    k.images = {color, height};
    return k;
}

TEST(MeasureQuality, PackChannelFiguresMatchHandComputedMse) {
    const KnownCase k = known_case();
    auto q = measure(k.pack, reference_in_memory(k.pack, k.images));
    ASSERT_TRUE(q.ok()) << q.status().to_string();

    // Per channel and mip, in [0, 1] units: channel 0 errs by -0.25 / +0.375 at mip 0 and by 0.5625 - 0.5 above;
    // channel 1 by 0.125 everywhere; channel 2 is exact; channel 3 by (0.75 - 0.5) after normalising by hi - lo.
    const double c0_mips[] = {(0.25 * 0.25 + 0.375 * 0.375) / 2, 0.0625 * 0.0625, 0.0625 * 0.0625, 0.0625 * 0.0625};
    const double c0_all = (64 * c0_mips[0] + 16 * c0_mips[1] + 4 * c0_mips[2] + 1 * c0_mips[3]) / 85.0;
    const double c1 = 0.125 * 0.125, c3 = 0.25 * 0.25;

    ASSERT_EQ(q->channels.size(), 4u);
    EXPECT_EQ(q->channels[0].name, "albedo.r");
    EXPECT_EQ(q->channels[3].name, "height");
    EXPECT_NEAR(q->channels[0].psnr_db, psnr(c0_all), 1e-9);
    EXPECT_NEAR(q->channels[1].psnr_db, psnr(c1), 1e-9);
    EXPECT_EQ(q->channels[2].psnr_db, 99.0);
    EXPECT_NEAR(q->channels[3].psnr_db, psnr(c3), 1e-9);
    ASSERT_EQ(q->channels[0].mips.size(), 4u);
    for (int m = 0; m < 4; ++m) {
        EXPECT_NEAR(q->channels[0].mips[static_cast<size_t>(m)], psnr(c0_mips[m]), 1e-9) << "mip " << m;
        EXPECT_NEAR(q->channels[1].mips[static_cast<size_t>(m)], psnr(c1), 1e-9) << "mip " << m;
        EXPECT_EQ(q->channels[2].mips[static_cast<size_t>(m)], 99.0) << "mip " << m;
    }

    // Overall and per mip: channels weighted equally, a mip's texels by their count.
    EXPECT_NEAR(q->psnr_db, psnr((c0_all + c1 + 0 + c3) / 4), 1e-9);
    ASSERT_EQ(q->mips.size(), 4u);
    for (int m = 0; m < 4; ++m)
        EXPECT_NEAR(q->mips[static_cast<size_t>(m)], psnr((c0_mips[m] + c1 + 0 + c3) / 4), 1e-9) << "mip " << m;

    EXPECT_NEAR(q->channels[0].max_abs_error, 0.375, 1e-12);
    EXPECT_NEAR(q->channels[1].max_abs_error, 0.125, 1e-12);
    EXPECT_EQ(q->channels[2].max_abs_error, 0.0);
    EXPECT_NEAR(q->channels[3].max_abs_error, 0.25, 1e-12);
    EXPECT_NEAR(q->max_abs_error, 0.375, 1e-12);
}

TEST(MeasureQuality, TextureFiguresAndEightBitMetricMatchHandComputedValues) {
    const KnownCase k = known_case();
    auto q = measure(k.pack, reference_in_memory(k.pack, k.images));
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    ASSERT_EQ(q->textures.size(), 2u);

    const double c0_mips[] = {(0.25 * 0.25 + 0.375 * 0.375) / 2, 0.0625 * 0.0625, 0.0625 * 0.0625, 0.0625 * 0.0625};
    const double c0_all = (64 * c0_mips[0] + 16 * c0_mips[1] + 4 * c0_mips[2] + 1 * c0_mips[3]) / 85.0;
    const double c1 = 0.125 * 0.125;

    // mat_Color: its three pack channels (float), then mip 0 per file channel.
    const TextureQualityDetail& color = q->textures[0];
    EXPECT_EQ(color.name, "mat_Color");
    EXPECT_EQ(color.file_name, "mat_Color.png");
    EXPECT_NEAR(color.psnr_db, psnr((c0_all + c1 + 0) / 3), 1e-9);
    ASSERT_EQ(color.mips.size(), 4u);
    for (int m = 0; m < 4; ++m)
        EXPECT_NEAR(color.mips[static_cast<size_t>(m)], psnr((c0_mips[m] + c1) / 3), 1e-9) << "mip " << m;
    ASSERT_EQ(color.channels.size(), 3u);
    EXPECT_NEAR(color.channels[0], psnr(c0_mips[0]), 1e-9);
    EXPECT_NEAR(color.channels[1], psnr(c1), 1e-9);
    EXPECT_EQ(color.channels[2], 99.0);
    EXPECT_EQ(color.mean_angle_deg, -1.0);  // not a normal map

    // 8-bit codes (spec 8.10): decoded 0.5 -> 128, 0.25 -> 64, 1 -> 255; sources 0.25 -> 64, 0.875 -> 223,
    // 0.375 -> 96, 1 -> 255. Channel 0 errs by 64 and 95 codes, channel 1 by 32.
    ASSERT_EQ(code8(0.875), 223.0);
    ASSERT_EQ(code8(0.5), 128.0);
    const double k255 = 255.0 * 255.0;
    const double e8_c0 = (64.0 * 64 + 95.0 * 95) / 2 / k255, e8_c1 = 32.0 * 32 / k255;
    ASSERT_EQ(color.channels8.size(), 3u);
    EXPECT_NEAR(color.channels8[0], psnr(e8_c0), 1e-9);
    EXPECT_NEAR(color.channels8[1], psnr(e8_c1), 1e-9);
    EXPECT_EQ(color.channels8[2], 99.0);
    EXPECT_NEAR(color.psnr8_mip0_db, psnr((e8_c0 + e8_c1 + 0) / 3), 1e-9);
    EXPECT_EQ(color.max_abs_error8, 95);

    // mat_Height: pack channel 3 (range [-1, 3]: decoded 1.0 is 0.5, source 2.0 is 0.75) and a constant 0.25
    // against a source of 0.5; the constant is not pack-backed, so it counts only in the mip-0 file figures.
    const TextureQualityDetail& height = q->textures[1];
    EXPECT_EQ(height.name, "mat_Height");
    EXPECT_NEAR(height.psnr_db, psnr(0.0625), 1e-9);
    for (double m : height.mips) EXPECT_NEAR(m, psnr(0.0625), 1e-9);
    ASSERT_EQ(height.channels.size(), 2u);
    EXPECT_NEAR(height.channels[0], psnr(0.0625), 1e-9);
    EXPECT_NEAR(height.channels[1], psnr(0.0625), 1e-9);
    // 8-bit: 0.5 -> 128 vs 0.75 -> 191 (63 codes); 0.25 -> 64 vs 0.5 -> 128 (64 codes).
    const double e8_h0 = 63.0 * 63 / k255, e8_h1 = 64.0 * 64 / k255;
    EXPECT_NEAR(height.channels8[0], psnr(e8_h0), 1e-9);
    EXPECT_NEAR(height.channels8[1], psnr(e8_h1), 1e-9);
    EXPECT_NEAR(height.psnr8_mip0_db, psnr((e8_h0 + e8_h1) / 2), 1e-9);
    EXPECT_EQ(height.max_abs_error8, 64);

    // The comparison metric: every file channel of every texture weighted equally (5 channels).
    EXPECT_NEAR(q->psnr8_mip0_db, psnr((e8_c0 + e8_c1 + 0 + e8_h0 + e8_h1) / 5), 1e-9);
}

// The structure of each texture at mip 0 (structure_test.cpp has the formulas): mat_Color's red checkerboard decodes
// to a constant, which keeps nothing of it (collapsed); its green and blue and both of mat_Height's channels are
// flat sources, left out, so mat_Height is not measured and not flagged though it errs by a quarter of its range.
TEST(MeasureQuality, StructureFlagsTheFlattenedCheckerboardOnly) {
    const KnownCase k = known_case();
    auto q = measure(k.pack, reference_in_memory(k.pack, k.images));
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    const TextureStructure& color = q->textures[0].structure;
    ASSERT_TRUE(color.measured);
    ASSERT_EQ(color.channels.size(), 3u);
    EXPECT_FALSE(color.channels[0].flat);
    EXPECT_NEAR(color.channels[0].source_std, 0.3125, 1e-7);  // 0.25 / 0.875
    EXPECT_EQ(color.channels[0].decoded_std, 0.0);
    EXPECT_TRUE(color.channels[1].flat);
    EXPECT_TRUE(color.channels[2].flat);
    EXPECT_EQ(color.correlation, 0.0);
    EXPECT_EQ(color.contrast, 0.0);
    EXPECT_NEAR(color.constant_psnr_db, psnr(0.3125 * 0.3125), 1e-5);
    EXPECT_NEAR(color.psnr_db, psnr((0.25 * 0.25 + 0.375 * 0.375) / 2), 1e-5);  // decoded 0.5, not the mean 0.5625
    EXPECT_TRUE(color.collapsed);
    const TextureStructure& height = q->textures[1].structure;
    EXPECT_FALSE(height.measured);
    EXPECT_FALSE(height.collapsed);
}

TEST(MeasureQuality, LosslessPackIs99Everywhere) {
    Pack pack = constant_pack(4, 4, 3, {{"roughness", 0, 1}}, {0.25f});
    pack.textures = {texture_layout("r.png", SampleType::uint8, ColorSpace::linear, {from_pack(0)})};
    Image image(4, 4, 1);
    for (float& v : image.pixels) v = 0.25f;
    auto q = measure(pack, reference_in_memory(pack, {image}));
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    EXPECT_EQ(q->psnr_db, 99.0);
    EXPECT_EQ(q->psnr8_mip0_db, 99.0);
    EXPECT_EQ(q->mips, std::vector<double>(3, 99.0));
    EXPECT_EQ(q->max_abs_error, 0.0);
    EXPECT_EQ(q->textures[0].max_abs_error8, 0);
}

// Half the rows of the source hold the normal (0, 0.6, 0.8) (36.87 degrees from +Z), the rest +Z; the pack decodes
// +Z everywhere (x = y = 0.5). The mean angle is acos(0.8) / 2 for either Y convention.
class NormalAngle : public ::testing::TestWithParam<NormalConvention> {};

TEST_P(NormalAngle, MeanAngleOfKnownNormals) {
    const bool directx = GetParam() == NormalConvention::directx;
    Pack pack = constant_pack(4, 4, 1, {{"normal.x", 0, 1}, {"normal.y", 0, 1}}, {0.5f, 0.5f});
    TextureLayout normal =
        texture_layout("n_Normal.png", SampleType::uint8, ColorSpace::linear,
                       {from_pack(0, Semantic::normal), from_pack(1, Semantic::normal, directx), normal_z_channel()});
    normal.normal_mode = NormalMode::xy;
    normal.normal_convention = GetParam();
    pack.textures = {normal};
    Image image(4, 4, 3);
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
            const bool tilted = y < 2;
            const float gl_y = tilted ? 0.8f : 0.5f;  // 0.6 * 0.5 + 0.5
            image.at(x, y, 0) = 0.5f;
            image.at(x, y, 1) = directx ? 1.0f - gl_y : gl_y;
            image.at(x, y, 2) = tilted ? 0.9f : 1.0f;  // 0.8 * 0.5 + 0.5
        }
    auto q = measure(pack, reference_in_memory(pack, {image}));
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    const double expected = std::acos(0.8) * 180.0 / 3.14159265358979323846 / 2;  // 18.4349... degrees
    EXPECT_NEAR(q->textures[0].mean_angle_deg, expected, 1e-4);
    // Pack channel 1 holds OpenGL Y whatever the file's convention: 0.8 vs 0.5 on half the texels.
    EXPECT_EQ(q->channels[0].psnr_db, 99.0);
    EXPECT_NEAR(q->channels[1].psnr_db, psnr(0.3 * 0.3 / 2), 1e-4);
    // The rebuilt Z (file channel 2): 1.0 vs 0.9 on half the texels.
    EXPECT_NEAR(q->textures[0].channels[2], psnr(0.1 * 0.1 / 2), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Conventions, NormalAngle,
                         ::testing::Values(NormalConvention::opengl, NormalConvention::directx),
                         [](const ::testing::TestParamInfo<NormalConvention>& param_info) {
                             return std::string(to_string(param_info.param));
                         });

TEST(MeasureQuality, RejectsReferenceOfAnotherShape) {
    const KnownCase k = known_case();
    Pack fewer_mips = k.pack;
    fewer_mips.material.mip_count = 2;
    const ReferenceMaterial ref = reference_in_memory(fewer_mips, k.images);
    auto q = measure(k.pack, ref);
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.status().code(), StatusCode::invalid_argument);
}

TEST(ToQualityReport, CarriesEveryFigure) {
    const KnownCase k = known_case();
    auto q = measure(k.pack, reference_in_memory(k.pack, k.images));
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    const QualityReport r = to_quality_report(q.value(), 3.5);
    EXPECT_TRUE(r.present);
    EXPECT_EQ(r.psnr_db, q->psnr_db);
    EXPECT_EQ(r.bits_per_texel, 3.5);
    EXPECT_EQ(r.psnr8_mip0_db, q->psnr8_mip0_db);
    EXPECT_EQ(r.mips, q->mips);
    ASSERT_EQ(r.channels.size(), 4u);
    EXPECT_EQ(r.channels[1], q->channels[1].psnr_db);
    ASSERT_EQ(r.textures.size(), 2u);
    EXPECT_EQ(r.textures[1].texture, "mat_Height");
    EXPECT_EQ(r.textures[1].psnr_db, q->textures[1].psnr_db);
    EXPECT_EQ(r.textures[1].channels, q->textures[1].channels);
    EXPECT_EQ(r.textures[1].mips, q->textures[1].mips);
    EXPECT_EQ(r.textures[0].psnr8_mip0_db, q->textures[0].psnr8_mip0_db);
    EXPECT_EQ(r.textures[0].mean_angle_deg, -1.0);
}

}  // namespace
}  // namespace nmc
