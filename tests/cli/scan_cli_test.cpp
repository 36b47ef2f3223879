// Runs the built `nmc scan` on material folders written by the test: what it finds in an Unreal folder, an image it
// leaves out as a warning naming the file and why (under --strict an error, exit 8), damaged source images in every
// format the build reads refused with exit 8 naming the file and the problem, and --write-manifest on a full disk
// exiting 3 and leaving nothing behind.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/file_io.h"
#include "material/image_io.h"
#include "material/manifest.h"
#include "tests/cli/nmc_process.h"
#include "tests/material/damaged_images.h"
#include "tests/material/test_support.h"

namespace nmc {
namespace {

using Json = nlohmann::json;
using test::CommandResult;
using test::run_nmc;
using test::TempDir;

// FOLDER/T_Rock_D.png and T_Rock_N.png (Unreal names), and T_Rock_Preview.png, which names no map.
void write_rock(const std::string& folder) {
    std::filesystem::create_directories(folder);
    for (const char* name : {"T_Rock_D.png", "T_Rock_N.png", "T_Rock_Preview.png"})
        test::write_png(folder + "/" + name, test::make_image(4, 4, 3, test::code));
}

const char* kLeftOut = "T_Rock_Preview.png is not packed: file name matches no map convention";

TEST(ScanCli, ImageLeftOutIsAWarningAndUnderStrictAnError) {
    TempDir dir;
    const std::string folder = dir.file("rock");  // not the scratch folder, where nmc's output is captured
    write_rock(folder);
    CommandResult r = run_nmc("scan --json " + folder, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::string("nmc: warning: ") + kLeftOut), std::string::npos) << r.err;
    const Json j = Json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    ASSERT_EQ(j["textures"].size(), 2u) << r.out;
    EXPECT_EQ(j["textures"][0]["file_name"], "T_Rock_D.png");
    EXPECT_EQ(j["textures"][0]["semantic"], "albedo");
    EXPECT_EQ(j["textures"][1]["file_name"], "T_Rock_N.png");
    EXPECT_EQ(j["textures"][1]["normal_convention"], "directx");
    ASSERT_EQ(j["ignored"].size(), 1u) << r.out;
    EXPECT_EQ(j["ignored"][0]["file"], "T_Rock_Preview.png");
    EXPECT_EQ(j["ignored"][0]["image"], true);
    ASSERT_EQ(j["warnings"].size(), 1u);
    EXPECT_EQ(j["warnings"][0].get<std::string>().rfind(kLeftOut, 0), 0u) << r.out;

    r = run_nmc("scan --strict " + folder, dir.path());
    EXPECT_EQ(r.exit_code, 8) << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("nmc: error: " + folder + ": images left out of the pack: T_Rock_Preview.png ("),
              std::string::npos)
        << r.err;
}


bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

// Bug: `nmc scan` (and compress, which loads images with the same code) took the first 1,000 or 20,000 bytes of a
// 47 KB JPEG without a word, the missing part read as grey. Per format: a material folder holding one albedo map,
// cut short inside its pixel data, then with one bit flipped where the format can tell (damaged_images.h says
// where).
TEST(ScanCli, DamagedImagesExit8NamingFileAndProblem) {
    test::TempDir dir;
    for (const std::string format : {"png", "jpeg", "tga", "exr", "tiff"}) {
        if (!image_format_supported(format)) continue;  // PNGJPEG builds: exit 7, tested elsewhere
        const std::string folder = dir.file(format);
        std::filesystem::create_directories(folder);
        const std::string file = folder + "/w_diff." + test::extension_of(format);
        ASSERT_TRUE(write_image(file, test::damage_test_image(format), format, true).ok()) << format;
        const Result<std::vector<uint8_t>> intact = read_file(file, 1 << 20);
        ASSERT_TRUE(intact.ok()) << intact.status().to_string();
        ASSERT_EQ(test::run_nmc("scan '" + folder + "'", dir.path()).exit_code, 0) << format;

        for (const test::DamagedFile& damaged :
             {test::truncated_in_pixels(format, *intact), test::detectable_flip(format, *intact)}) {
            std::ofstream(file, std::ios::binary | std::ios::trunc)
                .write(reinterpret_cast<const char*>(damaged.bytes.data()),
                       static_cast<std::streamsize>(damaged.bytes.size()));
            const test::CommandResult r = test::run_nmc("scan '" + folder + "'", dir.path());
            EXPECT_EQ(r.exit_code, 8) << format << " " << damaged.what << ": " << r.err;
            EXPECT_TRUE(contains(r.err, "nmc: error: " + file + ": "))
                << format << " " << damaged.what << ": " << r.err;
            EXPECT_TRUE(contains(r.err, damaged.problem)) << format << " " << damaged.what << ": " << r.err;
        }
    }
}

