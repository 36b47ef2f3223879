// Runs the built `nmc` binary (NMC_BINARY from the test environment, else the path CMake compiled in) on
// constant-output packs written with their sources (tests/validate/constant_pack.h): decompress round-trips file
// names, formats, channel counts and sample types, with --suffix, --mips, --format and --force; sRGB colour
// decoded to EXR reads back (scan, load_material) as the same colour; values a PNG or TGA cannot hold are a
// warning; --format dds|ktx2 hold every mip in the format --codec chooses (ASTC through astcenc, KTX2 zstd-supercompressed),
// report each texture's block compression psnr8 (--json), and refuse what they cannot hold; validate's exit codes (0, 3, 4, 5, 6, 7, 11, 12) and its JSON report against the numbers it prints; a
// recorded relative source folder found from the pack's folder whatever the working directory.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "material/image_io.h"
#include "material/mip_chain.h"
#include "tests/cli/nmc_process.h"
#include "tests/format/pack_surgery.h"
#include "tests/validate/constant_pack.h"
#include "texture/astc.h"
#include "texture/block_image.h"
#include "texture/texture_file.h"

namespace nmc {
namespace {

using testing::file_exists;
using testing::from_pack;
using testing::read_text;
using testing::texture_layout;

using test::CommandResult;

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

// The names in a folder, sorted ("" entries for a missing folder: none).
std::vector<std::string> entries(const std::string& folder) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(folder, ec)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A material "mat" of 8x8 texels and 4 mips, one texture per sample type the build can write:
//   mat_Color.png    uint8 sRGB RGB     pack channels 0-2, decoded 0.25, 0.5, 0.75
//   mat_Height.png   uint16 grey        pack channel 3, decoded 0.625
//   mat_Emissive.exr float32 grey       pack channel 4, range [0, 4], decoded 2.0 (only with an EXR backend)
class DecompressValidateCli : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(dir_.path().empty());
        source_dir_ = dir_.file("src");
        ASSERT_EQ(::mkdir(source_dir_.c_str(), 0755), 0);
        pack_path_ = dir_.file("mat.nmc");
        has_exr_ = image_format_supported("exr");

        std::vector<ChannelInfo> channels = {
            {"albedo.r", 0, 1}, {"albedo.g", 0, 1}, {"albedo.b", 0, 1}, {"height", 0, 1}};
        std::vector<float> outputs = {0.25f, 0.5f, 0.75f, 0.625f};
        if (has_exr_) {
            channels.push_back({"emissive", 0, 4});
            outputs.push_back(0.5f);
        }
        Pack pack = testing::constant_pack(8, 8, 4, channels, outputs);
        pack.material.name = "mat";
        pack.textures = {
            texture_layout(
                "mat_Color.png", SampleType::uint8, ColorSpace::srgb,
                {from_pack(0, Semantic::albedo), from_pack(1, Semantic::albedo), from_pack(2, Semantic::albedo)}),
            texture_layout("mat_Height.png", SampleType::uint16, ColorSpace::linear, {from_pack(3, Semantic::height)})};
        Image color(8, 8, 3), height(8, 8, 1, SampleType::uint16), emissive(8, 8, 1, SampleType::float32);
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x) {
                const float wobble = static_cast<float>((x + y) % 3) / 255.0f;  // a little error to measure
                color.at(x, y, 0) = 0.25f + wobble;
                color.at(x, y, 1) = 0.5f - wobble;
                color.at(x, y, 2) = 0.75f;
                height.at(x, y, 0) = 0.625f + wobble;
                emissive.at(x, y, 0) = 2.0f + wobble;
            }
        std::vector<Image> images = {color, height};
        if (has_exr_) {
            pack.textures.push_back(texture_layout("mat_Emissive.exr", SampleType::float32, ColorSpace::linear,
                                                   {from_pack(4, Semantic::emissive)}));
            images.push_back(emissive);
        }
        ASSERT_TRUE(testing::write_sources(pack, source_dir_, images).ok());
        ASSERT_TRUE(testing::store_measured_quality(pack, source_dir_).ok());
        ASSERT_TRUE(write_pack_file(pack_path_, pack).ok());
        pack_ = pack;
    }

    CommandResult run_nmc(const std::string& args) const { return test::run_nmc(args, dir_.path()); }
    CommandResult run_nmc_in(const std::string& working_dir, const std::string& args) const {
        return test::run_nmc_in(working_dir, args, dir_.path());
    }

    // Rewrites the pack with `source_folder` recorded (spec 5.7) and returns a fresh working directory "work" beside
    // it, from where the pack is "../mat.nmc".
    std::string record_source_folder(const std::string& source_folder) {
        pack_.encoder.source_folder = source_folder;
        EXPECT_TRUE(write_pack_file(pack_path_, pack_).ok());
        const std::string work = dir_.file("work");
        std::filesystem::create_directories(work);
        return work;
    }

    std::vector<std::string> source_names() const {
        std::vector<std::string> names;
        for (const TextureLayout& t : pack_.textures) names.push_back(t.file_name);
        std::sort(names.begin(), names.end());
        return names;
    }

    testing::TempDir dir_;
    std::string source_dir_;
    std::string pack_path_;
    bool has_exr_ = false;
    Pack pack_;
};

TEST_F(DecompressValidateCli, DecompressKeepsNamesFormatsChannelsAndSampleTypes) {
    const std::string out = dir_.file("out/nested");  // created, parents included
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(entries(out), source_names());
    for (const TextureLayout& t : pack_.textures) {
        auto source = read_image_file(source_dir_ + "/" + t.file_name);
        auto output = read_image_file(out + "/" + t.file_name);
        ASSERT_TRUE(source.ok() && output.ok()) << t.file_name;
        EXPECT_EQ(output->format, source->format) << t.file_name;
        EXPECT_EQ(output->image.channels, source->image.channels) << t.file_name;
        EXPECT_EQ(output->image.sample_type, source->image.sample_type) << t.file_name;
        EXPECT_EQ(output->image.width, 8);
        EXPECT_TRUE(contains(r.out, "wrote " + out + "/" + t.file_name + " (8x8, " +
                                        std::to_string(t.channels.size()) + " channels, " + to_string(t.sample_type) +
                                        ")"))
            << r.out;
    }
    EXPECT_FALSE(contains(r.err, "warning")) << r.err;  // every file holds what the pack decodes
    // The decoded constants, quantised as spec 8.10 says for each sample type.
    auto color = read_image(out + "/mat_Color.png");
    ASSERT_TRUE(color.ok());
    EXPECT_FLOAT_EQ(color->at(3, 4, 0), 64.0f / 255.0f);  // floor(0.25 * 255 + 0.5)
    EXPECT_FLOAT_EQ(color->at(3, 4, 1), 128.0f / 255.0f);
    EXPECT_FLOAT_EQ(color->at(3, 4, 2), 191.0f / 255.0f);  // floor(191.25 + 0.5)
    auto height = read_image(out + "/mat_Height.png");
    ASSERT_TRUE(height.ok());
    EXPECT_FLOAT_EQ(height->at(0, 0, 0), 40959.0f / 65535.0f);  // floor(0.625 * 65535 + 0.5)
    if (has_exr_) {
        auto emissive = read_image(out + "/mat_Emissive.exr");
        ASSERT_TRUE(emissive.ok());
        EXPECT_EQ(emissive->at(7, 7, 0), 2.0f);  // 0 + 4 * 0.5, kept beyond [0, 1]
    }
}

