// FusedTraining: the model's tensors and Adam state as raw device pointers for compressor/cuda's kernels, and the
// synchronisation with LibTorch. Only data_ptr, sizes and device of tensors are used here (no ATen CUDA headers), so
// this file builds against a CPU-only LibTorch too.
#include "compressor/fused_training.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace nmc::detail {
namespace {

float* pointer(const torch::Tensor& t) { return t.data_ptr<float>(); }

fused::OutputWeights output_weights(const OutputLayerFormat& f) {
    if (f.weight_type == WeightType::int8) return fused::OutputWeights::int8_scaled;
    return f.has_scale ? fused::OutputWeights::e4m3_scaled : fused::OutputWeights::e4m3;
}

std::vector<float> to_host(const torch::Tensor& t) {
    const torch::Tensor cpu = t.detach().to(torch::kCPU).contiguous();
    return std::vector<float>(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
}

}  // namespace

Status FusedTraining::available(const Model& model, const torch::Device& device) {
    if (!device.is_cuda())
        return Status(StatusCode::invalid_argument, "the fused trainer runs on CUDA devices only (--device cuda[:N])");
    if (!fused::network_supported(model.network.widths))
        return Status(StatusCode::invalid_argument,
                      "the fused trainer trains the default network (round_up(2F + 13, 16) -> 64 -> 64 -> 64 -> C, "
                      "input width at most 48)");
    return fused::check_device(device.has_index() ? device.index() : 0);
}

FusedTraining::FusedTraining(Model& model, int batch_size) : model_(model), batch_size_(batch_size) {}

Result<std::unique_ptr<FusedTraining>> FusedTraining::create(Model& model, const TargetTensors& targets,
                                                             const TrainingTarget& target,
                                                             const OutputLayerFormat& output_layer, int batch_size,
                                                             uint64_t seed, const torch::Device& device) {
    NMC_RETURN_IF_ERROR(available(model, device));
    std::unique_ptr<FusedTraining> f(new FusedTraining(model, batch_size));
    fused::ModelGeometry g;
    g.mip_count = target.mip_count;
    for (int m = 0; m < target.mip_count; ++m) {
        g.mip_width[static_cast<size_t>(m)] = std::max(1, target.width >> m);
        g.mip_height[static_cast<size_t>(m)] = std::max(1, target.height >> m);
    }
    g.level_count = model.shape.level_count;
    for (int k = 0; k < model.shape.level_count; ++k) {
        g.level_width[static_cast<size_t>(k)] = latent_level_size(target.width, model.shape.grid_scale, k);
        g.level_height[static_cast<size_t>(k)] = latent_level_size(target.height, model.shape.grid_scale, k);
    }
    g.feature_count = model.shape.feature_count;
    g.wrap = model.address_mode == AddressMode::wrap;
    g.latent_lo = model.latent_lo;
    g.latent_hi = model.latent_hi;
    g.latent_bits = model.shape.bits;
    g.binary16 = model.arithmetic == Arithmetic::binary16;
    g.input_width = model.network.widths.front();
    g.channel_count = model.network.widths.back();
    g.output_weights = output_weights(output_layer);
    const torch::Tensor weights = targets.loss_weights.to(torch::kCPU).contiguous();
    for (int c = 0; c < g.channel_count; ++c) g.loss_weights[static_cast<size_t>(c)] = weights.data_ptr<float>()[c];

    torch::NoGradGuard no_grad;
    f->latent_grad_ = torch::zeros_like(model.latents);
    f->latent_m_ = torch::zeros_like(model.latents);
    f->latent_v_ = torch::zeros_like(model.latents);
    fused::ModelBuffers b;
    b.latents = pointer(model.latents);
    b.latent_grad = pointer(f->latent_grad_);
    b.latent_m = pointer(f->latent_m_);
    b.latent_v = pointer(f->latent_v_);
    b.targets = pointer(targets.texels);
    for (size_t l = 0; l < model.weights.size(); ++l) {
        for (const torch::Tensor& p : {model.weights[l], model.weights[l], model.biases[l], model.biases[l]})
            f->moments_.push_back(torch::zeros_like(p));
        b.weights[l] = pointer(model.weights[l]);
        b.biases[l] = pointer(model.biases[l]);
        b.weight_m[l] = pointer(f->moments_[4 * l]);
        b.weight_v[l] = pointer(f->moments_[4 * l + 1]);
        b.bias_m[l] = pointer(f->moments_[4 * l + 2]);
        b.bias_v[l] = pointer(f->moments_[4 * l + 3]);
    }
    auto kernels = fused::FusedTrainer::create(device.has_index() ? device.index() : 0, g, b, batch_size, seed);
    if (!kernels.ok()) return kernels.status();
    f->kernels_ = std::move(*kernels);
    return f;
}

Status FusedTraining::begin(bool quantize_weights) {
    NMC_RETURN_IF_ERROR(kernels_->synchronize());
    return kernels_->prepare(quantize_weights);
}

Status FusedTraining::step(int64_t step, const ForwardMode& mode, bool train_latents, bool sparse_latent_adam,
                           bool next_quantize_weights, double latent_learning_rate, double network_learning_rate) {
    fused::StepSettings s;
    s.step = step;
    s.latent_noise = mode.latent_noise;
    s.round_latents = mode.round_latents;
    s.train_latents = train_latents;
    s.sparse_latent_adam = sparse_latent_adam;
    s.quantize_weights = mode.quantize_weights;
    s.next_quantize_weights = next_quantize_weights;
    s.network_learning_rate = static_cast<float>(network_learning_rate);
    s.latent_learning_rate = static_cast<float>(latent_learning_rate);
    s.network_adam_step = ++network_adam_steps_;
    s.latent_adam_step = train_latents ? ++latent_adam_steps_ : latent_adam_steps_;
    return kernels_->step(s, batch_size_);
}

Status FusedTraining::last_loss(double& loss, double& squared_error) { return kernels_->last_loss(loss, squared_error); }

Status FusedTraining::synchronize() { return kernels_->synchronize(); }

Status FusedTraining::latents_replaced() {
    NMC_RETURN_IF_ERROR(kernels_->synchronize());
    kernels_->set_latents(pointer(model_.latents));
    return Status::success();
}

Result<StepGradients> FusedTraining::batch_gradients(const std::vector<int64_t>& texels, bool quantize_weights) {
    std::vector<int32_t> indices;
    indices.reserve(texels.size());
    for (int64_t t : texels) {
        if (t < 0 || t > INT32_MAX)
            return Status(StatusCode::invalid_argument, "texel index " + std::to_string(t) + " out of range");
        indices.push_back(static_cast<int32_t>(t));
    }
    NMC_RETURN_IF_ERROR(kernels_->synchronize());
    auto batch = kernels_->gradients(indices, quantize_weights);
    if (!batch.ok()) return batch.status();
    StepGradients out;
    out.loss = batch->loss;
    out.squared_error = batch->squared_error;
    out.latents = to_host(latent_grad_);
    size_t offset = 0;
    for (size_t l = 0; l < model_.weights.size(); ++l) {
        const auto weights = static_cast<size_t>(model_.weights[l].numel());
        const auto biases = static_cast<size_t>(model_.biases[l].numel());
        out.weights.emplace_back(batch->network.begin() + static_cast<std::ptrdiff_t>(offset),
                                 batch->network.begin() + static_cast<std::ptrdiff_t>(offset + weights));
        offset += weights;
        out.biases.emplace_back(batch->network.begin() + static_cast<std::ptrdiff_t>(offset),
                                batch->network.begin() + static_cast<std::ptrdiff_t>(offset + biases));
        offset += biases;
    }
    // The latent gradient buffer must be zero again before the next training step.
    torch::NoGradGuard no_grad;
    latent_grad_.zero_();
    NMC_RETURN_IF_ERROR(kernels_->synchronize());
    return out;
}

}  // namespace nmc::detail
