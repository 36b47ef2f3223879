// validate_pack_file() and its JSON report on packs written to a temporary folder with their source files:
// every verdict (pass, structurally_invalid, source_mismatch, quality_below_threshold by --min-psnr and by
// drift, a collapsed texture as a warning and under --fail-on-collapse, threshold_not_checked), the source-folder rules
// (relative to the pack's folder), heat maps and the report's numbers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "material/image_io.h"
#include "tests/validate/constant_pack.h"
#include "validate/validation.h"

namespace nmc {
namespace {

using testing::constant_pack;
using testing::from_pack;
using testing::texture_layout;

double psnr(double mse) {
    return mse <= 0 ? 99.0 : -10.0 * std::log10(mse);
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return contains(l, needle); });
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const std::string& l : lines) s += l + "\n";
    return s;
}

// An 8x8, 4-mip material "rock" of two uint8 PNGs:
//   rock_Color.png: pack channels 0-2, decoded (0.5, 0.25, 1); source a 64/192 checkerboard, code 100, code 255.
//   rock_Rough.png: pack channel 3, decoded 0.25; source code 64 everywhere (the same 8-bit code).
class Validation : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(dir_.path().empty());
        source_dir_ = dir_.file("src");
        ASSERT_EQ(::mkdir(source_dir_.c_str(), 0755), 0);
        pack_path_ = dir_.file("rock.nmc");
        pack_ =
            constant_pack(8, 8, 4, {{"albedo.r", 0, 1}, {"albedo.g", 0, 1}, {"albedo.b", 0, 1}, {"roughness", 0, 1}},
                          {0.5f, 0.25f, 1.0f, 0.25f});
        pack_.textures = {texture_layout("rock_Color.png", SampleType::uint8, ColorSpace::linear,
                                         {from_pack(0, Semantic::albedo), from_pack(1, Semantic::albedo),
                                          from_pack(2, Semantic::albedo)}),
                          texture_layout("rock_Rough.png", SampleType::uint8, ColorSpace::linear,
                                         {from_pack(3, Semantic::roughness)})};
        Image color(8, 8, 3), rough(8, 8, 1);
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x) {
                color.at(x, y, 0) = ((x + y) % 2 ? 192.0f : 64.0f) / 255.0f;
                color.at(x, y, 1) = 100.0f / 255.0f;
                color.at(x, y, 2) = 1.0f;
                rough.at(x, y, 0) = 64.0f / 255.0f;
            }
        ASSERT_TRUE(testing::write_sources(pack_, source_dir_, {color, rough}).ok());
        ASSERT_TRUE(testing::store_measured_quality(pack_, source_dir_).ok());
        write_pack();
    }

    void write_pack() { ASSERT_TRUE(write_pack_file(pack_path_, pack_).ok()); }

    ValidationReport validate(const ValidationOptions& options = {}) {
        auto report = validate_pack_file(pack_path_, options);
        EXPECT_TRUE(report.ok()) << report.status().to_string();
        return report.ok() ? report.value() : ValidationReport{};
    }

    // Replaces a source file (the pack keeps the old hash).
    void replace_source(const std::string& file_name, const Image& image) {
        ASSERT_TRUE(write_image(source_dir_ + "/" + file_name, image, "png", true).ok());
    }

    // The hand-computed overall PSNR of the fixture (spec 8.10), in [0, 1] units per pack channel:
    // channel 0 errs by -63.5/255 and +64.5/255 at mip 0 and by 0.5/255 above (the checkerboard averages to
    // 128/255), channel 1 by 36.25/255, channel 2 not at all, channel 3 by 0.25/255 (64/255 vs 0.25).
    static double expected_psnr() {
        const double k = 255.0 * 255.0;
        const double c0 = (64 * (63.5 * 63.5 + 64.5 * 64.5) / 2 / k + 21 * 0.25 / k) / 85;
        return psnr((c0 + 36.25 * 36.25 / k + 0 + 0.0625 / k) / 4);
    }

    testing::TempDir dir_;
    std::string source_dir_;
    std::string pack_path_;
    Pack pack_;
};

