// nmc batch: compress a whole asset tree. Discovery (which folders and manifests are materials), the job plan
// (output paths, source fingerprints, the skip rule, shards), running `nmc compress` child processes (one material at
// a time claimed, so batches can share an output tree), and the per-material records and reports merged from them.
// Never prints; reports through callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace nmc {

// One material found under the root.
struct BatchMaterial {
    std::string relative;  // path under the root, '/'-separated: "rocks/granite" or "props/crate.json"; "." for
                           // the root folder itself
    std::string input;     // what `nmc compress` reads: the folder or the manifest file
    bool manifest = false;
    std::string output;    // OUT/<relative>.nmc; a manifest's ".json" is replaced by ".nmc"
};

// Walks `root` in sorted order (deterministic) and returns its materials: a folder is a material when a file
// directly inside it has an image extension and a recognised map name (material/file_naming.h); a *.json
// file whose top-level object has a "textures" key is a manifest material, and a folder holding one is not
// itself a material (its manifests describe it). Hidden entries (".name") and `out_dir` (when it lies under
// root) are skipped; symbolic links to folders are not followed. Images are not decoded here: a broken
// material is still found, and fails when compressed. io_error when root is not a readable folder.
Result<std::vector<BatchMaterial>> discover_materials(const std::string& root, const std::string& out_dir);

// --shard I/N: material goes to shard (first 8 bytes of SHA-256 of its relative path, big-endian) mod N.
// Depends only on the material's own path, so shards started at different times agree even when the tree
// gained materials in between, and each material belongs to exactly one shard.
struct ShardSpec {
    int index = 0;  // 0 .. count-1
    int count = 1;  // >= 1
};
int shard_of(const std::string& relative, int shard_count);
// Parses "I/N" (0 <= I < N). invalid_argument otherwise.
Result<ShardSpec> parse_shard(const std::string& text);

// The devices of the job slots of `nmc batch --device DEVICE` (empty: the CPU): "cpu" -> {}; "cuda:0,1" or
// "cuda:0,cuda:1" -> those GPUs; "cuda" -> every visible GPU, "cuda:0" .. "cuda:K-1", where K is the number of entries
// of `cuda_visible_devices` (the value of CUDA_VISIBLE_DEVICES; the children inherit it, so CUDA numbers the GPUs it
// names from 0) or, when that is unset (nullptr), `cuda_device_count()`, asked only then. invalid_argument for any
// other name; backend_unavailable when "cuda" finds no GPU.
Result<std::vector<std::string>> batch_devices(const std::string& device, const char* cuda_visible_devices,
                                               const std::function<int()>& cuda_device_count);
// The device job slot `slot` runs on: devices[slot mod size], round robin, so N slots over K GPUs put ceil(N/K) or
// floor(N/K) children on each; "cpu" when `devices` is empty.
std::string slot_device(const std::vector<std::string>& devices, size_t slot);

// The compression settings that change what a pack contains (the device does not: CPU and CUDA packs of one
// material are both valid results, so a tree compressed on either is up to date on the other).
struct BatchSettings {
    double bpp = 5.0;          // the budget, or with target_psnr the first rate tried
    double target_psnr = 0;    // > 0: `nmc compress --target-psnr`, the smallest pack reaching it
    std::string quality = "normal";
    int64_t steps = 0;      // 0: the preset's
    int batch_size = 0;     // 0: the preset's
    uint64_t seed = 1;
    std::string arithmetic = "binary16";  // `nmc compress --arithmetic`
    std::string normal_mode = "auto";     // `nmc compress --normal-mode`
    std::string address_mode = "wrap";    // `nmc compress --address-mode`
    bool resample = false;                // `nmc compress --resample`
    bool gloss_to_roughness = false;      // `nmc compress --gloss-to-roughness`
    std::string tool;       // "nmc 0.1.0": a new version rebuilds everything
};

struct SourceFile {
    std::string name;  // relative to the material's input folder (a manifest: the manifest itself first)
    std::string sha256;
    uint64_t bytes = 0;
};

// The source files of a material that its fingerprint covers: every image file of a folder (maps and images
// left out alike, so a new image is noticed), or a manifest plus every image file in the folder it points at.
// Sorted by name. io_error when one cannot be read.
Result<std::vector<SourceFile>> hash_sources(const BatchMaterial& material);

// SHA-256 (hex) of the sources' names and hashes and of every BatchSettings field.
std::string batch_fingerprint(const std::vector<SourceFile>& sources, const BatchSettings& settings);