TEST_F(DecompressValidateCli, SuffixGoesBeforeTheExtension) {
    const std::string out = dir_.file("out");
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --suffix _dec");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> expected = {"mat_Color_dec.png", "mat_Height_dec.png"};
    if (has_exr_) expected.push_back("mat_Emissive_dec.exr");
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(entries(out), expected);
}

TEST_F(DecompressValidateCli, MipsWritesEveryLevel) {
    const std::string out = dir_.file("out");
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --mips --suffix _d");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> expected;
    for (const TextureLayout& t : pack_.textures) {
        const std::string stem = t.name + "_d", extension = t.file_name.substr(t.file_name.rfind('.'));
        expected.push_back(stem + extension);
        for (int m = 1; m < 4; ++m) expected.push_back(stem + "_mip" + std::to_string(m) + extension);
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(entries(out), expected);
    for (int m = 0; m < 4; ++m) {
        auto image = read_image(out + "/mat_Color_d" + (m ? "_mip" + std::to_string(m) : "") + ".png");
        ASSERT_TRUE(image.ok()) << "mip " << m;
        EXPECT_EQ(image->width, 8 >> m);
        EXPECT_EQ(image->height, 8 >> m);
        EXPECT_EQ(image->channels, 3);
    }
}

TEST_F(DecompressValidateCli, FormatOverrideReplacesEveryExtension) {
    const std::string out = dir_.file("out");
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format png");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> expected = {"mat_Color.png", "mat_Height.png"};
    if (has_exr_) expected.push_back("mat_Emissive.png");  // float samples as uint16 PNG
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(entries(out), expected);
    for (const std::string& name : expected) {
        auto file = read_image_file(out + "/" + name);
        ASSERT_TRUE(file.ok()) << name;
        EXPECT_EQ(file->format, "png") << name;
    }
    if (has_exr_) {
        // The wrote line gives the sample type written, not the source's float32.
        EXPECT_TRUE(contains(r.out, "wrote " + out + "/mat_Emissive.png (8x8, 1 channels, uint16)")) << r.out;
    }
}

// Bug: `--format png` clipped an HDR emissive map (values of 2 stored as 65535) without a word. The clamp stays
// (spec 8.10), and a warning names the texture, the file, how many samples and their range; the default format
// keeps the values and says nothing.
TEST_F(DecompressValidateCli, ClippingAnHdrMapToPngOrTgaIsAWarning) {
    if (!has_exr_) GTEST_SKIP() << "no EXR source: this build has no float map to clip";
    for (const std::string format : {"png", "tga"}) {
        const std::string out = dir_.file("out_" + format);
        const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format " + format);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(contains(r.err, "nmc: warning: texture 'mat_Emissive': 64 of 64 samples of " + out +
                                        "/mat_Emissive." + format + " lie outside [0, 1] (values 2..2) and were clipped"))
            << r.err;
        EXPECT_TRUE(contains(r.err, format == "png" ? "a uint16 file holds [0, 1]" : "a uint8 file holds [0, 1]"))
            << r.err;
        EXPECT_FALSE(contains(r.err, "mat_Color")) << r.err;  // maps within [0, 1] lose nothing
        EXPECT_EQ(read_image(out + "/mat_Emissive." + format)->pixels[0], 1.0f);
    }
    const CommandResult quiet = run_nmc("-q decompress '" + pack_path_ + "' -o '" + dir_.file("out_q") + "' --format png");
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.err, "");
}

// Bug: `--format exr` wrote the sRGB albedo's encoded values into a file tagged Linear, so nmc's own scan and
// material loader read them back as a different colour. The EXR now holds linear light: reading it back gives the
// colour the pack decodes (0.25, 0.5, 0.75 sRGB-encoded), through the exact sRGB transfer function.
TEST_F(DecompressValidateCli, SrgbColourDecodedToExrReadsBackAsTheSameColour) {
    if (!has_exr_) GTEST_SKIP() << "this build's image backend writes no EXR";
    const std::string out = dir_.file("out");
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format exr");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "wrote " + out + "/mat_Color.exr (8x8, 3 channels, float32, sRGB colour converted to linear)"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "wrote " + out + "/mat_Height.exr (8x8, 1 channels, float32)\n")) << r.out;

    // This pack decodes constants, and scan refuses a material of constants only: the varying source height map
    // takes the decoded one's place.
    std::filesystem::remove(out + "/mat_Height.exr");
    std::filesystem::copy_file(source_dir_ + "/mat_Height.png", out + "/mat_Height.png");
    const CommandResult scan = run_nmc("scan '" + out + "' --json");
    ASSERT_EQ(scan.exit_code, 0) << scan.err;
    const nlohmann::json j = nlohmann::json::parse(scan.out);
    const float encoded[] = {0.25f, 0.5f, 0.75f};
    bool found = false;
    for (const auto& t : j["textures"]) {
        if (t["file_name"] != "mat_Color.exr") continue;
        found = true;
        EXPECT_EQ(t["semantic"], "albedo");
        EXPECT_EQ(t["color_space"], "linear");
        ASSERT_EQ(t["channels"].size(), 3u);
        for (size_t c = 0; c < 3; ++c) {
            EXPECT_EQ(t["channels"][c]["source"], "constant");
            EXPECT_EQ(t["channels"][c]["value"].get<float>(), srgb_to_linear(encoded[c])) << "channel " << c;
        }
    }
    EXPECT_TRUE(found) << scan.out;
}

TEST_F(DecompressValidateCli, RefusesToOverwriteWithoutForceAndWritesNothing) {
    const std::string out = dir_.file("out");
    ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
    const std::string existing = out + "/mat_Height.png";
    std::ofstream(existing) << "keep me";
    CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "'");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, existing + ": exists (use --force to overwrite)")) << r.err;
    EXPECT_EQ(read_text(existing), "keep me");
    EXPECT_EQ(entries(out), std::vector<std::string>{"mat_Height.png"});  // not even the textures before it

    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --force");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(entries(out), source_names());
    EXPECT_TRUE(read_image(existing).ok());
}

