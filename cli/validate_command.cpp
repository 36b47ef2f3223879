// nmc validate: checks a pack structurally and against its source images, for build pipelines: a verdict,
// the quality tables, a JSON report and exit codes (docs/cli.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/current_step.h"
#include "cli/exit_codes.h"
#include "core/file_io.h"
#include "validate/validation.h"

namespace nmc::cli {
namespace {

struct ValidateCliOptions {
    std::string pack_path;
    bool json = false;        // the report as JSON on stdout instead of the text
    std::string report_path;  // also write the JSON report to this file
    ValidationOptions validation;
};

int exit_code_for_verdict(Verdict v) {
    switch (v) {
        case Verdict::pass: return kExitOk;
        case Verdict::structurally_invalid: return kExitCorrupt;
        case Verdict::source_mismatch: return kExitSourceMismatch;
        case Verdict::quality_below_threshold: return kExitQuality;
        case Verdict::threshold_not_checked: return kExitNotChecked;
    }
    return kExitInternal;
}

void print_report(const ValidationReport& r, int verbosity) {
    std::printf("pack      %s\n", r.pack_path.c_str());
    if (!r.structural_problems.empty()) {
        std::printf("structure INVALID: %zu problem(s)\n", r.structural_problems.size());
        for (const Status& s : r.structural_problems) std::printf("  - %s\n", s.to_string().c_str());
    } else {
        std::printf("structure ok (%llu bytes, %.3f bpp, every checksum and limit checked)\n",
                    static_cast<unsigned long long>(r.file_size), r.bits_per_texel);
    }
    if (!r.source_note.empty()) std::printf("quality   not measured: %s\n", r.source_note.c_str());
    for (const SourceCheck& s : r.sources)
        if (!s.matches()) std::printf("source    %s: CHANGED since compression (sha256 %.12s..., pack records %.12s...)\n",
                                      s.file.c_str(), s.actual_sha256.c_str(), s.expected_sha256.c_str());
    if (r.quality_measured) {
        const QualityMeasurement& q = r.quality;
        std::printf("sources   %s (decoded on %s)\n", r.source_dir.c_str(), r.decoder.c_str());
        std::printf("PSNR      %.2f dB all mips (float, spec 8.10)", q.psnr_db);
        if (r.stored_quality_present) std::printf(", stored %.2f dB, drift %+.3f dB", r.stored_psnr_db, r.drift_db);
        std::printf("\n");
        std::printf("PSNR8     %.2f dB (8-bit, mip 0, every source-file channel)\n", q.psnr8_mip0_db);
        int name_width = 8;
        for (const TextureQualityDetail& t : q.textures) name_width = std::max(name_width, static_cast<int>(t.file_name.size()));
        // Structure (docs/cli.md): correlation and contrast against the source, and the PSNR a constant image of
        // the source's means would score; "-" where the source is flat.
        std::printf("\n%-*s %8s %8s %8s %6s %8s %8s %10s\n", name_width, "texture", "PSNR", "PSNR8", "max err8", "corr",
                    "contrast", "constant", "angle deg");
        for (const TextureQualityDetail& t : q.textures) {
            std::printf("%-*s %8.2f %8.2f %8d", name_width, t.file_name.c_str(), t.psnr_db, t.psnr8_mip0_db,
                        t.max_abs_error8);
            const TextureStructure& st = t.structure;
            if (st.measured)
                std::printf(" %6.3f %8.3f %8.2f", st.correlation, st.contrast, st.constant_psnr_db);
            else
                std::printf(" %6s %8s %8s", "-", "-", "-");
            if (t.mean_angle_deg >= 0)
                std::printf(" %10.3f", t.mean_angle_deg);
            else if (st.collapsed || t.hdr_psnr_db >= 0)
                std::printf(" %10s", "");
            if (t.hdr_psnr_db >= 0) std::printf("  HDR PSNR %.2f dB", t.hdr_psnr_db);
            if (st.collapsed) std::printf("  COLLAPSED");
            std::printf("\n");
        }
        if (verbosity > 1) {
            std::printf("\n%-24s %8s %10s   per mip\n", "pack channel", "PSNR", "max err");
            for (const ChannelQuality& c : q.channels) {
                std::printf("%-24s %8.2f %10.5f  ", c.name.c_str(), c.psnr_db, c.max_abs_error);
                for (double m : c.mips) std::printf(" %.1f", m);
                std::printf("\n");
            }
        }
    }
    for (const std::string& d : r.diff_images) std::printf("heat map  %s\n", d.c_str());
    for (const std::string& w : r.warnings) std::printf("WARNING   %s\n", w.c_str());
    for (const std::string& f : r.failures) std::printf("FAIL      %s\n", f.c_str());
    std::printf("verdict   %s\n", to_string(r.verdict));
}

int run_validate(const ValidateCliOptions& o, const GlobalOptions& globals) {
    const Overwrite overwrite = o.validation.overwrite ? Overwrite::allow : Overwrite::refuse;
    // The report file is checked before decoding: a report that cannot be written must not cost the measurement.
    if (!o.report_path.empty()) {
        if (Status ready = prepare_output_file(o.report_path, overwrite); !ready.ok()) {
            print_error(ready);
            return kExitIo;
        }
    }
    const CurrentStep step(o.pack_path, "validating the pack (reading it and its sources, decoding every mip)");
    auto report = validate_pack_file(o.pack_path, o.validation);
    if (!report.ok()) {
        print_error(report.status());
        return exit_code_for(report.status());
    }
    const std::string json = o.json || !o.report_path.empty() ? validation_report_json(report.value()) + "\n" : "";
    if (!o.report_path.empty()) {
        if (Status s = write_file_atomically(o.report_path, json.data(), json.size(), overwrite); !s.ok()) {
            print_error(s);
            return kExitIo;
        }
    }
    if (o.json)
        std::fwrite(json.data(), 1, json.size(), stdout);
    else if (globals.verbosity > 0)
        print_report(report.value(), globals.verbosity);
    return exit_code_for_verdict(report->verdict);
}

}  // namespace

void add_validate_command(CLI::App& app, const GlobalOptions& globals, int& exit_code) {
    auto o = std::make_shared<ValidateCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "validate", "Check a pack: every checksum, bound and rule of the format, and its quality against the source "
                    "images (PSNR per texture, channel and mip; drift from the stored PSNR)");
    cmd->add_option("PACK", o->pack_path, "The .nmc pack")->required();
    cmd->add_option("--source", o->validation.source_dir,
                    "Folder with the source images (default: the folder recorded in the pack, relative to the "
                    "pack's folder)");
    cmd->add_option("--min-psnr", o->validation.min_psnr_db,
                    "Fail (exit 6) below this PSNR in dB (all mips, float); exit 12 when quality cannot be measured "
                    "(no sources)")
        ->check(CLI::Range(0.0, 200.0));
    CLI::Option* max_drop =
        cmd->add_option("--max-drop", o->validation.max_drop_db,
                        "Fail (exit 6) when the decoded PSNR differs from the stored one by more (dB, default 0.05, "
                        "checked when it can be); given, exit 12 when the drift cannot be measured (no sources, no "
                        "stored PSNR)")
            ->check(CLI::Range(0.0, 200.0));
    cmd->add_flag("--fail-on-collapse", o->validation.fail_on_collapse,
                  "Fail (exit 6) when a texture collapsed (decoded nearly flat, or no better than a constant image: "
                  "docs/cli.md, \"Structure\"), instead of warning; exit 12 when quality cannot be measured");
    cmd->add_flag("--json", o->json, "Print the report as one JSON object on stdout instead of the text");
    cmd->add_option("--report", o->report_path, "Also write the report as JSON to FILE (whatever the verdict)");
    cmd->add_option("--diff", o->validation.diff_dir, "Write per-texture error heat maps (PNG) to this folder");
    cmd->add_flag("-f,--force", o->validation.overwrite, "Overwrite an existing --report file or heat maps");
    cmd->add_option("--device", o->validation.decoder.device,
                    "Decoder: cpu, cuda[:N] (builds with the CUDA decoder) or vulkan[:N] (builds with the Vulkan "
                    "runtime); the PSNR is the same definition");
    cmd->add_option("--threads", o->validation.decoder.threads, "Decoder threads (0: all cores)")
        ->check(CLI::Range(0, 1024));
    cmd->callback([o, max_drop, &globals, &exit_code] {
        o->validation.max_drop_required = max_drop->count() > 0;  // given: a gate, not only the default check
        exit_code = run_validate(*o, globals);
    });
}

}  // namespace nmc::cli