// What one material's last run produced: the row of the report, stored as OUT/<relative>.nmc.state.json
// (written atomically, after the pack). The record is also the skip rule's memory and what --report-only
// merges from the shared output tree.
struct TextureRow {
    std::string texture;
    double psnr_db = 0;
    double psnr8_mip0_db = 0;  // 8-bit, mip 0 (0: the pack stores none)
};
// An image file of the material's folder that `nmc compress` left out of the pack (its "ignored_images").
struct IgnoredImage {
    std::string file;
    std::string reason;
};
struct MaterialRecord {
    std::string relative;
    std::string output;
    std::string status;       // "ok", "skipped" (up to date, not rebuilt), "failed", "pending" (not run)
    std::string fingerprint;
    std::string error;        // failed: the reason (the child's last error line or its exit code)
    int exit_code = 0;        // failed: the child's exit code (cli/exit_codes.h), -1 when killed by a signal
    std::vector<SourceFile> sources;
    int maps = 0;
    int width = 0, height = 0, mip_count = 0;
    uint64_t source_bytes = 0;
    uint64_t bcn_bytes = 0;   // BC7 colour/packed, BC5 normals, BC4 grey maps, with mips (as `nmc compress`)
    uint64_t pack_bytes = 0;
    double bits_per_texel = 0;  // pack bytes * 8 / (width * height), as `nmc inspect`
    double ratio_vs_source = 0;
    double ratio_vs_bcn = 0;
    double psnr_db = 0;         // all pack channels, all mips (the pack's stored quality)
    double psnr8_mip0_db = 0;   // 8-bit, mip 0, every file channel (the comparison metric, as `nmc compress`)
    std::vector<TextureRow> textures;
    std::vector<IgnoredImage> ignored_images;  // ok: images of the material's folder that are not in the pack
    std::vector<std::string> warnings;         // ok: `nmc compress`'s warnings (maps resampled, images left out, ...)
    // ok: the textures `nmc compress` found collapsed (nmc validate's collapse rule: decoded nearly flat), by name.
    std::vector<std::string> collapsed;
    double seconds = 0;         // wall time of the child process
};

std::string record_path(const BatchMaterial& material);  // output + ".state.json"
Status write_record(const std::string& path, const MaterialRecord& record);
Result<MaterialRecord> read_record(const std::string& path);

// Fills the pack figures of a record (pack bytes, size, bits per texel, PSNR per texture, ratios from the
// record's source and BCn bytes) from the pack file as read back. corrupt/io_error etc. from the reader.
Status fill_record_from_pack(const std::string& pack_path, MaterialRecord& record);

// The job plan of one material.
enum class BatchAction { compress, skip };
struct BatchJob {
    BatchMaterial material;
    BatchAction action = BatchAction::compress;
    std::string reason;        // why: "no pack", "sources or settings changed", "up to date", "--force", ...
    std::string fingerprint;   // empty when the sources could not be hashed (the job then fails)
    std::vector<SourceFile> sources;
    std::string hash_error;    // the hashing failure, if any
    MaterialRecord existing;   // skip: the record the pack was made with, refreshed from the pack
    std::string record_digest;  // SHA-256 of the record file as planned; empty when there was none
};

// The skip rule: a material is skipped when (1) its pack reads back valid, (2) its record exists with status
// "ok" and the current fingerprint, and (3) every texture the pack records has a source_sha256 equal to the
// current hash of that file, and, when `strict`, (4) its record lists no image left out of the pack (compressed
// again under --strict, that material fails). Anything else (or `force`) compresses. Hashes every source;
// writes nothing.
std::vector<BatchJob> plan_batch(const std::vector<BatchMaterial>& materials, const BatchSettings& settings,
                                 bool force, bool strict);

// For a job this batch has just claimed (batch_claims.h): the result another batch recorded for the material since the
// plan was made (its record changed) with the same fingerprint, which this batch takes instead of compressing again:
// the record as it is when it says "failed", with status "skipped" when the skip rule (with `strict` as plan_batch's)
// now holds. nullopt: compress.
std::optional<MaterialRecord> recorded_elsewhere(const BatchJob& job, const BatchSettings& settings, bool strict);