// Bug: on a full disk, `decompress --format png|tga|exr` exited 0 and printed "wrote" for truncated and empty files
// (OpenImageIO's writers did not report the failed writes), and `--format source` of a JPEG texture exited 1 and
// left NAME.jpg.tmp-PID-N behind (libjpeg ends the process on a failed write). With a file size limit of 1 byte
// (nmc_process.h), every image write fails after its first byte: exit 3 naming the file and the reason, nothing
// printed as written, and nothing at all left in the output folder.
TEST_F(DecompressValidateCli, DecompressOnAFullDiskExits3AndLeavesNothing) {
    Pack with_jpeg = pack_;  // the colour texture as a JPEG file, for --format source
    with_jpeg.textures[0] =
        texture_layout("mat_Color.jpg", SampleType::uint8, ColorSpace::srgb, pack_.textures[0].channels);
    const std::string jpeg_pack = dir_.file("jpeg.nmc");
    ASSERT_TRUE(write_pack_file(jpeg_pack, with_jpeg).ok());

    struct Case {
        std::string pack, format, first_file;
    };
    std::vector<Case> cases = {{pack_path_, "png", "mat_Color.png"}, {jpeg_pack, "source", "mat_Color.jpg"}};
    if (image_format_supported("tga")) cases.push_back({pack_path_, "tga", "mat_Color.tga"});
    if (has_exr_) cases.push_back({pack_path_, "exr", "mat_Color.exr"});
    for (const Case& c : cases) {
        const std::string out = dir_.file("out-" + c.format);
        const CommandResult r =
            test::run_nmc_with_file_size_limit("decompress '" + c.pack + "' -o '" + out + "' --format " + c.format, 1);
        EXPECT_EQ(r.exit_code, 3) << c.format << ": " << r.err;
        EXPECT_TRUE(
            contains(r.err, "nmc: error: " + out + "/" + c.first_file + ": write failed: " + std::strerror(EFBIG)))
            << c.format << ": " << r.err;
        EXPECT_FALSE(contains(r.out, "wrote")) << c.format << ": " << r.out;
        EXPECT_EQ(entries(out), std::vector<std::string>{}) << c.format;
    }
}

// --device cuda: decodes on the GPU where the build has the CUDA decoder and a device exists (same files as the
// CPU's: both decoders agree within rounding on this pack, and the 8-bit outputs are compared by name here),
// else exit 7 with a message that says which of the two is missing.
TEST_F(DecompressValidateCli, DecompressOnCudaDecodesOrSaysWhyNot) {
    const std::string out = dir_.file("out");
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --device cuda");
    if (r.exit_code == 7) {
        EXPECT_TRUE(contains(r.err, "nmc: error: --device cuda: this build has no CUDA decoder") ||
                    contains(r.err, "nmc: error: --device cuda: no such CUDA device"))
            << r.err;
        EXPECT_FALSE(file_exists(out));
    } else {
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(entries(out), source_names());
    }
    const CommandResult bad = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --device gpu");
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

#if NMC_HAS_VULKAN_RUNTIME
// --device vulkan (the build has the runtime; CI runs it on lavapipe): the same files, pixel for pixel, and the same
// validate report as the CPU; a corrupt pack is exit 5 before any device is opened; no Vulkan driver is exit 7.
TEST_F(DecompressValidateCli, VulkanDecodesTheSameFilesAndReportAsTheCpu) {
    const std::string cpu_out = dir_.file("cpu");
    const std::string gpu_out = dir_.file("vulkan");
    ASSERT_EQ(run_nmc("decompress '" + pack_path_ + "' -o '" + cpu_out + "' --mips").exit_code, 0);
    const CommandResult r = run_nmc("-v decompress '" + pack_path_ + "' -o '" + gpu_out + "' --mips --device vulkan");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "decoded on Vulkan device")) << r.out;
    ASSERT_EQ(entries(gpu_out), entries(cpu_out));
    for (const std::string& name : entries(cpu_out)) {  // the pixels (EXR headers carry the time of writing)
        Result<Image> expected = read_image(cpu_out + "/" + name);
        Result<Image> got = read_image(gpu_out + "/" + name);
        ASSERT_TRUE(expected.ok() && got.ok()) << name;
        EXPECT_EQ(got->pixels, expected->pixels) << name;
    }

    const CommandResult cpu = run_nmc("validate '" + pack_path_ + "' --json");
    const CommandResult gpu = run_nmc("validate '" + pack_path_ + "' --json --device vulkan");
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
    nlohmann::json cpu_report = nlohmann::json::parse(cpu.out);
    nlohmann::json gpu_report = nlohmann::json::parse(gpu.out);
    EXPECT_EQ(gpu_report["quality"], cpu_report["quality"]);
}

TEST_F(DecompressValidateCli, VulkanRefusesACorruptPackAndSaysWhenThereIsNoDriver) {
    auto bytes = read_file(pack_path_, 1 << 20);
    ASSERT_TRUE(bytes.ok());
    (*bytes)[bytes->size() - 20] ^= 0x01;
    const std::string corrupt = dir_.file("corrupt.nmc");
    ASSERT_TRUE(write_file_atomically(corrupt, bytes->data(), bytes->size()).ok());
    EXPECT_EQ(run_nmc("decompress '" + corrupt + "' -o '" + dir_.file("out") + "' --device vulkan").exit_code, 5);
    EXPECT_EQ(run_nmc("validate '" + corrupt + "' --device vulkan").exit_code, 5);

    ::setenv("VK_ICD_FILENAMES", dir_.file("no-such-driver.json").c_str(), 1);  // the loader finds no driver
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + dir_.file("out") + "' --device vulkan");
    ::unsetenv("VK_ICD_FILENAMES");
    EXPECT_EQ(r.exit_code, 7) << r.err;
    EXPECT_TRUE(contains(r.err, "nmc: error: --device vulkan: ")) << r.err;
    EXPECT_FALSE(file_exists(dir_.file("out")));
    const CommandResult missing = run_nmc("decompress '" + pack_path_ + "' -o '" + dir_.file("out") + "' --device vulkan:99");
    EXPECT_EQ(missing.exit_code, 7);
    EXPECT_TRUE(contains(missing.err, "nmc: error: --device vulkan:99: no such Vulkan device (")) << missing.err;
}
#endif

