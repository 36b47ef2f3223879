// Image file round trips through write_image/read_image: PNG 8 and 16 bit with 1-4 channels, EXR float, TGA,
// JPEG (lossy), alpha kept unassociated, colour-space tags; formats the build lacks fail naming the file.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace nmc {
namespace {

void expect_same(const Image& a, const Image& b, float tolerance) {
    ASSERT_EQ(a.width, b.width);
    ASSERT_EQ(a.height, b.height);
    ASSERT_EQ(a.channels, b.channels);
    for (size_t i = 0; i < a.pixels.size(); ++i) ASSERT_NEAR(a.pixels[i], b.pixels[i], tolerance) << "sample " << i;
}

TEST(ImageIo, Png8BitAllChannelCountsExact) {
    test::TempDir dir;
    for (int channels = 1; channels <= 4; ++channels) {
        const Image image = test::make_image(5, 3, channels, test::code);  // non-power-of-two on purpose
        const std::string path = dir.file("c" + std::to_string(channels) + ".png");
        ASSERT_TRUE(write_image(path, image, "png", false).ok());
        auto back = read_image_file(path);
        ASSERT_TRUE(back.ok()) << back.status().to_string();
        EXPECT_EQ(back->format, "png");
        EXPECT_EQ(back->image.sample_type, SampleType::uint8);
        expect_same(back->image, image, 0.0f);
    }
}

TEST(ImageIo, Png16BitExactAndQuantisedAsSpecified) {
    test::TempDir dir;
    const Image image = test::make_image(4, 4, 2, [](int x, int y, int c) {
        return static_cast<float>((x * 4099 + y * 257 + c * 31) % 65536) / 65535.0f;
    }, SampleType::uint16);
    ASSERT_TRUE(write_image(dir.file("w.png"), image, "png", false).ok());
    auto back = read_image(dir.file("w.png"));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->sample_type, SampleType::uint16);
    expect_same(*back, image, 0.0f);

    // spec 8.10: floor(clamp(v) * 255 + 0.5)
    const Image odd = test::make_image(4, 1, 1, [](int x, int, int) { return std::vector<float>{-1, 0.6f / 255, 0.4f, 2}[x]; });
    ASSERT_TRUE(write_image(dir.file("q.png"), odd, "png", false).ok());
    auto q = read_image(dir.file("q.png"));
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(q->pixels, (std::vector<float>{0.0f, 1.0f / 255, 102.0f / 255, 1.0f}));
}

TEST(ImageIo, AlphaIsKeptAsStored) {
    test::TempDir dir;
    const Image image = test::make_image(2, 2, 4, [](int x, int y, int c) { return c == 3 ? (x + y) / 4.0f : 0.8f; });
    ASSERT_TRUE(write_image(dir.file("a.png"), image, "png", false).ok());
    auto back = read_image(dir.file("a.png"));
    ASSERT_TRUE(back.ok());
    expect_same(*back, image, 0.51f / 255);  // colour under alpha 0 survives: nothing is premultiplied
}

TEST(ImageIo, ExrAndTgaWhereTheBackendHasThem) {
    test::TempDir dir;
    const Image hdr = test::make_image(3, 5, 3, [](int x, int y, int c) { return -1.5f + 0.37f * (x + y * 3 + c); },
                                       SampleType::float32);
    const Image ldr = test::make_image(3, 5, 4, test::code);
    if (!image_format_supported("exr")) {
        const Status s = write_image(dir.file("h.exr"), hdr, "exr", false);
        EXPECT_EQ(s.code(), StatusCode::backend_unavailable);
        EXPECT_NE(s.message().find("h.exr"), std::string::npos);
        EXPECT_EQ(write_image(dir.file("t.tga"), ldr, "tga", false).code(), StatusCode::backend_unavailable);
        EXPECT_TRUE(dir.entries().empty());
        return;
    }
    ASSERT_TRUE(write_image(dir.file("h.exr"), hdr, "exr", false).ok());
    auto h = read_image_file(dir.file("h.exr"));
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    EXPECT_EQ(h->format, "exr");
    EXPECT_EQ(h->image.sample_type, SampleType::float32);
    EXPECT_EQ(h->declared_color_space, ColorSpace::linear);
    expect_same(h->image, hdr, 0.0f);

    ASSERT_TRUE(write_image(dir.file("t.tga"), ldr, "tga", false).ok());
    auto t = read_image_file(dir.file("t.tga"));
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    EXPECT_EQ(t->format, "tga");
    expect_same(t->image, ldr, 0.0f);
}

TEST(ImageIo, JpegIsReadAndWritten) {
    test::TempDir dir;
    const Image smooth = test::make_image(16, 16, 3, [](int x, int y, int c) { return (x + y + c * 4) / 40.0f; });
    ASSERT_TRUE(write_image(dir.file("s.jpg"), smooth, "jpg", false).ok());
    auto back = read_image_file(dir.file("s.jpg"));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->format, "jpeg");
    expect_same(back->image, smooth, 0.05f);  // quality 95 on a smooth ramp: a few codes of error at most
    EXPECT_EQ(write_image(dir.file("four.jpg"), test::make_image(2, 2, 4, test::code), "jpeg", false).code(),
              StatusCode::invalid_argument);
}

TEST(ImageIo, ColourSpaceTagsAreReadBack) {
    test::TempDir dir;
    const Image image = test::make_image(2, 2, 3, test::code);
    ASSERT_TRUE(write_image_tagged(dir.file("s.png"), image, "png", false, ColorSpace::srgb).ok());
    ASSERT_TRUE(write_image_tagged(dir.file("l.png"), image, "png", false, ColorSpace::linear).ok());
    EXPECT_EQ(read_image_file(dir.file("s.png"))->declared_color_space, ColorSpace::srgb);
    EXPECT_EQ(read_image_file(dir.file("l.png"))->declared_color_space, ColorSpace::linear);
}

TEST(ImageIo, RefusesToOverwriteAndLeavesTheFileIntact) {
    test::TempDir dir;
    const Image a = test::make_image(2, 2, 1, [](int, int, int) { return 0.2f; });
    const Image b = test::make_image(2, 2, 1, [](int, int, int) { return 0.8f; });
    ASSERT_TRUE(write_image(dir.file("x.png"), a, "png", false).ok());
    const Status refused = write_image(dir.file("x.png"), b, "png", false);
    EXPECT_EQ(refused.code(), StatusCode::io_error);
    EXPECT_NE(refused.message().find("x.png: exists"), std::string::npos);
    EXPECT_FLOAT_EQ(read_image(dir.file("x.png"))->pixels[0], a.pixels[0]);
    ASSERT_TRUE(write_image(dir.file("x.png"), b, "png", true).ok());
    EXPECT_FLOAT_EQ(read_image(dir.file("x.png"))->pixels[0], b.pixels[0]);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"x.png"});  // no temporary left behind
}

TEST(ImageIo, BadWriteRequests) {
    test::TempDir dir;
    EXPECT_EQ(write_image(dir.file("x.gif"), test::make_image(2, 2, 1, test::code), "gif", false).code(),
              StatusCode::invalid_argument);
    EXPECT_EQ(write_image(dir.file("x.png"), Image(0, 2, 1), "png", false).code(), StatusCode::limit_exceeded);
    EXPECT_EQ(write_image(dir.file("x.png"), Image(2, 2, 5), "png", false).code(), StatusCode::invalid_argument);
    EXPECT_EQ(write_image(dir.path() + "/missing/x.png", test::make_image(2, 2, 1, test::code), "png", false).code(),
              StatusCode::io_error);
    EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace nmc