TEST_F(Validation, GoodPackPasses) {
    const ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
    EXPECT_TRUE(r.failures.empty()) << joined(r.failures);
    EXPECT_TRUE(r.structural_problems.empty());
    EXPECT_EQ(r.pack_path, pack_path_);
    EXPECT_EQ(r.source_dir, source_dir_);  // the folder recorded in the pack, as no --source was given
    EXPECT_TRUE(r.source_note.empty()) << r.source_note;
    ASSERT_TRUE(r.quality_measured);
    // Tolerance: the reference's mip planes are float32 box averages of code/255 values.
    EXPECT_NEAR(r.quality.psnr_db, expected_psnr(), 1e-3);
    EXPECT_TRUE(r.stored_quality_present);
    EXPECT_EQ(r.stored_psnr_db, pack_.quality.psnr_db);
    EXPECT_NEAR(r.drift_db, 0.0, 1e-12);  // the same decoder and sources as at "compression"
    ASSERT_EQ(r.sources.size(), 2u);
    for (const SourceCheck& s : r.sources) {
        EXPECT_TRUE(s.matches()) << s.file;
        EXPECT_EQ(s.actual_sha256.size(), 64u);
    }
    EXPECT_EQ(r.sources[1].file, "rock_Rough.png");
    auto size = read_file(pack_path_, 1 << 20);
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(r.file_size, size->size());
    EXPECT_DOUBLE_EQ(r.bits_per_texel, static_cast<double>(size->size()) * 8 / 64);
    EXPECT_FALSE(r.decoder.empty());
    EXPECT_TRUE(r.diff_images.empty());
}

TEST_F(Validation, FlippedByteIsStructurallyInvalidWithEveryProblemListed) {
    auto bytes = read_file(pack_path_, 1 << 20);
    ASSERT_TRUE(bytes.ok());
    ContainerInfo container;
    ASSERT_TRUE(read_pack(bytes->data(), bytes->size(), &container).ok());
    // One byte in each of LATN and WGHT: both must be reported, not only the first.
    for (const SectionEntry& s : container.sections)
        if (s.fourcc == "LATN" || s.fourcc == "WGHT") (*bytes)[s.offset + 1] ^= 0x10;
    const std::string corrupt = dir_.file("corrupt.nmc");
    ASSERT_TRUE(write_file_atomically(corrupt, bytes->data(), bytes->size()).ok());

    auto report = validate_pack_file(corrupt, {});
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    EXPECT_EQ(report->verdict, Verdict::structurally_invalid);
    std::vector<std::string> problems;
    for (const Status& s : report->structural_problems) {
        EXPECT_EQ(s.code(), StatusCode::corrupt) << s.to_string();
        problems.push_back(s.message());
    }
    EXPECT_TRUE(any_contains(problems, "'LATN'")) << joined(problems);
    EXPECT_TRUE(any_contains(problems, "'WGHT'")) << joined(problems);
    EXPECT_TRUE(any_contains(report->failures, "structurally invalid")) << joined(report->failures);
    EXPECT_FALSE(report->quality_measured);

    const nlohmann::json j = nlohmann::json::parse(validation_report_json(report.value()));
    EXPECT_EQ(j["verdict"], "structurally_invalid");
    ASSERT_EQ(j["structural_problems"].size(), report->structural_problems.size());
    EXPECT_EQ(j["structural_problems"][0]["code"], "corrupt");
    EXPECT_FALSE(j.contains("quality"));
}

// Bug fixed with these tests: a file that is not a pack at all came back as a structurally invalid pack (exit 5
// from `nmc validate`), where every other command and docs/cli.md say not_recognized (exit 4).
TEST_F(Validation, NotAPackOrMissingFileIsAnErrorNotAVerdict) {
    const std::string text = dir_.file("notes.txt");
    std::ofstream(text) << "just some text, not a pack\n";
    auto not_pack = validate_pack_file(text, {});
    ASSERT_FALSE(not_pack.ok());
    EXPECT_EQ(not_pack.status().code(), StatusCode::not_recognized) << not_pack.status().to_string();

    auto missing = validate_pack_file(dir_.file("missing.nmc"), {});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), StatusCode::io_error);
    EXPECT_TRUE(contains(missing.status().message(), "missing.nmc")) << missing.status().to_string();
}

TEST_F(Validation, ChangedSourceBytesAreASourceMismatch) {
    Image rough(8, 8, 1);
    for (float& v : rough.pixels) v = 64.0f / 255.0f;
    rough.at(3, 5, 0) = 65.0f / 255.0f;  // one code of one texel
    replace_source("rock_Rough.png", rough);

    const ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::source_mismatch);
    ASSERT_EQ(r.sources.size(), 2u);
    EXPECT_TRUE(r.sources[0].matches());
    EXPECT_FALSE(r.sources[1].matches());
    EXPECT_EQ(r.sources[1].expected_sha256, pack_.textures[1].source_sha256);
    EXPECT_NE(r.sources[1].actual_sha256, r.sources[1].expected_sha256);
    EXPECT_TRUE(any_contains(r.failures, "rock_Rough.png: source file differs")) << joined(r.failures);
    // Quality is still measured, but a drift against other sources is not a second failure.
    EXPECT_TRUE(r.quality_measured);
    EXPECT_EQ(r.failures.size(), 1u) << joined(r.failures);
}

