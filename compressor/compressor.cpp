// The Compressor: parameters, the Adam training loop with the quantisation-aware schedule, export to a Pack,
// and compress(), which measures the written pack with the CPU decoder. The model itself is in model.cpp.
#include "compressor/compressor.h"

#include <ATen/Context.h>
#include <torch/autograd.h>
#include <torch/cuda.h>
#include <torch/optim/adam.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <new>

#include "compressor/adam_constants.h"
#include "compressor/model.h"
#include "compressor/openblas_core.h"
#include "compressor/warm_start.h"
#include "core/device_name.h"
#include "core/number_formats.h"
#include "format/container.h"
#if NMC_HAS_FUSED_TRAINER
#include "compressor/fused_training.h"
#endif
#include "decoder/cpu/cpu_decoder.h"
#include "quality/quality_measurement.h"

namespace nmc {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int64_t kEvaluationChunk = 65536;
// The quantisation trace's fixed texel set: as many texels as a batch of NTC's schedule on a GPU, fewer on the CPU
// (five evaluations of 16,384 texels add about a second to a CPU run).
constexpr int64_t kTraceTexelsCuda = 65536;
constexpr int64_t kTraceTexelsCpu = 16384;

// Every LibTorch call goes through here: a c10::Error (or any exception) becomes a Status naming the step.
template <typename F>
auto torch_call(const char* what, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const c10::Error& e) {
        // LibTorch's allocators report failure as a c10::Error ("DefaultCPUAllocator: not enough memory: you
        // tried to allocate N bytes", "CUDA out of memory").
        const std::string message = e.what_without_backtrace();
        const bool allocation = message.find("not enough memory") != std::string::npos ||
                                message.find("out of memory") != std::string::npos;
        return Status(allocation ? StatusCode::out_of_memory : StatusCode::internal,
                      std::string("LibTorch failed while ") + what + ": " + message);
    } catch (const std::bad_alloc& e) {
        return Status(StatusCode::out_of_memory, std::string("out of memory while ") + what + " (" + e.what() + ")");
    } catch (const std::exception& e) {
        return Status(StatusCode::internal, std::string("failed while ") + what + ": " + e.what());
    }
}

}  // namespace

int trainer_cuda_device_count() {
    return at::hasCUDA() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

namespace {

Result<torch::Device> parse_device(const std::string& name) {
    const std::optional<int> parsed = cuda_index_of_device(name);
    if (!parsed)
        return Status(StatusCode::invalid_argument, "unknown device '" + name + "': expected cpu, cuda or cuda:N");
    if (*parsed < 0) return torch::Device(torch::kCPU);
    const int index = *parsed;
    if (!at::hasCUDA())
        return Status(StatusCode::backend_unavailable,
                      "device '" + name + "': this build's LibTorch has no CUDA support; use --device cpu, or "
                      "build nmc against a CUDA-enabled LibTorch (CMAKE_PREFIX_PATH)");
    const int count = trainer_cuda_device_count();
    if (index >= count)
        return Status(StatusCode::backend_unavailable, "device '" + name + "': " + std::to_string(count) +
                                                           " CUDA device(s) visible to LibTorch");
    return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(index));
}

Status check_shape(const LatentShape& s) {
    const bool bits_ok = s.bits == 1 || s.bits == 2 || s.bits == 4 || s.bits == 8;
    if (s.grid_scale < 1 || s.grid_scale > 16 || s.feature_count < 1 || s.feature_count > 16 || !bits_ok ||
        s.level_count < 2 || s.level_count > 16)
        return Status(StatusCode::invalid_argument,
                      "latent shape out of range (grid scale 1..16, features 1..16, bits 1/2/4/8, levels 2..16): "
                      "got S=" + std::to_string(s.grid_scale) + " F=" + std::to_string(s.feature_count) +
                          " b=" + std::to_string(s.bits) + " K=" + std::to_string(s.level_count));
    return Status::success();
}

Status check_options(const CompressOptions& o) {
    const auto fail = [](const std::string& m) { return Status(StatusCode::invalid_argument, m); };
    if (o.steps < 0) return fail("steps must be >= 0, got " + std::to_string(o.steps));
    if (o.batch_size < 0 || o.batch_size > (1 << 24))
        return fail("batch size must be 0 (preset) or 1..16777216, got " + std::to_string(o.batch_size));
    if (!(o.latent_learning_rate >= 0) || !(o.network_learning_rate >= 0))
        return fail("learning rates must be >= 0 (0: the preset's)");
    if (!(o.latent_rounding_fraction >= 0 && o.latent_rounding_fraction <= 1) ||
        !(o.weight_rounding_fraction >= 0 && o.weight_rounding_fraction <= 1))
        return fail("quantisation schedule fractions must lie in [0, 1]");
    if (o.progress_interval < 1) return fail("progress interval must be >= 1");
    return check_network_choice(o.network);
}

double psnr_of_mse(double mse) { return mse > 0 ? -10.0 * std::log10(mse) : 99.0; }

}  // namespace

const char* to_string(QualityPreset p) {
    switch (p) {
        case QualityPreset::fast: return "fast";
        case QualityPreset::normal: return "normal";
        case QualityPreset::best: return "best";
    }
    return "unknown";
}

