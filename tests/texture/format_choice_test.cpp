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

TEST(FormatChoice, FloatSamplesNeedBc6h) {
    for (SampleType type : {SampleType::float16, SampleType::float32})
        for (std::optional<BlockFormat> requested : {std::optional<BlockFormat>(), std::optional(BlockFormat::bc7)}) {
            auto c = choose_block_format(layout_of({Semantic::emissive}, ColorSpace::linear, type), requested);
            EXPECT_EQ(c.status().code(), StatusCode::backend_unavailable);
            EXPECT_NE(c.status().message().find("BC6H"), std::string::npos);
        }
}

}  // namespace
}  // namespace nmc::texture