TEST_F(Validation, SourceOfAnotherSizeIsASourceMismatch) {
    replace_source("rock_Rough.png", Image(4, 4, 1));
    const ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::source_mismatch);
    EXPECT_TRUE(any_contains(r.failures, "rock_Rough.png: source is 4x4, the pack was made from 8x8"))
        << joined(r.failures);
    EXPECT_FALSE(r.quality_measured);
}

TEST_F(Validation, SourceWithOtherChannelsIsASourceMismatch) {
    replace_source("rock_Rough.png", Image(8, 8, 3));
    const ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::source_mismatch);
    EXPECT_TRUE(any_contains(r.failures, "source has 3 channels, the pack expects 1")) << joined(r.failures);
}

TEST_F(Validation, MissingSourceFileIsAnIoError) {
    ASSERT_EQ(std::remove((source_dir_ + "/rock_Rough.png").c_str()), 0);
    auto report = validate_pack_file(pack_path_, {});
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.status().code(), StatusCode::io_error);
    EXPECT_TRUE(contains(report.status().message(), "rock_Rough.png")) << report.status().to_string();
}

TEST_F(Validation, MinPsnrAboveTheMeasuredValueFails) {
    const double measured = validate().quality.psnr_db;
    ValidationOptions options;
    options.min_psnr_db = measured + 0.5;
    ValidationReport r = validate(options);
    EXPECT_EQ(r.verdict, Verdict::quality_below_threshold);
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_TRUE(contains(r.failures[0], "is below --min-psnr")) << r.failures[0];

    options.min_psnr_db = measured - 0.5;
    r = validate(options);
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
}

// rock_Color's checkerboard decodes to a constant (collapsed); rock_Rough is a flat source, never flagged.
TEST_F(Validation, CollapsedTextureWarnsAndFailsUnderFailOnCollapse) {
    ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_TRUE(contains(r.warnings[0], "rock_Color.png collapsed: ")) << r.warnings[0];
    EXPECT_TRUE(contains(r.warnings[0], "correlation 0.00 < 0.50")) << r.warnings[0];
    EXPECT_FALSE(r.quality.textures[1].structure.measured);

    ValidationOptions options;
    options.fail_on_collapse = true;
    r = validate(options);
    EXPECT_EQ(r.verdict, Verdict::quality_below_threshold);
    EXPECT_TRUE(r.warnings.empty());
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_TRUE(contains(r.failures[0], "rock_Color.png collapsed: ")) << r.failures[0];

    // With a flat red source (a source mismatch now, but measured) nothing is left to collapse: the gate passes.
    Image color(8, 8, 3);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
            color.at(x, y, 0) = 128.0f / 255.0f;
            color.at(x, y, 1) = 100.0f / 255.0f;
            color.at(x, y, 2) = 1.0f;
        }
    ASSERT_TRUE(write_image(source_dir_ + "/rock_Color.png", color, "png", true).ok());
    ValidationOptions with_source = options;
    with_source.source_dir = source_dir_;
    r = validate(with_source);
    EXPECT_TRUE(r.warnings.empty());
    EXPECT_TRUE(std::none_of(r.failures.begin(), r.failures.end(), [](const std::string& f) {
        return contains(f, "collapsed");
    })) << joined(r.failures);
}

TEST_F(Validation, StoredPsnrFarFromTheDecodedOneIsDrift) {
    const double real = pack_.quality.psnr_db;
    pack_.quality.psnr_db = real + 10;
    write_pack();
    ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::quality_below_threshold);
    EXPECT_NEAR(r.drift_db, -10.0, 1e-9);
    EXPECT_TRUE(any_contains(r.failures, "differs from the stored")) << joined(r.failures);
    EXPECT_TRUE(any_contains(r.failures, "by more than --max-drop 0.05 dB")) << joined(r.failures);

    ValidationOptions tolerant;
    tolerant.max_drop_db = 10.5;
    r = validate(tolerant);
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
}