std::optional<QualityPreset> quality_preset_from_string(const std::string& s) {
    for (QualityPreset p : {QualityPreset::fast, QualityPreset::normal, QualityPreset::best})
        if (s == to_string(p)) return p;
    return std::nullopt;
}

const char* to_string(TrainerPath p) {
    switch (p) {
        case TrainerPath::automatic: return "auto";
        case TrainerPath::fused: return "fused";
        case TrainerPath::eager: return "eager";
    }
    return "unknown";
}

std::optional<TrainerPath> trainer_path_from_string(const std::string& s) {
    for (TrainerPath p : {TrainerPath::automatic, TrainerPath::fused, TrainerPath::eager})
        if (s == to_string(p)) return p;
    return std::nullopt;
}

const char* to_string(LatentAdam a) {
    switch (a) {
        case LatentAdam::automatic: return "auto";
        case LatentAdam::dense: return "dense";
        case LatentAdam::sparse: return "sparse";
    }
    return "unknown";
}

std::optional<LatentAdam> latent_adam_from_string(const std::string& s) {
    for (LatentAdam a : {LatentAdam::automatic, LatentAdam::dense, LatentAdam::sparse})
        if (s == to_string(a)) return a;
    return std::nullopt;
}

const char* to_string(LatentRounding r) {
    return r == LatentRounding::straight_through ? "straight-through" : "freeze";
}

std::optional<LatentRounding> latent_rounding_from_string(const std::string& s) {
    for (LatentRounding r : {LatentRounding::freeze, LatentRounding::straight_through})
        if (s == to_string(r)) return r;
    return std::nullopt;
}

bool trains_fused(const CompressOptions& options) {
#if NMC_HAS_FUSED_TRAINER
    // The kernels' own rule on the hidden layers (any F gives an input width they take, any C up to 16 an output).
    if (options.trainer == TrainerPath::eager ||
        !fused::network_supported(nmc::network_shape(1, 1, options.network).widths))
        return false;
    const std::optional<int> index = cuda_index_of_device(options.device);
    return index && *index >= 0 && fused::check_device(*index).ok();
#else
    (void)options;
    return false;
#endif
}

PresetSettings effective_settings(const CompressOptions& options) {
    PresetSettings s = preset_settings(options.preset, trains_fused(options));
    if (options.steps > 0) s.steps = options.steps;
    if (options.batch_size > 0) s.batch_size = options.batch_size;
    if (options.latent_learning_rate > 0) s.latent_learning_rate = options.latent_learning_rate;
    if (options.network_learning_rate > 0) s.network_learning_rate = options.network_learning_rate;
    return s;
}

int64_t effective_steps(const CompressOptions& options) { return effective_settings(options).steps; }

PresetSettings preset_settings(QualityPreset p, bool fused) {
    switch (p) {
        case QualityPreset::fast:
            // On the fused trainer, half of normal's schedule: ambientcg_metal009_2k at NTC's 5 bpp size on the H200
            // reached 44.79 dB psnr8 in 1.5 s of training (normal's 20k steps: 45.08 in 2.7 s; NTC at 20k: 44.83).
            return fused ? PresetSettings{10000, 65536, 0.1f, 0.005f} : PresetSettings{600, 8192, 0.1f, 0.02f};
        case QualityPreset::normal:
            // The H200 series of 2026-11-30 at NTC's 20k x 65536 with 0.005 (docs/benchmarks.md): 2-3 s of training
            // for a 2K material on the fused trainer, and above NTC at 20k steps on average. On the CPU 6000 x 8192:
            // the 512^2 demo in 93 s of training on 2 idle cores, +0.77 dB psnr8 over 3000 steps (which took 45 s)
            // and +0.48 over 3000 x 16384 in the same time (bench/results/notes-compressor.txt, "Presets").
            return fused ? PresetSettings{20000, 65536, 0.1f, 0.005f} : PresetSettings{6000, 8192, 0.1f, 0.02f};
        case QualityPreset::best: return {100000, 65536, 0.1f, 0.005f};
    }
    return {6000, 8192, 0.1f, 0.02f};
}

struct Compressor::Impl {
    std::unique_ptr<OneOpenBlasThread> one_blas_thread;  // on the CPU: products independent of the thread count
    TrainingTarget info;  // the target's description; planes moved to the device and cleared
    CompressOptions options;
    torch::Device device{torch::kCPU};
    std::string device_name;
    detail::Model model;
    detail::TargetTensors targets;
    std::unique_ptr<torch::optim::Adam> latent_optimizer;
    std::unique_ptr<torch::optim::Adam> network_optimizer;
    int64_t total_steps = 0;
    int64_t step = 0;
    int batch_size = 0;
    double latent_learning_rate = 0;
    double network_learning_rate = 0;
    bool latents_frozen = false;
    bool latents_straight_through = false;  // LatentRounding::straight_through's phase: code values in the forward
    torch::Tensor latent_codes;  // [latent texels, F] uint8 on the CPU once frozen
    // The eager trainer's sparse latent Adam (LatentAdam::sparse): moments and step count.
    torch::Tensor latent_m;
    torch::Tensor latent_v;
    int64_t latent_adam_steps = 0;
    double training_seconds = 0;
    QuantisationTrace trace;
#if NMC_HAS_FUSED_TRAINER
    std::unique_ptr<detail::FusedTraining> fused;  // set when training runs the fused CUDA kernels
#endif

