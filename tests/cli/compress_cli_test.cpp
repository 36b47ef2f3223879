// `nmc compress` as a user runs it (the built executable on small materials written by the test): the pack it
// writes against `nmc inspect --json`, the source folder it records (relative to the pack's folder), bad input and
// usage errors with their exit codes (cli/exit_codes.h) and nothing written, --target-psnr's report, the normal-mode
// choice, Unreal-named maps and an image left out (--strict), the output checked before training, the output folder
// created, one image file as a material, and a collapsed map reported (a flat one not). 16x16 materials: LibTorch's
// start-up dominates.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/cli/nmc_process.h"
#include "tests/format/pack_equality.h"
#include "tests/material/test_support.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using nmc::test::CommandResult;
using nmc::test::run_nmc;
using nmc::test::run_nmc_in;
using nmc::test::TempDir;

// 600 bpp: the smallest latent shape and network need about 482 bpp on a 16x16 material.
const std::string kFast = " --quality fast --steps 20 --bpp 600";

void write_albedo_roughness(const std::string& folder) {
    fs::create_directories(folder);
    nmc::test::write_png(folder + "/crate_albedo.png", nmc::test::make_image(16, 16, 3, nmc::test::code));
    nmc::test::write_png(folder + "/crate_roughness.png",
                         nmc::test::make_image(16, 16, 1, [](int x, int y, int) { return (x * 7 + y * 3) / 256.0f; }));
}

Json parse(const std::string& text) { return Json::parse(text, nullptr, false); }

TEST(CompressCli, WritesThePackItReports) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string pack = dir.file("crate.nmc");
    // --result (nmc batch's child protocol) writes the --json object with its version; a folder that does not exist
    // yet is made.
    const std::string result_file = dir.file("results/crate.json");
    const CommandResult r = run_nmc(
        "compress " + dir.file("crate") + " -o " + pack + kFast + " --json --result " + result_file, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json report = parse(r.out);
    ASSERT_TRUE(report.is_object()) << r.out;
    std::ostringstream result_text;
    result_text << std::ifstream(result_file).rdbuf();
    Json result = parse(result_text.str());
    ASSERT_TRUE(result.is_object());
    EXPECT_EQ(result["result_version"], 1);
    result.erase("result_version");
    EXPECT_EQ(result, report);
    const CommandResult inspect = run_nmc("inspect --json " + pack, dir.path());
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const Json facts = parse(inspect.out);
    EXPECT_EQ(report["file_bytes"], facts["file_size"]);
    EXPECT_EQ(report["file_bytes"].get<uint64_t>(), fs::file_size(pack));
    EXPECT_DOUBLE_EQ(report["psnr_db"].get<double>(), facts["quality"]["psnr_db"].get<double>());
    EXPECT_EQ(report["latents"]["features"], facts["latents"]["feature_count"]);
    EXPECT_EQ(report["textures"].size(), 2u);
    EXPECT_EQ(report["steps"], 20);
    // Where quantisation cost quality (QuantisationTrace): every point of the schedule, in dB.
    const Json& trace = report["quantisation_trace"];
    for (const char* key : {"float_model_db", "rounded_latents_db", "before_weight_rounding_db", "rounded_weights_db",
                            "final_db"})
        EXPECT_TRUE(trace[key].is_number()) << key << ": " << trace.dump();
    EXPECT_GT(trace["evaluation_texels"].get<int64_t>(), 0);
    // Where the wall time went: every stage is part of the total, training as the trainer measured it.
    const Json& seconds = report["seconds"];
    double stages = 0;
    for (const char* key : {"load", "training", "measure", "write", "other"}) {
        ASSERT_TRUE(seconds[key].is_number()) << key << ": " << seconds.dump();
        EXPECT_GE(seconds[key].get<double>(), 0.0) << key;
        stages += seconds[key].get<double>();
    }
    EXPECT_DOUBLE_EQ(seconds["training"].get<double>(), report["training_seconds"].get<double>());
    EXPECT_NEAR(stages, seconds["total"].get<double>(), 1e-6 + 1e-9 * stages) << seconds.dump();
    EXPECT_GT(seconds["measure"].get<double>(), 0.0);
}

