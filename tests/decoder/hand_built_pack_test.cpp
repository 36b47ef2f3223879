// A 2x2 material small enough to decode by hand: F = 1, two 1-bit levels, a 15 -> 2 -> 1 network. The expected
// values are worked out below step by step, with the spec section of each step, and every ISA must match them.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/number_formats.h"
#include "decoder/cpu/cpu_decoder.h"

namespace nmc {
namespace {

Pack hand_built_pack() {
    Pack pack;
    pack.material = {"hand", 2, 2, 1, AddressMode::wrap};
    pack.channels = {{"value", -1.0f, 3.0f}};
    TextureLayout texture;
    texture.name = "value";
    texture.file_name = "value.png";
    texture.channels = {ChannelSource{}};
    texture.channels[0].pack_channel = 0;
    pack.textures = {texture};

    // spec 5.5: S = 1, so level 0 is 2x2 and level 1 is 1x1.
    pack.latents.feature_count = 1;
    pack.latents.grid_scale = 1;
    LatentLevel level0{2, 2, 1, 0.0f, 1.0f, {1, 0, 0, 1}};  // values 1, 0 / 0, 1 (lo 0, step 1)
    LatentLevel level1{1, 1, 1, -1.0f, 1.2f, {1}};          // value -1 + 1 * 2.2 = 1.2
    pack.latents.levels = {level0, level1};

    // Layer 0 (15 -> 2, E4M3): y0 = 2.75 * x[0] + 0.75 * x[1]; y1 = 1 * x[2] + 2.5.
    Layer l0;
    l0.input_width = 15;  // 2F + 13
    l0.output_width = 2;
    l0.weights.assign(30, 0);
    l0.weights[0] = float_to_fp8_e4m3(2.75f);
    l0.weights[1] = float_to_fp8_e4m3(0.75f);
    l0.weights[15 + 2] = float_to_fp8_e4m3(1.0f);
    l0.biases = {float_to_fp16(0.0f), float_to_fp16(2.5f)};
    // Layer 1 (2 -> 1, Int8 + scale): o = (10 * a0 - 4 * a1) * 2^-5 + 0.125.
    Layer l1;
    l1.input_width = 2;
    l1.output_width = 1;
    l1.weight_type = WeightType::int8;
    l1.weights = {10, static_cast<uint8_t>(static_cast<int8_t>(-4))};
    l1.scales = {0.03125f};
    l1.biases = {float_to_fp16(0.125f)};
    pack.network.layers = {l0, l1};
    return pack;
}

// Texel (x, y) of mip 0, worked by hand:
//  spec 8:   u = (x + 0.5) / 2, v = (y + 0.5) / 2, so u, v are 0.25 or 0.75.
//  spec 8.2: level 0 (2x2): px = u * 2 - 0.5 = x, fx = 0 (likewise y): the sample is texel (x, y) itself.
//            level 1 (1x1): px = u - 0.5 is -0.25 or 0.25; wrapping sends all four taps to its one texel.
//  spec 8.3: level 0 gives l0 = 1 on the diagonal ((0,0), (1,1)) and 0 elsewhere; level 1 gives four
//            weighted copies of 1.2, within a float32 rounding of 1.2.
//  spec 8.4: level 0's px, py are integers, so the 12 values are saw(integer) = -1 and saw(integer + 0.25) = -0.5.
//  spec 8.5: x = [l0, ~1.2, -1, -1, -0.5, -0.5, (repeated for octaves 1 and 2), LOD 0 * 0.25 = 0].
//  spec 8.6 layer 0: fp8 rounding keeps 0, 1, -1, -0.5 and makes ~1.2 into 1.25 (E4M3 step 0.125 in [1, 2)).
//            y0 = 2.75 * l0 + 0.75 * 1.25 = 2.75 * l0 + 0.9375;  y1 = 1 * -1 + 2.5 = 1.5.
//            hgelu: y0 = 3.6875 -> t = 1, a0 = min(3.6875, 3) = 3;
//                   y0 = 0.9375 -> t = 0.3125 + 0.5 = 0.8125 (0.9375 * 0.333333343 rounds to 0.3125),
//                                  a0 = 0.9375 * 0.8125 = 0.76171875;
//                   y1 = 1.5 -> t = 1 (1.5 * 0.333333343 rounds to 0.5), a1 = 1.5.
//  spec 8.6 layer 1: fp8 keeps 3 and 1.5 and rounds 0.76171875 to 0.75 (step 0.0625 in [0.5, 1)).
//            diagonal:  acc = 10 * 3 - 4 * 1.5 = 24;     o = 24 * 2^-5 + 0.125 = 0.875
//            elsewhere: acc = 10 * 0.75 - 4 * 1.5 = 1.5; o = 1.5 * 2^-5 + 0.125 = 0.171875
//  spec 8.7: range [-1, 3]: -1 + 4 * 0.875 = 2.5 and -1 + 4 * 0.171875 = -0.3125.
const std::vector<float> kExpected = {2.5f, -0.3125f, -0.3125f, 2.5f};

std::vector<CpuIsa> available_isas() {
    std::vector<CpuIsa> isas = {CpuIsa::portable};
    for (CpuIsa isa : {CpuIsa::avx2, CpuIsa::avx512bf16, CpuIsa::avx512fp16}) {
        if (CpuDecoder::create(hand_built_pack(), {1, isa}).ok()) isas.push_back(isa);
    }
    return isas;
}

TEST(HandBuiltPack, DecodesToHandComputedValues) {
    for (CpuIsa isa : available_isas()) {
        SCOPED_TRACE(to_string(isa));
        Result<CpuDecoder> decoder = CpuDecoder::create(hand_built_pack(), {1, isa});
        ASSERT_TRUE(decoder.ok()) << decoder.status().to_string();
        std::vector<std::vector<float>> planes;
        ASSERT_TRUE(decoder->decode_mip_channels(0, planes).ok());
        ASSERT_EQ(planes.size(), 1u);
        EXPECT_EQ(planes[0], kExpected);

        Result<Image> image = decoder->decode_texture(0, 0);
        ASSERT_TRUE(image.ok()) << image.status().to_string();
        EXPECT_EQ(image->pixels, kExpected);
    }
}

TEST(HandBuiltPack, RejectsInvalidQueriesAndPacks) {
    Result<CpuDecoder> decoder = CpuDecoder::create(hand_built_pack());
    ASSERT_TRUE(decoder.ok());
    std::vector<float> out;
    EXPECT_EQ(decoder->decode_queries({{0.5f, 0.5f, 1}}, out).code(), StatusCode::invalid_argument);
    EXPECT_EQ(decoder->decode_queries({{std::nanf(""), 0.5f, 0}}, out).code(), StatusCode::invalid_argument);
    EXPECT_EQ(decoder->decode_texture(1, 0).status().code(), StatusCode::invalid_argument);

    Pack bad_code = hand_built_pack();
    bad_code.latents.levels[0].codes[3] = 2;  // does not fit in 1 bit
    EXPECT_EQ(CpuDecoder::create(bad_code).status().code(), StatusCode::invalid_argument);
    Pack bad_width = hand_built_pack();
    bad_width.network.layers[1].input_width = 3;
    EXPECT_EQ(CpuDecoder::create(bad_width).status().code(), StatusCode::invalid_argument);
    Pack bad_weight = hand_built_pack();
    bad_weight.network.layers[1].weights[0] = 0x80;  // Int8 -128 is reserved
    EXPECT_EQ(CpuDecoder::create(bad_weight).status().code(), StatusCode::invalid_argument);
}

// The decoder's check is the reader's (format's check_pack): rules the old decoder-only checks missed (spec 5.4's
// file names and channel use) refuse the pack with the reader's message.
TEST(HandBuiltPack, RefusesWhatTheReaderRefuses) {
    Pack no_file_name = hand_built_pack();
    no_file_name.textures[0].file_name = "";
    Pack unused_channel = hand_built_pack();
    unused_channel.channels.push_back({"unused", 0.0f, 1.0f});
    unused_channel.network.layers.back().output_width = 2;
    unused_channel.network.layers.back().weights.resize(4, 0);
    unused_channel.network.layers.back().scales.push_back(1.0f);
    unused_channel.network.layers.back().biases.push_back(0);
    const std::pair<Pack, const char*> cases[] = {{no_file_name, "'textures[0].file_name'"},
                                                  {unused_channel, "pack channel 1 is used by no texture"}};
    for (const auto& [pack, problem] : cases) {
        const Status rules = check_pack(pack);
        ASSERT_EQ(rules.code(), StatusCode::invalid_argument) << rules.to_string();
        EXPECT_NE(rules.message().find(problem), std::string::npos) << rules.message();
        const Result<CpuDecoder> decoder = CpuDecoder::create(pack);
        ASSERT_FALSE(decoder.ok());
        EXPECT_EQ(decoder.status().code(), StatusCode::invalid_argument);
        EXPECT_EQ(decoder.status().message(), rules.message());
    }
}

}  // namespace
}  // namespace nmc