// Every level of a written DDS / KTX2 file decodes to one flat 8-bit colour (the constant pack's), within one code:
// BC7 mode 6 shares one p-bit among an endpoint's four channels, so a colour of odd and even codes may land a code
// off.
void expect_flat_texture(const std::string& path, texture::ContainerFormat container, texture::BlockFormat format,
                         bool srgb, const std::vector<int>& codes) {
    auto bytes = read_file(path, 1 << 20);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    auto file = texture::decode_texture_file(container, *bytes);
    ASSERT_TRUE(file.ok()) << path << ": " << file.status().to_string();
    EXPECT_EQ(file->format, format) << path;
    EXPECT_EQ(file->srgb, srgb) << path;
    EXPECT_EQ(file->width, 8);
    ASSERT_EQ(file->levels.size(), 4u) << "every mip of the pack: 8x8 to 1x1";
    for (int m = 0; m < 4; ++m) {
        const int extent = texture::mip_extent(8, m);
        texture::BlockChoice choice;
        choice.format = format, choice.srgb = srgb;
        auto texels = texture::is_astc(format) ? texture::decode_astc(choice, extent, extent, file->levels[size_t(m)])
                                               : texture::decode_blocks(format, extent, extent, file->levels[size_t(m)]);
        ASSERT_TRUE(texels.ok());
        for (size_t i = 0; i < texels->texels.size(); i += 4)
            for (size_t c = 0; c < codes.size(); ++c)
                ASSERT_LE(std::abs(texels->texels[i + c] - codes[c]), 1) << path << " mip " << m << " channel " << c;
    }
}

TEST_F(DecompressValidateCli, DdsAndKtx2HoldEveryMipInTheAutoChoice) {
    const std::string out = dir_.file("blocks");
    if (has_exr_) {
        // The float32 emissive map (2.0 throughout) goes to BC6H, every mip, read back by our reader and decoder.
        for (texture::ContainerFormat c : {texture::ContainerFormat::dds, texture::ContainerFormat::ktx2}) {
            const std::string format = texture::to_string(c), hdr_out = out + "-hdr-" + format;
            const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + hdr_out + "' --format " + format);
            ASSERT_EQ(r.exit_code, 0) << r.err;
            EXPECT_TRUE(contains(r.out, "mat_Emissive." + format + " (8x8, 4 mips, bc6h;")) << r.out;
            // BC6H keeps the 2.0 exactly: lossless (99 dB) on the HDR measure, which sees values above 1.
            EXPECT_TRUE(contains(r.out, "block compression HDR PSNR 99.00 dB")) << r.out;
            auto bytes = read_file(hdr_out + "/mat_Emissive." + format, 1 << 20);
            ASSERT_TRUE(bytes.ok());
            auto file = texture::decode_texture_file(c, *bytes);
            ASSERT_TRUE(file.ok()) << file.status().to_string();
            EXPECT_EQ(file->format, texture::BlockFormat::bc6h);
            ASSERT_EQ(file->levels.size(), 4u);
            for (int m = 0; m < 4; ++m) {
                const int extent = texture::mip_extent(8, m);
                auto texels = texture::decode_bc6h_blocks(extent, extent, file->levels[size_t(m)]);
                ASSERT_TRUE(texels.ok());
                for (float v : texels->pixels) ASSERT_EQ(v, 2.0f) << format << " mip " << m;
            }
        }
        // As a uint16 file the emissive map holds [0, 1]: its 2.0 goes to BC4 as 1.0.
        pack_.textures.back().sample_type = SampleType::uint16;
        ASSERT_TRUE(write_pack_file(pack_path_, pack_).ok());
    }
    for (texture::ContainerFormat c : {texture::ContainerFormat::dds, texture::ContainerFormat::ktx2}) {
        const std::string format = texture::to_string(c);
        const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format " + format);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(contains(r.out, "mat_Color." + format + " (8x8, 4 mips, bc7 sRGB; block compression psnr8")) << r.out;
        // Colour (0.25, 0.5, 0.75) sRGB in BC7_SRGB; the uint16 height map, 0.625, in BC4.
        expect_flat_texture(out + "/mat_Color." + format, c, texture::BlockFormat::bc7, true, {64, 128, 191, 255});
        expect_flat_texture(out + "/mat_Height." + format, c, texture::BlockFormat::bc4, false, {159});
        if (has_exr_) expect_flat_texture(out + "/mat_Emissive." + format, c, texture::BlockFormat::bc4, false, {255});
    }
    // --codec bc1 keeps sRGB; an existing file needs --force.
    CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format dds --codec bc1");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format dds --codec bc1 --force");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto bytes = read_file(out + "/mat_Color.dds", 1 << 20);
    ASSERT_TRUE(bytes.ok());
    auto file = texture::decode_texture_file(texture::ContainerFormat::dds, *bytes);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(file->format, texture::BlockFormat::bc1);
    EXPECT_TRUE(file->srgb);
}

TEST_F(DecompressValidateCli, BlockFormatsThatCannotHoldATextureAreUsageErrors) {
    const std::string out = dir_.file("blocks");
    CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format ktx2 --codec bc4");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "texture 'mat_Color' has 3") && contains(r.err, "bc7")) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format dds --codec bc5");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --codec bc7");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--codec needs --format dds or ktx2")) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format dds --codec bc6h");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "--codec bc6h has no sRGB format")) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format ktx2 --codec astc-7x7");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format dds --supercompression zstd");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "--supercompression needs --format ktx2")) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format png --json");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    if (texture::astc_in_build()) {
        r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format dds --codec astc-4x4");
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_TRUE(contains(r.err, "DDS has no ASTC formats") && contains(r.err, "--format ktx2")) << r.err;
    }
    EXPECT_FALSE(file_exists(out));
}