// Bug class: an output that could not be written completely while nmc said it was. With a file size limit of
// 1 byte (a full disk, nmc_process.h), the manifest write fails: exit 3 naming the file and the reason, and neither
// the manifest nor a temporary file is left.
TEST(ScanCli, WriteManifestOnAFullDiskExits3AndLeavesNothing) {
    test::TempDir dir;
    const std::string folder = dir.file("mat");
    const std::string out = dir.file("out");
    std::filesystem::create_directories(folder);
    std::filesystem::create_directories(out);
    test::write_png(folder + "/w_diff.png", test::make_image(4, 4, 3, test::code));
    const std::string manifest = out + "/mat.json";

    const test::CommandResult r =
        test::run_nmc_with_file_size_limit("scan '" + folder + "' --write-manifest '" + manifest + "'", 1);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "nmc: error: " + manifest + ": write failed: " + std::strerror(EFBIG))) << r.err;
    EXPECT_TRUE(std::filesystem::is_empty(out));

    const test::CommandResult written =
        test::run_nmc("scan '" + folder + "' --write-manifest '" + manifest + "'", dir.path());
    EXPECT_EQ(written.exit_code, 0) << written.err;
    EXPECT_TRUE(std::filesystem::exists(manifest));
}

// Bug: the written manifest did not say where the maps are, so one written to another folder than the maps' found
// none. It records the material's folder relative to itself: written from one working directory into another
// folder, it is read from a third, and again after manifest and maps moved together.
TEST(ScanCli, WrittenManifestRecordsTheMaterialFolderRelativeToItself) {
    test::TempDir dir;
    std::filesystem::create_directories(dir.file("assets/mat"));
    test::write_png(dir.file("assets/mat/w_diff.png"), test::make_image(4, 4, 3, test::code));
    test::write_png(dir.file("assets/mat/w_rough.png"), test::make_image(4, 4, 1, test::code));

    const test::CommandResult written =
        test::run_nmc_in(dir.file("assets"), "scan mat --write-manifest ../manifests/w.json", dir.path());
    ASSERT_EQ(written.exit_code, 0) << written.err;
    const auto manifest = read_manifest(dir.file("manifests/w.json"));
    ASSERT_TRUE(manifest.ok()) << manifest.status().to_string();
    EXPECT_EQ(manifest->folder, "../assets/mat");

    const auto scan_from = [&](const std::string& working_dir, const std::string& manifest_path) {
        const test::CommandResult r = test::run_nmc_in(working_dir, "scan --json '" + manifest_path + "'", dir.path());
        EXPECT_EQ(r.exit_code, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out, nullptr, false);
        return j.is_object() ? j["textures"].size() : 0u;
    };
    EXPECT_EQ(scan_from("/", dir.file("manifests/w.json")), 2u);

    // Moved together (their relative layout kept), the manifest still finds the maps.
    std::filesystem::create_directories(dir.file("moved"));
    std::filesystem::rename(dir.file("assets"), dir.file("moved/assets"));
    std::filesystem::rename(dir.file("manifests"), dir.file("moved/manifests"));
    EXPECT_EQ(scan_from("/", dir.file("moved/manifests/w.json")), 2u);

    // Written beside the maps, it records no folder (its own is the default).
    const test::CommandResult beside =
        test::run_nmc_in(dir.file("moved/assets"), "scan mat --write-manifest mat/w.json", dir.path());
    ASSERT_EQ(beside.exit_code, 0) << beside.err;
    const auto plain = read_manifest(dir.file("moved/assets/mat/w.json"));
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(plain->folder, "");
}

// An existing --write-manifest FILE is kept without -f, as every output of every command: exit 3 before any image is
// decoded (nothing on stdout), the file untouched; -f (or --force) replaces it.
TEST(ScanCli, WriteManifestKeepsAnExistingFileUnlessForced) {
    test::TempDir dir;
    const std::string folder = dir.file("mat");
    std::filesystem::create_directories(folder);
    test::write_png(folder + "/w_diff.png", test::make_image(4, 4, 3, test::code));
    const std::string manifest = dir.file("mat.json");
    std::ofstream(manifest) << "keep me\n";

    const test::CommandResult kept = test::run_nmc("scan '" + folder + "' --write-manifest '" + manifest + "'", dir.path());
    EXPECT_EQ(kept.exit_code, 3) << kept.err;
    EXPECT_TRUE(contains(kept.err, "nmc: error: " + manifest + ": exists (use --force to overwrite)")) << kept.err;
    EXPECT_EQ(kept.out, "");
    const auto bytes = read_file(manifest, 1024);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "keep me\n");

    const test::CommandResult forced =
        test::run_nmc("scan '" + folder + "' --write-manifest '" + manifest + "' -f", dir.path());
    EXPECT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_TRUE(read_manifest(manifest).ok());
}

