// The fused CUDA training step of the compressor's model (docs/compressor.md, "Fused CUDA training"): batch
// drawing, latent sampling, the network's forward and backward pass with the quantisation-aware schedule, the
// loss and Adam, as three kernels over raw device pointers. CUDA-free and torch-free header: the trainer's
// LibTorch glue (compressor/fused_training.cpp) passes its tensors' device pointers, the benchmark its own buffers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "compressor/adam_constants.h"
#include "core/status.h"

namespace nmc::fused {

constexpr int kMaxMips = 16;
constexpr int kMaxLevels = 16;
constexpr int kMaxChannels = 16;
constexpr int kLayerCount = 4;    // the default network: input -> 64 -> 64 -> 64 -> C (spec 5.6)
constexpr int kHiddenWidth = 64;

// The last layer's stored format (compressor/rate_control.h OutputLayerFormat).
enum class OutputWeights { int8_scaled, e4m3, e4m3_scaled };

// Material and model dimensions (docs/format-spec.md 5.2, 5.5, 5.6) and the loss weights.
struct ModelGeometry {
    int mip_count = 0;                            // M, 1..16
    std::array<int, kMaxMips> mip_width{};        // w_m, h_m
    std::array<int, kMaxMips> mip_height{};
    int level_count = 0;                          // K, 2..16
    std::array<int, kMaxLevels> level_width{};    // w_k, h_k
    std::array<int, kMaxLevels> level_height{};
    int feature_count = 0;                        // F, 1..16
    bool wrap = true;                             // latent addressing: wrap or clamp (spec 8.3)
    float latent_lo = -1.0f;                      // latent value range; the noise is +-half a step of
    float latent_hi = 1.0f;                       // (hi - lo) / (2^bits - 1)
    int latent_bits = 4;
    bool binary16 = false;                        // spec 5.6's binary16 arithmetic in the forward pass
    int input_width = 0;                          // layer 0's input: round_up(2F + 13, 16), at most 48
    int channel_count = 0;                        // C, 1..16
    OutputWeights output_weights = OutputWeights::int8_scaled;
    std::array<float, kMaxChannels> loss_weights{};  // per channel, summing to 1
};

// Device memory owned by the caller: float32, contiguous, on the trainer's device.
struct ModelBuffers {
    float* latents = nullptr;      // [latent texels, F], level k from the sum of the earlier levels' texels
    float* latent_grad = nullptr;  // same shape; must be zero before the first step (the latent update re-zeroes it)
    float* latent_m = nullptr;     // Adam moments of the latents, same shape, zero at the start
    float* latent_v = nullptr;
    const float* targets = nullptr;  // [texels of all mips, C]: mip m's texels row-major after the earlier mips'
    std::array<float*, kLayerCount> weights{};    // [N, I] row-major (the last layer's N = C)
    std::array<float*, kLayerCount> biases{};     // [N]
    std::array<float*, kLayerCount> weight_m{};   // Adam moments, same shapes, zero at the start
    std::array<float*, kLayerCount> weight_v{};
    std::array<float*, kLayerCount> bias_m{};
    std::array<float*, kLayerCount> bias_v{};
};

// What one step does (docs/compressor.md's quantisation-aware schedule).
struct StepSettings {
    int64_t step = 0;                    // with the seed, selects the batch and the latent noise
    bool latent_noise = true;            // uniform noise of +-half a quantisation step on the sampled latents
    bool round_latents = false;          // or their code values, gradients straight through (LatentRounding)
    bool train_latents = true;           // latent gradients and the latent Adam update (off once frozen)
    bool sparse_latent_adam = false;     // Adam moves only the latents the batch touched (CompressOptions)
    bool quantize_weights = false;       // this step's forward pass uses the stored weight formats ...
    bool next_quantize_weights = false;  // ... and the next step's (the update prepares its weights)
    float network_learning_rate = 0;     // this step's (decayed) Adam learning rates
    float latent_learning_rate = 0;
    int64_t network_adam_step = 1;       // each optimiser's 1-based step count (Adam's bias correction)
    int64_t latent_adam_step = 1;
};

// One batch's loss and gradients, for checking the kernels (FusedTrainer::gradients).
struct BatchGradients {
    double loss = 0;           // weighted MSE, as the eager trainer's training_loss
    double squared_error = 0;  // mean squared error of the clamped output over all channels
    // Per layer, the weight gradient [N * I] then the bias gradient [N]: the mean over the batch.
    std::vector<float> network;
};

// Accumulated device time per kernel since timing was enabled (cudaEvent pairs around each launch).
struct KernelTimes {
    int64_t steps = 0;
    double train_ms = 0;          // sampling, forward, loss, backward, latent gradients
    double network_update_ms = 0; // reduction of the per-block weight gradients, Adam, next step's weights
    double latent_update_ms = 0;  // Adam over the latents (dense, or the touched ones), clamp, gradient reset
};

// The requirement check behind `auto`: compute capability 8.0+ with the shared memory the step kernel needs.
// backend_unavailable names what is missing.
Status check_device(int device);

// The networks this path trains: 4 layers, input width 16, 32 or 48, hidden 64, 1..16 outputs.
bool network_supported(const std::vector<int>& widths);

// One trainer per model, used from one thread. Its work runs on its own CUDA stream; synchronize() before the
// caller's own device work reads or writes the buffers (LibTorch's stream is not ordered with it).
class FusedTrainer {
public:
    // Allocates the workspace for batches of up to `max_batch` texels on `device`. invalid_argument for a
    // geometry out of range; backend_unavailable from check_device().
    static Result<std::unique_ptr<FusedTrainer>> create(int device, const ModelGeometry& geometry,
                                                         const ModelBuffers& buffers, int max_batch, uint64_t seed);
    ~FusedTrainer();
    FusedTrainer(const FusedTrainer&) = delete;
    FusedTrainer& operator=(const FusedTrainer&) = delete;

    // The latent tensor moved (the caller froze the latents into a new tensor).
    void set_latents(float* latents);

    // Converts the float weights into the forward pass's formats. Needed before the first step and after the
    // caller changed the weights; step() keeps them current afterwards.
    Status prepare(bool quantize_weights);

    // One training step on `batch` (1..max_batch) drawn texels: launches only, no host synchronisation.
    Status step(const StepSettings& settings, int batch);

    // Waits for this trainer's work and everything else on the device.
    Status synchronize();

    // The loss and squared error of the last step (synchronises).
    Status last_loss(double& loss, double& squared_error);

    // Loss and gradients on the given texels (flat indices over all mips' texels) without updating anything;
    // the latent gradients land in buffers.latent_grad (zeroed first). For tests against LibTorch's autograd.
    Result<BatchGradients> gradients(const std::vector<int32_t>& texels, bool quantize_weights);

    // With timing on, every step waits for its kernels and adds their event times (for benchmarks only).
    void enable_kernel_timing(bool on);
    KernelTimes kernel_times() const;

private:
    struct Impl;
    explicit FusedTrainer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace nmc::fused
