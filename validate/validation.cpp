// The checks of `nmc validate`, in order: structure, sources, quality, drift, heat maps.
#include "validate/validation.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "core/number_formats.h"
#include "material/image_io.h"

namespace nmc {
namespace {

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string format_db(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

// Error of 0 codes is black; the ramp runs through blue, red and yellow to white at kFullScaleCodes and above.
constexpr float kFullScaleCodes = 32.0f;
void heat_colour(float error_codes, float* rgb) {
    static const float kStops[5][3] = {{0, 0, 0}, {0.1f, 0.1f, 0.8f}, {0.9f, 0.1f, 0.1f}, {1, 0.9f, 0.1f}, {1, 1, 1}};
    const float t = std::min(error_codes / kFullScaleCodes, 1.0f) * 4.0f;
    const int i = std::min(static_cast<int>(t), 3);
    const float f = t - static_cast<float>(i);
    for (int k = 0; k < 3; ++k) rgb[k] = kStops[i][k] + (kStops[i + 1][k] - kStops[i][k]) * f;
}

// The heat map of a texture: FOLDER/<texture name>_diff.png.
std::string heat_map_path(const std::string& diff_dir, const TextureLayout& texture) {
    return diff_dir + "/" + texture.name + "_diff.png";
}

// One heat map per texture: per texel, the largest 8-bit code difference over the texture's channels at mip 0,
// each channel normalised by channel_range() first, as measure_quality() does for the 8-bit figures.
Status write_heat_maps(const PackDecoder& decoder, const Pack& pack, const ReferenceMaterial& ref,
                       const ValidationOptions& options, std::vector<std::string>& written) {
    if (::mkdir(options.diff_dir.c_str(), 0755) != 0 && !is_directory(options.diff_dir))
        return Status(StatusCode::io_error, options.diff_dir + ": cannot create folder");
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        auto decoded = decoder.decode_texture(static_cast<int>(t), 0);
        if (!decoded.ok()) return decoded.status();
        const Image& dec = decoded.value();
        const Image& src = ref.source_images[t];
        const auto n = static_cast<size_t>(dec.channels);
        std::vector<float> lo(n), hi(n);
        for (size_t c = 0; c < n; ++c) channel_range(pack, pack.textures[t], pack.textures[t].channels[c], lo[c], hi[c]);
        auto normalised = [&](float v, size_t c) {
            return static_cast<float>((static_cast<double>(v) - lo[c]) / (static_cast<double>(hi[c]) - lo[c]));
        };
        Image heat(dec.width, dec.height, 3, SampleType::uint8);
        for (size_t i = 0; i < dec.texel_count(); ++i) {
            uint32_t worst = 0;
            for (size_t c = 0; c < n; ++c) {
                const uint32_t a = quantize_u8(normalised(dec.pixels[i * n + c], c));
                const uint32_t b = quantize_u8(normalised(src.pixels[i * n + c], c));
                worst = std::max(worst, a > b ? a - b : b - a);
            }
            heat_colour(static_cast<float>(worst), &heat.pixels[i * 3]);
        }
        const std::string path = heat_map_path(options.diff_dir, pack.textures[t]);
        NMC_RETURN_IF_ERROR(write_image(path, heat, "png", options.overwrite));
        written.push_back(path);
    }
    return Status::success();
}

// A gate asked for (--min-psnr, --max-drop, --fail-on-collapse) that cannot be measured is a failure of its own: a
// build pipeline that asks for a threshold must not read "pass" when nothing was compared. `asked` is the gate as
// given ("--min-psnr 40.00 dB").
void fail_unchecked(const std::string& flag, const std::string& asked, const std::string& why,
                    ValidationReport& report) {
    report.unchecked_thresholds.push_back(flag);
    report.failures.push_back(asked + " could not be checked: " + why);
}

std::string db_gate(const std::string& flag, double value) {
    return flag + " " + format_db(value) + " dB";
}

}  // namespace

std::string resolve_recorded_source_folder(const std::string& pack_path, const std::string& recorded) {
    namespace fs = std::filesystem;
    const fs::path folder(recorded);
    if (recorded.empty() || folder.is_absolute()) return recorded;
    const fs::path pack_folder = fs::path(pack_path).parent_path();
    if (pack_folder.empty()) return recorded;
    // Not lexically normalised: "link/../src" must go through the link as the file system does.
    return folder == "." ? pack_folder.string() : (pack_folder / folder).string();
}

std::string source_folder_to_record(const std::string& source_folder, const std::string& pack_path) {
    namespace fs = std::filesystem;
    if (source_folder.empty()) return "";
    fs::path pack_folder = fs::path(pack_path).parent_path();
    if (pack_folder.empty()) pack_folder = ".";
    std::error_code ec;
    // Both sides canonical (symbolic links resolved), so that "../x" from the pack's folder is the folder itself.
    const fs::path relative = fs::relative(source_folder, pack_folder, ec);
    if (!ec && !relative.empty()) return relative.string();
    const fs::path absolute = fs::weakly_canonical(fs::absolute(source_folder, ec), ec);
    return ec ? source_folder : absolute.string();
}

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::pass: return "pass";
        case Verdict::structurally_invalid: return "structurally_invalid";
        case Verdict::source_mismatch: return "source_mismatch";
        case Verdict::quality_below_threshold: return "quality_below_threshold";
        case Verdict::threshold_not_checked: return "threshold_not_checked";
    }
    return "unknown";
}