// A PNG of width x height RGBA 8-bit texels, all zero, written a row at a time (never held in memory: at 16384^2
// its pixels are 1 GiB, 4 GiB as float).
void write_zero_png(const std::string& path, uint32_t width, uint32_t height) {
    std::ofstream out(path, std::ios::binary);
    const auto chunk = [&out](const char* type, const std::vector<uint8_t>& data) {
        const uint8_t length[4] = {static_cast<uint8_t>(data.size() >> 24), static_cast<uint8_t>(data.size() >> 16),
                                   static_cast<uint8_t>(data.size() >> 8), static_cast<uint8_t>(data.size())};
        out.write(reinterpret_cast<const char*>(length), 4);
        out.write(type, 4);
        out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
        uLong crc = crc32(0, reinterpret_cast<const Bytef*>(type), 4);
        if (!data.empty()) crc = crc32(crc, data.data(), static_cast<uInt>(data.size()));  // crc32(c, NULL, 0) is 0
        const uint8_t crc_bytes[4] = {static_cast<uint8_t>(crc >> 24), static_cast<uint8_t>(crc >> 16),
                                      static_cast<uint8_t>(crc >> 8), static_cast<uint8_t>(crc)};
        out.write(reinterpret_cast<const char*>(crc_bytes), 4);
    };
    out.write("\x89PNG\r\n\x1a\n", 8);
    std::vector<uint8_t> header = {static_cast<uint8_t>(width >> 24),
                                   static_cast<uint8_t>(width >> 16),
                                   static_cast<uint8_t>(width >> 8),
                                   static_cast<uint8_t>(width),
                                   static_cast<uint8_t>(height >> 24),
                                   static_cast<uint8_t>(height >> 16),
                                   static_cast<uint8_t>(height >> 8),
                                   static_cast<uint8_t>(height),
                                   8,
                                   6,
                                   0,
                                   0,
                                   0};  // 8 bits, RGBA, deflate, filter 0, no interlace
    chunk("IHDR", header);
    z_stream z{};
    deflateInit(&z, 1);
    const std::vector<uint8_t> row(1 + size_t{width} * 4, 0);  // filter type 0, then the texels
    std::vector<uint8_t> idat;
    std::vector<uint8_t> buffer(1 << 16);
    const auto drain = [&](int flush) {
        z.next_out = buffer.data();
        z.avail_out = static_cast<uInt>(buffer.size());
        const int rc = deflate(&z, flush);
        idat.insert(idat.end(), buffer.begin(), buffer.end() - z.avail_out);
        return rc;
    };
    for (uint32_t y = 0; y < height; ++y) {
        z.next_in = const_cast<Bytef*>(row.data());
        z.avail_in = static_cast<uInt>(row.size());
        while (z.avail_in > 0) drain(Z_NO_FLUSH);
    }
    while (drain(Z_FINISH) != Z_STREAM_END) {
    }
    deflateEnd(&z);
    chunk("IDAT", idat);
    chunk("IEND", {});
}

// Bug class: an allocation failure that aborted nmc (std::bad_alloc, exit 134). A 16384^2 RGBA PNG is 4 GiB as float;
// with the address space limited to 3 GiB (about 1 GiB more than nmc needs to start and scan a small material), its
// decoding fails to allocate: exit 13 naming the file.
TEST(ScanCli, AllocationFailureExits13NamingTheFile) {
    if (test::address_sanitizer_build()) GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
    constexpr uint64_t kLimit = uint64_t{3} << 30;
    test::TempDir dir;
    const std::string small = dir.file("small");
    std::filesystem::create_directories(small);
    test::write_png(small + "/w_diff.png", test::make_image(4, 4, 3, test::code));
    const test::CommandResult fits = test::run_nmc_with_memory_limit("scan '" + small + "'", kLimit);
    ASSERT_EQ(fits.exit_code, 0) << "the limit leaves too little to start nmc: " << fits.err;

    const std::string large = dir.file("large");
    std::filesystem::create_directories(large);
    write_zero_png(large + "/w_diff.png", 16384, 16384);
    const test::CommandResult r = test::run_nmc_with_memory_limit("scan '" + large + "'", kLimit);
    EXPECT_EQ(r.exit_code, 13) << r.err;
    EXPECT_TRUE(contains(r.err, "nmc: error: " + large + "/w_diff.png: out of memory")) << r.err;
}

}  // namespace
}  // namespace nmc
