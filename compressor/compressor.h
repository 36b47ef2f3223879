// The neural material compressor: trains latent grids and a small network for one material and exports
// them as an .nmc pack (docs/compressor.md, docs/format-spec.md section 8 for the model). LibTorch stays
// behind this header; callers see plain vectors, Status and a progress callback. Never prints.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compressor/rate_control.h"
#include "compressor/training_target.h"
#include "core/status.h"
#include "format/pack.h"
#include "quality/quality_measurement.h"

namespace nmc {

enum class QualityPreset { fast, normal, best };
const char* to_string(QualityPreset p);
std::optional<QualityPreset> quality_preset_from_string(const std::string& s);

// How training steps run (docs/compressor.md): `fused` is the CUDA kernels of compressor/cuda/ (CUDA devices,
// builds with NMC_WITH_CUDA, the default network); `eager` is the model in LibTorch operations (every device);
// `automatic` takes fused where it can run and eager otherwise.
enum class TrainerPath { automatic, fused, eager };
const char* to_string(TrainerPath p);  // "auto", "fused", "eager"
std::optional<TrainerPath> trainer_path_from_string(const std::string& s);

// Steps, batch size and Adam learning rates of a preset (docs/compressor.md, "Presets"): fast 600 x 8192 and normal
// 6000 x 8192 with a network rate of 0.02 (short schedules gain from it: measured +0.5 dB at 600 steps), best
// NTC's 100000 x 65536 with 0.005. On the fused CUDA trainer (`fused`), where 6000 steps take a fraction of a
// second, fast is 10000 and normal NTC's 20000 steps of 65536 texels with 0.005 instead. The latent rate is 0.1
// everywhere.
struct PresetSettings {
    int64_t steps = 0;
    int batch_size = 0;
    float latent_learning_rate = 0.1f;
    float network_learning_rate = 0.005f;
};
PresetSettings preset_settings(QualityPreset p, bool fused = false);

// How Adam updates the latents. Each step's batch touches only some latent texels (a 2K material at grid scale 2
// has a million level-0 texels; a batch of 65,536 texels reads about a quarter of them). dense: every latent, every
// step (torch::optim::Adam: untouched ones keep moving on their decaying momentum); sparse: only the touched latents
// move and only their moments decay (NTC's update, and cheaper: the fused kernel skips the untouched ones).
// automatic: sparse on the fused CUDA trainer (0.084 -> 0.058 ms a step at 2K / 10 bpp on the H200, same quality),
// dense on the eager one (LibTorch's sparse update is 8% slower on the CPU).
enum class LatentAdam { automatic, dense, sparse };
const char* to_string(LatentAdam a);  // "auto", "dense", "sparse"
std::optional<LatentAdam> latent_adam_from_string(const std::string& s);

// What happens to the latents at latent_rounding_fraction of the steps. freeze (NTC's): they are rounded to their
// codes and stop training; the network fine-tunes on them. straight_through: from then on the forward pass samples
// their code values (no more noise) while the float latents keep training with straight-through gradients, so a
// latent can still move to another code; the export rounds them to the codes the last steps used.
enum class LatentRounding { freeze, straight_through };
const char* to_string(LatentRounding r);  // "freeze", "straight-through"
std::optional<LatentRounding> latent_rounding_from_string(const std::string& s);

struct CompressOptions {
    QualityPreset preset = QualityPreset::normal;
    double target_bpp = 5.0;                 // whole file size budget in bits per mip-0 texel
    std::optional<LatentShape> shape;        // overrides rate control when set
    NetworkChoice network;                   // hidden widths 64-64-64, last layer int8 + scale by default
    int64_t steps = 0;                       // 0: the preset's
    int batch_size = 0;                      // texels per step; 0: the preset's
    uint64_t seed = 1;
    std::string device = "cpu";              // "cpu", "cuda" or "cuda:N"
    TrainerPath trainer = TrainerPath::automatic;
    float latent_learning_rate = 0;          // Adam, cosine-decayed to 0; 0: the preset's
    float network_learning_rate = 0;         // 0: the preset's
    // Fractions of the steps after which the latents are rounded (latent_rounding says how) and the weights train
    // through their stored formats. Straight-through from 80% measured +0.13 to +0.82 dB psnr8 against NTC's freeze
    // at 95% on four materials at 100k steps (bench/results/notes-compressor.txt).
    double latent_rounding_fraction = 0.8;
    double weight_rounding_fraction = 0.96;
    LatentAdam latent_adam = LatentAdam::automatic;
    LatentRounding latent_rounding = LatentRounding::straight_through;
    // spec 5.6: the decoding arithmetic the pack is trained for and written with (binary16: format 2.0, the
    // default since the H200 series of 2026-12-01 measured no quality cost; float32: format 1.0).
    Arithmetic arithmetic = Arithmetic::binary16;
    int progress_interval = 10;              // steps between progress callbacks (and cancel checks)
    std::string tool = "nmc";                // written to the pack's encoder info
};

// Whether a run of these options trains on the fused CUDA trainer: not `eager`, a CUDA device the fused kernels
// accept, a build with them, and the network they train (64-64-64). Compressor::create decides the same.
bool trains_fused(const CompressOptions& options);

// The schedule a run of these options trains: the preset's for its trainer (trains_fused), with the options'
// steps, batch size and learning rates where they are set (> 0).
PresetSettings effective_settings(const CompressOptions& options);
int64_t effective_steps(const CompressOptions& options);  // effective_settings(options).steps

struct TrainingProgress {
    int64_t step = 0;            // steps done
    int64_t total_steps = 0;
    double loss = 0;             // weighted MSE of the last batch
    double psnr_estimate_db = 0; // PSNR of the last batch over all channels (training model, not the pack)
    double elapsed_seconds = 0;
    double eta_seconds = 0;
};

// Where quantisation costs quality: the PSNR (all channels, clamped outputs, like the pack's) of the training model
// over a fixed set of texels spread evenly over every mip's texels (no latent noise, no random draw), taken at the
// schedule's phase boundaries. NaN where the run did not pass that point (a phase of zero steps counts as passed).
struct QuantisationTrace {
    double float_model_db = NAN;           // float latents and weights, just before the latents are rounded
    double rounded_latents_db = NAN;       // just after rounding them (spec 6 codes), float weights
    double before_weight_rounding_db = NAN;  // after the fine-tune on rounded latents, float weights
    double rounded_weights_db = NAN;       // the same model with E4M3 / Int8 weights and FP16 biases (the pack's forward)
    double final_db = NAN;                 // after the last step: the model export_pack writes
    int64_t evaluation_texels = 0;         // size of the fixed set
};

// Called every progress_interval steps and after the last one, from the calling thread. Return false to
// cancel: training stops and the call returns StatusCode::cancelled.
using ProgressCallback = std::function<bool(const TrainingProgress&)>;

// One batch's loss and gradients (means over the batch) from Compressor::batch_gradients.
struct StepGradients {
    double loss = 0;                           // weighted MSE
    double squared_error = 0;                  // mean squared error of the clamped output over all channels
    std::vector<float> latents;                // [latent texels * F]; empty once the latents are frozen
    std::vector<std::vector<float>> weights;   // per layer, [N * I] row-major
    std::vector<std::vector<float>> biases;    // per layer, [N]
};

// Trainer state. Not thread-safe; one Compressor per thread. It seeds LibTorch's global generator.
class Compressor {
public:
    // Validates the target and options, picks the latent shape, allocates parameters on the device.
    // invalid_argument for bad options or a budget too small; backend_unavailable for a CUDA device that
    // this LibTorch or this machine lacks. With `warm_start` (a trained compressor of the same target and
    // network widths, any latent shape), the parameters start from its model (compressor/warm_start.h)
    // instead of a random initialisation.
    static Result<std::unique_ptr<Compressor>> create(const TrainingTarget& target, const CompressOptions& options,
                                                      const Compressor* warm_start = nullptr);
    ~Compressor();
    Compressor(const Compressor&) = delete;
    Compressor& operator=(const Compressor&) = delete;

