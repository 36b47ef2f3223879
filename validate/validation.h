// `nmc validate` as a library: structural checks of a pack (every checksum, bound and rule of the spec, all
// problems reported), quality against the source images, a drift check against the quality stored at
// compression time, source-hash checks and optional error heat maps.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "decoder/pack_decoder.h"
#include "quality/quality_measurement.h"

namespace nmc {

struct ValidationOptions {
    std::string source_dir;      // "" : the folder recorded in the pack (encoder.source_folder, spec 5.7), if it exists
    double min_psnr_db = -1;     // fail when the measured PSNR (spec 8.10) is below; < 0: no threshold
    double max_drop_db = 0.05;   // fail when |stored - measured| PSNR exceeds this
    std::string diff_dir;        // "" : no heat maps; else one PNG per texture (mip 0, 8-bit code error)
    bool overwrite = false;      // heat maps may replace existing files
    PackDecoderOptions decoder;  // device (cpu, cuda, cuda:N) and CPU threads
    // max_drop_db was asked for (`--max-drop`): a gate, so a drift that cannot be measured (no sources, no stored
    // PSNR) fails with Verdict::threshold_not_checked. Without it, max_drop_db is only checked when it can be.
    // A min_psnr_db >= 0 is always such a gate.
    bool max_drop_required = false;
    // A texture that collapsed (TextureStructure::collapsed: decoded nearly flat, or no better than a constant image)
    // fails the check (Verdict::quality_below_threshold) instead of being a warning; a gate like min_psnr_db, so
    // threshold_not_checked when quality cannot be measured.
    bool fail_on_collapse = false;
};

struct SourceCheck {
    std::string texture;
    std::string file;
    std::string expected_sha256;  // recorded in the pack ("" if none)
    std::string actual_sha256;
    bool matches() const { return expected_sha256.empty() || expected_sha256 == actual_sha256; }
};

enum class Verdict {
    pass,
    structurally_invalid,     // the pack breaks the spec
    source_mismatch,          // sources differ from those the pack was made from
    quality_below_threshold,  // --min-psnr, --max-drop or --fail-on-collapse failed
    threshold_not_checked,    // --min-psnr, --max-drop or --fail-on-collapse was asked for but could not be measured
};
const char* to_string(Verdict v);

struct ValidationReport {
    std::string pack_path;
    uint64_t file_size = 0;
    double bits_per_texel = 0;
    std::vector<Status> structural_problems;  // every problem found; empty when the pack is valid
    std::string source_dir;                   // where sources were read ("" when not compared)
    std::string source_note;                  // why quality was not measured, when it was not
    bool quality_measured = false;
    QualityMeasurement quality;
    std::vector<SourceCheck> sources;
    bool stored_quality_present = false;
    double stored_psnr_db = 0;
    double drift_db = 0;                     // measured - stored; 0 when no quality is stored
    std::vector<std::string> failures;       // each failed check in words
    // Findings that do not fail the check: each collapsed texture ("height.png collapsed: correlation 0.14 < 0.50")
    // unless fail_on_collapse makes it a failure.
    std::vector<std::string> warnings;
    // The thresholds asked for that could not be measured ("--min-psnr", "--max-drop", "--fail-on-collapse"); each is
    // also a failure.
    std::vector<std::string> unchecked_thresholds;
    std::vector<std::string> diff_images;    // heat maps written
    Verdict verdict = Verdict::pass;
    std::string decoder;  // where decoding ran: "CPU (avx512bf16 kernel)", "CUDA device 0 (fp8 path)"
};

// The folder a pack's recorded `encoder.source_folder` names (spec 5.7): a relative one is relative to the folder
// of the pack file at `pack_path`, an absolute one is itself. "" stays "".
std::string resolve_recorded_source_folder(const std::string& pack_path, const std::string& recorded);

// What a pack written to `pack_path` records as `encoder.source_folder` for sources read from `source_folder`
// (both as the caller names them, relative to the working directory or absolute): the source folder relative to
// the pack's folder (symbolic links resolved), so that a pack moved together with its sources still finds them;
// the absolute folder when no relative path exists. "" stays "". A manifest written by `nmc scan` records its
// `folder` by the same rule, with the manifest's path as `pack_path`.
std::string source_folder_to_record(const std::string& source_folder, const std::string& pack_path);

// Validates the pack at `path`. Fails (Status) only when the pack file cannot be read at all (io_error), is not
// an nmc pack or has a major version this build cannot read (not_recognized, version_unsupported), source files
// cannot be read (io_error) or their format is not in this build (backend_unavailable), or heat maps cannot be
// written (io_error: nothing partial is left); every finding about the pack itself is in the report's verdict,
// and a source file that does not decode (corrupt, truncated) is a source mismatch.
Result<ValidationReport> validate_pack_file(const std::string& path, const ValidationOptions& options);

// A texture's structure as a JSON object (text): the "structure" object of `nmc validate --json` and `nmc compress
// --json` (docs/cli.md, "Structure"). Figures a flat source leaves undefined are null.
std::string texture_structure_json(const TextureStructure& structure);

// The report as a JSON object carrying every number `nmc validate` prints.
std::string validation_report_json(const ValidationReport& report);

}  // namespace nmc