    Status choose_trainer(const TrainingTarget& target);
    bool trains_fused() const;
    void freeze_latents();
    Status freeze_latents_while_training();
    double learning_rate_factor() const;
    // The training loop's device work, fused or eager: before and after a run of steps, one step (`loss` is left
    // empty by the fused path, which keeps the last loss on the device), and the last step's loss figures.
    Status begin_steps(bool quantize_weights);
    Status run_step(const detail::ForwardMode& mode, bool next_quantize_weights, detail::StepLoss& loss);
    Status batch_loss(const detail::StepLoss& loss, double& weighted, double& squared_error);
    Status end_steps();
    detail::StepLoss eager_step(const detail::ForwardMode& mode);
    void sparse_latent_adam_step(double learning_rate);
    // PSNR of the current model over the trace's fixed texels (QuantisationTrace), no latent noise; round_latents:
    // the latents' code values (the model a freeze would give).
    Result<double> trace_psnr(bool quantize_weights, bool round_latents = false);
};

bool Compressor::Impl::trains_fused() const {
#if NMC_HAS_FUSED_TRAINER
    return fused != nullptr;
#else
    return false;
#endif
}

// Rounds every latent to its b-bit code (spec 6: its value in the model's arithmetic) and stops training them.
void Compressor::Impl::freeze_latents() {
    torch::NoGradGuard no_grad;
    const torch::Tensor codes = model.latent_codes(model.latents);
    model.latents = model.code_values(codes);
    latent_codes = codes.to(torch::kCPU).to(torch::kUInt8).contiguous();
    latents_frozen = true;
}

// The fused kernels work on their own CUDA stream: wait for them before LibTorch replaces the latents, and point
// them at the new tensor afterwards.
Status Compressor::Impl::freeze_latents_while_training() {
#if NMC_HAS_FUSED_TRAINER
    if (fused) {
        NMC_RETURN_IF_ERROR(fused->synchronize());
        freeze_latents();
        return fused->latents_replaced();
    }
#endif
    freeze_latents();
    return Status::success();
}

Status Compressor::Impl::begin_steps(bool quantize_weights) {
#if NMC_HAS_FUSED_TRAINER
    if (fused) return fused->begin(quantize_weights);
#endif
    (void)quantize_weights;
    return Status::success();
}

Status Compressor::Impl::run_step(const detail::ForwardMode& mode, bool next_quantize_weights, detail::StepLoss& loss) {
#if NMC_HAS_FUSED_TRAINER
    if (fused) {
        const double factor = learning_rate_factor();
        return fused->step(step, mode, !latents_frozen, options.latent_adam == LatentAdam::sparse,
                           next_quantize_weights, factor * latent_learning_rate, factor * network_learning_rate);
    }
#endif
    (void)next_quantize_weights;
    loss = eager_step(mode);
    return Status::success();
}

Status Compressor::Impl::batch_loss(const detail::StepLoss& loss, double& weighted, double& squared_error) {
#if NMC_HAS_FUSED_TRAINER
    if (fused) return fused->last_loss(weighted, squared_error);
#endif
    weighted = loss.loss.item<double>();
    squared_error = loss.squared_error.item<double>();
    return Status::success();
}

Status Compressor::Impl::end_steps() {
#if NMC_HAS_FUSED_TRAINER
    if (fused) return fused->synchronize();
#endif
    return Status::success();
}

Result<double> Compressor::Impl::trace_psnr(bool quantize_weights, bool round_latents) {
    NMC_RETURN_IF_ERROR(end_steps());  // the fused kernels write the tensors read below
    torch::NoGradGuard no_grad;
    const int64_t total = model.tables.total_target_texels;
    const int64_t count = std::min(total, device.is_cuda() ? kTraceTexelsCuda : kTraceTexelsCpu);
    // Evenly spaced over the flat index of every mip's texels, so mips weigh by area as in training batches.
    const torch::Tensor texels =
        torch::arange(count, torch::dtype(torch::kDouble)).mul(static_cast<double>(total) / static_cast<double>(count))
            .floor().to(torch::kLong).to(device);
    detail::ForwardMode mode;
    mode.quantize_weights = quantize_weights;
    mode.round_latents = round_latents || latents_straight_through;
    const detail::StepLoss loss = detail::training_loss(model, targets, texels, mode);
    trace.evaluation_texels = count;
    // item() waits for the evaluation, so the next fused step cannot overwrite what it reads.
    return psnr_of_mse(loss.squared_error.item<double>());
}

// Cosine decay from the initial rates to 0 over all steps.
double Compressor::Impl::learning_rate_factor() const {
    return 0.5 * (1.0 + std::cos(kPi * static_cast<double>(step) / static_cast<double>(total_steps)));
}

