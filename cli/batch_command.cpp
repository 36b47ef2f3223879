// nmc batch: compresses every material of an asset tree with the batch library (one `nmc compress` child per
// material), skipping up-to-date packs; progress on stderr, a summary on stdout, OUT/report.json and .md.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "compressor/compressor.h"
#include "core/file_io.h"

#ifndef NMC_VERSION_STRING
#define NMC_VERSION_STRING "unknown"
#endif

namespace nmc::cli {
namespace {

struct BatchCliOptions {
    std::string root;
    std::string output;
    double bpp = 5.0;
    double target_psnr = 0;
    std::string quality = "normal";
    int64_t steps = 0;
    int batch = 0;
    uint64_t seed = 1;
    std::string arithmetic = "binary16";
    std::string normal_mode = "auto";
    std::string address_mode = "wrap";
    bool resample = false;
    bool gloss_to_roughness = false;
    double min_psnr = 0;
    int jobs = 0;
    std::string device = "cpu";
    std::string shard;
    bool force = false;
    bool dry_run = false;
    bool report_only = false;
    bool strict = false;
};

std::string format_seconds(double s) {
    char buf[32];
    const auto total = static_cast<long>(s + 0.5);
    std::snprintf(buf, sizeof buf, "%ld:%02ld", total / 60, total % 60);
    return buf;
}

std::string own_executable() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Every image a pack leaves out is a warning, whether the pack was made now or earlier (the report lists them too).
void warn_ignored_images(const std::vector<MaterialRecord>& records) {
    for (const MaterialRecord& r : records)
        for (const IgnoredImage& i : r.ignored_images)
            std::fprintf(stderr, "nmc: warning: %s: %s is not packed: %s\n", r.relative.c_str(), i.file.c_str(),
                         i.reason.c_str());
}

int print_summary(const std::vector<MaterialRecord>& records, const std::string& out_dir, const std::string& stem,
                  bool pending_fails) {
    int ok = 0, skipped = 0, failed = 0, pending = 0;
    for (const MaterialRecord& r : records) {
        ok += r.status == "ok";
        skipped += r.status == "skipped";
        failed += r.status == "failed";
        pending += r.status == "pending";
    }
    for (const MaterialRecord& r : records)
        if (r.status == "failed") std::printf("failed %s: %s\n", r.relative.c_str(), r.error.c_str());
    std::printf("%zu materials: %d compressed, %d up to date, %d failed, %d pending; report: %s\n", records.size(), ok,
                skipped, failed, pending, (std::filesystem::path(out_dir) / (stem + ".md")).string().c_str());
    return failed > 0 || (pending_fails && pending > 0) ? kExitPartialFailure : kExitOk;
}

int run_batch_command(const BatchCliOptions& o, int verbosity) {
    // Merging and planning run no child: the name is checked, the GPUs are looked for only by a run.
    const bool runs_children = !o.report_only && !o.dry_run;
    auto devices = runs_children
                       ? batch_devices(o.device, std::getenv("CUDA_VISIBLE_DEVICES"), trainer_cuda_device_count)
                       : batch_devices(o.device, nullptr, [] { return 1; });
    if (!devices.ok()) {
        print_error(devices.status());
        return exit_code_for(devices.status());
    }
    ShardSpec shard;
    if (!o.shard.empty()) {
        auto parsed = parse_shard(o.shard);
        if (!parsed.ok()) {
            print_error(parsed.status());
            return kExitUsage;
        }
        shard = *parsed;
    }
    if (o.report_only && (!o.shard.empty() || o.dry_run || o.force || o.strict)) {
        print_error(Status(StatusCode::invalid_argument, "--report-only merges every shard's results; it takes no "
                                                         "--shard, --dry-run, --force or --strict"));
        return kExitUsage;
    }
    const int jobs = o.jobs > 0 ? o.jobs : std::max<int>(1, static_cast<int>(devices->size()));

    auto materials = discover_materials(o.root, o.output);
    if (!materials.ok()) {
        print_error(materials.status());
        return exit_code_for(materials.status());
    }
    std::vector<BatchMaterial> mine;
    for (BatchMaterial& m : *materials)
        if (shard.count == 1 || shard_of(m.relative, shard.count) == shard.index) mine.push_back(std::move(m));

    BatchSettings settings;
    settings.bpp = o.bpp;
    settings.target_psnr = o.target_psnr;
    settings.quality = o.quality;
    settings.steps = o.steps;
    settings.batch_size = o.batch;
    settings.seed = o.seed;
    settings.arithmetic = o.arithmetic;
    settings.normal_mode = o.normal_mode;
    settings.address_mode = o.address_mode;
    settings.resample = o.resample;
    settings.gloss_to_roughness = o.gloss_to_roughness;
    settings.tool = std::string("nmc ") + NMC_VERSION_STRING;
    const std::vector<BatchJob> plan = plan_batch(mine, settings, o.force, o.strict);
    const BatchReportContext report_context{settings, o.min_psnr};

    if (o.dry_run) {
        int compress = 0;
        for (const BatchJob& j : plan) {
            compress += j.action == BatchAction::compress;
            std::printf("%-8s %s -> %s (%s)\n", j.action == BatchAction::compress ? "compress" : "skip",
                        j.material.relative.c_str(), j.material.output.c_str(), j.reason.c_str());
        }
        std::printf("%zu materials: %d to compress, %zu up to date (dry run: nothing written)\n", plan.size(), compress,
                    plan.size() - static_cast<size_t>(compress));
        return kExitOk;
    }

    if (o.report_only) {
        std::vector<MaterialRecord> records = collect_records(plan);
        apply_min_psnr(records, o.min_psnr);
        const Status written = write_reports(o.output, "report", records, report_context);
        if (!written.ok()) {
            print_error(written);
            return exit_code_for(written);
        }
        if (verbosity > 0) warn_ignored_images(records);
        return print_summary(records, o.output, "report", true);
    }

    BatchRunOptions run;
    run.nmc_executable = own_executable();
    if (run.nmc_executable.empty()) {
        print_error(Status(StatusCode::io_error, "cannot find the nmc executable (/proc/self/exe) to run jobs with"));
        return kExitIo;
    }
    run.settings = settings;
    run.jobs = jobs;
    run.devices = *devices;
    run.strict = o.strict;
    // One job keeps LibTorch's own choice (or the user's OMP_NUM_THREADS); N jobs share the cores.
    run.threads_per_job = jobs > 1 ? std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / jobs) : 0;
    run.work_dir = (std::filesystem::path(o.output) / ".nmc-batch").string();

