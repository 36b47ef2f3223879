// write_texture: output names (suffix, mip, format override), sample types and colour spaces kept, and
// refusing to overwrite.
#include <gtest/gtest.h>

#include "test_support.h"

namespace nmc {
namespace {

TextureLayout layout_of(const std::string& file, const std::string& format, SampleType type, ColorSpace cs) {
    TextureLayout t;
    t.name = file.substr(0, file.rfind('.'));
    t.file_name = file;
    t.file_format = format;
    t.sample_type = type;
    t.color_space = cs;
    t.channels.resize(3);
    for (auto& c : t.channels) c.semantic = Semantic::albedo;
    return t;
}

TEST(WriteTexture, Names) {
    const TextureLayout t = layout_of("Metal009_2K_Color.jpg", "jpeg", SampleType::uint8, ColorSpace::srgb);
    EXPECT_EQ(texture_output_name(t, 0, "", ""), "Metal009_2K_Color.jpg");
    EXPECT_EQ(texture_output_name(t, 0, "_decoded", ""), "Metal009_2K_Color_decoded.jpg");
    EXPECT_EQ(texture_output_name(t, 3, "", ""), "Metal009_2K_Color_mip3.jpg");
    EXPECT_EQ(texture_output_name(t, 2, "_nmc", "png"), "Metal009_2K_Color_nmc_mip2.png");
    EXPECT_EQ(texture_output_name(t, 0, "", "exr"), "Metal009_2K_Color.exr");
}

TEST(WriteTexture, WritesWithTheSourcesFormatAndRefusesToOverwrite) {
    test::TempDir dir;
    const TextureLayout t = layout_of("brick_diff.png", "png", SampleType::uint16, ColorSpace::srgb);
    const Image decoded = test::make_image(4, 2, 3, [](int x, int y, int c) { return (x + y * 4 + c) / 16.0f; },
                                           SampleType::float32);
    ASSERT_TRUE(write_texture(dir.path(), t, decoded, 0, "", "", false).ok());
    ASSERT_TRUE(write_texture(dir.path(), t, decoded, 1, "_x", "", false).ok());
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"brick_diff.png", "brick_diff_x_mip1.png"}));
    auto back = read_image_file(dir.file("brick_diff.png"));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->image.sample_type, SampleType::uint16);  // the source's bit depth, not the decoder's floats
    EXPECT_EQ(back->declared_color_space, ColorSpace::srgb);
    EXPECT_NEAR(back->image.pixels[5], decoded.pixels[5], 0.5f / 65535);

    const Image other = test::make_image(4, 2, 3, [](int, int, int) { return 0.0f; });
    const Status refused = write_texture(dir.path(), t, other, 0, "", "", false);
    EXPECT_EQ(refused.code(), StatusCode::io_error);
    EXPECT_NE(refused.message().find("brick_diff.png: exists"), std::string::npos);
    EXPECT_NEAR(read_image(dir.file("brick_diff.png"))->pixels[5], decoded.pixels[5], 0.5f / 65535);
    EXPECT_TRUE(write_texture(dir.path(), t, other, 0, "", "", true).ok());
    EXPECT_EQ(read_image(dir.file("brick_diff.png"))->pixels[5], 0.0f);
}

TEST(WriteTexture, FormatOverrideAndChannelMismatch) {
    test::TempDir dir;
    const TextureLayout t = layout_of("brick_diff.jpg", "jpeg", SampleType::uint8, ColorSpace::srgb);
    const Image decoded = test::make_image(2, 2, 3, test::code);
    ASSERT_TRUE(write_texture(dir.path(), t, decoded, 0, "", "png", false).ok());
    auto back = read_image(dir.file("brick_diff.png"));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->pixels, decoded.pixels);  // lossless override of a lossy source
    EXPECT_EQ(write_texture(dir.path(), t, test::make_image(2, 2, 1, test::code), 0, "_b", "", false).code(),
              StatusCode::invalid_argument);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"brick_diff.png"});
}

}  // namespace
}  // namespace nmc