Result<ValidationReport> validate_pack_file(const std::string& path, const ValidationOptions& options) {
    ValidationReport report;
    report.pack_path = path;

    // Structure: every problem the reader can find (spec section 10).
    std::vector<Status> problems;
    ContainerInfo container;
    ReadOptions read_options;
    read_options.problems = &problems;
    auto pack = read_pack_file(path, &container, read_options);
    if (!pack.ok()) {
        // Not a pack (or a major version this build cannot read) is not a verdict about a pack: the caller's
        // error, like an unreadable file (`nmc validate` exits 4, as every command does).
        const StatusCode code = pack.status().code();
        if (code == StatusCode::io_error || code == StatusCode::not_recognized ||
            code == StatusCode::version_unsupported)
            return pack.status();
        report.structural_problems = problems.empty() ? std::vector<Status>{pack.status()} : problems;
        report.verdict = Verdict::structurally_invalid;
        report.failures.push_back("the pack is structurally invalid");
        return report;
    }
    report.file_size = container.file_size;
    report.bits_per_texel = static_cast<double>(container.file_size) * 8.0 /
                            (static_cast<double>(pack->material.width) * static_cast<double>(pack->material.height));
    report.stored_quality_present = pack->quality.present;
    report.stored_psnr_db = pack->quality.psnr_db;
    // A heat map that would replace a file without --force stops the run before anything is decoded.
    if (!options.diff_dir.empty() && !options.overwrite) {
        for (const TextureLayout& texture : pack->textures) {
            const std::string heat_map = heat_map_path(options.diff_dir, texture);
            std::error_code ec;
            if (std::filesystem::exists(heat_map, ec))
                return Status(StatusCode::io_error, heat_map + ": exists (use --force to overwrite)");
        }
    }

    auto decoder = create_pack_decoder(pack.value(), options.decoder);
    if (!decoder.ok()) return decoder.status();
    report.decoder = (*decoder)->description();

    // Sources: the user's folder, or the one recorded at compression time (relative to the pack's folder, spec 5.7)
    // if it still exists.
    std::string source_dir = options.source_dir;
    if (source_dir.empty()) {
        const std::string& recorded = pack->encoder.source_folder;
        const std::string resolved = resolve_recorded_source_folder(path, recorded);
        if (recorded.empty() || !is_directory(resolved)) {
            report.source_note =
                recorded.empty()
                    ? "no --source given and the pack records no source folder"
                    : "no --source given and the recorded source folder " + recorded +
                          (resolved != recorded ? " (" + resolved + ", relative to the pack's folder)" : "") +
                          " does not exist";
            const std::string why = "quality not measured: " + report.source_note;
            if (options.min_psnr_db >= 0)
                fail_unchecked("--min-psnr", db_gate("--min-psnr", options.min_psnr_db), why, report);
            if (options.max_drop_required)
                fail_unchecked("--max-drop", db_gate("--max-drop", options.max_drop_db), why, report);
            if (options.fail_on_collapse) fail_unchecked("--fail-on-collapse", "--fail-on-collapse", why, report);
            if (!report.unchecked_thresholds.empty()) report.verdict = Verdict::threshold_not_checked;
            return report;
        }
        source_dir = resolved;
    }
    report.source_dir = source_dir;
    auto reference = load_reference(source_dir, pack.value());
    if (!reference.ok()) {
        // A source of another size or channel count, or one that no longer decodes (truncated, damaged: the
        // compressor refuses such files, so no pack was made from it), is not the file the pack was made from.
        const StatusCode code = reference.status().code();
        if (code == StatusCode::invalid_argument || code == StatusCode::corrupt || code == StatusCode::not_recognized ||
            code == StatusCode::limit_exceeded) {
            report.verdict = Verdict::source_mismatch;
            report.failures.push_back(reference.status().message());
            return report;
        }
        return reference.status();
    }
    for (size_t t = 0; t < pack->textures.size(); ++t) {
        SourceCheck check{pack->textures[t].name, pack->textures[t].file_name, pack->textures[t].source_sha256,
                          reference->source_sha256[t]};
        if (!check.matches()) {
            report.verdict = Verdict::source_mismatch;
            report.failures.push_back(check.file + ": source file differs from the one the pack was made from");
        }
        report.sources.push_back(std::move(check));
    }

    auto quality = measure_quality(**decoder, pack.value(), reference.value());
    if (!quality.ok()) return quality.status();
    report.quality = std::move(quality.value());
    report.quality_measured = true;
    if (report.stored_quality_present) report.drift_db = report.quality.psnr_db - report.stored_psnr_db;

    bool quality_failed = false;
    if (options.min_psnr_db >= 0 && report.quality.psnr_db < options.min_psnr_db) {
        quality_failed = true;
        report.failures.push_back("PSNR " + format_db(report.quality.psnr_db) + " dB is below --min-psnr " +
                                  format_db(options.min_psnr_db) + " dB");
    }
    if (report.stored_quality_present && report.verdict != Verdict::source_mismatch &&
        std::fabs(report.drift_db) > options.max_drop_db) {
        quality_failed = true;
        report.failures.push_back("decoded PSNR " + format_db(report.quality.psnr_db) + " dB differs from the stored " +
                                  format_db(report.stored_psnr_db) + " dB by more than --max-drop " +
                                  format_db(options.max_drop_db) + " dB");
    }
    for (const TextureQualityDetail& t : report.quality.textures) {
        if (!t.structure.collapsed) continue;
        if (options.fail_on_collapse) {
            quality_failed = true;
            report.failures.push_back(collapse_message(t.file_name, t.structure));
        } else {
            report.warnings.push_back(collapse_message(t.file_name, t.structure));
        }
    }
    if (options.max_drop_required && !report.stored_quality_present && report.verdict != Verdict::source_mismatch)
        fail_unchecked("--max-drop", db_gate("--max-drop", options.max_drop_db),
                       "the pack stores no PSNR measured at compression (spec 5.8) to measure the drift from", report);
    if (quality_failed && report.verdict == Verdict::pass) report.verdict = Verdict::quality_below_threshold;
    if (!report.unchecked_thresholds.empty() && report.verdict == Verdict::pass)
        report.verdict = Verdict::threshold_not_checked;

    if (!options.diff_dir.empty())
        NMC_RETURN_IF_ERROR(write_heat_maps(**decoder, pack.value(), reference.value(), options, report.diff_images));
    return report;
}

