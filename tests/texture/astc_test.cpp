// ASTC through libastcenc: the blocks are the astcenc tool's own, byte for byte, at 4x4, 6x6 and 8x8 (linear,
// sRGB, normal map), so nmc's ASTC has the tool's quality (docs/benchmarks.md's ASTC figures); the thread count changes nothing; the decoder returns
// what was encoded within ASTC's precision; --codec astc's block size meets its target with the fewest bits the
// bisection finds; what is not ASTC or not a level's size is refused.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "material/image_io.h"
#include "texture/astc.h"
#include "texture/format_choice.h"
#include "quality/quality_measurement.h"

namespace nmc::texture {
namespace {

// 61x45 texels (partial edge blocks at every block size) of a real albedo or normal map, else seeded ramps.
Image test_image(const std::string& file) {
    auto source = read_image(std::string(NMC_SHARED_DIR) + "/materials/polyhaven_metal_plate_02_1k/" + file);
    Image image(61, 45, 3);
    std::mt19937 rng(5);
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x)
            for (int c = 0; c < 3; ++c)
                image.at(x, y, c) = source.ok() ? source->at(300 + x, 200 + y, c)
                                                : float((x * (c + 2) + y * 3 + int(rng() % 16)) % 256) / 255.0f;
    return image;
}

struct ToolCase {
    const char* file;
    BlockFormat format;
    const char* profile;  // the tool's -cl / -cs
    bool srgb;
    bool normal;
};

TEST(Astc, BlocksAreTheAstcencToolsOwn) {
    if (!astc_in_build()) GTEST_SKIP() << "built without libastcenc";
    if (::access("/usr/bin/astcenc", X_OK) != 0) GTEST_SKIP() << "no astcenc tool (Debian's astcenc package)";
    std::string dir = ::testing::TempDir() + "/nmc_astc_XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    const ToolCase cases[] = {
        {"metal_plate_02_diff_1k.jpg", BlockFormat::astc_4x4, "-cl", false, false},
        {"metal_plate_02_diff_1k.jpg", BlockFormat::astc_6x6, "-cs", true, false},
        {"metal_plate_02_diff_1k.jpg", BlockFormat::astc_8x8, "-cl", false, false},
        {"metal_plate_02_nor_gl_1k.jpg", BlockFormat::astc_6x6, "-cl", false, true},
    };
    for (const ToolCase& c : cases) {
        const Image image = test_image(c.file);
        const std::string png = dir + "/in.png", astc = dir + "/out.astc";
        ASSERT_TRUE(write_image(png, image, "png", true).ok());
        const std::string size = std::string(to_string(c.format)).substr(5);  // "6x6"
        const std::string command = std::string("/usr/bin/astcenc ") + c.profile + " '" + png + "' '" + astc + "' " +
                                    size + " -medium" + (c.normal ? " -normal" : "") + " -silent >/dev/null 2>&1";
        const int status = std::system(command.c_str());
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
        auto tool = read_file(astc, 1 << 20);
        ASSERT_TRUE(tool.ok());
        BlockChoice choice;
        choice.format = c.format, choice.srgb = c.srgb, choice.normal_xy = c.normal;
        // libastcenc 4.2 keeps state from the first context a process creates: a later context of another block
        // size encodes some blocks differently (0.04-0.11 dB lower at 6x6 and 8x8 after a 4x4 one). The tool
        // creates one context per process, so each case encodes in a child process too.
        const std::string ours_path = dir + "/ours.bin";
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            auto blocks = encode_astc(choice, AstcEffort::medium, {to_rgba8(image)}, 2);
            const bool written =
                blocks.ok() && write_file_atomically(ours_path, (*blocks)[0].data(), (*blocks)[0].size()).ok();
            ::_exit(written ? 0 : 1);
        }
        int child_status = 0;
        ASSERT_EQ(::waitpid(child, &child_status, 0), child);
        ASSERT_TRUE(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0) << "encoding in the child failed";
        auto ours = read_file(ours_path, 1 << 20);
        ASSERT_TRUE(ours.ok());
        std::remove(ours_path.c_str());
        constexpr size_t kAstcFileHeader = 16;  // the .astc file's magic, block size and image size
        ASSERT_EQ(tool->size(), kAstcFileHeader + ours->size()) << to_string(c.format);
        EXPECT_TRUE(std::equal(ours->begin(), ours->end(), tool->begin() + kAstcFileHeader))
            << c.file << " " << to_string(c.format) << " " << c.profile;
        std::remove(png.c_str());
        std::remove(astc.c_str());
    }
    ::rmdir(dir.c_str());
}