// One step in LibTorch operations: the loss, autograd's backward pass, both optimisers.
detail::StepLoss Compressor::Impl::eager_step(const detail::ForwardMode& mode) {
    const double factor = learning_rate_factor();
    const auto set_rate = [factor](torch::optim::Adam& optimizer, double base) {
        for (auto& group : optimizer.param_groups())
            static_cast<torch::optim::AdamOptions&>(group.options()).lr(base * factor);
    };
    set_rate(*latent_optimizer, latent_learning_rate);
    set_rate(*network_optimizer, network_learning_rate);
    network_optimizer->zero_grad();
    if (!latents_frozen) latent_optimizer->zero_grad();
    detail::StepLoss loss = detail::training_loss(model, targets, batch_size, mode);
    loss.loss.backward();
    network_optimizer->step();
    if (!latents_frozen) {
        if (options.latent_adam == LatentAdam::sparse) {
            sparse_latent_adam_step(latent_learning_rate * factor);
        } else {
            latent_optimizer->step();
        }
        torch::NoGradGuard no_grad;
        model.latents.clamp_(model.latent_lo, model.latent_hi);
    }
    return loss;
}

// Adam on the latents this batch touched (a non-zero gradient): only their moments decay and only they move, with
// torch::optim::Adam's formula and the optimiser's own step count for the bias correction (as the fused kernels).
void Compressor::Impl::sparse_latent_adam_step(double learning_rate) {
    torch::NoGradGuard no_grad;
    const torch::Tensor g = model.latents.grad();
    if (!latent_m.defined()) {
        latent_m = torch::zeros_like(g);
        latent_v = torch::zeros_like(g);
    }
    ++latent_adam_steps;
    const torch::Tensor touched = g.ne(0.0f);
    latent_m.copy_(torch::where(touched, latent_m * kAdamBeta1 + g * (1.0 - kAdamBeta1), latent_m));
    latent_v.copy_(torch::where(touched, latent_v * kAdamBeta2 + (g * g) * (1.0 - kAdamBeta2), latent_v));
    const double t = static_cast<double>(latent_adam_steps);
    const double step_size = learning_rate / (1.0 - std::pow(kAdamBeta1, t));
    const double correction2_sqrt = std::sqrt(1.0 - std::pow(kAdamBeta2, t));
    const torch::Tensor denominator = latent_v.sqrt() / correction2_sqrt + kLatentAdamEpsilon;
    model.latents.copy_(torch::where(touched, model.latents - latent_m / denominator * step_size, model.latents));
}

// Resolves options.trainer: fused where the build, the device and the network allow it (required for `fused`,
// preferred by `auto`), else eager.
Status Compressor::Impl::choose_trainer(const TrainingTarget& target) {
    if (options.trainer == TrainerPath::eager) return Status::success();
#if NMC_HAS_FUSED_TRAINER
    const Status available = detail::FusedTraining::available(model, device);
    if (!available.ok()) return options.trainer == TrainerPath::fused ? available : Status::success();
    return torch_call("setting up the fused trainer", [&]() -> Status {
        auto created = detail::FusedTraining::create(model, targets, target, options.network.output, batch_size,
                                                     options.seed, device);
        if (!created.ok()) return created.status();
        fused = std::move(*created);
        return Status::success();
    });
#else
    (void)target;
    if (options.trainer == TrainerPath::fused)
        return Status(StatusCode::backend_unavailable,
                      "this build has no fused CUDA trainer: configure with -DNMC_WITH_CUDA=ON (nvcc) and a CUDA "
                      "LibTorch, or use --trainer eager");
    return Status::success();
#endif
}

Compressor::Compressor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Compressor::~Compressor() = default;

const LatentShape& Compressor::latent_shape() const { return impl_->model.shape; }
const NetworkShape& Compressor::network_shape() const { return impl_->model.network; }
int64_t Compressor::total_steps() const { return impl_->total_steps; }
int Compressor::batch_size() const { return impl_->batch_size; }
const std::string& Compressor::device_name() const { return impl_->device_name; }
TrainerPath Compressor::trainer_path() const { return impl_->trains_fused() ? TrainerPath::fused : TrainerPath::eager; }
const QuantisationTrace& Compressor::quantisation_trace() const { return impl_->trace; }