    const bool tty = verbosity > 0 && isatty(fileno(stderr));
    std::string current;
    InterruptScope interrupt_scope;
    const auto progress = [&](const BatchEvent& e) {
        if (e.kind == BatchEvent::Kind::started) current = e.job->material.relative;
        if (e.kind == BatchEvent::Kind::waiting && verbosity > 0) {
            if (tty) std::fprintf(stderr, "\r\033[K");
            std::fprintf(stderr, "batch waiting %s: another batch is compressing it\n",
                         e.job->material.relative.c_str());
        }
        if (e.kind == BatchEvent::Kind::finished && verbosity > 0) {
            const MaterialRecord& r = *e.record;
            if (tty) std::fprintf(stderr, "\r\033[K");
            if (r.status == "failed")
                std::fprintf(stderr, "nmc: warning: %s failed: %s\n", r.relative.c_str(), r.error.c_str());
            else if (!tty || verbosity > 1)
                std::fprintf(stderr, "batch %d/%d %s %s %.1f s %.3f bpp\n", e.done, e.total, r.status.c_str(),
                             r.relative.c_str(), r.seconds, r.bits_per_texel);
            if (verbosity > 1)
                for (const TextureRow& t : r.textures)
                    std::fprintf(stderr, "  %s %.2f dB\n", t.texture.c_str(), t.psnr_db);
        }
        if (tty) {
            std::fprintf(stderr, "\r\033[K[%d/%d] elapsed %s ETA %s  %s", e.done, e.total,
                         format_seconds(e.elapsed_seconds).c_str(),
                         e.eta_seconds < 0 ? "-:--" : format_seconds(e.eta_seconds).c_str(), current.c_str());
            std::fflush(stderr);
        }
        return !InterruptScope::interrupted();
    };
    std::vector<MaterialRecord> records;
    const Status ran = run_batch(plan, run, progress, records);
    if (tty) std::fprintf(stderr, "\r\033[K");
    const std::string stem =
        shard.count == 1 ? "report" : "report.shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count);
    apply_min_psnr(records, o.min_psnr);
    if (!records.empty() || ran.ok()) {
        const Status written = write_reports(o.output, stem, records, report_context);
        if (!written.ok()) {
            print_error(written);
            return exit_code_for(written);
        }
    }
    if (ran.code() == StatusCode::cancelled) {
        std::fprintf(stderr, "nmc: interrupted; finished packs are kept, nothing partial was written\n");
        return kExitCancelled;
    }
    if (!ran.ok()) {
        print_error(ran);
        return exit_code_for(ran);
    }
    if (verbosity > 0) warn_ignored_images(records);
    return print_summary(records, o.output, stem, false);
}

}  // namespace