TEST(Astc, ThreadsChangeNothingAndDecodingReturnsTheImage) {
    if (!astc_in_build()) GTEST_SKIP() << "built without libastcenc";
    const Rgba8Image source = to_rgba8(test_image("metal_plate_02_diff_1k.jpg"));
    BlockChoice choice;
    choice.format = BlockFormat::astc_5x4;
    auto one = encode_astc(choice, AstcEffort::fast, {source}, 1);
    auto three = encode_astc(choice, AstcEffort::fast, {source}, 3);
    ASSERT_TRUE(one.ok() && three.ok());
    EXPECT_EQ(*one, *three);
    auto decoded = decode_astc(choice, source.width, source.height, (*one)[0]);
    ASSERT_TRUE(decoded.ok());
    // 6.4 bits per texel on a detailed albedo crop: well above 35 dB (measured 44.6 at fast effort).
    EXPECT_GT(psnr_from_mse(mean_squared_error8(source, *decoded, 3)), 40.0);
}

TEST(Astc, RefusesWhatIsNotAnAstcLevel) {
    BlockChoice bc7;
    bc7.format = BlockFormat::bc7;
    Rgba8Image image;
    image.width = image.height = 4;
    image.texels.assign(64, 0);
    EXPECT_EQ(encode_astc(bc7, AstcEffort::fast, {image}, 1).status().code(), StatusCode::invalid_argument);
    BlockChoice astc;
    astc.format = BlockFormat::astc_8x8;
    const StatusCode wrong_size = decode_astc(astc, 9, 9, std::vector<uint8_t>(16)).status().code();
    EXPECT_EQ(wrong_size, astc_in_build() ? StatusCode::invalid_argument : StatusCode::backend_unavailable);
    if (!astc_in_build()) {
        EXPECT_EQ(encode_astc(astc, AstcEffort::fast, {image}, 1).status().code(), StatusCode::backend_unavailable);
    }
}

TEST(Astc, BlockSizeFromAQualityTarget) {
    if (!astc_in_build()) GTEST_SKIP() << "built without libastcenc";
    const Image image = test_image("metal_plate_02_diff_1k.jpg");
    BlockChoice choice;
    choice.format = BlockFormat::astc_4x4;
    // The target: 6x6's own error. The choice meets it with no more bits than 6x6 (quality falls with block size
    // on this crop, so bisection lands on 6x6 or a size that happens to do as well with fewer bits).
    BlockChoice six = choice;
    six.format = BlockFormat::astc_6x6;
    const Rgba8Image texels = to_rgba8(image);
    auto blocks = encode_astc(six, AstcEffort::fast, {texels}, 2);
    ASSERT_TRUE(blocks.ok());
    const double six_mse = mean_squared_error8(texels, *decode_astc(six, image.width, image.height, (*blocks)[0]), 3);
    auto sized = choose_astc_block_size(choice, image, six_mse, AstcEffort::fast, 2);
    ASSERT_TRUE(sized.ok()) << sized.status().to_string();
    EXPECT_TRUE(sized->reached);
    EXPECT_LE(sized->mip0_mse8, six_mse);
    EXPECT_LE(bits_per_texel(sized->format), bits_per_texel(BlockFormat::astc_6x6)) << to_string(sized->format);
    // Any error allowed: the largest block. None allowed on a detailed crop: 4x4, the target missed.
    EXPECT_EQ(choose_astc_block_size(choice, image, 1.0, AstcEffort::fast, 2)->format, BlockFormat::astc_12x12);
    auto impossible = choose_astc_block_size(choice, image, 0.0, AstcEffort::fast, 2);
    ASSERT_TRUE(impossible.ok());
    EXPECT_FALSE(impossible->reached);
    EXPECT_EQ(impossible->format, BlockFormat::astc_4x4);
    EXPECT_GT(impossible->mip0_mse8, 0.0);
}

}  // namespace
}  // namespace nmc::texture
