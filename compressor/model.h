// The trainable model in LibTorch operations: the decoding procedure of docs/format-spec.md section 8 with
// quantisation-aware training. Internal to nmc_compressor (includes torch; never include from a public
// header). The hot path of a training step (sampling, input assembly, network, loss) is training_loss(); the
// fused CUDA kernels (compressor/cuda/) implement the same step.
#pragma once

#include <torch/types.h>

#include <vector>

#include "compressor/rate_control.h"
#include "format/pack.h"

namespace nmc::detail {

// fp8(x) of spec 2.1 for every element, bit-exact with core's round_to_fp8_e4m3 (NaN stays NaN). No gradient.
torch::Tensor round_fp8(const torch::Tensor& x);

// fp8 rounding in the forward pass, identity in the backward pass (straight-through estimator).
torch::Tensor fp8_ste(const torch::Tensor& x);

// binary16 rounding (ties to even), straight-through.
torch::Tensor fp16_ste(const torch::Tensor& x);

// Small per-mip and per-level tables on the training device (indexes by mip m or level k).
struct GeometryTables {
    torch::Tensor mip_width;         // [M] float
    torch::Tensor mip_height;        // [M] float
    torch::Tensor mip_width_index;   // [M] int64
    torch::Tensor mip_texel_offset;  // [M] int64: first texel of mip m in the flat target tensor
    torch::Tensor mip_level0;        // [M] int64: k0 = min(m, K - 2)
    torch::Tensor level_width;       // [K] float
    torch::Tensor level_height;      // [K] float
    torch::Tensor level_width_index; // [K] int64
    torch::Tensor level_height_index;// [K] int64
    torch::Tensor level_offset;      // [K] int64: first latent texel of level k in the latent tensor
    int64_t total_target_texels = 0;
};

GeometryTables make_geometry_tables(int width, int height, int mip_count, const LatentShape& shape,
                                    const torch::Device& device);

// What the forward pass quantises (the QAT schedule of docs/compressor.md).
struct ForwardMode {
    bool latent_noise = false;      // add uniform noise of +-half a quantisation step to sampled latents
    bool round_latents = false;     // or sample their code values (Model::latent_codes), gradients straight through
    bool quantize_weights = false;  // fake-quantise weights (E4M3 / Int8 + scale) and round biases to FP16
};

// Quantised parameters of one layer as the file stores them (values, not codes), derived from the float
// parameters. weights: E4M3 values or Int8 integers as floats; scales: [N] or undefined; biases: FP16 values.
struct QuantizedLayer {
    torch::Tensor weights;
    torch::Tensor scales;
    torch::Tensor biases;
};

struct Model {
    LatentShape shape;
    NetworkShape network;
    AddressMode address_mode = AddressMode::wrap;
    Arithmetic arithmetic = Arithmetic::float32;  // spec 5.6: the decoding arithmetic the forward pass follows
    float latent_lo = -1.0f;
    float latent_hi = 1.0f;
    GeometryTables tables;
    torch::Tensor latents;               // [sum of w_k * h_k, F]: every level, level k from level_offset[k]
    std::vector<torch::Tensor> weights;  // [N, I] per layer
    std::vector<torch::Tensor> biases;   // [N] per layer

    float latent_step() const { return (latent_hi - latent_lo) / static_cast<float>((1 << shape.bits) - 1); }
    // spec 6's b-bit codes q of latent values (rounded to nearest, within 0 .. 2^b - 1), as float; a latent's code
    // value is q * latent_step() + latent_lo (a multiply, then an add).
    torch::Tensor latent_codes(const torch::Tensor& values) const;
    // spec 6: the values of codes (as latent_codes gives them) in the model's arithmetic: q * step + lo, or
    // f16(q * f16(step) + f16(lo)) for binary16 (from a table of the 2^b values, exact).
    torch::Tensor code_values(const torch::Tensor& codes) const;
    // Layer l's parameters as stored in the file; straight-through gradients to the float parameters.
    QuantizedLayer quantize_layer(size_t l) const;
};

// Spec 8.1-8.6 for a batch of texel queries (x, y, m: int64 [B] on the model's device): the network
// output o, [B, C], before the output transform.
torch::Tensor forward(const Model& model, const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& mip,
                      const ForwardMode& mode);

// The training targets on the device: every mip of every channel, [total texels, C], mip m's texels from
// tables.mip_texel_offset[m] in row-major order, and the normalised per-channel loss weights [C].
struct TargetTensors {
    torch::Tensor texels;
    torch::Tensor loss_weights;
};

struct StepLoss {
    torch::Tensor loss;         // weighted MSE, differentiable
    torch::Tensor squared_error; // mean squared error of the clamped output over all channels, detached
};

// One training step's forward work: draws batch_size texels uniformly over all mips' texels (so mips are
// sampled in proportion to their area), runs the model and returns the loss.
StepLoss training_loss(const Model& model, const TargetTensors& targets, int batch_size, const ForwardMode& mode);

// The same on given texels: flat indices over all mips' texels (int64 [B] on the model's device).
StepLoss training_loss(const Model& model, const TargetTensors& targets, const torch::Tensor& texels,
                       const ForwardMode& mode);

}  // namespace nmc::detail
