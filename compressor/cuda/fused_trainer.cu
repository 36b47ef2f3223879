// FusedTrainer: the host side of the fused training step (workspace, tables, launches, timing). The device code
// and its design are in fused_trainer_kernels.cuh.
#include "compressor/cuda/fused_trainer.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "compressor/cuda/fused_trainer_kernels.cuh"
#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/device_array.h"

namespace nmc::fused {
namespace {

using kernels::kBlockTexels;
using kernels::kThreads;

Status invalid(const std::string& message) { return Status(StatusCode::invalid_argument, "fused trainer: " + message); }

// The shared memory of the widest supported model (input width 48, 16 outputs): what check_device() requires.
int largest_shared_bytes() {
    kernels::Tables t{};
    return kernels::make_layout(kernels::kMaxInputWidth, kMaxChannels, t).total_bytes;
}

// Adam's step size and bias correction for an optimiser's t-th step, as torch::optim::Adam computes them.
void adam_scalars(float learning_rate, int64_t t, float& step_size, float& bias_correction2_sqrt) {
    const double correction1 = 1.0 - std::pow(kAdamBeta1, static_cast<double>(t));
    const double correction2 = 1.0 - std::pow(kAdamBeta2, static_cast<double>(t));
    step_size = static_cast<float>(static_cast<double>(learning_rate) / correction1);
    bias_correction2_sqrt = static_cast<float>(std::sqrt(correction2));
}

}  // namespace

Status check_device(int device) {
    const Result<CudaDeviceInfo> info = query_cuda_device(device);
    if (!info.ok()) return Status(info.status().code(), "fused trainer: " + info.status().message());
    const auto needed = static_cast<size_t>(largest_shared_bytes());
    if (info->compute_major < 8 || info->shared_memory_per_block_optin < needed)
        return Status(StatusCode::backend_unavailable,
                      "fused trainer: " + info->name + " (compute capability " + std::to_string(info->compute_major) +
                          "." + std::to_string(info->compute_minor) + ", " +
                          std::to_string(info->shared_memory_per_block_optin / 1024) +
                          " KiB shared memory per block) lacks what the step kernel needs (compute capability 8.0 "
                          "and " + std::to_string((needed + 1023) / 1024) + " KiB); use --trainer eager");
    return Status::success();
}

bool network_supported(const std::vector<int>& widths) {
    if (widths.size() != kLayerCount + 1) return false;
    const int input = widths[0];
    if (input != 16 && input != 32 && input != kernels::kMaxInputWidth) return false;
    for (int l = 1; l < kLayerCount; ++l)
        if (widths[static_cast<size_t>(l)] != kHiddenWidth) return false;
    return widths.back() >= 1 && widths.back() <= kMaxChannels;
}

struct FusedTrainer::Impl {
    int device = 0;
    ModelGeometry geometry;
    ModelBuffers buffers;
    int max_batch = 0;
    uint64_t seed = 0;
    kernels::Tables tables{};
    kernels::SharedLayout layout;
    int parameters = 0;
    int partial_stride = 0;
    int rows = 0;               // output rows of all layers: one update block each
    int multiprocessors = 0;
    int total_texels = 0;
    size_t latent_floats = 0;
    float latent_step = 0;
    cudaStream_t stream = nullptr;
    DeviceArray<uint8_t> image;
    DeviceArray<kernels::Tables> device_tables;
    DeviceArray<float> partials;
    DeviceArray<float> loss;
    DeviceArray<int32_t> given_texels;
    DeviceArray<float> gradient_out;
    bool timing = false;
    cudaEvent_t events[4] = {};
    KernelTimes times;

    ~Impl() {
        for (cudaEvent_t e : events)
            if (e != nullptr) cudaEventDestroy(e);
        if (stream != nullptr) cudaStreamDestroy(stream);
    }

