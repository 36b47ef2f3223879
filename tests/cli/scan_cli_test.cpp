// Runs the built `nmc scan` on material folders written by the test: --write-manifest on a full disk exits 3
// leaving nothing behind.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tests/cli/nmc_process.h"
#include "tests/material/test_support.h"

namespace nmc {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
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

}  // namespace
}  // namespace nmc
