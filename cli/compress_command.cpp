// nmc compress: loads a material, trains a pack with the compressor library and writes it atomically; progress
// on stderr (TTY only), a result table (or --json) on stdout. Ctrl-C cancels through the progress callback.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch/compress_result.h"
#include "cli/commands.h"
#include "cli/current_step.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "compressor/compressor.h"
#include "compressor/target_search.h"
#include "core/device_name.h"
#include "core/file_io.h"
#include "material/material.h"
#include "validate/validation.h"

#ifndef NMC_VERSION_STRING
#define NMC_VERSION_STRING "unknown"
#endif

namespace nmc::cli {
namespace {

using Json = nlohmann::ordered_json;

// "64,48,32" -> {64, 48, 32}: comma-separated decimal integers, nothing else (ranges: check_network_choice).
Result<std::vector<int>> parse_hidden_layers(const std::string& text) {
    std::vector<int> widths;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, comma - start);
        const bool digits = !item.empty() && item.size() <= 6 &&
                            std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits)
            return Status(StatusCode::invalid_argument,
                          "--hidden-layers must be comma-separated widths such as 64,48,32, got '" + text + "'");
        widths.push_back(std::stoi(item));
        start = comma + 1;
    }
    return widths;
}

struct CompressCliOptions {
    std::string input;
    std::string output;
    double bpp = 5.0;
    double target_psnr = 0;  // > 0: search for the smallest pack reaching it (--bpp is the first guess)
    std::string latent_shape;  // "S,F,b": overrides rate control
    std::string quality = "normal";
    int64_t steps = 0;
    int batch = 0;
    float latent_lr = 0;
    float network_lr = 0;
    double latent_rounding_at = 0.8;
    double weight_rounding_at = 0.96;
    std::string latent_adam = "auto";
    std::string latent_rounding = "straight-through";
    uint64_t seed = 1;
    std::string device = "cpu";
    std::string trainer = "auto";
    std::string arithmetic = "binary16";
    std::string output_layer = "int8";
    std::string hidden_layers = "64,64,64";
    std::string normal_mode = "auto";
    std::string address_mode = "wrap";
    bool gloss_to_roughness = false;
    bool resample = false;
    bool strict = false;
    bool force = false;
    bool json = false;
    std::string result_file;  // --result: the child protocol of nmc batch (batch/compress_result.h)
};

// Bits per texel of the BCn set a game would ship for a texture: BC5 for normal maps, BC4 for a grey map (one
// distinct source), BC7 for colour and packed maps.
double bcn_bits_per_texel(const TextureLayout& t) {
    if (t.holds_normals()) return 8.0;
    int first = -2;
    bool single = true;
    for (const ChannelSource& c : t.channels) {
        if (c.kind != ChannelSource::Kind::pack) continue;
        if (first == -2) first = c.pack_channel;
        single = single && c.pack_channel == first;
    }
    return single ? 4.0 : 8.0;
}

std::string format_seconds(double s) {
    char buf[32];
    const auto total = static_cast<long>(s + 0.5);
    std::snprintf(buf, sizeof buf, "%ld:%02ld", total / 60, total % 60);
    return buf;
}

// --result: `fields` and the protocol's version, atomically.
Status write_result_file(const std::string& path, Json fields) {
    fields["result_version"] = kCompressResultVersion;
    const std::string text = fields.dump(2) + "\n";
    return write_file_atomically(path, text.data(), text.size(), Overwrite::allow);
}