TEST_F(Validation, PackWithoutStoredQualityHasNoDrift) {
    pack_.quality = {};
    write_pack();
    const ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
    EXPECT_FALSE(r.stored_quality_present);
    EXPECT_EQ(r.drift_db, 0.0);
    const nlohmann::json j = nlohmann::json::parse(validation_report_json(r));
    EXPECT_FALSE(j.contains("stored_psnr_db"));
    EXPECT_FALSE(j["quality"].contains("drift_db"));

    ValidationOptions gate;  // --max-drop asked for: a drift that cannot be measured fails
    gate.max_drop_required = true;
    const ValidationReport g = validate(gate);
    EXPECT_EQ(g.verdict, Verdict::threshold_not_checked);
    EXPECT_TRUE(g.quality_measured);
    EXPECT_EQ(g.unchecked_thresholds, std::vector<std::string>{"--max-drop"});
    EXPECT_TRUE(any_contains(g.failures, "--max-drop 0.05 dB could not be checked: the pack stores no PSNR"))
        << joined(g.failures);
}

TEST_F(Validation, NoSourcesPassesWithANote) {
    pack_.encoder.source_folder = "";
    write_pack();
    ValidationReport r = validate();
    EXPECT_EQ(r.verdict, Verdict::pass);
    EXPECT_FALSE(r.quality_measured);
    EXPECT_EQ(r.source_note, "no --source given and the pack records no source folder");
    EXPECT_TRUE(r.source_dir.empty());

    pack_.encoder.source_folder = dir_.file("gone");
    write_pack();
    r = validate();
    EXPECT_EQ(r.verdict, Verdict::pass);
    EXPECT_FALSE(r.quality_measured);
    EXPECT_TRUE(contains(r.source_note, dir_.file("gone") + " does not exist")) << r.source_note;
    const nlohmann::json j = nlohmann::json::parse(validation_report_json(r));
    EXPECT_EQ(j["source_note"], r.source_note);

    ValidationOptions options;  // --source overrides the recorded folder
    options.source_dir = source_dir_;
    r = validate(options);
    EXPECT_TRUE(r.quality_measured);
    EXPECT_EQ(r.source_dir, source_dir_);
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
}

// A threshold asked for that cannot be measured is a verdict of its own, not a pass.
TEST_F(Validation, ThresholdWithoutSourcesIsNotChecked) {
    pack_.encoder.source_folder = dir_.file("gone");
    write_pack();
    ValidationOptions options;
    options.min_psnr_db = 10;
    ValidationReport r = validate(options);
    EXPECT_EQ(r.verdict, Verdict::threshold_not_checked);
    EXPECT_FALSE(r.quality_measured);
    EXPECT_EQ(r.unchecked_thresholds, std::vector<std::string>{"--min-psnr"});
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0], "--min-psnr 10.00 dB could not be checked: quality not measured: " + r.source_note);
    nlohmann::json j = nlohmann::json::parse(validation_report_json(r));
    EXPECT_EQ(j["verdict"], "threshold_not_checked");
    EXPECT_EQ(j["unchecked_thresholds"], nlohmann::json({"--min-psnr"}));

    options = {};
    options.max_drop_required = true;
    r = validate(options);
    EXPECT_EQ(r.verdict, Verdict::threshold_not_checked);
    EXPECT_EQ(r.unchecked_thresholds, std::vector<std::string>{"--max-drop"});

    options = {};
    options.fail_on_collapse = true;
    r = validate(options);
    EXPECT_EQ(r.verdict, Verdict::threshold_not_checked);
    EXPECT_EQ(r.unchecked_thresholds, std::vector<std::string>{"--fail-on-collapse"});
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0], "--fail-on-collapse could not be checked: quality not measured: " + r.source_note);

    r = validate();  // the default drift check is not a gate
    EXPECT_EQ(r.verdict, Verdict::pass);
    EXPECT_TRUE(r.unchecked_thresholds.empty());
    j = nlohmann::json::parse(validation_report_json(r));
    EXPECT_EQ(j["unchecked_thresholds"], nlohmann::json::array());
}

// Spec 5.7: a relative recorded source folder is relative to the pack's folder.
TEST_F(Validation, RelativeRecordedSourceFolderIsFromThePack) {
    pack_.encoder.source_folder = "src";
    write_pack();
    const ValidationReport r = validate();
    EXPECT_TRUE(r.quality_measured) << r.source_note;
    EXPECT_EQ(r.source_dir, source_dir_);
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
}