    const LatentShape& latent_shape() const;
    const NetworkShape& network_shape() const;
    int64_t total_steps() const;
    int batch_size() const;
    const std::string& device_name() const;
    TrainerPath trainer_path() const;  // fused or eager, as resolved by create()
    const QuantisationTrace& quantisation_trace() const;  // filled in by train()

    // Runs all remaining training steps (quantising on the schedule). Cancelled -> StatusCode::cancelled.
    Status train(const ProgressCallback& progress = {});

    // The quantised model as a pack (latent codes, E4M3/Int8 weights, FP16 biases, metadata, encoder info;
    // quality left empty). Rounds and freezes the latents first if training has not.
    Result<Pack> export_pack();

    // The loss and gradients of one step on the given texels (flat indices over all mips' texels), computed by
    // `path` (fused: only when this compressor trains fused; eager: LibTorch's autograd) without changing the
    // model. No latent noise (the paths draw different random numbers); quantize_weights: the final phase's
    // forward pass. For checking the fused kernels against autograd.
    Result<StepGradients> batch_gradients(const std::vector<int64_t>& texels, TrainerPath path, bool quantize_weights);

    // The trainer's own forward pass of the quantised model (the model export_pack writes) over every texel
    // of mip `mip`: out[c] = pack channel c after the output transform (spec 8.7), w_m * h_m values.
    Result<std::vector<std::vector<float>>> evaluate_mip(int mip);

private:
    struct Impl;
    explicit Compressor(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

struct CompressResult {
    Pack pack;                    // with quality filled in from the decoded file
    std::vector<uint8_t> file;    // the bytes to write
    LatentShape shape;
    TrainerPath trainer = TrainerPath::eager;  // the path that trained (fused or eager)
    double training_seconds = 0;
    double measure_seconds = 0;   // finish_compression: export, write, read back, decode, measure, serialise
    QuantisationTrace quantisation;
    // Per texture (pack.textures order), measured on the decoded file: whether it kept its source's structure
    // (correlation, contrast, the constant-image floor and the collapse rule of quality/quality_measurement.h).
    std::vector<TextureStructure> structure;
    // Per texture: the HDR map quality (quality/quality_measurement.h hdr_psnr_db()), -1 for other maps.
    std::vector<double> hdr_psnr_db;
};

// Train, export, write, read back, decode with the CPU decoder, measure, and serialise again with the
// measured quality (spec 5.8). Nothing is written to disk.
// The CUDA devices the trainer can use in this process (0 where LibTorch was built without CUDA).
int trainer_cuda_device_count();

Result<CompressResult> compress(const TrainingTarget& target, const CompressOptions& options,
                                const ProgressCallback& progress = {});

// The second half of compress() for a trained compressor: export, write, read back, decode, measure against
// `target` (the same target it was created with, planes included) and serialise with the measured quality.
Result<CompressResult> finish_compression(Compressor& compressor, const TrainingTarget& target);

// Rounds every value to E4M3 with the trainer's LibTorch operations (the ones its forward pass uses), on the
// CPU. Exposed so tests can check it against core's float_to_fp8_e4m3.
std::vector<float> round_to_fp8_e4m3_torch(const std::vector<float>& values);

}  // namespace nmc