namespace {

nlohmann::ordered_json structure_json(const TextureStructure& t) {
    using Json = nlohmann::ordered_json;
    Json j;
    j["measured"] = t.measured;
    j["collapsed"] = t.collapsed;
    j["correlation"] = t.measured ? Json(t.correlation) : Json(nullptr);
    j["contrast"] = t.measured ? Json(t.contrast) : Json(nullptr);
    j["psnr_db"] = t.measured ? Json(t.psnr_db) : Json(nullptr);
    j["constant_psnr_db"] = t.measured ? Json(t.constant_psnr_db) : Json(nullptr);
    j["psnr_margin_db"] = t.measured ? Json(t.psnr_margin_db) : Json(nullptr);
    j["collapse_reasons"] = t.collapse_reasons;
    Json channels = Json::array();
    for (const ChannelStructure& c : t.channels)
        channels.push_back({{"flat", c.flat},
                            {"correlation", c.flat ? Json(nullptr) : Json(c.correlation)},
                            {"contrast", c.flat ? Json(nullptr) : Json(c.contrast)},
                            {"source_std", c.source_std},
                            {"decoded_std", c.decoded_std}});
    j["channels"] = channels;
    return j;
}

}  // namespace

std::string texture_structure_json(const TextureStructure& structure) {
    return structure_json(structure).dump();
}