Result<std::unique_ptr<Compressor>> Compressor::create(const TrainingTarget& target, const CompressOptions& options,
                                                       const Compressor* warm_start) {
    NMC_RETURN_IF_ERROR(check_training_target(target));
    NMC_RETURN_IF_ERROR(check_options(options));
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    const PresetSettings schedule = effective_settings(options);
    impl->total_steps = schedule.steps;
    impl->batch_size = schedule.batch_size;
    impl->latent_learning_rate = schedule.latent_learning_rate;
    impl->network_learning_rate = schedule.network_learning_rate;
    const int channel_count = static_cast<int>(target.channels.size());

    detail::Model& model = impl->model;
    if (options.shape) {
        NMC_RETURN_IF_ERROR(check_shape(*options.shape));
        model.shape = *options.shape;
        model.network = nmc::network_shape(model.shape.feature_count, channel_count, options.network);
    } else {
        auto choice = choose_latent_shape(target.width, target.height, channel_count,
                                          static_cast<int>(target.textures.size()), options.target_bpp,
                                          options.network, shape_preference_for_steps(impl->total_steps));
        if (!choice.ok()) return choice.status();
        model.shape = choice->shape;
        model.network = choice->network;
    }
    model.address_mode = target.address_mode;
    model.arithmetic = options.arithmetic;

    auto device = parse_device(options.device);
    if (!device.ok()) return device.status();
    impl->device = *device;
    impl->device_name = device->str();
    if (impl->device.is_cpu()) impl->one_blas_thread = std::make_unique<OneOpenBlasThread>();

    Status status = torch_call("allocating the model", [&]() -> Status {
        torch::manual_seed(options.seed);
        model.tables = detail::make_geometry_tables(target.width, target.height, target.mip_count, model.shape,
                                                    impl->device);
        // Targets: every mip's texels of every channel, [texels, C], built on the CPU and moved once.
        torch::Tensor texels = torch::empty({model.tables.total_target_texels, channel_count}, torch::kFloat);
        float* dst = texels.data_ptr<float>();
        for (const auto& mip : target.planes)
            for (size_t i = 0; i < mip[0].size(); ++i, dst += channel_count)
                for (int c = 0; c < channel_count; ++c) dst[c] = mip[static_cast<size_t>(c)][i];
        std::vector<float> weights;
        float weight_sum = 0;
        for (const auto& c : target.channels) weight_sum += c.loss_weight;
        for (const auto& c : target.channels) weights.push_back(c.loss_weight / weight_sum);
        impl->targets.texels = texels.to(impl->device);
        impl->targets.loss_weights = torch::tensor(weights).to(impl->device);

        // Parameters are drawn on the CPU so a seed gives the same start on every device.
        int64_t latent_texels = 0;
        for (int k = 0; k < model.shape.level_count; ++k)
            latent_texels += static_cast<int64_t>(latent_level_size(target.width, model.shape.grid_scale, k)) *
                             latent_level_size(target.height, model.shape.grid_scale, k);
        model.latents = (torch::rand({latent_texels, model.shape.feature_count}) - 0.5f) * 0.5f;
        model.latents = model.latents.to(impl->device).set_requires_grad(true);
        const auto& widths = model.network.widths;
        std::vector<torch::Tensor> network_parameters;
        for (size_t l = 0; l + 1 < widths.size(); ++l) {
            const bool last = l + 2 == widths.size();
            // He-uniform for the hidden layers; a smaller start for the linear output layer.
            const double bound = std::sqrt((last ? 1.0 : 6.0) / widths[l]);
            torch::Tensor w = (torch::rand({widths[l + 1], widths[l]}) * 2.0f - 1.0f) * bound;
            // The output layer starts at each channel's mean (mip 0), so early steps learn detail.
            torch::Tensor b = last ? texels.narrow(0, 0, static_cast<int64_t>(target.planes[0][0].size())).mean(0)
                                   : torch::zeros({widths[l + 1]});
            model.weights.push_back(w.to(impl->device).set_requires_grad(true));
            model.biases.push_back(b.to(impl->device).set_requires_grad(true));
            network_parameters.push_back(model.weights.back());
            network_parameters.push_back(model.biases.back());
        }
        if (warm_start) NMC_RETURN_IF_ERROR(detail::warm_start_model(warm_start->impl_->model, model));
        const auto adam = [](double lr, double epsilon) {
            return torch::optim::AdamOptions(lr).betas({kAdamBeta1, kAdamBeta2}).eps(epsilon);
        };
        impl->latent_optimizer = std::make_unique<torch::optim::Adam>(
            std::vector<torch::Tensor>{model.latents}, adam(impl->latent_learning_rate, kLatentAdamEpsilon));
        impl->network_optimizer = std::make_unique<torch::optim::Adam>(
            network_parameters, adam(impl->network_learning_rate, kAdamEpsilon));
        return Status::success();
    });
    NMC_RETURN_IF_ERROR(status);
    NMC_RETURN_IF_ERROR(impl->choose_trainer(target));
    if (impl->options.latent_adam == LatentAdam::automatic)
        impl->options.latent_adam = impl->trains_fused() ? LatentAdam::sparse : LatentAdam::dense;

    impl->info = target;
    impl->info.planes.clear();
    impl->info.planes.shrink_to_fit();
    return std::unique_ptr<Compressor>(new Compressor(std::move(impl)));
}