int run_compress(const CompressCliOptions& o, int verbosity) {
    const auto preset = quality_preset_from_string(o.quality);  // CLI11 checked the value
    NetworkChoice network;
    if (o.output_layer == "e4m3" || o.output_layer == "e4m3-scaled") {  // CLI11 checked the value; int8: the default
        network.output.weight_type = WeightType::e4m3;
        network.output.has_scale = o.output_layer == "e4m3-scaled";
    }
    {
        auto widths = parse_hidden_layers(o.hidden_layers);
        if (!widths.ok()) {
            print_error(widths.status());
            return kExitUsage;
        }
        network.hidden_widths = *widths;
        if (Status checked = check_network_choice(network); !checked.ok()) {
            print_error(Status(checked.code(), "--hidden-layers: " + checked.message()));
            return kExitUsage;
        }
    }
    if (o.trainer == "fused" && o.device == "cpu") {
        print_error(Status(StatusCode::invalid_argument,
                           "--trainer fused runs on CUDA devices: add --device cuda[:N], or use --trainer auto or eager"));
        return kExitUsage;
    }
    if (o.target_psnr > 0 && !o.latent_shape.empty()) {
        print_error(Status(StatusCode::invalid_argument,
                           "--target-psnr and --latent-shape both choose the latent shape: give one"));
        return kExitUsage;
    }
    // Wall time per stage, for `--json`'s "seconds" and the last line of the report.
    const auto started = std::chrono::steady_clock::now();
    const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    MaterialLoadOptions load;
    load.normal_mode = normal_mode_choice_from_string(o.normal_mode).value_or(NormalModeChoice::automatic);
    load.gloss_to_roughness = o.gloss_to_roughness;
    load.resample_mismatched = o.resample;
    load.strict = o.strict;
    CurrentStep step(o.input, "reading the material's images");
    auto material = load_material(o.input, load);
    if (!material.ok()) {
        print_error(material.status());
        return exit_code_for(material.status(), true);
    }
    // The output is checked (and its folder created) before training, not after: a pack that cannot be written must
    // not cost minutes of training first. The material is read first so that bad input creates no folder.
    if (Status ready = prepare_output_file(o.output, o.force ? Overwrite::allow : Overwrite::refuse); !ready.ok()) {
        print_error(ready);
        return kExitIo;
    }
    if (!o.result_file.empty())
        if (Status ready = prepare_output_file(o.result_file, Overwrite::allow); !ready.ok()) {
            print_error(ready);
            return kExitIo;
        }
    if (verbosity > 0)
        for (const auto& w : material->warnings) std::fprintf(stderr, "nmc: warning: %s\n", w.c_str());
    if (verbosity > 1) {
        std::fprintf(stderr, "material %s: %dx%d, %d mips, %zu textures, %zu pack channels\n", material->name.c_str(),
                     material->width, material->height, material->mip_count, material->textures.size(),
                     material->channels.size());
        for (const TextureLayout& t : material->textures)
            std::fprintf(stderr, "  %s: %s, %zu ch, %s %s\n", t.file_name.c_str(), t.semantic_label().c_str(),
                         t.channels.size(), to_string(t.sample_type), to_string(t.color_space));
    }
    const std::string source_folder = material->source_folder;
    const std::vector<std::string> warnings = material->warnings;
    std::vector<IgnoredFile> ignored_images;
    for (const IgnoredFile& f : material->ignored_files)
        if (f.image) ignored_images.push_back(f);
    TrainingTarget target = training_target_from_material(std::move(*material));
    // The pack records its sources relative to its own folder (spec 5.7), which is where `nmc validate` looks:
    // not relative to this working directory, so that a pack and its sources moved together still validate.
    target.source_folder = source_folder_to_record(source_folder, o.output);
    target.address_mode = o.address_mode == "clamp" ? AddressMode::clamp : AddressMode::wrap;
    const double load_seconds = seconds_since(started);

    CompressOptions options;
    if (!o.latent_shape.empty()) {
        LatentShape shape;
        int levels = 0;
        char tail = 0;
        const int fields = std::sscanf(o.latent_shape.c_str(), "%d,%d,%d,%d%c", &shape.grid_scale,
                                       &shape.feature_count, &shape.bits, &levels, &tail);
        if (fields != 3 && fields != 4) {
            print_error(Status(StatusCode::invalid_argument,
                               "--latent-shape must be S,F,b or S,F,b,K (grid scale, features, bits, latent levels), "
                               "got '" + o.latent_shape + "'"));
            return kExitUsage;
        }
        // K defaults to rate control's two levels; up to the full pyramid (down to 1 x 1 or one level past the last
        // mip) may be asked for, and the mips above level K - 2 read the last two levels (spec 8.1).
        const int full = latent_level_count(target.width, target.height, target.mip_count, std::max(1, shape.grid_scale));
        shape.level_count = fields == 4 ? levels : kDefaultLatentLevelCount;
        if (fields == 4 && (levels < 2 || levels > full)) {
            print_error(Status(StatusCode::invalid_argument, "--latent-shape: K must be 2.." + std::to_string(full) +
                                                                 " for this material and grid scale, got " +
                                                                 std::to_string(levels)));
            return kExitUsage;
        }
        options.shape = shape;
    }
    options.preset = *preset;
    options.target_bpp = o.bpp;
    options.steps = o.steps;
    options.batch_size = o.batch;
    options.latent_learning_rate = o.latent_lr;
    options.network_learning_rate = o.network_lr;
    options.latent_rounding_fraction = o.latent_rounding_at;
    options.weight_rounding_fraction = o.weight_rounding_at;
    options.latent_adam = *latent_adam_from_string(o.latent_adam);              // CLI11 checked the value
    options.latent_rounding = *latent_rounding_from_string(o.latent_rounding);  // CLI11 checked the value
    options.seed = o.seed;
    options.device = o.device;
    options.trainer = *trainer_path_from_string(o.trainer);  // CLI11 checked the value
    options.arithmetic = o.arithmetic == "binary16" ? Arithmetic::binary16 : Arithmetic::float32;  // CLI11 checked it
    options.network = network;
    options.tool = std::string("nmc ") + NMC_VERSION_STRING;

    // On a terminal one line refreshed a few times a second; with -v elsewhere (a log) one line per tenth of the steps.
    const bool show_progress = verbosity > 0 && isatty(fileno(stderr));
    const bool log_progress = verbosity > 1 && !show_progress;
    int64_t logged_tenths = 0;
    auto last_print = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    InterruptScope interrupt_scope;
    std::string progress_prefix;  // the target search's attempt, when searching
    const auto progress = [&](const TrainingProgress& p) {
        if (InterruptScope::interrupted()) return false;
        const auto now = std::chrono::steady_clock::now();
        if (show_progress && (now - last_print > std::chrono::milliseconds(250) || p.step == p.total_steps)) {
            last_print = now;
            std::fprintf(stderr, "\r%sstep %lld/%lld  PSNR %.2f dB  elapsed %s  ETA %s   ", progress_prefix.c_str(),
                         static_cast<long long>(p.step), static_cast<long long>(p.total_steps), p.psnr_estimate_db,
                         format_seconds(p.elapsed_seconds).c_str(), format_seconds(p.eta_seconds).c_str());
            std::fflush(stderr);
        }
        const int64_t tenths = p.total_steps > 0 ? p.step * 10 / p.total_steps : 0;
        if (log_progress && tenths > logged_tenths) {
            logged_tenths = tenths;
            std::fprintf(stderr, "%sstep %lld/%lld  PSNR %.2f dB  elapsed %s  ETA %s\n", progress_prefix.c_str(),
                         static_cast<long long>(p.step), static_cast<long long>(p.total_steps), p.psnr_estimate_db,
                         format_seconds(p.elapsed_seconds).c_str(), format_seconds(p.eta_seconds).c_str());
        }
        return true;
    };
    int last_attempt = 0;
    const auto search_progress = [&](const TargetSearchProgress& p) {
        if (show_progress && p.attempt != last_attempt && last_attempt > 0) std::fprintf(stderr, "\n");
        if (p.attempt != last_attempt) logged_tenths = 0;
        last_attempt = p.attempt;
        char prefix[96];
        std::snprintf(prefix, sizeof prefix, "attempt %d/%d (~%.2f bpp)  ", p.attempt, p.max_attempts,
                      p.estimated_bits_per_texel);
        progress_prefix = prefix;
        return progress(p.training);
    };
#ifdef __GLIBC__
    // LibTorch allocates and frees megabyte-sized tensors many times a step; by default glibc maps and unmaps
    // each one, and the page faults made CPU training about 2x slower (measured on the 512^2 demo).
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    const CurrentStep training_step(o.input, "training");
    std::optional<TargetSearchResult> search;
    Result<CompressResult> result = Status(StatusCode::internal, "not run");
    if (o.target_psnr > 0) {
        TargetSearchOptions search_options;
        search_options.target_psnr_db = o.target_psnr;
        auto searched = compress_to_target_psnr(target, options, search_options, search_progress);
        if (searched.ok()) {
            search = std::move(*searched);
            result = std::move(search->result);
        } else {
            result = searched.status();
        }
    } else {
        result = compress(target, options, progress);
    }
    if (show_progress) std::fprintf(stderr, "\n");
    if (InterruptScope::interrupted() && result.ok()) result = Status(StatusCode::cancelled, "interrupted");
    if (!result.ok()) {
        if (result.status().code() == StatusCode::cancelled) {
            std::fprintf(stderr, "nmc: interrupted; nothing was written\n");
            return kExitCancelled;
        }
        // The trainer's messages name the step, not the material.
        const Status failed = result.status().code() == StatusCode::out_of_memory
                                  ? result.status().with_context(o.input)
                                  : result.status();
        print_error(failed);
        return exit_code_for(failed, true);
    }
    if (search && !search->reached) {
        const TargetAttempt& best = *std::max_element(
            search->attempts.begin(), search->attempts.end(),
            [](const TargetAttempt& a, const TargetAttempt& b) { return a.psnr_db < b.psnr_db; });
        char message[256];
        std::snprintf(message, sizeof message,
                      "%s: target %.2f dB not reached; the best of %zu attempts gave %.2f dB at %.2f bpp; nothing "
                      "was written (try a lower target or a longer preset)",
                      o.input.c_str(), o.target_psnr, search->attempts.size(), best.psnr_db, best.bits_per_texel);
        print_error(Status(StatusCode::invalid_argument, message));
        return kExitQuality;
    }
    const auto writing = std::chrono::steady_clock::now();
    const CurrentStep writing_step(o.output, "writing the pack");
    const Status written = write_file_atomically(o.output, result->file.data(), result->file.size(),
                                                 o.force ? Overwrite::allow : Overwrite::refuse);
    if (!written.ok()) {
        print_error(written);
        return exit_code_for(written);
    }
    const double write_seconds = seconds_since(writing);
    const double total_seconds = seconds_since(started);

    // Sizes to compare with: the source files and a BCn set of the same maps (x 4/3 with mips).
    const Pack& pack = result->pack;
    const double texels = static_cast<double>(target.width) * target.height;
    const double mip_factor = target.mip_count > 1 ? 4.0 / 3.0 : 1.0;
    std::error_code ec;
    uint64_t source_bytes = 0;
    double bcn_bytes = 0;
    for (const TextureLayout& t : target.textures) {
        const auto size = std::filesystem::file_size(std::filesystem::path(source_folder) / t.file_name, ec);
        source_bytes += ec ? 0 : size;
        bcn_bytes += bcn_bits_per_texel(t) * texels / 8.0 * mip_factor;
    }
    const auto file_bytes = static_cast<double>(result->file.size());
    // A texture decoded nearly flat can still score a high PSNR (a low-contrast height map): warn, with the remedy.
    std::vector<std::string> collapse_warnings;
    for (size_t t = 0; t < result->structure.size(); ++t)
        if (result->structure[t].collapsed)
            collapse_warnings.push_back(collapse_message(target.textures[t].file_name, result->structure[t]) +
                                        "; raise its loss_weight in a manifest (docs/manifest.md) or the --bpp");
    if (verbosity > 0)
        for (const std::string& w : collapse_warnings) std::fprintf(stderr, "nmc: warning: %s\n", w.c_str());
    const double steps_per_second = static_cast<double>(pack.encoder.steps) / std::max(result->training_seconds, 1e-9);

    if (o.json || !o.result_file.empty()) {
        Json j;
        j["output"] = o.output;
        j["material"] = pack.material.name;
        j["file_bytes"] = result->file.size();
        j["bits_per_texel"] = pack.quality.bits_per_texel;
        if (search) {
            j["target_psnr_db"] = o.target_psnr;
            j["search_steps"] = search->total_steps;
            j["full_run_steps"] = search->full_run_steps;
            Json attempts = Json::array();
            for (const TargetAttempt& a : search->attempts)
                attempts.push_back({{"grid_scale", a.shape.grid_scale}, {"features", a.shape.feature_count},
                                    {"bits", a.shape.bits}, {"file_bytes", a.file_bytes},
                                    {"bits_per_texel", a.bits_per_texel}, {"psnr_db", a.psnr_db},
                                    {"steps", a.steps}, {"warm_started", a.warm_started}, {"reached", a.reached}});
            j["attempts"] = attempts;
        } else {
            j["target_bpp"] = o.bpp;
        }
        j["source_bytes"] = source_bytes;
        j["ratio_vs_source"] = source_bytes > 0 ? static_cast<double>(source_bytes) / file_bytes : 0.0;
        j["bcn_bytes"] = static_cast<uint64_t>(bcn_bytes);
        j["ratio_vs_bcn"] = bcn_bytes / file_bytes;
        j["psnr_db"] = pack.quality.psnr_db;
        j["psnr8_mip0_db"] = pack.quality.psnr8_mip0_db;
        j["latents"] = {{"grid_scale", result->shape.grid_scale}, {"features", result->shape.feature_count},
                        {"bits", result->shape.bits}, {"levels", result->shape.level_count}};
        j["preset"] = pack.encoder.preset;
        j["steps"] = pack.encoder.steps;
        j["device"] = pack.encoder.device;
        j["trainer"] = to_string(result->trainer);
        j["arithmetic"] = o.arithmetic;
        j["training_seconds"] = result->training_seconds;
        j["steps_per_second"] = steps_per_second;
        // other: setting up the trainer (LibTorch and CUDA start-up, the latents' first values) and, with
        // --target-psnr, the searches' earlier attempts.
        const double other = total_seconds - load_seconds - result->training_seconds - result->measure_seconds -
                             write_seconds;
        j["seconds"] = {{"load", load_seconds},       {"training", result->training_seconds},
                        {"measure", result->measure_seconds}, {"write", write_seconds},
                        {"other", std::max(other, 0.0)},      {"total", total_seconds}};
        const QuantisationTrace& trace = result->quantisation;
        const auto db = [](double v) { return std::isnan(v) ? Json(nullptr) : Json(v); };
        j["quantisation_trace"] = {{"evaluation_texels", trace.evaluation_texels},
                                   {"float_model_db", db(trace.float_model_db)},
                                   {"rounded_latents_db", db(trace.rounded_latents_db)},
                                   {"before_weight_rounding_db", db(trace.before_weight_rounding_db)},
                                   {"rounded_weights_db", db(trace.rounded_weights_db)},
                                   {"final_db", db(trace.final_db)}};
        Json textures = Json::array();
        for (size_t t = 0; t < pack.quality.textures.size(); ++t) {
            const TextureQuality& q = pack.quality.textures[t];
            Json e = {{"texture", q.texture},   {"channels", target.textures[t].channels.size()},
                      {"psnr_db", q.psnr_db},   {"psnr8_mip0_db", q.psnr8_mip0_db},
                      {"channel_psnr_db", q.channels}, {"mip_psnr_db", q.mips}};
            if (q.mean_angle_deg >= 0) e["mean_angle_deg"] = q.mean_angle_deg;
            if (result->hdr_psnr_db[t] >= 0) e["hdr_psnr_db"] = result->hdr_psnr_db[t];
            e["structure"] = Json::parse(texture_structure_json(result->structure[t]));
            textures.push_back(e);
        }
        j["textures"] = textures;
        Json ignored = Json::array();
        for (const IgnoredFile& f : ignored_images) ignored.push_back({{"file", f.file}, {"reason", f.reason}});
        j["ignored_images"] = ignored;
        std::vector<std::string> all_warnings = warnings;
        all_warnings.insert(all_warnings.end(), collapse_warnings.begin(), collapse_warnings.end());
        j["warnings"] = all_warnings;
        if (!o.result_file.empty())
            if (Status stored = write_result_file(o.result_file, j); !stored.ok()) {
                print_error(stored);
                return exit_code_for(stored);
            }
        if (o.json) {
            std::printf("%s\n", j.dump(2).c_str());
            return kExitOk;
        }
    }
    // corr, contrast, constant: the structure measure (docs/cli.md, "Structure"); "-" for a flat source.
    std::printf("%-48s %8s %10s %6s %8s %9s\n", "texture", "channels", "PSNR (dB)", "corr", "contrast", "constant");
    for (size_t t = 0; t < pack.quality.textures.size(); ++t) {
        const TextureQuality& q = pack.quality.textures[t];
        const TextureStructure& st = result->structure[t];
        std::printf("%-48s %8zu %10.2f", q.texture.c_str(), target.textures[t].channels.size(), q.psnr_db);
        if (st.measured)
            std::printf(" %6.3f %8.3f %9.2f", st.correlation, st.contrast, st.constant_psnr_db);
        else
            std::printf(" %6s %8s %9s", "-", "-", "-");
        if (q.mean_angle_deg >= 0) std::printf("   mean angle %.2f deg", q.mean_angle_deg);
        if (result->hdr_psnr_db[t] >= 0) std::printf("   HDR PSNR %.2f dB", result->hdr_psnr_db[t]);
        if (st.collapsed) std::printf("   COLLAPSED");
        std::printf("\n");
        if (verbosity > 1) {
            std::printf("    psnr8 mip 0 %.2f dB; per file channel", q.psnr8_mip0_db);
            for (double c : q.channels) std::printf(" %.2f", c);
            std::printf("; per mip");
            for (double m : q.mips) std::printf(" %.2f", m);
            std::printf("\n");
        }
    }
    std::printf("all pack channels, all mips: %.2f dB; 8-bit mip 0 (psnr8_mip0): %.2f dB\n", pack.quality.psnr_db,
                pack.quality.psnr8_mip0_db);
    if (search) {
        std::printf("target %.2f dB: %zu attempts, %lld steps in all (%.2fx one run)\n", o.target_psnr,
                    search->attempts.size(),
                    static_cast<long long>(search->total_steps),
                    static_cast<double>(search->total_steps) / static_cast<double>(search->full_run_steps));
        for (const TargetAttempt& a : search->attempts)
            std::printf("  S=%d F=%-2d b=%d  %6lld steps%s  %.3f bpp  %.2f dB  %s\n", a.shape.grid_scale,
                        a.shape.feature_count, a.shape.bits, static_cast<long long>(a.steps),
                        a.warm_started ? " (warm)" : "       ", a.bits_per_texel, a.psnr_db,
                        a.reached ? "reached" : "below");
        std::printf("pack: %s, %.0f bytes, %.3f bpp\n", o.output.c_str(), file_bytes,
                    pack.quality.bits_per_texel);
    } else {
        std::printf("pack: %s, %.0f bytes, %.3f bpp (target %.3g bpp)\n", o.output.c_str(), file_bytes,
                    pack.quality.bits_per_texel, o.bpp);
    }
    if (source_bytes > 0)
        std::printf("ratio: %.1fx smaller than the source files (%llu bytes)\n",
                    static_cast<double>(source_bytes) / file_bytes, static_cast<unsigned long long>(source_bytes));
    std::printf("ratio: %.1fx smaller than BC7/BC5/BC4 with mips (%.0f bytes)\n", bcn_bytes / file_bytes, bcn_bytes);
    const QuantisationTrace& trace = result->quantisation;
    if (!std::isnan(trace.float_model_db) && !std::isnan(trace.final_db))
        std::printf("quantisation (training model, %lld fixed texels): float %.2f dB, latents rounded %.2f (%+.2f), "
                    "fine-tuned %.2f, weights rounded %.2f (%+.2f), final %.2f\n",
                    static_cast<long long>(trace.evaluation_texels), trace.float_model_db, trace.rounded_latents_db,
                    trace.rounded_latents_db - trace.float_model_db, trace.before_weight_rounding_db,
                    trace.rounded_weights_db, trace.rounded_weights_db - trace.before_weight_rounding_db,
                    trace.final_db);
    std::printf("latents: grid scale %d, %d features x %d bits, %d levels; %lld steps (%s) on %s, %s trainer, in "
                "%.1f s (%.1f steps/s)\n",
                result->shape.grid_scale, result->shape.feature_count, result->shape.bits, result->shape.level_count,
                static_cast<long long>(pack.encoder.steps), pack.encoder.preset.c_str(), pack.encoder.device.c_str(),
                to_string(result->trainer), result->training_seconds, steps_per_second);
    std::printf("time: %.1f s in all: loading %.1f s, training %.1f s, measuring %.1f s, writing %.1f s\n",
                total_seconds, load_seconds, result->training_seconds, result->measure_seconds, write_seconds);
    return kExitOk;
}

}  // namespace