TEST(SourceFolderPaths, RecordedFoldersResolveFromThePacksFolder) {
    EXPECT_EQ(resolve_recorded_source_folder("out/rock.nmc", "../materials/rock"), "out/../materials/rock");
    EXPECT_EQ(resolve_recorded_source_folder("out/rock.nmc", "."), "out");
    EXPECT_EQ(resolve_recorded_source_folder("rock.nmc", "materials/rock"), "materials/rock");
    EXPECT_EQ(resolve_recorded_source_folder("/packs/rock.nmc", "/materials/rock"), "/materials/rock");
    EXPECT_EQ(resolve_recorded_source_folder("out/rock.nmc", ""), "");
}

TEST(SourceFolderPaths, RecordedFolderIsRelativeToThePacksFolder) {
    namespace fs = std::filesystem;
    testing::TempDir dir;
    ASSERT_FALSE(dir.path().empty());
    fs::create_directories(dir.file("materials/rock"));
    fs::create_directories(dir.file("deep/out"));
    EXPECT_EQ(source_folder_to_record(dir.file("materials/rock"), dir.file("deep/out/rock.nmc")),
              "../../materials/rock");
    EXPECT_EQ(source_folder_to_record(dir.file("materials/rock"), dir.file("materials/rock/rock.nmc")), ".");
    EXPECT_EQ(source_folder_to_record("", dir.file("deep/out/rock.nmc")), "");

    // Through a symbolic link: the recorded path is what the file system finds from the pack's folder.
    fs::create_directory_symlink(dir.file("deep/out"), dir.file("link"));
    const std::string pack = dir.file("link/rock.nmc");
    const std::string recorded = source_folder_to_record(dir.file("materials/rock"), pack);
    EXPECT_EQ(recorded, "../../materials/rock");
    EXPECT_TRUE(fs::equivalent(resolve_recorded_source_folder(pack, recorded), dir.file("materials/rock")));
}

TEST_F(Validation, HeatMapsShowEightBitErrors) {
    ValidationOptions options;
    options.diff_dir = dir_.file("diff");
    ValidationReport r = validate(options);
    EXPECT_EQ(r.verdict, Verdict::pass) << joined(r.failures);
    ASSERT_EQ(r.diff_images.size(), 2u);
    EXPECT_EQ(r.diff_images[0], dir_.file("diff/rock_Color_diff.png"));
    EXPECT_EQ(r.diff_images[1], dir_.file("diff/rock_Rough_diff.png"));

    // rock_Color errs by 64 codes everywhere (past the ramp's full scale: white); rock_Rough by none (black).
    auto color = read_image(r.diff_images[0]);
    auto rough = read_image(r.diff_images[1]);
    ASSERT_TRUE(color.ok() && rough.ok());
    EXPECT_EQ(color->width, 8);
    EXPECT_EQ(color->channels, 3);
    EXPECT_EQ(*std::min_element(color->pixels.begin(), color->pixels.end()), 1.0f);
    EXPECT_EQ(*std::max_element(rough->pixels.begin(), rough->pixels.end()), 0.0f);

    // Existing heat maps are kept unless overwriting is allowed.
    auto again = validate_pack_file(pack_path_, options);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.status().code(), StatusCode::io_error);
    options.overwrite = true;
    EXPECT_TRUE(validate_pack_file(pack_path_, options).ok());
}

// Bug fixed with this test: heat maps compared raw float values instead of values normalised by the channel's
// range (as the PSNR figures do), so a float map with a range beyond [0, 1] clamped both sides to 1 and showed
// no error at all.
TEST(ValidationHeatMap, FloatChannelsAreNormalisedByTheirRange) {
    if (!image_format_supported("exr")) GTEST_SKIP() << "this build's image backend has no EXR";
    testing::TempDir dir;
    Pack pack = constant_pack(4, 4, 1, {{"height", 0, 4}}, {0.5f});  // decodes to 2.0
    pack.textures = {
        texture_layout("h_Height.exr", SampleType::float32, ColorSpace::linear, {from_pack(0, Semantic::height)})};
    Image height(4, 4, 1, SampleType::float32);
    for (float& v : height.pixels) v = 3.0f;  // 0.75 normalised: 191 vs 128, 63 codes
    ASSERT_TRUE(testing::write_sources(pack, dir.path(), {height}).ok());
    ASSERT_TRUE(write_pack_file(dir.file("h.nmc"), pack).ok());
    ValidationOptions options;
    options.diff_dir = dir.file("diff");
    auto r = validate_pack_file(dir.file("h.nmc"), options);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->quality.textures[0].max_abs_error8, 63);
    ASSERT_EQ(r->diff_images.size(), 1u);
    auto heat = read_image(r->diff_images[0]);
    ASSERT_TRUE(heat.ok());
    EXPECT_EQ(*std::min_element(heat->pixels.begin(), heat->pixels.end()), 1.0f);  // white: >= 32 codes
}