Status Compressor::train(const ProgressCallback& progress) {
    Impl& s = *impl_;
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    const auto freeze_step = static_cast<int64_t>(s.options.latent_rounding_fraction * static_cast<double>(s.total_steps));
    const auto quantize_step =
        static_cast<int64_t>(s.options.weight_rounding_fraction * static_cast<double>(s.total_steps));
    const int64_t first_step = s.step;
    // The trace's points around the two rounding events (QuantisationTrace).
    // Rounding the latents: freeze them (LatentRounding::freeze), or from now on train them through their code
    // values (straight_through; the export's freeze then changes nothing the forward pass saw).
    const auto round_latents_traced = [&]() -> Status {
        auto before = s.trace_psnr(false);
        if (!before.ok()) return before.status();
        if (s.options.latent_rounding == LatentRounding::straight_through) {
            s.latents_straight_through = true;
        } else {
            NMC_RETURN_IF_ERROR(s.freeze_latents_while_training());
        }
        auto after = s.trace_psnr(false);
        if (!after.ok()) return after.status();
        s.trace.float_model_db = *before;
        s.trace.rounded_latents_db = *after;
        return Status::success();
    };
    const auto weight_rounding_traced = [&]() -> Status {
        auto before = s.trace_psnr(false);
        if (!before.ok()) return before.status();
        auto after = s.trace_psnr(true);
        if (!after.ok()) return after.status();
        s.trace.before_weight_rounding_db = *before;
        s.trace.rounded_weights_db = *after;
        return Status::success();
    };
    Status status = torch_call("training", [&]() -> Status {
        NMC_RETURN_IF_ERROR(s.begin_steps(s.step >= quantize_step));
        while (s.step < s.total_steps) {
            if (!s.latents_frozen && !s.latents_straight_through && s.step >= freeze_step)
                NMC_RETURN_IF_ERROR(round_latents_traced());
            if (s.step == quantize_step) NMC_RETURN_IF_ERROR(weight_rounding_traced());
            detail::ForwardMode mode;
            mode.latent_noise = !s.latents_frozen && !s.latents_straight_through;
            mode.round_latents = s.latents_straight_through;
            mode.quantize_weights = s.step >= quantize_step;
            detail::StepLoss loss;
            NMC_RETURN_IF_ERROR(s.run_step(mode, s.step + 1 >= quantize_step, loss));
            ++s.step;
            if (progress && (s.step % s.options.progress_interval == 0 || s.step == s.total_steps)) {
                TrainingProgress p;
                p.step = s.step;
                p.total_steps = s.total_steps;
                double squared_error = 0;
                NMC_RETURN_IF_ERROR(s.batch_loss(loss, p.loss, squared_error));
                p.psnr_estimate_db = psnr_of_mse(squared_error);
                p.elapsed_seconds = s.training_seconds + elapsed();
                const double rate = static_cast<double>(s.step - first_step) / std::max(elapsed(), 1e-9);
                p.eta_seconds = static_cast<double>(s.total_steps - s.step) / rate;
                if (!progress(p))
                    return Status(StatusCode::cancelled, "training cancelled at step " + std::to_string(s.step) +
                                                             " of " + std::to_string(s.total_steps));
            }
        }
        if (!s.latents_frozen && !s.latents_straight_through) NMC_RETURN_IF_ERROR(round_latents_traced());
        if (!s.latents_frozen) NMC_RETURN_IF_ERROR(s.freeze_latents_while_training());
        if (quantize_step >= s.total_steps && std::isnan(s.trace.rounded_weights_db))
            NMC_RETURN_IF_ERROR(weight_rounding_traced());
        auto final_psnr = s.trace_psnr(true);
        if (!final_psnr.ok()) return final_psnr.status();
        s.trace.final_db = *final_psnr;
        return Status::success();
    });
    // Export and evaluation read the tensors with LibTorch: the fused kernels must be done, also after a cancel.
    const Status finished = s.end_steps();
    if (status.ok()) status = finished;
    s.training_seconds += elapsed();
    return status;
}

Result<Pack> Compressor::export_pack() {
    Impl& s = *impl_;
    return torch_call("exporting the pack", [&]() -> Result<Pack> {
        if (!s.latents_frozen) s.freeze_latents();
        torch::NoGradGuard no_grad;
        const detail::Model& model = s.model;
        Pack pack;
        pack.material.name = s.info.name;
        pack.material.width = s.info.width;
        pack.material.height = s.info.height;
        pack.material.mip_count = s.info.mip_count;
        pack.material.address_mode = s.info.address_mode;
        for (const auto& c : s.info.channels) pack.channels.push_back({c.name, c.lo, c.hi});
        pack.textures = s.info.textures;

        // spec 6: per level, the codes of its texels, features contiguous.
        pack.latents.feature_count = model.shape.feature_count;
        pack.latents.grid_scale = model.shape.grid_scale;
        const uint8_t* codes = s.latent_codes.data_ptr<uint8_t>();
        size_t offset = 0;
        for (int k = 0; k < model.shape.level_count; ++k) {
            LatentLevel level;
            level.width = latent_level_size(s.info.width, model.shape.grid_scale, k);
            level.height = latent_level_size(s.info.height, model.shape.grid_scale, k);
            level.bits = model.shape.bits;
            level.lo = model.latent_lo;
            level.hi = model.latent_hi;
            const size_t count = static_cast<size_t>(level.width) * static_cast<size_t>(level.height) *
                                 static_cast<size_t>(model.shape.feature_count);
            level.codes.assign(codes + offset, codes + offset + count);
            offset += count;
            pack.latents.levels.push_back(std::move(level));
        }

        // spec 7: the quantised values the forward pass uses, converted to codes by core's conversions.
        const auto& widths = model.network.widths;
        for (size_t l = 0; l + 1 < widths.size(); ++l) {
            const detail::QuantizedLayer q = model.quantize_layer(l);
            const bool last = l + 2 == widths.size();
            Layer layer;
            layer.input_width = widths[l];
            layer.output_width = widths[l + 1];
            layer.weight_type = last ? model.network.output_weight_type : WeightType::e4m3;
            const torch::Tensor w = q.weights.to(torch::kCPU).contiguous();
            const float* values = w.data_ptr<float>();
            for (int64_t i = 0; i < w.numel(); ++i) {
                layer.weights.push_back(layer.weight_type == WeightType::e4m3
                                            ? float_to_fp8_e4m3(values[i])
                                            : static_cast<uint8_t>(static_cast<int8_t>(std::lrint(values[i]))));
            }
            if (q.scales.defined()) {
                const torch::Tensor scales = q.scales.to(torch::kCPU).contiguous();
                layer.scales.assign(scales.data_ptr<float>(), scales.data_ptr<float>() + scales.numel());
            }
            const torch::Tensor b = q.biases.to(torch::kCPU).contiguous();
            for (int64_t i = 0; i < b.numel(); ++i) layer.biases.push_back(float_to_fp16(b.data_ptr<float>()[i]));
            pack.network.layers.push_back(std::move(layer));
        }
        pack.network.arithmetic = model.arithmetic;

        pack.encoder.tool = s.options.tool;
        pack.encoder.preset = to_string(s.options.preset);
        pack.encoder.target_bpp = s.options.shape ? 0.0 : s.options.target_bpp;
        pack.encoder.steps = s.total_steps;
        pack.encoder.seed = static_cast<int64_t>(s.options.seed);
        pack.encoder.device = s.device_name;
        pack.encoder.training_seconds = s.training_seconds;
        pack.encoder.source_folder = s.info.source_folder;
        pack.encoder.trainer = to_string(s.trains_fused() ? TrainerPath::fused : TrainerPath::eager);
        pack.encoder.batch_size = s.batch_size;
        pack.encoder.latent_learning_rate = s.latent_learning_rate;
        pack.encoder.network_learning_rate = s.network_learning_rate;
        pack.encoder.latent_rounding = to_string(s.options.latent_rounding);
        pack.encoder.latent_rounding_at = s.options.latent_rounding_fraction;
        pack.encoder.weight_rounding_at = s.options.weight_rounding_fraction;
        pack.encoder.latent_adam = to_string(s.options.latent_adam);
        return pack;
    });
}