// A map the pack does not reproduce is reported as collapsed by compress (a warning, and its --json structure) and by
// validate (the same figures; a warning, and exit 6 under --fail-on-collapse); a flat map (a constant metalness)
// has no structure to lose and is never flagged. Two training steps leave the network far from every map.
TEST(CompressCli, CollapsedMapIsReportedAndAFlatOneIsNot) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    nmc::test::write_png(dir.file("crate/crate_metallic.png"),
                         nmc::test::make_image(16, 16, 1, [](int, int, int) { return 0.5f; }));
    const std::string pack = dir.file("crate.nmc");
    CommandResult r = run_nmc(
        "compress " + dir.file("crate") + " -o " + pack + " --quality fast --steps 2 --bpp 600 --json", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("nmc: warning: crate_roughness.png collapsed: "), std::string::npos) << r.err;
    const Json report = parse(r.out);
    ASSERT_TRUE(report.is_object()) << r.out;
    Json roughness, metallic;
    for (const Json& t : report["textures"]) {
        if (t["texture"] == "crate_roughness") roughness = t["structure"];
        if (t["texture"] == "crate_metallic") metallic = t["structure"];
    }
    ASSERT_TRUE(roughness.is_object()) << report["textures"].dump();
    ASSERT_TRUE(metallic.is_object()) << report["textures"].dump();
    EXPECT_EQ(roughness["measured"], true);
    EXPECT_EQ(roughness["collapsed"], true);
    EXPECT_EQ(metallic["measured"], false);
    EXPECT_EQ(metallic["collapsed"], false);
    bool warned = false;
    for (const Json& w : report["warnings"])
        warned = warned || w.get<std::string>().rfind("crate_roughness.png collapsed", 0) == 0;
    EXPECT_TRUE(warned) << report["warnings"].dump();

    r = run_nmc("validate " + pack + " --json", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;  // a warning, not a failure
    const Json validated = parse(r.out);
    ASSERT_TRUE(validated.is_object()) << r.out;
    for (const Json& t : validated["quality"]["textures"])
        if (t["name"] == "crate_roughness") {
            EXPECT_EQ(t["structure"]["collapsed"], true);
            EXPECT_NEAR(t["structure"]["correlation"].get<double>(), roughness["correlation"].get<double>(), 1e-9);
            EXPECT_NEAR(t["structure"]["constant_psnr_db"].get<double>(), roughness["constant_psnr_db"].get<double>(),
                        1e-9);
        }
    r = run_nmc("validate " + pack + " --fail-on-collapse", dir.path());
    EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL      crate_roughness.png collapsed: "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("crate_metallic.png collapsed"), std::string::npos) << r.out;
}