    int train_blocks(int batch) const { return std::min(multiprocessors, (batch + kBlockTexels - 1) / kBlockTexels); }
    kernels::TrainArgs train_args(int batch, int64_t step, bool latent_noise, bool round_latents, bool train_latents,
                                  const int32_t* given) const;
    kernels::UpdateArgs update_args(int partial_blocks, int batch, bool quantize) const;
    Status record(int event);
    Status launch_train(const kernels::TrainArgs& args, int blocks);
    Status launch_update(const kernels::UpdateArgs& args);
};

kernels::TrainArgs FusedTrainer::Impl::train_args(int batch, int64_t step, bool latent_noise, bool round_latents,
                                                  bool train_latents, const int32_t* given) const {
    kernels::TrainArgs a;
    a.image = reinterpret_cast<const uint4*>(image.get());
    a.tables = device_tables.get();
    a.latents = buffers.latents;
    a.latent_grad = buffers.latent_grad;
    a.targets = buffers.targets;
    a.given_texels = given;
    a.partials = partials.get();
    a.partial_stride = partial_stride;
    a.parameters = parameters;
    a.image_bytes = layout.image_bytes;
    a.tables_offset = layout.tables_offset;
    a.scratch_offset = layout.scratch_offset;
    a.loss_offset = layout.loss_offset;
    a.batch = batch;
    a.total_texels = total_texels;
    a.mip_count = geometry.mip_count;
    a.level_count = geometry.level_count;
    a.features = geometry.feature_count;
    a.input_width = geometry.input_width;
    a.channels = geometry.channel_count;
    a.wrap = geometry.wrap ? 1 : 0;
    a.latent_noise = latent_noise ? 1 : 0;
    a.round_latents = round_latents ? 1 : 0;
    a.binary16 = geometry.binary16 ? 1 : 0;
    a.latent_lo = geometry.latent_lo;
    a.train_latents = train_latents ? 1 : 0;
    a.weight_units = 0;
    a.bias_units = 0;
    for (int l = 0; l < kLayerCount; ++l) {
        const int strips = kernels::layer_padded_outputs(l) / 16;
        a.weight_units += strips * kernels::layer_inputs(l, geometry.input_width) / 16;
        a.bias_units += strips;
    }
    a.latent_step = latent_step;
    a.latent_grad_factor = 1.0f / (kernels::kGradientScale * static_cast<float>(batch));
    // A different stream of hash values for every (seed, step).
    a.stream_key = kernels::mix64(seed ^ kernels::mix64(static_cast<uint64_t>(step) + 0x632BE59BD9B4E019ull));
    return a;
}

kernels::UpdateArgs FusedTrainer::Impl::update_args(int partial_blocks, int batch, bool quantize) const {
    kernels::UpdateArgs u;
    u.partials = partials.get();
    u.partial_blocks = partial_blocks;
    u.partial_stride = partial_stride;
    u.tables = device_tables.get();
    u.input_width = geometry.input_width;
    u.parameters = parameters;
    int row = 0;
    for (int l = 0; l < kLayerCount; ++l) {
        u.row_start[l] = row;
        row += tables.outputs[l];
        u.weights[l] = buffers.weights[static_cast<size_t>(l)];
        u.biases[l] = buffers.biases[static_cast<size_t>(l)];
        u.weight_m[l] = buffers.weight_m[static_cast<size_t>(l)];
        u.weight_v[l] = buffers.weight_v[static_cast<size_t>(l)];
        u.bias_m[l] = buffers.bias_m[static_cast<size_t>(l)];
        u.bias_v[l] = buffers.bias_v[static_cast<size_t>(l)];
    }
    u.row_start[kLayerCount] = row;
    const float batch_f = static_cast<float>(std::max(batch, 1));
    u.gradient_factor = 1.0f / (kernels::kGradientScale * batch_f);
    u.quantize = quantize ? 1 : 0;
    u.output_weights = static_cast<int>(geometry.output_weights);
    u.image = image.get();
    u.loss_out = loss.get();
    u.loss_factor = 1.0f / batch_f;
    u.squared_factor = 1.0f / (batch_f * static_cast<float>(geometry.channel_count));
    return u;
}

Status FusedTrainer::Impl::record(int event) {
    if (timing) NMC_CUDA_RETURN_IF_ERROR(cudaEventRecord(events[event], stream));
    return Status::success();
}

Status FusedTrainer::Impl::launch_train(const kernels::TrainArgs& args, int blocks) {
    kernels::train_kernel<<<blocks, kThreads, static_cast<size_t>(layout.total_bytes), stream>>>(args);
    NMC_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::success();
}

Status FusedTrainer::Impl::launch_update(const kernels::UpdateArgs& args) {
    kernels::network_update_kernel<<<rows, kThreads, 0, stream>>>(args);
    NMC_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::success();
}

FusedTrainer::FusedTrainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FusedTrainer::~FusedTrainer() = default;

Result<std::unique_ptr<FusedTrainer>> FusedTrainer::create(int device, const ModelGeometry& geometry,
                                                          const ModelBuffers& buffers, int max_batch, uint64_t seed) {
    NMC_RETURN_IF_ERROR(check_device(device));
    const ModelGeometry& g = geometry;
    if (g.mip_count < 1 || g.mip_count > kMaxMips) return invalid("mip count must be 1..16");
    if (g.level_count < 2 || g.level_count > kMaxLevels) return invalid("latent level count must be 2..16");
    if (g.feature_count < 1 || g.feature_count > 16) return invalid("feature count must be 1..16");
    if (g.input_width != padded_network_input_count(g.feature_count) || g.input_width > kernels::kMaxInputWidth)
        return invalid("input width " + std::to_string(g.input_width) + " is not round_up(2F + 13, 16) <= 48");
    if (g.channel_count < 1 || g.channel_count > kMaxChannels) return invalid("channel count must be 1..16");
    if (!(g.latent_hi > g.latent_lo) || g.latent_bits < 1 || g.latent_bits > 8)
        return invalid("latent range or bits out of range");
    if (max_batch < 1 || max_batch > (1 << 24)) return invalid("batch size must be 1..16777216");
    if (buffers.latents == nullptr || buffers.latent_grad == nullptr || buffers.latent_m == nullptr ||
        buffers.latent_v == nullptr || buffers.targets == nullptr)
        return invalid("a latent or target buffer is missing");

    auto impl = std::make_unique<Impl>();
    Impl& s = *impl;
    s.device = device;
    s.geometry = geometry;
    s.buffers = buffers;
    s.max_batch = max_batch;
    s.seed = seed;
    kernels::Tables& t = s.tables;
    int64_t texels = 0;
    for (int m = 0; m < g.mip_count; ++m) {
        t.mip_offset[m] = static_cast<int>(texels);
        t.mip_width[m] = g.mip_width[static_cast<size_t>(m)];
        t.mip_height[m] = g.mip_height[static_cast<size_t>(m)];
        texels += static_cast<int64_t>(t.mip_width[m]) * t.mip_height[m];
        if (texels >= (int64_t{1} << 31)) return invalid("more than 2^31 texels in the mip chain");
    }
    t.mip_offset[g.mip_count] = static_cast<int>(texels);
    s.total_texels = static_cast<int>(texels);
    int64_t latent_texels = 0;
    for (int k = 0; k < g.level_count; ++k) {
        t.level_offset[k] = static_cast<int>(latent_texels);
        t.level_width[k] = g.level_width[static_cast<size_t>(k)];
        t.level_height[k] = g.level_height[static_cast<size_t>(k)];
        latent_texels += static_cast<int64_t>(t.level_width[k]) * t.level_height[k];
    }
    if (latent_texels * g.feature_count >= (int64_t{1} << 31)) return invalid("more than 2^31 latent values");
    s.latent_floats = static_cast<size_t>(latent_texels) * static_cast<size_t>(g.feature_count);
    for (int c = 0; c < g.channel_count; ++c) {
        t.loss_weight[c] = g.loss_weights[static_cast<size_t>(c)];
        t.grad_weight[c] = 2.0f * g.loss_weights[static_cast<size_t>(c)] * kernels::kGradientScale;
    }
    s.layout = kernels::make_layout(g.input_width, g.channel_count, t);
    s.parameters = kernels::parameter_count(t);
    s.partial_stride = round_up(s.parameters + 2, 4);
    s.rows = 0;
    for (int l = 0; l < kLayerCount; ++l) s.rows += t.outputs[l];
    s.latent_step = (g.latent_hi - g.latent_lo) / static_cast<float>((1 << g.latent_bits) - 1);

    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    const Result<CudaDeviceInfo> info = query_cuda_device(device);
    if (!info.ok()) return Status(info.status().code(), "fused trainer: " + info.status().message());
    s.multiprocessors = info->multiprocessors;
    NMC_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    for (cudaEvent_t& e : s.events) NMC_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
    NMC_RETURN_IF_ERROR(device_alloc(static_cast<size_t>(s.layout.image_bytes), s.image));
    // Zero: the padding columns and the padded output rows stay zero (zero weights, biases and scales).
    NMC_CUDA_RETURN_IF_ERROR(cudaMemset(s.image.get(), 0, static_cast<size_t>(s.layout.image_bytes)));
    NMC_RETURN_IF_ERROR(device_alloc(1, s.device_tables));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(s.device_tables.get(), &t, sizeof t, cudaMemcpyHostToDevice));
    NMC_RETURN_IF_ERROR(device_alloc(static_cast<size_t>(s.multiprocessors) * static_cast<size_t>(s.partial_stride), s.partials));
    NMC_RETURN_IF_ERROR(device_alloc(2, s.loss));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemset(s.loss.get(), 0, 2 * sizeof(float)));
    NMC_RETURN_IF_ERROR(device_alloc(static_cast<size_t>(max_batch), s.given_texels));
    NMC_RETURN_IF_ERROR(device_alloc(static_cast<size_t>(s.parameters), s.gradient_out));
    NMC_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernels::train_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  s.layout.total_bytes));
    return std::unique_ptr<FusedTrainer>(new FusedTrainer(std::move(impl)));
}