// ASTC through astcenc in zstd-supercompressed KTX2, with the --json report: every mip, sRGB for the colour map,
// the block compression psnr8 of each texture beside the pack's own.
TEST_F(DecompressValidateCli, Ktx2HoldsAstcSupercompressedWithAReport) {
    const std::string out = dir_.file("astc");
    if (has_exr_) {  // the float32 emissive map needs ASTC HDR; as uint16 it holds [0, 1]
        pack_.textures.back().sample_type = SampleType::uint16;
        ASSERT_TRUE(write_pack_file(pack_path_, pack_).ok());
    }
    const std::string command =
        "decompress '" + pack_path_ + "' -o '" + out + "' --format ktx2 --codec astc-6x6 --supercompression zstd --json";
    const CommandResult r = run_nmc(command);
    if (!texture::astc_in_build()) {
        EXPECT_EQ(r.exit_code, 7) << r.err;
        EXPECT_TRUE(contains(r.err, "not in this build")) << r.err;
        return;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json report = nlohmann::json::parse(r.out);
    ASSERT_EQ(report["files"].size(), pack_.textures.size()) << r.out;
    for (const nlohmann::json& f : report["files"]) {
        EXPECT_EQ(f["codec"], "astc-6x6");
        EXPECT_EQ(f["supercompression"], "zstd");
        EXPECT_NEAR(f["bits_per_texel"].get<double>(), 128.0 / 36, 1e-9);
        // A flat texture: ASTC's constant-colour blocks hold it exactly (up to the sRGB profile's rounding).
        EXPECT_GT(f["block_psnr8_db"].get<double>(), 45.0) << f.dump();
        EXPECT_TRUE(f.contains("pack_psnr8_db"));
        EXPECT_TRUE(file_exists(f["path"].get<std::string>()));
    }
    EXPECT_EQ(report["files"][0]["texture"], "mat_Color");
    EXPECT_EQ(report["files"][0]["srgb"], true);
    expect_flat_texture(out + "/mat_Color.ktx2", texture::ContainerFormat::ktx2, texture::BlockFormat::astc_6x6, true,
                        {64, 128, 191, 255});
    expect_flat_texture(out + "/mat_Height.ktx2", texture::ContainerFormat::ktx2, texture::BlockFormat::astc_6x6, false,
                        {159});
}

// --codec astc: a flat texture reaches any target at the largest block, 12x12; the target is reported. Refused:
// --block-psnr without --codec astc.
TEST_F(DecompressValidateCli, AstcBlockSizeFromATarget) {
    if (!texture::astc_in_build()) GTEST_SKIP() << "built without libastcenc";
    if (has_exr_) {
        pack_.textures.back().sample_type = SampleType::uint16;
        ASSERT_TRUE(write_pack_file(pack_path_, pack_).ok());
    }
    const std::string out = dir_.file("astc");
    CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format ktx2 --codec bc7 --block-psnr 40");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "--block-psnr sets --codec astc's target")) << r.err;
    r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format ktx2 --codec astc --block-psnr 45 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json report = nlohmann::json::parse(r.out);
    for (const nlohmann::json& f : report["files"]) {
        EXPECT_EQ(f["codec"], "astc-12x12") << f.dump();
        EXPECT_EQ(f["target_block_psnr8_db"], 45.0);
        EXPECT_EQ(f["target_reached"], true);
        EXPECT_GE(f["block_psnr8_db"].get<double>(), 45.0);
    }
}

TEST_F(DecompressValidateCli, BlockFilesOfTwoTexturesOfOneStemAreRefused) {
    pack_.textures[1].file_name = "mat_Color.tif";  // the uint16 height map, beside mat_Color.png
    pack_.textures[1].file_format = "tiff";
    const Status written = write_pack_file(pack_path_, pack_);
    ASSERT_TRUE(written.ok()) << written.to_string();
    const std::string out = dir_.file("blocks");
    const CommandResult r = run_nmc("decompress '" + pack_path_ + "' -o '" + out + "' --format ktx2 --codec bc7");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "mat_Color.ktx2: textures '") && contains(r.err, "would both be written there")) << r.err;
    EXPECT_FALSE(file_exists(out));
}

TEST_F(DecompressValidateCli, DecompressOfMissingOrNonPackFile) {
    EXPECT_EQ(run_nmc("decompress '" + dir_.file("none.nmc") + "' -o '" + dir_.file("out") + "'").exit_code, 3);
    std::ofstream(dir_.file("notes.txt")) << "not a pack\n";
    const CommandResult r = run_nmc("decompress '" + dir_.file("notes.txt") + "' -o '" + dir_.file("out") + "'");
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_TRUE(contains(r.err, "not an nmc pack")) << r.err;
    EXPECT_EQ(run_nmc("decompress '" + pack_path_ + "'").exit_code, 2);  // -o is required
}

// Issue 34: decompress held each decoded texture whole as float samples, twice, and its encoded file besides: a
// 16384^2 pack of 16 float RGBA textures aborted under a 4 GB limit. It decodes and writes a band of rows at a time
// now (bench/memory_bench.cpp measures 16384^2). Here a 2048^2 float RGBA texture, 64 MiB as float samples: the
// peak stays within 24 MiB of inspect's on the same pack (before: more than 128 MiB above).
TEST(DecompressMemory, ALargeTextureIsDecodedAndWrittenABandAtATime) {
    if (test::address_sanitizer_build()) GTEST_SKIP() << "peak memory is not meaningful under AddressSanitizer";
    if (!image_format_supported("exr")) GTEST_SKIP() << "the libpng+libjpeg backend holds the whole image";
    testing::TempDir dir;
    Pack pack = testing::constant_pack(2048, 2048, 1, {{"r", 0, 1}, {"g", 0, 1}, {"b", 0, 1}, {"a", 0, 1}},
                                       {0.25f, 0.5f, 0.75f, 0.125f});
    pack.textures.push_back(texture_layout("big_Color.exr", SampleType::float32, ColorSpace::linear,
                                           {from_pack(0), from_pack(1), from_pack(2), from_pack(3)}));
    const std::string path = dir.file("big.nmc");
    ASSERT_TRUE(write_pack_file(path, pack).ok());

    const CommandResult inspect = test::run_nmc_with_memory_limit("inspect '" + path + "'", RLIM_INFINITY);
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const CommandResult r =
        test::run_nmc_with_memory_limit("decompress '" + path + "' -o '" + dir.file("out") + "'", RLIM_INFINITY);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_LT(r.peak_rss_bytes, inspect.peak_rss_bytes + (uint64_t{24} << 20))
        << "decompress peak " << r.peak_rss_bytes << " bytes, inspect " << inspect.peak_rss_bytes;
    auto image = read_image(dir.file("out/big_Color.exr"));
    ASSERT_TRUE(image.ok()) << image.status().to_string();
    ASSERT_EQ(image->height, 2048);
    for (const int y : {0, 1023, 2047})
        for (int c = 0; c < 4; ++c)
            EXPECT_EQ(image->at(2047, y, c), (c == 3 ? 0.125f : 0.25f * static_cast<float>(c + 1)));
}