void add_compress_command(CLI::App& app, const GlobalOptions& globals, int& exit_code) {
    CLI::App* command = app.add_subcommand(
        "compress", "Compress a material (a folder of texture files, a manifest or one image) into an .nmc pack");
    auto options = std::make_shared<CompressCliOptions>();
    command->add_option("MATERIAL", options->input, "Material folder, manifest (.json) or one image file")->required();
    command->add_option("-o,--output", options->output, "The .nmc pack to write (its folder is created if missing)")->required();
    command->add_option("--bpp", options->bpp,
                        "Whole-file budget in bpp: the file's bits per mip-0 texel (with --target-psnr: the first rate "
                        "tried)")
        ->check(check_bits_per_texel)
        ->capture_default_str();
    command->add_option("--target-psnr", options->target_psnr,
                        "Write the smallest pack whose PSNR (all channels, all mips) reaches this many dB")
        ->check(CLI::Range(1.0, 99.0));
    command->add_option("--latent-shape", options->latent_shape,
                        "Latent grid scale, features, bits and optionally levels as S,F,b[,K] (e.g. 4,12,4), instead "
                        "of rate control's choice (K: 2 unless given, up to the full pyramid)");
    command->add_option("--quality", options->quality, "Preset: fast, normal or best (docs/compressor.md)")
        ->check(CLI::IsMember(kQualityPresetNames))
        ->capture_default_str();
    command->add_option("--steps", options->steps, "Training steps (default: the preset's)");
    command->add_option("--batch", options->batch, "Texels per step (default: the preset's)");
    command->add_option("--latent-lr", options->latent_lr, "Adam learning rate of the latents (default: the preset's)")
        ->check(CLI::Range(0.0, 10.0));
    command->add_option("--network-lr", options->network_lr,
                        "Adam learning rate of the network (default: the preset's)")
        ->check(CLI::Range(0.0, 10.0));
    command->add_option("--latent-rounding-at", options->latent_rounding_at,
                        "Fraction of the steps after which the latents are rounded (as --latent-rounding says)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    command->add_option("--weight-rounding-at", options->weight_rounding_at,
                        "Fraction of the steps after which the weights train through their stored formats (E4M3, "
                        "Int8, FP16 biases)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    command->add_option("--latent-adam", options->latent_adam,
                        "Latent updates: dense (Adam on every latent every step), sparse (only the latents the "
                        "batch touched move, as NTC) or auto (sparse on the fused CUDA trainer, dense on the eager one)")
        ->check(CLI::IsMember({"auto", "dense", "sparse"}))
        ->capture_default_str();
    command->add_option("--latent-rounding", options->latent_rounding,
                        "At --latent-rounding-at: freeze (round the latents to their codes and stop training them) or "
                        "straight-through (train on their code values, the latents still moving between codes)")
        ->check(CLI::IsMember({"freeze", "straight-through"}))
        ->capture_default_str();
    command->add_option("--seed", options->seed, "Random seed")->capture_default_str();
    command->add_option("--device", options->device, "cpu, cuda or cuda:N")
        ->check(CLI::Validator(
            [](const std::string& d) -> std::string {
                return cuda_index_of_device(d) ? "" : "expected cpu, cuda or cuda:N, got '" + d + "'";
            },
            "DEVICE"))
        ->capture_default_str();
    command->add_option("--trainer", options->trainer,
                        "Training steps: fused (CUDA kernels), eager (LibTorch operations) or auto (fused where it "
                        "can run)")
        ->check(CLI::IsMember({"auto", "fused", "eager"}))
        ->capture_default_str();
    command->add_option("--arithmetic", options->arithmetic,
                        "Decoding arithmetic of the pack (docs/format-spec.md 5.6): binary16 (format 2.0: binary16 "
                        "latent values, bilinear weights and activations, for faster GPU decoders) or float32 "
                        "(format 1.0, for readers of 1.x only)")
        ->check(CLI::IsMember({"float32", "binary16"}))
        ->capture_default_str();
    command->add_option("--output-layer", options->output_layer,
                        "Last layer's weights: int8 (+ scale), e4m3 or e4m3-scaled (for measuring the choice)")
        ->check(CLI::IsMember({"int8", "e4m3", "e4m3-scaled"}))
        ->capture_default_str();
    command->add_option("--hidden-layers", options->hidden_layers,
                        "Hidden layer widths, comma-separated (e.g. 64,48,32: NTC v0.9's smaller network); 1-7 layers "
                        "of 1-256. The fused CUDA trainer runs 64,64,64 only; other networks train eager")
        ->capture_default_str();
    command->add_option("--normal-mode", options->normal_mode, "Normal maps in the pack: auto (per map: xy where rebuilding Z loses little, else stored), xy (Z "
                        "rebuilt), xyz (renormalised) or stored (three plain channels)")
        ->check(CLI::IsMember(kNormalModeNames))
        ->capture_default_str();
    add_address_mode_option(*command, options->address_mode);
    add_image_reading_options(*command, options->gloss_to_roughness, options->resample);
    command->add_flag("--strict", options->strict,
                      "An image file of the folder that would be left out of the pack is an error (exit 8), not a "
                      "warning");
    command->add_flag("-f,--force", options->force, "Overwrite an existing PACK (never a folder)");
    command->add_flag("--json", options->json, "Print the results as one JSON object on stdout");
    command->add_option("--result", options->result_file,
                        "Also write the --json object, with result_version, to this file (atomically, after the pack): "
                        "the protocol nmc batch runs its children with");
    command->callback([options, &globals, &exit_code] {
        exit_code = run_compress(*options, globals.verbosity);
        // A failure's result: its exit code and error (best effort: an unwritable FILE is the failure itself).
        if (exit_code != kExitOk && !options->result_file.empty())
            (void)write_result_file(options->result_file,
                                    Json{{"exit_code", exit_code}, {"error", last_error_message()}});
    });
}

}  // namespace nmc::cli
