// Hand-checked values of reference_math.h's spec steps that the whole-pack tests reach only indirectly:
// activation corners, the normal reconstruction of spec 8.8, the source-channel mapping of 8.9, and 8.10.
#include <gtest/gtest.h>

#include "core/hlg.h"
#include "decoder/common/reference_math.h"

namespace nmc {
namespace {

TEST(ReferenceMath, HgeluClampedCorners) {
    // spec 8.6: t = min(max(y/3 + 0.5, 0), 1); a = min(y, 3) * t.
    EXPECT_EQ(hgelu_clamped(0.0f), 0.0f);        // t = 0.5
    EXPECT_EQ(hgelu_clamped(1.5f), 1.5f);        // 1.5 * 0.333333343 rounds to 0.5, so t = 1
    EXPECT_EQ(hgelu_clamped(10.0f), 3.0f);       // min(y, 3) with t = 1
    EXPECT_EQ(hgelu_clamped(-2.0f), 0.0f);       // t = 0
    EXPECT_EQ(hgelu_clamped(0.75f), 0.5625f);    // t = 0.25 + 0.5 (0.75 * 0.333333343 rounds to 0.25)
    EXPECT_EQ(hgelu_clamped(-0.75f), -0.1875f);  // t = 0.25: the negative lobe, -3/16 at its lowest
}

TEST(ReferenceMath, OutputTransformClampsThenMapsOntoRange) {
    EXPECT_EQ(output_transform(0.25f, 0.0f, 1.0f), 0.25f);
    EXPECT_EQ(output_transform(-3.0f, -1.0f, 3.0f), -1.0f);
    EXPECT_EQ(output_transform(7.0f, -1.0f, 3.0f), 3.0f);
    EXPECT_EQ(output_transform(0.5f, -1.0f, 3.0f), 1.0f);
}

TEST(ReferenceMath, NormalFromXyRebuildsZ) {
    // (0.5, 0.5) is x = y = 0, so z = 1: channel values (0.5, 0.5, 1).
    const NormalChannels flat = normal_from_xy(0.5f, 0.5f);
    EXPECT_EQ(flat.x, 0.5f);
    EXPECT_EQ(flat.y, 0.5f);
    EXPECT_EQ(flat.z, 1.0f);
    // x = 1, y = 0: z = sqrt(max(0, 0)) = 0, length 1: (1, 0.5, 0.5).
    const NormalChannels side = normal_from_xy(1.0f, 0.5f);
    EXPECT_EQ(side.x, 1.0f);
    EXPECT_EQ(side.y, 0.5f);
    EXPECT_EQ(side.z, 0.5f);
    // x = y = 1 is longer than 1: z = 0 and (1, 1, 0) is renormalised to (0.7071, 0.7071, 0).
    const NormalChannels corner = normal_from_xy(1.0f, 1.0f);
    EXPECT_NEAR(corner.x, 0.5f + 0.5f * 0.70710678f, 1e-6f);
    EXPECT_EQ(corner.x, corner.y);
    EXPECT_EQ(corner.z, 0.5f);
}

TEST(ReferenceMath, NormalFromXyzRenormalisesAndHandlesZeroLength) {
    // (0.5, 0.5, 0.5) is the zero vector: spec 8.8 gives (0, 0, 1).
    const NormalChannels zero = normal_from_xyz(0.5f, 0.5f, 0.5f);
    EXPECT_EQ(zero.x, 0.5f);
    EXPECT_EQ(zero.y, 0.5f);
    EXPECT_EQ(zero.z, 1.0f);
    // (0.5, 0.5, 0.75) is (0, 0, 0.5): renormalised to (0, 0, 1).
    const NormalChannels short_z = normal_from_xyz(0.5f, 0.5f, 0.75f);
    EXPECT_EQ(short_z.z, 1.0f);
    EXPECT_EQ(short_z.x, 0.5f);
}

// spec 8.9: an HLG texture's pack values decode through the curve to the peak; its constants stay as they are.
TEST(ReferenceMath, SourceChannelsOfAnHlgTextureDecodeToThePeak) {
    using Kind = ChannelSource::Kind;
    TextureLayout emissive;
    emissive.sample_type = SampleType::float32;
    emissive.value_encoding = ValueEncoding::hlg;
    emissive.peak = 16.0f;
    emissive.channels = {{Kind::pack, 0, false, 0, Semantic::emissive},
                         {Kind::pack, 1, false, 0, Semantic::emissive},
                         {Kind::pack, 2, false, 0, Semantic::emissive},
                         {Kind::constant, -1, false, 3.5f, Semantic::emissive}};
    const float pack_values[3] = {0.0f, 0.5f, 1.0f};
    float out[4];
    source_channel_values(emissive, pack_values, out);
    EXPECT_EQ(out[0], 0.0f);                        // black stays black
    EXPECT_EQ(out[1], 16.0f * ((0.5f * 0.5f) / 3.0f));  // peak * (e * e) / 3 at the segments' join, 1/12 of the peak
    EXPECT_EQ(out[2], 16.0f * hlg_decode(1.0f));
    EXPECT_NEAR(out[2], 16.0f, 16.0f * 2e-6f);
    EXPECT_EQ(out[3], 3.5f);
}

TEST(ReferenceMath, SourceChannelsApplyNormalThenInvertAndConstants) {
    using Kind = ChannelSource::Kind;
    TextureLayout normal;
    normal.normal_mode = NormalMode::xy;
    normal.channels = {{Kind::pack, 1, false, 0, Semantic::normal},
                       {Kind::pack, 0, true, 0, Semantic::normal},  // DirectX Y: inverted after 8.8
                       {Kind::normal_z, -1, false, 0, Semantic::normal}};
    const float pack_values[2] = {0.5f, 1.0f};  // value[1] is x = 1, value[0] is y = 0
    float out[3];
    source_channel_values(normal, pack_values, out);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], 0.5f);  // 1 - 0.5
    EXPECT_EQ(out[2], 0.5f);  // z = 0

    TextureLayout orm;
    orm.channels = {{Kind::constant, -1, false, 0.25f, Semantic::ambient_occlusion},
                    {Kind::pack, 0, true, 0, Semantic::roughness},
                    {Kind::pack, 1, false, 0, Semantic::metalness}};
    source_channel_values(orm, pack_values, out);
    EXPECT_EQ(out[0], 0.25f);
    EXPECT_EQ(out[1], 0.5f);
    EXPECT_EQ(out[2], 1.0f);
}

TEST(ReferenceMath, QuantiseUnormRoundsHalfUpAndClamps) {
    // spec 8.10: floor(min(max(v, 0), 1) * 255 + 0.5).
    EXPECT_EQ(quantize_u8(-0.5f), 0u);
    EXPECT_EQ(quantize_u8(1.5f), 255u);
    EXPECT_EQ(quantize_u8(0.5f), 128u);  // 127.5 + 0.5
    EXPECT_EQ(quantize_u8(1.0f / 255.0f), 1u);
    EXPECT_EQ(quantize_u16(0.5f), 32768u);  // 32767.5 + 0.5
}

}  // namespace
}  // namespace nmc