TEST_F(DecompressValidateCli, ValidateGoodPackExits0) {
    CommandResult r = run_nmc("validate '" + pack_path_ + "'");  // sources from the folder the pack records
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "structure ok")) << r.out;
    EXPECT_TRUE(contains(r.out, "sources   " + source_dir_)) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   pass")) << r.out;

    r = run_nmc("validate '" + pack_path_ + "' --source '" + source_dir_ + "' --min-psnr 20 --diff '" +
                dir_.file("diff") + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "heat map  " + dir_.file("diff/mat_Color_diff.png"))) << r.out;
    EXPECT_TRUE(file_exists(dir_.file("diff/mat_Height_diff.png")));

    // Existing heat maps are kept without -f: exit 3 before anything is decoded (no report), as every output of every
    // command; -f replaces them.
    r = run_nmc("validate '" + pack_path_ + "' --diff '" + dir_.file("diff") + "'");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "nmc: error: " + dir_.file("diff/mat_") + "")) << r.err;
    EXPECT_TRUE(contains(r.err, "_diff.png: exists (use --force to overwrite)")) << r.err;
    EXPECT_EQ(r.out, "");
    r = run_nmc("validate '" + pack_path_ + "' --diff '" + dir_.file("diff") + "' -f");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(DecompressValidateCli, ValidateCorruptPackExits5) {
    auto bytes = read_file(pack_path_, 1 << 20);
    ASSERT_TRUE(bytes.ok());
    (*bytes)[bytes->size() - 20] ^= 0x01;  // inside the last section
    const std::string corrupt = dir_.file("corrupt.nmc");
    ASSERT_TRUE(write_file_atomically(corrupt, bytes->data(), bytes->size()).ok());
    const CommandResult r = run_nmc("validate '" + corrupt + "'");
    EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "structure INVALID")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   structurally_invalid")) << r.out;
}

// Heat maps are named from the texture name: a name with a folder part would put one outside --diff. The reader
// refuses such a pack (spec 5.4), so validate exits 5 and writes nothing anywhere.
TEST_F(DecompressValidateCli, ValidateRefusesATextureNameThatLeavesTheDiffFolder) {
    testing::RawSections sections = testing::sections_of(pack_);
    sections.meta["textures"][0]["name"] = "../escaped";
    const std::vector<uint8_t> bytes = testing::assemble(sections);
    const std::string hostile = dir_.file("hostile.nmc");
    ASSERT_TRUE(write_file_atomically(hostile, bytes.data(), bytes.size()).ok());
    const std::vector<std::string> before = entries(dir_.path());
    const std::vector<std::string> sources_before = entries(source_dir_);

    const CommandResult r =
        run_nmc("validate '" + hostile + "' --source '" + source_dir_ + "' --diff '" + dir_.file("diff") + "'");
    EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
    EXPECT_TRUE(contains(r.out + r.err, "'textures[0].name'")) << r.out << r.err;
    EXPECT_TRUE(contains(r.out + r.err, "'../escaped'")) << r.out << r.err;
    EXPECT_FALSE(file_exists(dir_.file("escaped_diff.png")));
    EXPECT_EQ(entries(dir_.path()), before);
    EXPECT_EQ(entries(source_dir_), sources_before);
    EXPECT_TRUE(entries(dir_.file("diff")).empty());
}

// Two textures whose files would be one on a case-insensitive file system: decompress used to write the first and
// then fail (or overwrite it). The reader refuses the pack, so nothing is written.
TEST_F(DecompressValidateCli, DecompressRefusesTwoTexturesOfOneFileName) {
    testing::RawSections sections = testing::sections_of(pack_);
    sections.meta["textures"][1]["file_name"] = "MAT_color.png";
    const std::vector<uint8_t> bytes = testing::assemble(sections);
    const std::string hostile = dir_.file("hostile.nmc");
    ASSERT_TRUE(write_file_atomically(hostile, bytes.data(), bytes.size()).ok());
    const CommandResult r = run_nmc("decompress '" + hostile + "' -o '" + dir_.file("out") + "'");
    EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "'textures[1].file_name': 'MAT_color.png' is also the file name of textures[0]"))
        << r.err;
    EXPECT_TRUE(entries(dir_.file("out")).empty());
}

TEST_F(DecompressValidateCli, ValidateBelowMinPsnrExits6) {
    const CommandResult r = run_nmc("validate '" + pack_path_ + "' --min-psnr 98");
    EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "is below --min-psnr 98.00 dB")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   quality_below_threshold")) << r.out;
}

// The fixture's textures decode to constants over sources that wobble by up to 2 codes: the colour and height maps keep
// none of that (collapsed), a warning in the text and JSON report, and with --fail-on-collapse a failure, exit 6.
TEST_F(DecompressValidateCli, ValidateCollapsedMapWarnsOrExits6) {
    CommandResult r = run_nmc("validate '" + pack_path_ + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "WARNING   mat_Height.png collapsed: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "COLLAPSED")) << r.out;
    r = run_nmc("validate '" + pack_path_ + "' --fail-on-collapse");
    EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "FAIL      mat_Height.png collapsed: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   quality_below_threshold")) << r.out;
    r = run_nmc("validate '" + pack_path_ + "' --fail-on-collapse --json");
    EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_TRUE(j["warnings"].empty());
    EXPECT_TRUE(contains(j["failures"].dump(), "mat_Height.png collapsed")) << j["failures"].dump();
}

// `--min-psnr` with no sources to measure against must not pass: a threshold that cannot be checked fails with
// exit 12; without one the "quality not measured" note stays a note (exit 0).
TEST_F(DecompressValidateCli, ValidateThresholdWithoutSourcesExits12) {
    const std::string work = record_source_folder("materials/mat");  // not beside the pack, nor in `work`
    CommandResult r = run_nmc_in(work, "validate ../mat.nmc --min-psnr 60");
    EXPECT_EQ(r.exit_code, 12) << r.out << r.err;
    EXPECT_TRUE(contains(r.out,
                         "quality   not measured: no --source given and the recorded source folder "
                         "materials/mat (../materials/mat, relative to the pack's folder) does not exist"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "FAIL      --min-psnr 60.00 dB could not be checked: quality not measured: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   threshold_not_checked")) << r.out;

    r = run_nmc_in(work, "validate ../mat.nmc --max-drop 0.1 --min-psnr 60 --json");
    EXPECT_EQ(r.exit_code, 12) << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["verdict"], "threshold_not_checked");
    EXPECT_EQ(j["unchecked_thresholds"], nlohmann::json({"--min-psnr", "--max-drop"}));
    ASSERT_EQ(j["failures"].size(), 2u);
    EXPECT_TRUE(contains(j["failures"][1].get<std::string>(), "--max-drop 0.10 dB could not be checked")) << j;
    EXPECT_TRUE(contains(j["source_note"].get<std::string>(), "does not exist")) << j;
    EXPECT_FALSE(j.contains("quality"));

    // No threshold asked for: nothing to fail, the report says what was not measured.
    r = run_nmc_in(work, "validate ../mat.nmc");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "quality   not measured: ")) << r.out;
    EXPECT_FALSE(contains(r.out, "FAIL")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   pass")) << r.out;
}

