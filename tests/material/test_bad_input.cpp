// Bad input: each case fails with its own status code, names the file, and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/file_io.h"
#include "test_support.h"

namespace nmc {
namespace {

void expect_failure(const Result<Material>& r, StatusCode code, const std::string& needle) {
    ASSERT_FALSE(r.ok()) << "expected " << to_string(code);
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

// A PNG signature and IHDR chunk claiming the given size, then nothing (the CRC is not checked first).
void write_png_header(const std::string& path, uint32_t width, uint32_t height) {
    std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    for (uint32_t v : {width, height})
        for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(v >> shift));
    for (uint8_t v : {8, 2, 0, 0, 0, 0, 0, 0, 0}) b.push_back(v);
    ASSERT_TRUE(write_file_atomically(path, b.data(), b.size()).ok());
}

TEST(BadInput, MissingAndEmptyFolders) {
    test::TempDir dir;
    expect_failure(load_material(dir.file("nope")), StatusCode::io_error, "nope: no such folder");
    expect_failure(load_material(dir.path()), StatusCode::not_recognized, "folder is empty");
    test::write_text(dir.file("readme.txt"), "x");
    expect_failure(load_material(dir.path()), StatusCode::not_recognized, "no texture maps recognised");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"readme.txt"});
}

TEST(BadInput, TruncatedImage) {
    test::TempDir dir;
    test::write_png(dir.file("full.png"), test::make_image(32, 32, 3, test::code));
    auto bytes = read_file(dir.file("full.png"), 1 << 20);
    ASSERT_TRUE(bytes.ok());
    ASSERT_TRUE(write_file_atomically(dir.file("w_diff.png"), bytes->data(), bytes->size() / 2).ok());
    std::filesystem::remove(dir.file("full.png"));
    expect_failure(load_material(dir.path()), StatusCode::corrupt, "w_diff.png");
    test::write_text(dir.file("w_diff.png"), "");
    expect_failure(load_material(dir.path()), StatusCode::corrupt, "w_diff.png: empty file");
}

TEST(BadInput, UnreadableFile) {
    test::TempDir dir;
    test::write_png(dir.file("w_diff.png"), test::make_image(2, 2, 3, test::code));
    std::filesystem::permissions(dir.file("w_diff.png"), std::filesystem::perms::none);
    std::ifstream probe(dir.file("w_diff.png"));
    if (probe.good()) GTEST_SKIP() << "running as root: permissions do not stop reads";
    expect_failure(load_material(dir.path()), StatusCode::io_error, "w_diff.png: cannot open");
}

TEST(BadInput, NotAnImageAndUnsupportedFormat) {
    test::TempDir dir;
    test::write_text(dir.file("w_diff.png"), "this is text, not a PNG");
    expect_failure(load_material(dir.path()), StatusCode::not_recognized, "w_diff.png: not an image");
    std::filesystem::remove(dir.file("w_diff.png"));
    test::write_text(dir.file("w_diff.gif"), "GIF89a....");  // .gif is no image extension nmc knows: ignored
    expect_failure(load_material(dir.path()), StatusCode::not_recognized, "no texture maps recognised");
    // A WebP signature: a format PNGJPEG builds cannot read; with OIIO, a truncated file.
    const std::string webp("RIFF\x10\0\0\0WEBPVP8 ", 16);
    test::write_text(dir.file("w_rough.webp"), webp);
    const auto r = load_material(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("w_rough.webp"), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().code(),
              image_format_supported("webp") ? StatusCode::corrupt : StatusCode::backend_unavailable);
}

TEST(BadInput, ZeroAndAbsurdDimensions) {
    test::TempDir dir;
    write_png_header(dir.file("w_diff.png"), 20000, 16);
    expect_failure(load_material(dir.path()), StatusCode::limit_exceeded, "w_diff.png: image is 20000x16");
    write_png_header(dir.file("w_diff.png"), 0, 16);
    expect_failure(load_material(dir.path()), StatusCode::limit_exceeded, "w_diff.png: image is 0x16");
}

TEST(BadInput, TwoFilesClaimingOneSemantic) {
    test::TempDir dir;
    test::write_png(dir.file("w_diff.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file("w_albedo.png"), test::make_image(2, 2, 3, test::code));
    expect_failure(load_material(dir.path()), StatusCode::invalid_argument,
                   "both w_albedo.png and w_diff.png are albedo maps");
}

TEST(BadInput, SizesDifferUnlessResamplingIsAsked) {
    test::TempDir dir;
    test::write_png(dir.file("w_diff.png"), test::make_image(8, 8, 3, test::code));
    test::write_png(dir.file("w_rough.png"), test::make_image(4, 4, 1, test::code));
    expect_failure(load_material(dir.path()), StatusCode::invalid_argument, "w_rough.png is 4x4, w_diff.png is 8x8");
    MaterialLoadOptions options;
    options.resample_mismatched = true;
    auto m = load_material(dir.path(), options);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->width, 8);
    ASSERT_EQ(m->warnings.size(), 1u);
    EXPECT_NE(m->warnings[0].find("w_rough.png is 4x4"), std::string::npos);
}

TEST(BadInput, BadManifests) {
    test::TempDir dir;
    test::write_png(dir.file("w_diff.png"), test::make_image(2, 2, 3, test::code));
    test::write_text(dir.file("m.json"), R"({"textures": [{"file": "w_diff.png", "semantic": "albedo", "gamma": 2}]})");
    expect_failure(load_material(dir.file("m.json")), StatusCode::invalid_argument, "m.json: textures[0].gamma: unknown key");
    test::write_text(dir.file("m.json"), R"({"textures": [{"file": "w_diff.png", "semantic": 7}]})");
    expect_failure(load_material(dir.file("m.json")), StatusCode::invalid_argument,
                   "m.json: textures[0].semantic: expected a semantic string, got number");
    test::write_text(dir.file("m.json"), R"({"textures": [{"file": "gone.png", "semantic": "albedo"}]})");
    expect_failure(load_material(dir.file("m.json")), StatusCode::io_error, "m.json: lists 'gone.png'");
    test::write_text(dir.file("m.json"), R"({"folder": "elsewhere", "textures": []})");
    expect_failure(load_material(dir.file("m.json")), StatusCode::io_error, "folder");
}

TEST(BadInput, NormalMapWithWrongChannelCount) {
    test::TempDir dir;
    test::write_png(dir.file("w_normal.png"), test::make_image(2, 2, 4, test::code));
    expect_failure(load_material(dir.path()), StatusCode::invalid_argument,
                   "w_normal.png: a normal map must have 3 channels");
}

}  // namespace
}  // namespace nmc