// The pack records its source folder relative to its own folder (spec 5.7), where `nmc validate` looks: a pack
// written to another folder than the working directory, and moved with its sources, still finds them.
TEST(CompressCli, RecordsTheSourceFolderRelativeToThePack) {
    TempDir dir;
    write_albedo_roughness(dir.file("materials/crate"));
    fs::create_directories(dir.file("packs"));
    CommandResult r = run_nmc_in(dir.path(), "compress materials/crate -o packs/crate.nmc" + kFast, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_nmc("inspect --json " + dir.file("packs/crate.nmc"), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(parse(r.out)["encoder"]["source_folder"], "../materials/crate") << r.out;

    r = run_nmc_in("/", "validate " + dir.file("packs/crate.nmc") + " --min-psnr 5", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("sources   " + dir.file("packs/../materials/crate")), std::string::npos) << r.out;

    fs::create_directories(dir.file("moved"));
    fs::rename(dir.file("packs"), dir.file("moved/packs"));
    fs::rename(dir.file("materials"), dir.file("moved/materials"));
    r = run_nmc_in(dir.file("moved/packs"), "validate crate.nmc --min-psnr 5", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("sources   ../materials/crate"), std::string::npos) << r.out;
}

// --latent-shape S,F,b,K: the level count as given (the mips above level K - 2 read the last two levels, spec 8.1),
// 2 (rate control's) when K is left out, and measured by decoding the pack like any other.
TEST(CompressCli, LatentShapeTakesALevelCount) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string pack = dir.file("crate.nmc");
    CommandResult r = run_nmc("compress " + dir.file("crate") + " -o " + pack + kFast + " --latent-shape 1,4,4 --json",
                              dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(parse(r.out)["latents"]["levels"], 2) << r.out;
    r = run_nmc("compress " + dir.file("crate") + " -o " + pack + kFast + " --latent-shape 1,4,4,3 --force --json",
                dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json report = parse(r.out);
    EXPECT_EQ(report["latents"]["levels"], 3) << r.out;
    EXPECT_GT(report["psnr_db"].get<double>(), 0.0);
    const CommandResult inspect = run_nmc("inspect --json " + pack, dir.path());
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_EQ(parse(inspect.out)["latents"]["levels"].size(), 3u) << inspect.out;
    r = run_nmc("compress " + dir.file("crate") + " -o " + pack + kFast + " --latent-shape 1,4,4,99 --force", dir.path());
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("K must be 2.."), std::string::npos) << r.err;
}

// --hidden-layers picks the network; the pack and the report say which.
TEST(CompressCli, HiddenLayersAreStoredInThePack) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string pack = dir.file("crate.nmc");
    const CommandResult r =
        run_nmc("compress " + dir.file("crate") + " -o " + pack + kFast + " --hidden-layers 32,16 --json", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const CommandResult inspect = run_nmc("inspect --json " + pack, dir.path());
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const Json layers = parse(inspect.out)["network"]["layers"];
    ASSERT_EQ(layers.size(), 3u) << inspect.out;
    EXPECT_EQ(layers[0]["output_width"], 32);
    EXPECT_EQ(layers[1]["output_width"], 16);
    EXPECT_EQ(layers[2]["input_width"], 16);
}

// The default arithmetic, binary16, writes a format 2.0 pack that says so, and --arithmetic float32 a 1.0 one; nmc
// decodes each back (CPU decoder) and validates it.
TEST(CompressCli, ArithmeticChoosesTheFormatVersion) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    for (const auto& [flag, arithmetic, version] :
         {std::tuple<std::string, std::string, std::string>{"", "binary16", "2.0"},
          {" --arithmetic float32", "float32", "1.0"}}) {
        const std::string pack = dir.file("crate-" + arithmetic + ".nmc");
        const CommandResult r =
            run_nmc("compress " + dir.file("crate") + " -o " + pack + kFast + flag + " --json", dir.path());
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(parse(r.out)["arithmetic"], arithmetic) << r.out;
        const CommandResult inspect = run_nmc("inspect --json " + pack, dir.path());
        ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
        const Json j = parse(inspect.out);
        EXPECT_EQ(j["format_version"], version) << inspect.out;
        EXPECT_EQ(j["network"]["arithmetic"], arithmetic) << inspect.out;
        const CommandResult text = run_nmc("inspect " + pack, dir.path());
        EXPECT_NE(text.out.find(arithmetic + " arithmetic"), std::string::npos) << text.out;
        const CommandResult validate = run_nmc("validate " + pack + " --source " + dir.file("crate"), dir.path());
        EXPECT_EQ(validate.exit_code, 0) << validate.out << validate.err;
    }
}

TEST(CompressCli, BadInputFailsWithItsExitCodeAndWritesNothing) {
    TempDir dir;
    fs::create_directories(dir.file("empty"));
    const std::string out = dir.file("out.nmc");
    CommandResult r = run_nmc("compress " + dir.file("empty") + " -o " + out + kFast, dir.path());
    EXPECT_EQ(r.exit_code, 8) << r.err;  // a material that cannot be compressed
    EXPECT_NE(r.err.find(dir.file("empty")), std::string::npos) << r.err;

    r = run_nmc("compress " + dir.file("missing") + " -o " + out + kFast, dir.path());
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("no such folder"), std::string::npos) << r.err;

    fs::create_directories(dir.file("broken"));
    std::ofstream(dir.file("broken") + "/rock_albedo.png") << "not a PNG";
    r = run_nmc("compress " + dir.file("broken") + " -o " + out + kFast, dir.path());
    EXPECT_EQ(r.exit_code, 8) << r.err;
    EXPECT_NE(r.err.find("rock_albedo.png"), std::string::npos) << r.err;

    // Over 16 pack channels: RGB albedo, 3-channel stored normals and four RGB data maps whose channels differ = 18.
    fs::create_directories(dir.file("wide"));
    for (const char* name : {"w_diff.png", "w_nor.png", "w_rough.png", "w_metal.png", "w_ao.png", "w_height.png"})
        nmc::test::write_png(dir.file("wide") + "/" + name, nmc::test::make_image(4, 4, 3, nmc::test::code));
    r = run_nmc("compress " + dir.file("wide") + " -o " + out + kFast, dir.path());
    EXPECT_EQ(r.exit_code, 8) << r.err;
    EXPECT_NE(r.err.find("the limit is 16"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("drop"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

// SIGTERM (a scheduler's stop, `kill`) is handled as Ctrl-C: training stops, exit 10, no pack and no temporary file.
// The signal comes 8 s into a run far longer than that, when training has long begun.
TEST(CompressCli, SigtermStopsCleanlyWithExit10) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string pack = dir.file("crate.nmc");
    const std::string command = "timeout --preserve-status -s TERM 8 '" + nmc::test::nmc_binary() + "' compress " +
                                dir.file("crate") + " -o " + pack + " --quality fast --steps 100000000 --bpp 600 >'" +
                                dir.file("out.txt") + "' 2>'" + dir.file("err.txt") + "'";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 10);
    EXPECT_FALSE(fs::exists(pack));
    for (const auto& entry : fs::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
}

TEST(CompressCli, UsageErrorsExit2BeforeTraining) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string base = "compress " + dir.file("crate") + " -o " + dir.file("out.nmc") + kFast;
    for (const std::string& flags : {std::string(" --device gpu"), std::string(" --device cuda:x"),
                                     std::string(" --normal-mode zz"), std::string(" --quality slow"),
                                     std::string(" --target-psnr 30 --latent-shape 2,4,4"),
                                     std::string(" --latent-shape 2,4"), std::string(" --latent-shape 2,4,4,1"),
                                     std::string(" --latent-shape 2,4,4,17"), std::string(" --trainer fused"),
                                     std::string(" --arithmetic binary8"),
                                     std::string(" --hidden-layers 64,,32"), std::string(" --hidden-layers 64,x"),
                                     std::string(" --hidden-layers 300"), std::string(" --hidden-layers 0,16"),
                                     std::string(" --hidden-layers 8,8,8,8,8,8,8,8"), std::string(" --bpp 0"),
                                     std::string(" --bpp -1")}) {
        const CommandResult r = run_nmc(base + flags, dir.path());
        EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(dir.file("out.nmc")));
}

TEST(CompressCli, ExistingOutputNeedsForce) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string out = dir.file("out.nmc");
    std::ofstream(out) << "keep me";
    CommandResult r = run_nmc("compress " + dir.file("crate") + " -o " + out + kFast, dir.path());
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
    EXPECT_EQ(fs::file_size(out), 7u);
    r = run_nmc("compress " + dir.file("crate") + " -o " + out + kFast + " --force", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GT(fs::file_size(out), 7u);
}

// -v changes what compress says (it once changed nothing): the textures as read, progress logged one line per tenth
// of the steps where stderr is not a terminal (the test's file), and per texture PSNR8, per-channel and per-mip PSNR
// on stdout. The default level logs no progress off a terminal; -q prints no warnings.
TEST(CompressCli, VerboseAddsTexturesProgressAndPerTextureDetail) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string base = "compress " + dir.file("crate") + " -o " + dir.file("out.nmc") + kFast + " -f";
    const CommandResult plain = run_nmc(base, dir.path());
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(plain.err.find("step "), std::string::npos) << plain.err;
    EXPECT_EQ(plain.out.find("per file channel"), std::string::npos) << plain.out;

    const CommandResult verbose = run_nmc(base + " -v", dir.path());
    ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
    EXPECT_NE(verbose.err.find("  crate_albedo.png: albedo, 3 ch, uint8 srgb\n"), std::string::npos)
        << verbose.err;
    size_t progress_lines = 0;
    for (size_t at = verbose.err.find("step "); at != std::string::npos; at = verbose.err.find("step ", at + 1))
        ++progress_lines;
    // At most one line per tenth; the trainer reports progress every few steps, so fewer on 20 steps.
    EXPECT_GE(progress_lines, 1u) << verbose.err;
    EXPECT_LE(progress_lines, 10u) << verbose.err;
    EXPECT_NE(verbose.err.find("step 20/20  PSNR "), std::string::npos) << verbose.err;
    EXPECT_NE(verbose.out.find("psnr8 mip 0 "), std::string::npos) << verbose.out;
    EXPECT_NE(verbose.out.find("; per mip "), std::string::npos) << verbose.out;

    // The same figures are in --json at every level.
    const Json j = parse(run_nmc(base + " --json", dir.path()).out);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["textures"][0]["channel_psnr_db"].size(), 3u);
    EXPECT_EQ(j["textures"][0]["mip_psnr_db"].size(), 5u);  // 16x16: 5 mips
    EXPECT_TRUE(j["textures"][0]["psnr8_mip0_db"].is_number());
}