// How the jobs run: each one is a child process `nmc compress INPUT -o PACK --force --result FILE -q ...` (a crash,
// a corrupt image or a kill of one material cannot take the batch down, and Compressor's process-wide LibTorch state
// is never shared between jobs); the batch reads the child's result FILE (compress_result.h), not its printed text.
// Children die with the batch (Linux: PR_SET_PDEATHSIG).
// Batches share an output tree by claiming each material before compressing it (batch_claims.h): a material another
// live batch holds waits until it is released, and is then taken as that batch left it (recorded_elsewhere).
struct BatchRunOptions {
    std::string nmc_executable;          // the nmc binary to run (the CLI passes its own)
    BatchSettings settings;              // passed to every child as flags
    int jobs = 1;                        // concurrent children
    std::vector<std::string> devices;    // batch_devices(); job slot k runs on slot_device(devices, k)
    int threads_per_job = 0;             // OMP_NUM_THREADS / MKL_NUM_THREADS of each child; 0: inherited
                                         // (children also get OMP_WAIT_POLICY=PASSIVE unless it is set)
    std::string work_dir;                // OUT/.nmc-batch: this batch's folder <host>-<pid> in it holds the children's
                                         // stdout and stderr while they run; stale folders of others are removed
    bool strict = false;                 // children run with --strict: an image left out fails the material
};

struct BatchEvent {
    // tick: a few times a second while children run (for progress bars and noticing Ctrl-C); waiting: once per
    // job, when another live batch holds the material (it is asked for again later).
    enum class Kind { started, finished, waiting, tick } kind = Kind::started;
    const BatchJob* job = nullptr;           // started, finished and waiting
    const MaterialRecord* record = nullptr;  // finished only
    int done = 0;                            // finished jobs (compressed or failed) so far
    int total = 0;                           // jobs with action compress
    double elapsed_seconds = 0;
    double eta_seconds = -1;                 // -1 until one job finished
};
// Called from the calling thread; return false to cancel (no new children; running ones get SIGINT, which
// `nmc compress` answers by exiting without writing).
using BatchCallback = std::function<bool(const BatchEvent&)>;

// Runs the compress jobs of `plan` and writes each one's record. `records` gets one record per job of the plan
// (skipped jobs: their existing record with status "skipped"; jobs another batch finished meanwhile: see
// recorded_elsewhere; jobs not run because of cancellation: "pending"), also when the run was cancelled. Status: cancelled when the callback cancelled; io_error when
// a child could not be started. A material's failure is in its record, not in the Status.
Status run_batch(const std::vector<BatchJob>& plan, const BatchRunOptions& options, const BatchCallback& callback,
                 std::vector<MaterialRecord>& records);

// For --report-only: each planned material's record as stored (status "ok"/"failed" as recorded) when it
// matches the current fingerprint and, for "ok", its pack still reads back; otherwise "pending".
std::vector<MaterialRecord> collect_records(const std::vector<BatchJob>& plan);

// The --min-psnr gate: every record with a pack ("ok" or "skipped") whose PSNR (all pack channels, all mips, as
// `nmc validate --min-psnr` measures it) is below `min_psnr_db` becomes "failed" with exit code 6 and the reason.
// Applied to the report only: the records on disk keep "ok", so the pack is not compressed again for a gate (a
// gate changed later judges it anew). min_psnr_db <= 0: no gate.
void apply_min_psnr(std::vector<MaterialRecord>& records, double min_psnr_db);

// The texture of a record with the lowest PSNR; nullptr when it has none.
const TextureRow* worst_texture(const MaterialRecord& record);

// What a report says about the run besides the materials: the settings every material was compressed with (the
// version is settings.tool) and the --min-psnr gate (0: none).
struct BatchReportContext {
    BatchSettings settings;
    double min_psnr_db = 0;
};

// OUT/<stem>.json (the nmc version, the settings, every record field and the worst texture, plus totals),
// OUT/<stem>.md (the version and settings; a table: material, maps, resolution, source bytes, BCn bytes, pack bytes,
// bpp, ratio, PSNR, PSNR8, worst texture, PSNR per texture, time, status; a totals row; then lists of the collapsed
// maps per material, of the images left out of packs and of compress's warnings) and OUT/<stem>.csv (the same
// columns, the warnings, the images left out and the collapsed textures, one texture PSNR column per texture slot,
// and a totals row, for spreadsheets), atomically.
Status write_reports(const std::string& out_dir, const std::string& stem, const std::vector<MaterialRecord>& records,
                     const BatchReportContext& context);

}  // namespace nmc