TEST_F(Validation, JsonReportCarriesTheNumbers) {
    ValidationOptions options;
    options.diff_dir = dir_.file("diff");
    const ValidationReport r = validate(options);
    const nlohmann::json j = nlohmann::json::parse(validation_report_json(r));
    EXPECT_EQ(j["pack"], pack_path_);
    EXPECT_EQ(j["verdict"], "pass");
    EXPECT_TRUE(j["failures"].empty());
    EXPECT_TRUE(j["structural_problems"].empty());
    EXPECT_EQ(j["file_size"], r.file_size);
    EXPECT_EQ(j["bits_per_texel"], r.bits_per_texel);
    EXPECT_EQ(j["decoder"], r.decoder);
    EXPECT_EQ(j["source_dir"], source_dir_);
    ASSERT_EQ(j["sources"].size(), 2u);
    EXPECT_EQ(j["sources"][1]["file"], "rock_Rough.png");
    EXPECT_EQ(j["sources"][1]["matches"], true);
    EXPECT_EQ(j["sources"][1]["actual_sha256"], r.sources[1].actual_sha256);
    EXPECT_EQ(j["stored_psnr_db"], r.stored_psnr_db);

    const nlohmann::json& q = j["quality"];
    EXPECT_EQ(q["psnr_db"], r.quality.psnr_db);
    EXPECT_EQ(q["drift_db"], r.drift_db);
    EXPECT_EQ(q["psnr8_mip0_db"], r.quality.psnr8_mip0_db);
    EXPECT_EQ(q["max_abs_error"], r.quality.max_abs_error);
    EXPECT_EQ(q["mips"].get<std::vector<double>>(), r.quality.mips);
    ASSERT_EQ(q["channels"].size(), 4u);
    EXPECT_EQ(q["channels"][3]["name"], "roughness");
    EXPECT_EQ(q["channels"][0]["psnr_db"], r.quality.channels[0].psnr_db);
    EXPECT_EQ(q["channels"][0]["mips"].get<std::vector<double>>(), r.quality.channels[0].mips);
    EXPECT_EQ(q["channels"][0]["max_abs_error"], r.quality.channels[0].max_abs_error);
    ASSERT_EQ(q["textures"].size(), 2u);
    const nlohmann::json& color = q["textures"][0];
    EXPECT_EQ(color["name"], "rock_Color");
    EXPECT_EQ(color["file"], "rock_Color.png");
    EXPECT_EQ(color["psnr_db"], r.quality.textures[0].psnr_db);
    EXPECT_EQ(color["channels"].get<std::vector<double>>(), r.quality.textures[0].channels);
    EXPECT_EQ(color["channels8"].get<std::vector<double>>(), r.quality.textures[0].channels8);
    EXPECT_EQ(color["psnr8_mip0_db"], r.quality.textures[0].psnr8_mip0_db);
    EXPECT_EQ(color["max_abs_error8"], 64);
    EXPECT_FALSE(color.contains("mean_angle_deg"));  // not a normal map
    const nlohmann::json& structure = color["structure"];
    EXPECT_EQ(structure["measured"], true);
    EXPECT_EQ(structure["collapsed"], true);
    EXPECT_EQ(structure["correlation"], 0.0);
    EXPECT_EQ(structure["constant_psnr_db"], r.quality.textures[0].structure.constant_psnr_db);
    EXPECT_EQ(structure["collapse_reasons"].get<std::vector<std::string>>(),
              r.quality.textures[0].structure.collapse_reasons);
    ASSERT_EQ(structure["channels"].size(), 3u);
    EXPECT_EQ(structure["channels"][1]["flat"], true);
    EXPECT_TRUE(structure["channels"][1]["correlation"].is_null());
    const nlohmann::json& rough = q["textures"][1]["structure"];
    EXPECT_EQ(rough["measured"], false);
    EXPECT_TRUE(rough["correlation"].is_null());
    EXPECT_EQ(j["warnings"].get<std::vector<std::string>>(), r.warnings);
    EXPECT_EQ(j["diff_images"].get<std::vector<std::string>>(), r.diff_images);
}

}  // namespace
}  // namespace nmc