void FusedTrainer::set_latents(float* latents) { impl_->buffers.latents = latents; }

Status FusedTrainer::prepare(bool quantize_weights) {
    Impl& s = *impl_;
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(s.device));
    return s.launch_update(s.update_args(0, 1, quantize_weights));
}

Status FusedTrainer::step(const StepSettings& settings, int batch) {
    Impl& s = *impl_;
    if (batch < 1 || batch > s.max_batch)
        return invalid("batch " + std::to_string(batch) + " outside 1.." + std::to_string(s.max_batch));
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(s.device));
    const int blocks = s.train_blocks(batch);
    NMC_RETURN_IF_ERROR(s.record(0));
    NMC_RETURN_IF_ERROR(s.launch_train(
        s.train_args(batch, settings.step, settings.latent_noise, settings.round_latents, settings.train_latents,
                     nullptr),
        blocks));
    NMC_RETURN_IF_ERROR(s.record(1));
    kernels::UpdateArgs update = s.update_args(blocks, batch, settings.next_quantize_weights);
    update.adam = 1;
    adam_scalars(settings.network_learning_rate, settings.network_adam_step, update.step_size,
                 update.bias_correction2_sqrt);
    NMC_RETURN_IF_ERROR(s.launch_update(update));
    NMC_RETURN_IF_ERROR(s.record(2));
    if (settings.train_latents) {
        float step_size = 0;
        float correction = 0;
        adam_scalars(settings.latent_learning_rate, settings.latent_adam_step, step_size, correction);
        const ModelBuffers& b = s.buffers;
        const float lo = s.geometry.latent_lo;
        const float hi = s.geometry.latent_hi;
        if (s.latent_floats % 4 == 0) {
            const size_t n4 = s.latent_floats / 4;
            const auto blocks4 = static_cast<unsigned>(
                std::min<size_t>((n4 + kThreads - 1) / kThreads, static_cast<size_t>(s.multiprocessors) * 8));
            const auto kernel =
                settings.sparse_latent_adam ? kernels::latent_update_kernel<true> : kernels::latent_update_kernel<false>;
            kernel<<<blocks4, kThreads, 0, s.stream>>>(
                reinterpret_cast<float4*>(b.latents), reinterpret_cast<float4*>(b.latent_grad),
                reinterpret_cast<float4*>(b.latent_m), reinterpret_cast<float4*>(b.latent_v), n4, step_size, correction,
                lo, hi);
        } else {
            const auto blocks1 = static_cast<unsigned>(std::min<size_t>(
                (s.latent_floats + kThreads - 1) / kThreads, static_cast<size_t>(s.multiprocessors) * 8));
            const auto kernel = settings.sparse_latent_adam ? kernels::latent_update_scalar_kernel<true>
                                                            : kernels::latent_update_scalar_kernel<false>;
            kernel<<<blocks1, kThreads, 0, s.stream>>>(b.latents, b.latent_grad, b.latent_m, b.latent_v,
                                                       s.latent_floats, step_size, correction, lo, hi);
        }
        NMC_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    NMC_RETURN_IF_ERROR(s.record(3));
    if (s.timing) {
        NMC_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(s.events[3]));
        float ms[3] = {};
        for (int i = 0; i < 3; ++i) NMC_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms[i], s.events[i], s.events[i + 1]));
        s.times.steps += 1;
        s.times.train_ms += ms[0];
        s.times.network_update_ms += ms[1];
        s.times.latent_update_ms += ms[2];
    }
    return Status::success();
}

