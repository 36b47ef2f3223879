// write_texture: output names (suffix, mip, format override), sample types and colour spaces kept, sRGB colour
// written to float files as linear, values an integer file cannot hold counted, and refusing to overwrite.
#include <gtest/gtest.h>

#include "material/mip_chain.h"
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
    auto written = write_texture(dir.path(), t, decoded, 0, "", "", false);
    ASSERT_TRUE(written.ok()) << written.status().message();
    EXPECT_EQ(written->path, dir.file("brick_diff.png"));
    EXPECT_EQ(written->sample_type, SampleType::uint16);
    EXPECT_FALSE(written->converted_to_linear);
    EXPECT_EQ(written->clipped_samples, 0u);
    EXPECT_EQ(written->checked_samples, decoded.pixels.size());
    ASSERT_TRUE(write_texture(dir.path(), t, decoded, 1, "_x", "", false).ok());
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"brick_diff.png", "brick_diff_x_mip1.png"}));
    auto back = read_image_file(dir.file("brick_diff.png"));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->image.sample_type, SampleType::uint16);  // the source's bit depth, not the decoder's floats
    EXPECT_EQ(back->declared_color_space, ColorSpace::srgb);
    EXPECT_NEAR(back->image.pixels[5], decoded.pixels[5], 0.5f / 65535);

    const Image other = test::make_image(4, 2, 3, [](int, int, int) { return 0.0f; });
    const auto refused = write_texture(dir.path(), t, other, 0, "", "", false);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::io_error);
    EXPECT_NE(refused.status().message().find("brick_diff.png: exists"), std::string::npos);
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
    EXPECT_EQ(write_texture(dir.path(), t, test::make_image(2, 2, 1, test::code), 0, "_b", "", false).status().code(),
              StatusCode::invalid_argument);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"brick_diff.png"});
}

// Bug: `decompress --format exr` wrote an sRGB albedo's encoded values into the EXR (tagged Linear), so scan and
// load_material() read them back as linear values: a different, darker-looking colour. Float files hold linear
// light; the colour channels are decoded with the sRGB transfer function, opacity (data) is left alone.
TEST(WriteTexture, SrgbColourWrittenToExrIsLinear) {
    if (!image_format_supported("exr")) GTEST_SKIP() << "this build's image backend writes no EXR";
    test::TempDir dir;
    TextureLayout t = layout_of("brick_diff.png", "png", SampleType::uint8, ColorSpace::srgb);
    t.channels.resize(4);
    t.channels[3].semantic = Semantic::opacity;
    const Image decoded = test::make_image(4, 2, 4, [](int x, int y, int c) { return (x + y * 4 + c) / 12.0f; });
    auto written = write_texture(dir.path(), t, decoded, 0, "", "exr", false);
    ASSERT_TRUE(written.ok()) << written.status().message();
    EXPECT_EQ(written->sample_type, SampleType::float32);  // what the file holds, not the source's uint8
    EXPECT_TRUE(written->converted_to_linear);
    EXPECT_EQ(written->clipped_samples, 0u);
    EXPECT_EQ(written->checked_samples, 8u * 3);  // the colour channels, the only ones the conversion clamps
    auto back = read_image_file(dir.file("brick_diff.exr"));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->declared_color_space, ColorSpace::linear);
    EXPECT_EQ(back->image.sample_type, SampleType::float32);
    for (size_t i = 0; i < decoded.pixels.size(); ++i) {
        const float expected = i % 4 == 3 ? decoded.pixels[i] : srgb_to_linear(decoded.pixels[i]);
        EXPECT_EQ(back->image.pixels[i], expected) << "sample " << i;
    }
    EXPECT_NE(back->image.pixels[1], decoded.pixels[1]);  // converted, not copied

    // A linear colour map and a data map are written as decoded.
    const TextureLayout linear = layout_of("brick_lin.png", "png", SampleType::uint8, ColorSpace::linear);
    auto as_is = write_texture(dir.path(), linear, test::make_image(4, 2, 3, test::code), 0, "", "exr", false);
    ASSERT_TRUE(as_is.ok());
    EXPECT_FALSE(as_is->converted_to_linear);
    EXPECT_EQ(read_image(dir.file("brick_lin.exr"))->pixels, test::make_image(4, 2, 3, test::code).pixels);
}

// Bug: `decompress --format png` clipped an HDR emissive map (16 -> 65535) without a word. The clamp is spec 8.10's;
// what it cost is now reported: how many samples and their range.
TEST(WriteTexture, CountsValuesAnIntegerFileCannotHold) {
    test::TempDir dir;
    TextureLayout t = layout_of("lamp_emissive.exr", "exr", SampleType::float32, ColorSpace::linear);
    t.channels.resize(1);
    t.channels[0].semantic = Semantic::emissive;
    Image decoded(2, 2, 1, SampleType::float32);
    decoded.pixels = {0.5f, 16.0f, -0.25f, 1.0f};
    auto png = write_texture(dir.path(), t, decoded, 0, "", "png", false);
    ASSERT_TRUE(png.ok()) << png.status().message();
    EXPECT_EQ(png->sample_type, SampleType::uint16);
    EXPECT_EQ(png->clipped_samples, 2u);
    EXPECT_EQ(png->checked_samples, 4u);
    EXPECT_EQ(png->min_value, -0.25f);
    EXPECT_EQ(png->max_value, 16.0f);
    EXPECT_EQ(read_image(dir.file("lamp_emissive.png"))->pixels, (std::vector<float>{32768.0f / 65535, 1, 0, 1}));

    if (image_format_supported("tga")) {
        auto tga = write_texture(dir.path(), t, decoded, 0, "", "tga", false);
        ASSERT_TRUE(tga.ok()) << tga.status().message();
        EXPECT_EQ(tga->sample_type, SampleType::uint8);
        EXPECT_EQ(tga->clipped_samples, 2u);
    }
    if (image_format_supported("exr")) {
        auto exr = write_texture(dir.path(), t, decoded, 0, "_hdr", "", false);
        ASSERT_TRUE(exr.ok()) << exr.status().message();
        EXPECT_EQ(exr->clipped_samples, 0u);  // a float file keeps every value
        EXPECT_EQ(exr->checked_samples, 0u);
        EXPECT_EQ(read_image(dir.file("lamp_emissive_hdr.exr"))->pixels, decoded.pixels);
    }
}

TEST(StoredSampleType, IsWhatEachFormatHolds) {
    EXPECT_EQ(stored_sample_type(SampleType::uint8, "png"), SampleType::uint8);
    EXPECT_EQ(stored_sample_type(SampleType::float32, "png"), SampleType::uint16);
    EXPECT_EQ(stored_sample_type(SampleType::float16, "PNG"), SampleType::uint16);
    EXPECT_EQ(stored_sample_type(SampleType::uint16, "tga"), SampleType::uint8);
    EXPECT_EQ(stored_sample_type(SampleType::float32, "jpg"), SampleType::uint8);
    EXPECT_EQ(stored_sample_type(SampleType::uint8, "exr"), SampleType::float32);
    EXPECT_EQ(stored_sample_type(SampleType::float16, "exr"), SampleType::float16);
    EXPECT_EQ(stored_sample_type(SampleType::float16, "tif"), SampleType::float16);
    EXPECT_EQ(stored_sample_type(SampleType::uint16, "tiff"), SampleType::uint16);
}

}  // namespace
}  // namespace nmc