// A manifest `nmc scan --write-manifest` wrote into another folder than the maps compresses from another working
// directory: it records the maps' folder relative to itself (the bug: it recorded none, so no map was found).
TEST(CompressCli, ScannedManifestWrittenElsewhereCompressesFromAnotherFolder) {
    TempDir dir;
    write_albedo_roughness(dir.file("assets/crate"));
    const CommandResult scanned = run_nmc_in(dir.file("assets"), "scan crate --write-manifest ../manifests/crate.json",
                                             dir.path());
    ASSERT_EQ(scanned.exit_code, 0) << scanned.err;
    const CommandResult r =
        run_nmc_in("/", "compress " + dir.file("manifests/crate.json") + " -o " + dir.file("crate.nmc") + kFast +
                            " --json", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(parse(r.out)["textures"].size(), 2u);
}

// --target-psnr: a reachable target writes the smallest passing attempt and lists every attempt; an
// unreachable one exits 6, names the best PSNR reached and writes nothing.
TEST(CompressCli, TargetPsnrReportsItsAttempts) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string out = dir.file("out.nmc");
    CommandResult r =
        run_nmc("compress " + dir.file("crate") + " -o " + out + kFast + " --target-psnr 8 --json", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json report = parse(r.out);
    ASSERT_TRUE(report["attempts"].is_array()) << r.out;
    ASSERT_GE(report["attempts"].size(), 1u);
    EXPECT_GE(report["psnr_db"].get<double>(), 8.0);
    EXPECT_EQ(report["target_psnr_db"], 8.0);
    EXPECT_LE(report["search_steps"].get<int>(), 20 + 3 * 6);  // one run + 3 fine-tunes of 30%
    bool written_is_an_attempt = false;
    for (const Json& a : report["attempts"])
        written_is_an_attempt = written_is_an_attempt || (a["reached"] == true && a["file_bytes"] == report["file_bytes"]);
    EXPECT_TRUE(written_is_an_attempt) << r.out;

    fs::remove(out);
    r = run_nmc("compress " + dir.file("crate") + " -o " + out + kFast + " --target-psnr 97", dir.path());
    EXPECT_EQ(r.exit_code, 6) << r.err;
    EXPECT_NE(r.err.find("not reached"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

// Unreal names (T_Crate_D, _N, _ORM): all three maps are packed, the normal map as DirectX. Before, only the ORM map
// was packed, with no word said. An image nmc cannot place is a warning naming it and why, listed in --json's
// ignored_images; under --strict it is an error (exit 8) and nothing is written.
TEST(CompressCli, UnrealNamesArePackedAndAnImageLeftOutIsAWarning) {
    TempDir dir;
    const std::string folder = dir.file("crate");
    fs::create_directories(folder);
    for (const char* name : {"T_Crate_D.png", "T_Crate_N.png", "T_Crate_ORM.png", "T_Crate_Preview.png"})
        nmc::test::write_png(folder + "/" + name, nmc::test::make_image(16, 16, 3, nmc::test::code));
    const std::string pack = dir.file("crate.nmc");
    CommandResult r = run_nmc("compress " + folder + " -o " + pack + kFast + " --json", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string warning = "nmc: warning: T_Crate_Preview.png is not packed: file name matches no map convention";
    EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
    const Json report = parse(r.out);
    ASSERT_EQ(report["ignored_images"].size(), 1u) << r.out;
    EXPECT_EQ(report["ignored_images"][0]["file"], "T_Crate_Preview.png");
    EXPECT_NE(report["ignored_images"][0]["reason"].get<std::string>().find("matches no map convention"),
              std::string::npos);
    const CommandResult inspect = run_nmc("inspect --json " + pack, dir.path());
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const Json textures = parse(inspect.out)["textures"];
    ASSERT_EQ(textures.size(), 3u) << inspect.out;
    EXPECT_EQ(textures[0]["file_name"], "T_Crate_D.png");
    EXPECT_EQ(textures[0]["semantic"], "albedo");
    EXPECT_EQ(textures[1]["file_name"], "T_Crate_N.png");
    EXPECT_EQ(textures[1]["normal_convention"], "directx");
    EXPECT_EQ(textures[2]["file_name"], "T_Crate_ORM.png");
    EXPECT_EQ(textures[2]["semantic"], "packed");

    const std::string strict_pack = dir.file("strict.nmc");
    r = run_nmc("compress " + folder + " -o " + strict_pack + kFast + " --strict", dir.path());
    EXPECT_EQ(r.exit_code, 8) << r.err;
    EXPECT_NE(r.err.find("nmc: error: " + folder + ": images left out of the pack: T_Crate_Preview.png ("),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(strict_pack));
}

// The normal-mode choice shows in the pack: a map that is not unit length is stored as three plain channels under
// auto (and under stored), and keeps X and Y with a rebuilt Z under xy.
TEST(CompressCli, NormalModeChoiceIsWrittenToThePack) {
    TempDir dir;
    const std::string folder = dir.file("wall");
    fs::create_directories(folder);
    nmc::test::write_png(folder + "/wall_albedo.png", nmc::test::make_image(16, 16, 3, nmc::test::code));
    nmc::test::write_png(folder + "/wall_normal.png", nmc::test::make_image(16, 16, 3, [](int x, int y, int c) {
                             const float t = 0.7f * static_cast<float>(x + (c + 1) * y);
                             return c == 2 ? 0.8f + 0.1f * std::cos(t) : 0.5f + 0.3f * std::sin(t);
                         }));
    for (const auto& [mode, pack_channels, normal_mode] :
         {std::tuple<std::string, int, std::string>{"auto", 3, "none"}, {"stored", 3, "none"}, {"xy", 2, "xy"}}) {
        const std::string out = dir.file("wall-" + mode + ".nmc");
        CommandResult r =
            run_nmc("compress " + folder + " -o " + out + kFast + " --normal-mode " + mode, dir.path());
        ASSERT_EQ(r.exit_code, 0) << mode << ": " << r.err;
        r = run_nmc("inspect --json " + out, dir.path());
        const Json facts = parse(r.out);
        int normal_channels = 0;
        for (const Json& c : facts["channels"])
            normal_channels += c["name"].get<std::string>().rfind("normal.", 0) == 0;
        EXPECT_EQ(normal_channels, pack_channels) << mode;
        EXPECT_EQ(facts["textures"][1]["normal_mode"], normal_mode) << mode;
        EXPECT_TRUE(facts["quality"]["textures"][1].contains("mean_angle_deg")) << mode;
    }
}

// Runs `nmc <args>` under timeout(1) (args: test-controlled paths without quotes): a run that starts training
// instead of failing at once is killed after `seconds` and reads as exit 124.
CommandResult run_nmc_with_timeout(int seconds, const std::string& args, const TempDir& dir) {
    const std::string out = dir.file("timed.out"), err = dir.file("timed.err");
    const std::string command = "timeout " + std::to_string(seconds) + " '" + nmc::test::nmc_binary() + "' " + args +
                                " >'" + out + "' 2>'" + err + "'";
    const int status = std::system(command.c_str());
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::stringstream o, e;
    o << std::ifstream(out).rdbuf();
    e << std::ifstream(err).rdbuf();
    r.out = o.str();
    r.err = e.str();
    fs::remove(out);
    fs::remove(err);
    return r;
}

// "Nothing silent" item 6: the output was checked only when the pack was written, after all the training. Now an
// output that cannot be written stops the run at once: these runs ask for 10^8 steps (hours), so one that trained
// first would be killed by the 120 s timeout (exit 124) instead of exiting 3, and would print its result table.
TEST(CompressCli, OutputIsCheckedBeforeTraining) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    const std::string endless = " --quality fast --steps 100000000 --bpp 600";
    fs::create_directories(dir.file("a_folder"));
    std::ofstream(dir.file("a_file")) << "not a folder";
    const std::string existing = dir.file("existing.nmc");
    std::ofstream(existing) << "keep me";
    const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
        {dir.file("a_folder"), "", "is a folder"},
        {dir.file("a_folder"), " --force", "is a folder"},
        {dir.file("a_file") + "/crate.nmc", "", "cannot create a file in its folder"},
        {dir.file("a_file") + "/sub/crate.nmc", " --force", "cannot create folder"},
        {existing, "", "exists (use --force to overwrite)"},
    };
    for (const auto& [output, flags, problem] : cases) {
        const CommandResult r =
            run_nmc_with_timeout(120, "compress " + dir.file("crate") + " -o " + output + endless + flags, dir);
        EXPECT_EQ(r.exit_code, 3) << output << flags << ": " << r.err;
        EXPECT_NE(r.err.find("nmc: error: " + output + ": "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    EXPECT_TRUE(fs::is_directory(dir.file("a_folder")));
    EXPECT_TRUE(fs::is_empty(dir.file("a_folder")));
    EXPECT_EQ(fs::file_size(existing), 7u);
    for (const auto& entry : fs::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
}

// As `nmc decompress` does, compress creates the pack's folder and its parents; bad input creates none.
TEST(CompressCli, CreatesAMissingOutputFolder) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    CommandResult r = run_nmc("compress " + dir.file("missing") + " -o " + dir.file("bad/crate.nmc") + kFast, dir.path());
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("bad")));
    const std::string pack = dir.file("packs/2026/crate.nmc");
    r = run_nmc("compress " + dir.file("crate") + " -o " + pack + kFast, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_regular_file(pack));
    r = run_nmc("inspect " + pack, dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

// One image file is a one-texture material named after the file, its map recognised by name as in a folder; the
// other files beside it are not part of it. Before, it failed with "not valid JSON" (read as a manifest).
TEST(CompressCli, CompressesASingleImage) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    nmc::test::write_png(dir.file("crate/photo.png"), nmc::test::make_image(16, 16, 3, nmc::test::code));
    CommandResult r = run_nmc_in(dir.file("crate"), "compress crate_albedo.png -o albedo.nmc --json" + kFast, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json report = parse(r.out);
    EXPECT_EQ(report["material"], "crate_albedo") << r.out;
    ASSERT_EQ(report["textures"].size(), 1u) << r.out;
    EXPECT_EQ(report["textures"][0]["channels"], 3) << r.out;
    EXPECT_TRUE(report["ignored_images"].empty()) << r.out;
    EXPECT_TRUE(report["warnings"].empty()) << r.out;
    r = run_nmc("inspect " + dir.file("crate/albedo.nmc"), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("semantic   albedo"), std::string::npos) << r.out;
    r = run_nmc_in(dir.file("crate"), "validate albedo.nmc --min-psnr 5", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

    // A name that says no map is an error (exit 8), as is a file that is neither an image nor a manifest.
    const std::string out = dir.file("out.nmc");
    r = run_nmc("compress " + dir.file("crate/photo.png") + " -o " + out + kFast, dir.path());
    EXPECT_EQ(r.exit_code, 8) << r.err;
    EXPECT_NE(r.err.find(dir.file("crate/photo.png") + ": file name matches no map convention"), std::string::npos)
        << r.err;
    std::ofstream(dir.file("notes.txt")) << "hello";
    r = run_nmc("compress " + dir.file("notes.txt") + " -o " + out + kFast + " --result " + dir.file("result.json"),
                dir.path());
    EXPECT_EQ(r.exit_code, 8) << r.err;
    EXPECT_NE(r.err.find(dir.file("notes.txt") + ": not a material"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    // --result records the failure for nmc batch: the exit code and the error as printed.
    std::ostringstream result_text;
    result_text << std::ifstream(dir.file("result.json")).rdbuf();
    const Json failure = parse(result_text.str());
    ASSERT_TRUE(failure.is_object()) << result_text.str();
    EXPECT_EQ(failure["result_version"], 1);
    EXPECT_EQ(failure["exit_code"], 8);
    ASSERT_TRUE(failure["error"].is_string());
    EXPECT_NE(r.err.find("nmc: error: " + failure["error"].get<std::string>() + "\n"), std::string::npos) << r.err;
}

// Issue 34: OpenBLAS divided the trainer's matrix products between as many threads as OMP_NUM_THREADS said, which
// changed their float32 sums: one and two threads trained different packs. Training runs its products on one BLAS
// thread now (compressor/openblas_core.h), so the thread count changes nothing but the time.
TEST(CompressCli, ThreadCountDoesNotChangeThePack) {
    TempDir dir;
    write_albedo_roughness(dir.file("crate"));
    std::vector<std::vector<uint8_t>> packs;
    std::vector<std::string> paths;
    for (const char* threads : {"1", "2"}) {
        const nmc::test::ScopedEnvironment omp("OMP_NUM_THREADS", threads);
        paths.push_back(dir.file(std::string("crate-") + threads + ".nmc"));
        const CommandResult r =
            run_nmc("compress " + dir.file("crate") + " -o " + paths.back() + kFast + " --seed 5", dir.path());
        ASSERT_EQ(r.exit_code, 0) << r.err;
        packs.push_back(nmc::testing::pack_bytes_without_training_time(paths.back()));
    }
    ASSERT_FALSE(packs[0].empty());
    if (packs[0] != packs[1]) {
        // Name the first field that differs.
        auto one = nmc::read_pack_file(paths[0]), two = nmc::read_pack_file(paths[1]);
        ASSERT_TRUE(one.ok() && two.ok());
        one->encoder.training_seconds = two->encoder.training_seconds = 0;
        one->quality.bits_per_texel = two->quality.bits_per_texel = 0;
        nmc::testing::expect_same_pack(*one, *two);
        ADD_FAILURE() << "OMP_NUM_THREADS=1 and 2 trained different packs";
    }
}

namespace hdr {

// A 32x32 emissive map of values 0..16: a bright strip (1..16) on black, and a dim panel (0.05..0.5).
float lamp(int x, int y, int c) {
    if (y >= 8 && y < 12) return (1.0f + 15.0f * static_cast<float>(x) / 31.0f) * (c == 2 ? 0.5f : 1.0f);
    if (y >= 20 && y < 26 && x >= 4 && x < 20) return 0.05f + 0.45f * static_cast<float>(x - 4) / 15.0f;
    return 0.0f;
}

// Bug: an HDR emissive map (values 0..16) was trained and stored linearly over its range, so its error was a
// fraction of 16 everywhere and black areas glowed (a mean absolute error of 0.25-0.29 where the source is black on a
// real material). HDR maps are now stored on the HLG curve: after a tiny run (200 steps) the mean error where the
// source is black is 0.0001 (before: 0.044, up to 0.24) and the HDR PSNR 43.4 dB (before: 21.8). compress and validate
// report the HDR PSNR (the error on the HLG curve, which notices black areas that glow), and agree on it.
TEST(CompressCli, HdrMapKeepsItsBlackAreasBlack) {
    if (!nmc::image_format_supported("exr")) GTEST_SKIP() << "no EXR backend in this build";
    TempDir dir;
    fs::create_directories(dir.file("lamp"));
    const nmc::Image source = nmc::test::make_image(32, 32, 3, lamp, nmc::SampleType::float32);
    ASSERT_TRUE(nmc::write_image(dir.file("lamp/lamp_emissive.exr"), source, "exr", false).ok());
    nmc::test::write_png(dir.file("lamp/lamp_albedo.png"), nmc::test::make_image(32, 32, 3, nmc::test::code));
    const std::string pack = dir.file("lamp.nmc");
    CommandResult r = run_nmc("compress " + dir.file("lamp") + " -o " + pack +
                                  " --quality fast --steps 200 --bpp 600 --seed 3 --json",
                              dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json report = parse(r.out);
    Json emissive;
    for (const Json& t : report["textures"])
        if (t["texture"] == "lamp_emissive") emissive = t;
    ASSERT_TRUE(emissive["hdr_psnr_db"].is_number()) << r.out;
    for (const Json& t : report["textures"]) {
        if (t["texture"] == "lamp_albedo") {
            EXPECT_FALSE(t.contains("hdr_psnr_db"));  // an 8-bit map is not HDR
        }
    }

    const CommandResult inspect = run_nmc("inspect --json " + pack, dir.path());
    const Json facts = parse(inspect.out);
    EXPECT_EQ(facts["format_version"], "3.0") << inspect.out;
    const CommandResult validate = run_nmc("validate --json " + pack, dir.path());
    ASSERT_EQ(validate.exit_code, 0) << validate.out << validate.err;
    for (const Json& t : parse(validate.out)["quality"]["textures"]) {
        if (t["name"] == "lamp_emissive") {
            EXPECT_DOUBLE_EQ(t["hdr_psnr_db"].get<double>(), emissive["hdr_psnr_db"].get<double>());
        }
    }

    ASSERT_EQ(run_nmc("decompress " + pack + " -o " + dir.file("out"), dir.path()).exit_code, 0);
    auto decoded = nmc::read_image(dir.file("out/lamp_emissive.exr"));
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    double black_error = 0, largest = 0;
    size_t black = 0;
    for (size_t i = 0; i < source.pixels.size(); ++i) {
        largest = std::max(largest, static_cast<double>(decoded->pixels[i]));
        if (source.pixels[i] != 0.0f) continue;
        black_error += std::fabs(decoded->pixels[i]);
        ++black;
    }
    ASSERT_GT(black, 0u);
    EXPECT_LT(black_error / static_cast<double>(black), 0.005) << "mean |error| where the source is black";
    EXPECT_GT(largest, 8.0);  // the strip's range survives
    EXPECT_GT(emissive["hdr_psnr_db"].get<double>(), 35.0);
}

}  // namespace hdr

}  // namespace
