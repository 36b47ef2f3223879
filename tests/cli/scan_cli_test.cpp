// `nmc scan` as a user runs it (the built executable on a folder written by the test): what it finds in an Unreal
// folder, an image it leaves out as a warning naming the file and why, and under --strict an error (exit 8).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/cli/nmc_process.h"
#include "tests/material/test_support.h"

namespace {

using Json = nlohmann::json;
using nmc::test::CommandResult;
using nmc::test::run_nmc;
using nmc::test::TempDir;

// FOLDER/T_Rock_D.png and T_Rock_N.png (Unreal names), and T_Rock_Preview.png, which names no map.
void write_rock(const std::string& folder) {
    std::filesystem::create_directories(folder);
    for (const char* name : {"T_Rock_D.png", "T_Rock_N.png", "T_Rock_Preview.png"})
        nmc::test::write_png(folder + "/" + name, nmc::test::make_image(4, 4, 3, nmc::test::code));
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

}  // namespace