// --max-drop given on a pack that stores no compression-time PSNR: the drift cannot be measured (exit 12); the
// default drift check only runs where it can.
TEST_F(DecompressValidateCli, ValidateMaxDropWithoutStoredQualityExits12) {
    pack_.quality = {};
    ASSERT_TRUE(write_pack_file(pack_path_, pack_).ok());
    CommandResult r = run_nmc("validate '" + pack_path_ + "' --max-drop 0.5");
    EXPECT_EQ(r.exit_code, 12) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "FAIL      --max-drop 0.50 dB could not be checked: the pack stores no PSNR")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   threshold_not_checked")) << r.out;
    r = run_nmc("validate '" + pack_path_ + "' --min-psnr 20");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// A relative recorded source folder is relative to the pack's folder (spec 5.7), not to the working directory: found
// from another working directory, and a folder of the same name in the working directory is not read.
TEST_F(DecompressValidateCli, ValidateFindsARelativeSourceFolderFromThePack) {
    const std::string work = record_source_folder("src");
    const std::string decoy = work + "/src";  // the same files, one changed: reading it would be a source mismatch
    std::filesystem::copy(source_dir_, decoy);
    Image height(8, 8, 1, SampleType::uint16);
    ASSERT_TRUE(write_image(decoy + "/mat_Height.png", height, "png", true).ok());

    CommandResult r = run_nmc_in(work, "validate ../mat.nmc --min-psnr 20");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "sources   ../src (decoded on")) << r.out;
    EXPECT_TRUE(contains(r.out, "PSNR      ")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   pass")) << r.out;

    r = run_nmc_in("/", "validate '" + pack_path_ + "' --min-psnr 20 --json");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["source_dir"], source_dir_);
    EXPECT_TRUE(j.contains("quality"));

    // The pack moved together with its sources still validates; --source stays relative to the working directory.
    const std::string moved = dir_.file("moved");
    std::filesystem::create_directories(moved);
    std::filesystem::copy(source_dir_, moved + "/src");
    std::filesystem::copy_file(pack_path_, moved + "/mat.nmc");
    r = run_nmc_in(work, "validate ../moved/mat.nmc --min-psnr 20");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "sources   ../moved/src (decoded on")) << r.out;
    r = run_nmc_in(work, "validate ../mat.nmc --source src");
    EXPECT_EQ(r.exit_code, 11) << r.out << r.err;  // the decoy, as asked
    EXPECT_TRUE(contains(r.out, "sources   src (decoded on")) << r.out;
}

TEST_F(DecompressValidateCli, ValidateChangedSourceExits11) {
    const std::string other = dir_.file("other");
    std::filesystem::copy(source_dir_, other);
    Image height(8, 8, 1, SampleType::uint16);  // same size and channels, other bytes
    ASSERT_TRUE(write_image(other + "/mat_Height.png", height, "png", true).ok());
    const CommandResult r = run_nmc("validate '" + pack_path_ + "' --source '" + other + "'");
    EXPECT_EQ(r.exit_code, 11) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "mat_Height.png: CHANGED since compression")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   source_mismatch")) << r.out;
}

// A source that no longer decodes (cut short here) cannot be the file the pack was made from (compress refuses
// such files): a source mismatch naming the file and the problem. Before sources were checked for damage, the
// hash told the same; now the read fails first, and that must not be exit 5, which says the pack is broken.
TEST_F(DecompressValidateCli, ValidateTruncatedSourceIsASourceMismatch) {
    const std::string source = source_dir_ + "/mat_Color.png";
    std::vector<uint8_t> bytes = read_file(source, 1 << 20).value();
    bytes.resize(bytes.size() / 2);
    ASSERT_TRUE(write_file_atomically(source, bytes.data(), bytes.size()).ok());
    const CommandResult r = run_nmc("validate '" + pack_path_ + "'");
    EXPECT_EQ(r.exit_code, 11) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "FAIL      " + source + ": truncated PNG")) << r.out;
    EXPECT_TRUE(contains(r.out, "verdict   source_mismatch")) << r.out;
}

// Heat maps (--diff) and the report (--report FILE) on a full disk (a file size limit of 1 byte, nmc_process.h):
// exit 3 naming the file and the reason; no heat map, report or temporary file is left. Before, the heat maps were
// written truncated by OpenImageIO and validate exited 0.
TEST_F(DecompressValidateCli, ValidateOnAFullDiskExits3AndLeavesNothing) {
    const std::string diff = dir_.file("diff");
    CommandResult r = test::run_nmc_with_file_size_limit("validate '" + pack_path_ + "' --diff '" + diff + "'", 1);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "nmc: error: " + diff + "/mat_Color_diff.png: write failed: " + std::strerror(EFBIG)))
        << r.err;
    EXPECT_EQ(entries(diff), std::vector<std::string>{});

    const std::string reports = dir_.file("reports");
    ASSERT_EQ(::mkdir(reports.c_str(), 0755), 0);
    r = test::run_nmc_with_file_size_limit("validate '" + pack_path_ + "' --report '" + reports + "/report.json'", 1);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "nmc: error: " + reports + "/report.json: write failed: " + std::strerror(EFBIG)))
        << r.err;
    EXPECT_EQ(entries(reports), std::vector<std::string>{});
}

TEST_F(DecompressValidateCli, ValidateMissingOrNonPackFile) {
    CommandResult r = run_nmc("validate '" + dir_.file("none.nmc") + "'");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, dir_.file("none.nmc"))) << r.err;
    std::ofstream(dir_.file("notes.txt")) << "not a pack\n";
    r = run_nmc("validate '" + dir_.file("notes.txt") + "'");
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;  // was 5 before validate_pack_file returned not_recognized
    EXPECT_TRUE(contains(r.err, "not an nmc pack")) << r.err;
    // --device cuda: validates on the GPU where the build has the CUDA decoder and a device exists, else exit 7
    // saying which of the two is missing.
    r = run_nmc("validate '" + pack_path_ + "' --device cuda");
    if (r.exit_code == 0) {
        EXPECT_TRUE(contains(r.out, "decoded on CUDA device 0")) << r.out;
    } else {
        EXPECT_EQ(r.exit_code, 7) << r.out << r.err;
        EXPECT_TRUE(contains(r.err, "nmc: error: --device cuda: this build has no CUDA decoder") ||
                    contains(r.err, "nmc: error: --device cuda: no such CUDA device"))
            << r.err;
    }
}