Result<StepGradients> Compressor::batch_gradients(const std::vector<int64_t>& texels, TrainerPath path,
                                                  bool quantize_weights) {
    Impl& s = *impl_;
    if (texels.empty() || texels.size() > static_cast<size_t>(s.batch_size))
        return Status(StatusCode::invalid_argument, "batch_gradients takes 1.." + std::to_string(s.batch_size) +
                                                        " texels, got " + std::to_string(texels.size()));
    for (int64_t t : texels)
        if (t < 0 || t >= s.model.tables.total_target_texels)
            return Status(StatusCode::invalid_argument,
                          "texel " + std::to_string(t) + " outside 0.." + std::to_string(s.model.tables.total_target_texels - 1));
    Result<StepGradients> result = Status(StatusCode::invalid_argument, "batch_gradients: path must be fused or eager");
    if (path == TrainerPath::fused) {
#if NMC_HAS_FUSED_TRAINER
        if (s.fused) result = torch_call("computing fused gradients", [&] { return s.fused->batch_gradients(texels, quantize_weights); });
#endif
        if (!s.trains_fused())
            return Status(StatusCode::invalid_argument, "batch_gradients: this compressor does not train fused");
    } else if (path == TrainerPath::eager) {
        result = torch_call("computing gradients with autograd", [&]() -> Result<StepGradients> {
            detail::ForwardMode mode;
            mode.quantize_weights = quantize_weights;
            const torch::Tensor index = torch::tensor(texels, torch::dtype(torch::kLong)).to(s.device);
            const detail::StepLoss loss = detail::training_loss(s.model, s.targets, index, mode);
            std::vector<torch::Tensor> inputs;
            if (!s.latents_frozen) inputs.push_back(s.model.latents);
            for (size_t l = 0; l < s.model.weights.size(); ++l) {
                inputs.push_back(s.model.weights[l]);
                inputs.push_back(s.model.biases[l]);
            }
            const std::vector<torch::Tensor> grads = torch::autograd::grad({loss.loss}, inputs);
            const auto host = [](const torch::Tensor& t) {
                const torch::Tensor cpu = t.detach().to(torch::kCPU).contiguous();
                return std::vector<float>(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
            };
            StepGradients out;
            out.loss = loss.loss.item<double>();
            out.squared_error = loss.squared_error.item<double>();
            size_t i = 0;
            if (!s.latents_frozen) out.latents = host(grads[i++]);
            for (size_t l = 0; l < s.model.weights.size(); ++l) {
                out.weights.push_back(host(grads[i++]));
                out.biases.push_back(host(grads[i++]));
            }
            return out;
        });
    }
    if (result.ok() && s.latents_frozen) result->latents.clear();
    return result;
}

Result<std::vector<std::vector<float>>> Compressor::evaluate_mip(int mip) {
    Impl& s = *impl_;
    if (mip < 0 || mip >= s.info.mip_count)
        return Status(StatusCode::invalid_argument, "mip " + std::to_string(mip) + " out of range 0.." +
                                                        std::to_string(s.info.mip_count - 1));
    return torch_call("evaluating the model", [&]() -> Result<std::vector<std::vector<float>>> {
        if (!s.latents_frozen) s.freeze_latents();
        torch::NoGradGuard no_grad;
        const int64_t width = std::max(1, s.info.width >> mip);
        const int64_t texels = width * std::max(1, s.info.height >> mip);
        // spec 8.7: lo + (hi - lo) * min(max(o, 0), 1), with hi - lo rounded to float32 first.
        std::vector<float> lo, range;
        for (const auto& c : s.info.channels) {
            lo.push_back(c.lo);
            range.push_back(c.hi - c.lo);
        }
        const torch::Tensor lo_t = torch::tensor(lo).to(s.device);
        const torch::Tensor range_t = torch::tensor(range).to(s.device);
        const auto options = torch::TensorOptions().dtype(torch::kLong).device(s.device);
        detail::ForwardMode mode;
        mode.quantize_weights = true;
        std::vector<std::vector<float>> out(s.info.channels.size(), std::vector<float>(static_cast<size_t>(texels)));
        for (int64_t begin = 0; begin < texels; begin += kEvaluationChunk) {
            const int64_t end = std::min(texels, begin + kEvaluationChunk);
            const torch::Tensor index = torch::arange(begin, end, options);
            const torch::Tensor y = torch::div(index, width, "floor");
            const torch::Tensor x = index - y * width;
            const torch::Tensor o = detail::forward(s.model, x, y, torch::full_like(index, mip), mode);
            const torch::Tensor value = (lo_t + range_t * o.clamp(0.0f, 1.0f)).to(torch::kCPU).contiguous();
            const float* v = value.data_ptr<float>();
            for (int64_t i = begin; i < end; ++i)
                for (size_t c = 0; c < out.size(); ++c)
                    out[c][static_cast<size_t>(i)] = v[(i - begin) * static_cast<int64_t>(out.size()) + static_cast<int64_t>(c)];
        }
        return out;
    });
}

Result<CompressResult> compress(const TrainingTarget& target, const CompressOptions& options,
                                const ProgressCallback& progress) {
    auto compressor = Compressor::create(target, options);
    if (!compressor.ok()) return compressor.status();
    NMC_RETURN_IF_ERROR((*compressor)->train(progress));
    return finish_compression(**compressor, target);
}

Result<CompressResult> finish_compression(Compressor& compressor, const TrainingTarget& target) {
    const auto started = std::chrono::steady_clock::now();
    auto pack = compressor.export_pack();
    if (!pack.ok()) return pack.status();

    // Measure what a reader gets: write, read back, decode with the CPU decoder. The rewrites below change the
    // metadata only: the cache keeps zstd from compressing the latents and weights again.
    CompressedSectionCache cache;
    WriteOptions write_options;
    write_options.cache = &cache;
    auto first = write_pack(*pack, write_options);
    if (!first.ok()) return first.status();
    auto read_back = read_pack(first->data(), first->size());
    if (!read_back.ok()) return read_back.status().with_context("reading back the written pack");
    auto decoder = CpuDecoder::create(*read_back);
    if (!decoder.ok()) return decoder.status();
    std::vector<Image> sources;
    if (target.source_paths.empty()) {
        sources = source_images_from_planes(*read_back, target.planes);
    } else {
        auto files = read_source_images(target.source_paths, *read_back);
        if (!files.ok()) return files.status();
        sources = std::move(files.value());
    }
    auto quality = measure_quality(cpu_pack_decoder(std::move(*decoder)), *read_back, target.planes, sources);
    if (!quality.ok()) return quality.status();

    CompressResult result;
    result.pack = std::move(*pack);
    result.pack.quality = to_quality_report(*quality, 0.0);
    result.shape = compressor.latent_shape();
    result.trainer = compressor.trainer_path();
    result.training_seconds = result.pack.encoder.training_seconds;
    result.quantisation = compressor.quantisation_trace();
    for (const TextureQualityDetail& t : quality->textures) {
        result.structure.push_back(t.structure);
        result.hdr_psnr_db.push_back(t.hdr_psnr_db);
    }
    // The stored bits per texel describe the final file, whose size depends (slightly) on that number: settle it.
    std::vector<uint8_t> file = std::move(*first);
    for (int attempt = 0; attempt < 4; ++attempt) {
        result.pack.quality.bits_per_texel = 8.0 * static_cast<double>(file.size()) /
                                             (static_cast<double>(target.width) * target.height);
        auto bytes = write_pack(result.pack, write_options);
        if (!bytes.ok()) return bytes.status();
        const bool settled = bytes->size() == file.size();
        file = std::move(*bytes);
        if (settled) break;
    }
    result.file = std::move(file);
    result.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

std::vector<float> round_to_fp8_e4m3_torch(const std::vector<float>& values) {
    torch::Tensor input = torch::empty({static_cast<int64_t>(values.size())}, torch::kFloat);
    std::memcpy(input.data_ptr<float>(), values.data(), values.size() * sizeof(float));
    const torch::Tensor rounded = detail::round_fp8(input).contiguous();
    std::vector<float> out(values.size());
    std::memcpy(out.data(), rounded.data_ptr<float>(), out.size() * sizeof(float));
    return out;
}

}  // namespace nmc