Status FusedTrainer::synchronize() {
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(impl_->device));
    NMC_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(impl_->stream));
    NMC_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
    return Status::success();
}

Status FusedTrainer::last_loss(double& loss, double& squared_error) {
    Impl& s = *impl_;
    float host[2] = {};
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(s.device));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host, s.loss.get(), sizeof host, cudaMemcpyDeviceToHost, s.stream));
    NMC_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
    loss = host[0];
    squared_error = host[1];
    return Status::success();
}

Result<BatchGradients> FusedTrainer::gradients(const std::vector<int32_t>& texels, bool quantize_weights) {
    Impl& s = *impl_;
    const auto batch = static_cast<int>(texels.size());
    if (batch < 1 || batch > s.max_batch)
        return invalid("batch " + std::to_string(batch) + " outside 1.." + std::to_string(s.max_batch));
    for (int32_t texel : texels)
        if (texel < 0 || texel >= s.total_texels)
            return invalid("texel " + std::to_string(texel) + " outside 0.." + std::to_string(s.total_texels - 1));
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(s.device));
    NMC_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(s.buffers.latent_grad, 0, s.latent_floats * sizeof(float), s.stream));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(s.given_texels.get(), texels.data(), texels.size() * sizeof(int32_t),
                                             cudaMemcpyHostToDevice, s.stream));
    NMC_RETURN_IF_ERROR(s.launch_update(s.update_args(0, batch, quantize_weights)));
    const int blocks = s.train_blocks(batch);
    NMC_RETURN_IF_ERROR(s.launch_train(s.train_args(batch, 0, false, false, true, s.given_texels.get()), blocks));
    kernels::UpdateArgs update = s.update_args(blocks, batch, quantize_weights);
    update.gradient_out = s.gradient_out.get();
    NMC_RETURN_IF_ERROR(s.launch_update(update));
    BatchGradients out;
    out.network.resize(static_cast<size_t>(s.parameters));
    float loss[2] = {};
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.network.data(), s.gradient_out.get(), out.network.size() * sizeof(float),
                                             cudaMemcpyDeviceToHost, s.stream));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(loss, s.loss.get(), sizeof loss, cudaMemcpyDeviceToHost, s.stream));
    NMC_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
    out.loss = loss[0];
    out.squared_error = loss[1];
    return out;
}

void FusedTrainer::enable_kernel_timing(bool on) {
    impl_->timing = on;
    impl_->times = KernelTimes{};
}

KernelTimes FusedTrainer::kernel_times() const { return impl_->times; }

}  // namespace nmc::fused