TEST_F(DecompressValidateCli, ValidateJsonCarriesTheNumbersPrinted) {
    const CommandResult text = run_nmc("validate '" + pack_path_ + "'");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const CommandResult json = run_nmc("validate '" + pack_path_ + "' --json");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const nlohmann::json j = nlohmann::json::parse(json.out);  // stdout holds only the JSON
    EXPECT_EQ(j["verdict"], "pass");
    EXPECT_EQ(j["pack"], pack_path_);
    EXPECT_EQ(j["sources"].size(), pack_.textures.size());

    char line[160];
    std::snprintf(line, sizeof line, "PSNR      %.2f dB all mips (float, spec 8.10), stored %.2f dB",
                  j["quality"]["psnr_db"].get<double>(), j["stored_psnr_db"].get<double>());
    EXPECT_TRUE(contains(text.out, line)) << line << "\n" << text.out;
    std::snprintf(line, sizeof line, "PSNR8     %.2f dB", j["quality"]["psnr8_mip0_db"].get<double>());
    EXPECT_TRUE(contains(text.out, line)) << line << "\n" << text.out;
    // Each texture's row: its file name (the column is as wide as the longest name), then the numbers.
    for (const auto& t : j["quality"]["textures"]) {
        std::snprintf(line, sizeof line, " %8.2f %8.2f %8d", t["psnr_db"].get<double>(),
                      t["psnr8_mip0_db"].get<double>(), t["max_abs_error8"].get<int>());
        const std::string row_start = "\n" + t["file"].get<std::string>() + " ";
        const size_t row = text.out.find(row_start);
        ASSERT_NE(row, std::string::npos) << row_start << "\n" << text.out;
        const std::string row_text = text.out.substr(row + 1, text.out.find('\n', row + 1) - row - 1);
        EXPECT_TRUE(contains(row_text, line)) << line << "\n" << row_text;
    }

    // --report FILE writes the same report and keeps the text on stdout; an existing report is kept unless -f
    // (exit 3, checked before anything is decoded), as every output of every command.
    const std::string report = dir_.file("report.json");
    const CommandResult to_file = run_nmc("validate '" + pack_path_ + "' --report '" + report + "'");
    ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
    EXPECT_TRUE(contains(to_file.out, "verdict   pass")) << to_file.out;
    EXPECT_EQ(nlohmann::json::parse(read_text(report)), j);
    std::ofstream(report) << "keep me\n";
    const CommandResult kept = run_nmc("validate '" + pack_path_ + "' --report '" + report + "'");
    EXPECT_EQ(kept.exit_code, 3) << kept.out << kept.err;
    EXPECT_TRUE(contains(kept.err, "nmc: error: " + report + ": ")) << kept.err;
    EXPECT_EQ(kept.out, "");
    EXPECT_EQ(read_text(report), "keep me\n");
    const CommandResult forced = run_nmc("validate '" + pack_path_ + "' --report '" + report + "' -f --json");
    ASSERT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_EQ(nlohmann::json::parse(forced.out), j);
    EXPECT_EQ(nlohmann::json::parse(read_text(report)), j);
}

TEST_F(DecompressValidateCli, ValidateJsonOfAFailingPackKeepsItsExitCode) {
    const CommandResult r = run_nmc("validate '" + pack_path_ + "' --min-psnr 98 --json");
    EXPECT_EQ(r.exit_code, 6);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["verdict"], "quality_below_threshold");
    ASSERT_EQ(j["failures"].size(), 1u);
}


#if NMC_HAS_TRAINER
// A real material: the demo material compressed briefly, decoded to DDS with the automatic
// formats (BC7 for colour, the normal map and the packed ORM), and each DDS read back by an independent decoder
// (Pillow, which scripts/setup.sh installs, to an 8-bit PNG; Debian 12's OpenImageIO reads no BC7) scores a psnr8
// against its source within 1.5 dB of the pack's own psnr8 for that texture: block compression of decoded texels
// costs little.
TEST(DecompressRealMaterial, DdsReadBackByPillowIsWithin1Point5DbOfThePack) {
    testing::TempDir dir;
    const std::string material = std::string(NMC_SOURCE_DIR) + "/data/demo/gltf_flighthelmet_leather_512";
    const std::string pack = dir.file("leather.nmc");
    CommandResult r = test::run_nmc("compress '" + material + "' -o '" + pack + "' --quality fast --steps 300 --seed 1",
                                    dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string out = dir.file("dds");
    r = test::run_nmc("decompress '" + pack + "' -o '" + out + "' --format dds --json", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json report = nlohmann::json::parse(r.out);
    ASSERT_EQ(report["files"].size(), 3u) << r.out;
    for (const nlohmann::json& f : report["files"]) {
        const std::string dds = f["path"].get<std::string>();
        SCOPED_TRACE(dds);
        const std::string png = dds + ".png";
        const std::string convert = "/usr/bin/python3 -c \"import sys; from PIL import Image; "
                                    "Image.open(sys.argv[1]).convert('RGB').save(sys.argv[2])\" '" +
                                    dds + "' '" + png + "'";
        ASSERT_EQ(std::system(convert.c_str()), 0) << convert;
        Result<Image> decoded = read_image(png);
        ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
        // The source image of the texture: the DDS file's stem is the source file's.
        const std::string stem = std::filesystem::path(dds).stem().string();
        Result<Image> source = read_image(material + "/" + stem + ".png");
        ASSERT_TRUE(source.ok()) << source.status().to_string();
        ASSERT_EQ(decoded->width, source->width);
        ASSERT_EQ(decoded->height, source->height);
        const int channels = std::min(3, std::min(decoded->channels, source->channels));
        double squared = 0;
        for (size_t t = 0; t < source->texel_count(); ++t) {
            for (int c = 0; c < channels; ++c) {
                const double a = std::round(decoded->pixels[t * static_cast<size_t>(decoded->channels) +
                                                            static_cast<size_t>(c)] * 255.0);
                const double b = std::round(source->pixels[t * static_cast<size_t>(source->channels) +
                                                           static_cast<size_t>(c)] * 255.0);
                squared += (a - b) * (a - b);
            }
        }
        const double psnr8 = 10.0 * std::log10(255.0 * 255.0 * static_cast<double>(source->texel_count()) *
                                                channels / std::max(squared, 1e-9));
        const double pack_psnr8 = f["pack_psnr8_db"].get<double>();
        EXPECT_GE(psnr8, pack_psnr8 - 1.5) << "DDS psnr8 " << psnr8 << " dB, the pack's " << pack_psnr8 << " dB";
    }
}
#endif

}  // namespace
}  // namespace nmc