std::string validation_report_json(const ValidationReport& r) {
    using Json = nlohmann::ordered_json;
    Json j;
    j["pack"] = r.pack_path;
    j["verdict"] = to_string(r.verdict);
    j["failures"] = r.failures;
    j["warnings"] = r.warnings;
    j["unchecked_thresholds"] = r.unchecked_thresholds;
    Json problems = Json::array();
    for (const Status& s : r.structural_problems)
        problems.push_back({{"code", to_string(s.code())}, {"message", s.message()}});
    j["structural_problems"] = problems;
    j["file_size"] = r.file_size;
    j["bits_per_texel"] = r.bits_per_texel;
    j["decoder"] = r.decoder;
    j["source_dir"] = r.source_dir;
    if (!r.source_note.empty()) j["source_note"] = r.source_note;
    Json sources = Json::array();
    for (const SourceCheck& s : r.sources)
        sources.push_back({{"texture", s.texture}, {"file", s.file}, {"expected_sha256", s.expected_sha256},
                           {"actual_sha256", s.actual_sha256}, {"matches", s.matches()}});
    j["sources"] = sources;
    if (r.stored_quality_present) j["stored_psnr_db"] = r.stored_psnr_db;
    if (r.quality_measured) {
        const QualityMeasurement& q = r.quality;
        Json quality;
        quality["psnr_db"] = q.psnr_db;
        if (r.stored_quality_present) quality["drift_db"] = r.drift_db;
        quality["psnr8_mip0_db"] = q.psnr8_mip0_db;
        quality["max_abs_error"] = q.max_abs_error;
        quality["mips"] = q.mips;
        Json channels = Json::array();
        for (const ChannelQuality& c : q.channels)
            channels.push_back({{"name", c.name}, {"psnr_db", c.psnr_db}, {"mips", c.mips},
                                {"max_abs_error", c.max_abs_error}});
        quality["channels"] = channels;
        Json textures = Json::array();
        for (const TextureQualityDetail& t : q.textures) {
            Json tj{{"name", t.name}, {"file", t.file_name}, {"psnr_db", t.psnr_db}, {"mips", t.mips},
                    {"channels", t.channels}, {"psnr8_mip0_db", t.psnr8_mip0_db}, {"channels8", t.channels8},
                    {"max_abs_error8", t.max_abs_error8}};
            if (t.mean_angle_deg >= 0) tj["mean_angle_deg"] = t.mean_angle_deg;
            if (t.hdr_psnr_db >= 0) tj["hdr_psnr_db"] = t.hdr_psnr_db;
            tj["structure"] = structure_json(t.structure);
            textures.push_back(std::move(tj));
        }
        quality["textures"] = textures;
        j["quality"] = quality;
    }
    j["diff_images"] = r.diff_images;
    return j.dump(2);
}

}  // namespace nmc