void add_batch_command(CLI::App& app, const GlobalOptions& globals, int& exit_code) {
    CLI::App* command = app.add_subcommand(
        "batch", "Compress every material under a folder tree into a mirrored tree of .nmc packs (resumable)");
    auto options = std::make_shared<BatchCliOptions>();
    command->add_option("ROOT", options->root, "The asset tree to search for materials")->required();
    command->add_option("-o,--output", options->output, "Output folder (mirrors ROOT; holds the reports)")->required();
    command->add_option("--bpp", options->bpp, "Whole-file budget in bpp: the file's bits per mip-0 texel")
        ->check(check_bits_per_texel)
        ->capture_default_str();
    command->add_option("--target-psnr", options->target_psnr,
                        "Per material, the smallest pack whose PSNR reaches this many dB (nmc compress --target-psnr; "
                        "--bpp is then the first rate tried)")
        ->check(CLI::Range(1.0, 99.0));
    command->add_option("--quality", options->quality, "Preset: fast, normal or best (docs/compressor.md)")
        ->check(CLI::IsMember(kQualityPresetNames))
        ->capture_default_str();
    command->add_option("--steps", options->steps, "Training steps (default: the preset's)");
    command->add_option("--batch", options->batch, "Texels per step (default: the preset's)");
    command->add_option("--seed", options->seed, "Random seed")->capture_default_str();
    command->add_option("--arithmetic", options->arithmetic, "Decoding arithmetic of the packs: binary16 or float32 "
                        "(see nmc compress --help)")
        ->check(CLI::IsMember({"float32", "binary16"}))
        ->capture_default_str();
    command->add_option("--normal-mode", options->normal_mode,
                        "Normal maps in the packs: auto, xy, xyz or stored (see nmc compress --help)")
        ->check(CLI::IsMember(kNormalModeNames))
        ->capture_default_str();
    add_address_mode_option(*command, options->address_mode);
    add_image_reading_options(*command, options->gloss_to_roughness, options->resample);
    command->add_option("--min-psnr", options->min_psnr,
                        "A material whose pack's PSNR (dB, all channels, all mips) is below this fails (exit 9; the "
                        "pack is kept)")
        ->check(CLI::Range(0.0, 200.0));
    command->add_option("-j,--jobs", options->jobs, "Materials compressed at once (default 1, or one per GPU)")
        ->check(CLI::Range(1, 1024));
    command->add_option("--device", options->device,
                        "cpu, cuda (every visible GPU: CUDA_VISIBLE_DEVICES) or cuda:N[,M...] (those GPUs); the jobs "
                        "take the GPUs round robin")
        ->capture_default_str();
    command->add_option("--shard", options->shard, "I/N: process only shard I of N (job arrays)");
    command->add_flag("-f,--force", options->force,
                      "Overwrite every pack, up to date or not (out-of-date packs are replaced without it)");
    command->add_flag("--dry-run", options->dry_run, "Print what would be done; write nothing");
    command->add_flag("--report-only", options->report_only, "Only merge the results found under OUT into reports");
    command->add_flag("--strict", options->strict,
                      "A material whose folder holds an image that would be left out of its pack fails (exit 9), "
                      "instead of a warning");
    command->callback([options, &globals, &exit_code] { exit_code = run_batch_command(*options, globals.verbosity); });
}

}  // namespace nmc::cli
