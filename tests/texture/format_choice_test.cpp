// --codec auto's rule, ASTC's choices, and the refusals of what a block format cannot hold.
#include <gtest/gtest.h>

#include "texture/format_choice.h"

namespace nmc::texture {
namespace {

TextureLayout layout_of(std::vector<Semantic> semantics, ColorSpace space = ColorSpace::linear,
                        SampleType type = SampleType::uint8, NormalMode normal = NormalMode::none) {
    TextureLayout t;
    t.name = "t";
    t.color_space = space;
    t.sample_type = type;
    t.normal_mode = normal;
    for (size_t i = 0; i < semantics.size(); ++i) {
        ChannelSource c;
        c.pack_channel = int(i);
        c.semantic = semantics[i];
        t.channels.push_back(c);
    }
    return t;
}

void expect_choice(const TextureLayout& t, std::optional<BlockFormat> requested, BlockFormat format, bool srgb) {
    auto c = choose_block_format(t, requested);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(c->format, format);
    EXPECT_EQ(c->srgb, srgb);
}

TEST(FormatChoice, AutoRule) {
    expect_choice(layout_of({Semantic::roughness}), std::nullopt, BlockFormat::bc4, false);
    expect_choice(layout_of({Semantic::roughness, Semantic::metalness}), std::nullopt, BlockFormat::bc5, false);
    expect_choice(layout_of({Semantic::normal, Semantic::normal, Semantic::normal}, ColorSpace::linear,
                            SampleType::uint8, NormalMode::xy),
                  std::nullopt, BlockFormat::bc5, false);
    expect_choice(layout_of({Semantic::normal, Semantic::normal, Semantic::normal}, ColorSpace::linear,
                            SampleType::uint16, NormalMode::xyz),
                  std::nullopt, BlockFormat::bc7, false);
    expect_choice(layout_of({Semantic::albedo, Semantic::albedo, Semantic::albedo}, ColorSpace::srgb), std::nullopt,
                  BlockFormat::bc7, true);
    expect_choice(layout_of({Semantic::albedo, Semantic::albedo, Semantic::albedo, Semantic::opacity}), std::nullopt,
                  BlockFormat::bc7, false);
    // A grey sRGB colour map: BC4 has no sRGB format.
    expect_choice(layout_of({Semantic::albedo}, ColorSpace::srgb), std::nullopt, BlockFormat::bc7, true);
    // sRGB recorded on data channels only (an ORM map tagged sRGB) is not colour.
    expect_choice(layout_of({Semantic::ambient_occlusion, Semantic::roughness, Semantic::metalness}, ColorSpace::srgb),
                  std::nullopt, BlockFormat::bc7, false);
}

TEST(FormatChoice, RequestedFormats) {
    expect_choice(layout_of({Semantic::albedo, Semantic::albedo, Semantic::albedo}, ColorSpace::srgb),
                  BlockFormat::bc1, BlockFormat::bc1, true);
    expect_choice(layout_of({Semantic::normal, Semantic::normal, Semantic::normal}), BlockFormat::bc5, BlockFormat::bc5,
                  false);
    expect_choice(layout_of({Semantic::height}), BlockFormat::bc7, BlockFormat::bc7, false);
    const auto rgba = layout_of({Semantic::albedo, Semantic::albedo, Semantic::albedo, Semantic::opacity});
    EXPECT_EQ(choose_block_format(rgba, BlockFormat::bc1).status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(choose_block_format(layout_of({Semantic::albedo}, ColorSpace::srgb), BlockFormat::bc4).status().code(),
              StatusCode::invalid_argument);
    EXPECT_EQ(choose_block_format(layout_of({Semantic::ambient_occlusion, Semantic::roughness, Semantic::metalness}),
                                  BlockFormat::bc5)
                  .status()
                  .code(),
              StatusCode::invalid_argument);
}

TEST(FormatChoice, AstcHoldsEveryIntegerTexture) {
    if (!astc_in_build()) {
        auto c = choose_block_format(layout_of({Semantic::albedo}), BlockFormat::astc_6x6);
        EXPECT_EQ(c.status().code(), StatusCode::backend_unavailable);
        EXPECT_NE(c.status().message().find("not in this build"), std::string::npos) << c.status().message();
        return;
    }
    // sRGB colour in the sRGB variant, grey or RGBA alike (ASTC has sRGB formats, unlike BC4 and BC5).
    for (auto semantics : {std::vector<Semantic>{Semantic::albedo},
                           std::vector<Semantic>{Semantic::albedo, Semantic::albedo, Semantic::albedo, Semantic::opacity}})
        expect_choice(layout_of(semantics, ColorSpace::srgb), BlockFormat::astc_6x6, BlockFormat::astc_6x6, true);
    expect_choice(layout_of({Semantic::roughness, Semantic::metalness}), BlockFormat::astc_12x12,
                  BlockFormat::astc_12x12, false);
    // A normal map stored as X and Y takes astcenc's normal-map mode; one stored with Z keeps its three channels.
    auto xy = choose_block_format(layout_of({Semantic::normal, Semantic::normal, Semantic::normal}, ColorSpace::linear,
                                            SampleType::uint8, NormalMode::xy),
                                  BlockFormat::astc_4x4);
    ASSERT_TRUE(xy.ok());
    EXPECT_TRUE(xy->normal_xy);
    auto xyz = choose_block_format(layout_of({Semantic::normal, Semantic::normal, Semantic::normal}, ColorSpace::linear,
                                             SampleType::uint8, NormalMode::xyz),
                                   BlockFormat::astc_4x4);
    ASSERT_TRUE(xyz.ok());
    EXPECT_FALSE(xyz->normal_xy);
    // BC5 keeps X and Y itself: no ASTC normal mode there.
    EXPECT_FALSE(choose_block_format(layout_of({Semantic::normal, Semantic::normal, Semantic::normal},
                                               ColorSpace::linear, SampleType::uint8, NormalMode::xy),
                                     std::nullopt)
                     ->normal_xy);
}

// Float samples (HDR maps) go to BC6H, the one format nmc writes that holds values outside [0, 1]; with alpha they
// are refused (BC6H is RGB, ASTC HDR is not encoded), and an 8-bit format named for them is a usage error.
TEST(FormatChoice, FloatSamplesTakeBc6h) {
    for (SampleType type : {SampleType::float16, SampleType::float32}) {
        const TextureLayout grey = layout_of({Semantic::emissive}, ColorSpace::linear, type);
        const TextureLayout rgb =
            layout_of({Semantic::emissive, Semantic::emissive, Semantic::emissive}, ColorSpace::linear, type);
        expect_choice(grey, std::nullopt, BlockFormat::bc6h, false);
        expect_choice(rgb, std::nullopt, BlockFormat::bc6h, false);
        expect_choice(rgb, BlockFormat::bc6h, BlockFormat::bc6h, false);
        auto named = choose_block_format(rgb, BlockFormat::bc7);
        EXPECT_EQ(named.status().code(), StatusCode::invalid_argument);
        EXPECT_NE(named.status().message().find("bc6h holds them"), std::string::npos) << named.status().message();
        for (std::optional<BlockFormat> requested : {std::optional<BlockFormat>(), std::optional(BlockFormat::bc6h)}) {
            auto rgba = choose_block_format(
                layout_of({Semantic::emissive, Semantic::emissive, Semantic::emissive, Semantic::opacity},
                          ColorSpace::linear, type),
                requested);
            EXPECT_EQ(rgba.status().code(), StatusCode::backend_unavailable);
            EXPECT_NE(rgba.status().message().find("BC6H holds RGB only"), std::string::npos);
        }
    }
    // 8- and 16-bit maps may be named into BC6H too, but not sRGB colour (BC6H has no sRGB format).
    expect_choice(layout_of({Semantic::roughness}), BlockFormat::bc6h, BlockFormat::bc6h, false);
    auto srgb = choose_block_format(layout_of({Semantic::albedo, Semantic::albedo, Semantic::albedo}, ColorSpace::srgb),
                                    BlockFormat::bc6h);
    EXPECT_EQ(srgb.status().code(), StatusCode::invalid_argument);
}

// BC6H encodes float mips and refuses negative values, which BC6H_UF16 cannot hold.
TEST(FormatChoice, Bc6hEncodesFloatMipsAndRefusesNegatives) {
    BlockChoice choice;
    choice.format = BlockFormat::bc6h;
    std::vector<Image> mips = {Image(8, 4, 3, SampleType::float32), Image(4, 2, 3, SampleType::float32),
                               Image(2, 1, 3, SampleType::float32), Image(1, 1, 3, SampleType::float32)};
    for (Image& mip : mips)  // a gradient from 0.1 to 1.5, the channels in proportion
        for (size_t i = 0; i < mip.pixels.size(); ++i)
            mip.pixels[i] = (0.1f + 0.1f * float(i / 3 % size_t(mip.width))) * (1.0f + 0.5f * float(i % 3));
    auto encoded = encode_block_texture(choice, mips, 1, AstcEffort::medium);
    ASSERT_TRUE(encoded.ok()) << encoded.status().to_string();
    EXPECT_EQ(encoded->texture.levels.size(), 4u);
    EXPECT_EQ(encoded->texture.levels[0].size(), level_bytes(BlockFormat::bc6h, 8, 4));
    EXPECT_EQ(encoded->compared_channels, 3);
    EXPECT_LT(encoded->mip0_mse8, 1e-4);  // values above 1 clip alike on both sides of the psnr8 comparison
    ASSERT_TRUE(encoded->mip0_decoded.has_value());  // the float mip 0, beyond [0, 1], for the HDR measure
    ASSERT_EQ(encoded->mip0_decoded->channels, 3);
    for (size_t i = 0; i < mips[0].pixels.size(); ++i)
        EXPECT_NEAR(encoded->mip0_decoded->pixels[i], mips[0].pixels[i], 0.05f * mips[0].pixels[i]);
    mips[2].pixels[1] = -0.5f;
    encoded = encode_block_texture(choice, mips, 1, AstcEffort::medium);
    EXPECT_EQ(encoded.status().code(), StatusCode::backend_unavailable);
    EXPECT_NE(encoded.status().message().find("negative"), std::string::npos);
}

}  // namespace
}  // namespace nmc::texture
