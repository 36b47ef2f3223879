// Training step time of the fused CUDA trainer against the eager LibTorch trainer, on shared materials at
// 2.5, 5 and 10 bpp (the shapes rate control picks for them for the 100k-step `best` preset):
//  1. the whole trainer (Compressor::train, host loop included) at batch 65536: ms per step, fused and eager;
//  2. the fused kernels alone on the same shapes (FusedTrainer on buffers of random values): ms per step, and per
//     kernel from cudaEvent pairs around each launch, with the bytes the latent update must move per step.
// Timed windows exclude warm-up steps and keep the schedule in its main phase (no freezing, float weights), where
// 95% of a real run's steps are. Usage:
//   nmc_fused_training_bench [--materials DIR] [--only NAME,NAME] [--batch 65536] [--steps 550] [--eager-steps 60]
// Defaults: ../shared/materials, polyhaven_rusty_metal_05_1k and polyhaven_beige_wall_001_2k. The summary table
// comes last (scripts/gpu-check.sh prints the tail).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_exit_on_error.h"
#include "compressor/compressor.h"
#include "compressor/cuda/fused_trainer.h"
#include "compressor/rate_control.h"
#include "compressor/training_target.h"
#include "material/material.h"

namespace {

void check(const nmc::Status& s, const char* what) { nmc::bench::exit_on_error(s, what); }

struct Settings {
    std::string materials = "../shared/materials";
    std::vector<std::string> names = {"polyhaven_rusty_metal_05_1k", "polyhaven_beige_wall_001_2k"};
    int batch = 65536;
    int fused_steps = 550;  // the first 50 are warm-up
    int eager_steps = 60;   // the first 10 are warm-up
};

struct Row {
    std::string material;
    int size = 0;
    double bpp = 0;
    nmc::LatentShape shape;
    size_t latent_values = 0;
    double fused_ms = 0;
    double eager_ms = 0;
    double kernels_ms = 0;
    nmc::fused::KernelTimes times;      // dense latent Adam
    double sparse_latent_update_ms = 0;  // the latent update per step with sparse latent Adam
};

// Milliseconds per step of Compressor::train between the progress callbacks at `warm` steps and at the end.
double trainer_step_ms(const nmc::TrainingTarget& target, const nmc::LatentShape& shape, nmc::TrainerPath path,
                       int steps, int warm, int batch) {
    nmc::CompressOptions o;
    o.shape = shape;
    o.steps = steps;
    o.batch_size = batch;
    o.device = "cuda";
    o.trainer = path;
    o.latent_rounding_fraction = 1.0;
    o.weight_rounding_fraction = 1.0;
    o.progress_interval = warm;
    auto compressor = nmc::Compressor::create(target, o);
    check(compressor.status(), "creating the compressor");
    if ((*compressor)->trainer_path() != path) {
        std::fprintf(stderr, "error: asked for the %s trainer, got %s\n", nmc::to_string(path),
                     nmc::to_string((*compressor)->trainer_path()));
        std::exit(1);
    }
    std::chrono::steady_clock::time_point start;
    double ms = 0;
    check((*compressor)->train([&](const nmc::TrainingProgress& p) {
        const auto now = std::chrono::steady_clock::now();  // the callback follows a device synchronisation
        if (p.step == warm) start = now;
        if (p.step == p.total_steps)
            ms = std::chrono::duration<double, std::milli>(now - start).count() / static_cast<double>(steps - warm);
        return true;
    }),
          "training");
    return ms;
}

// Device buffers of random values for the kernels alone.
struct DeviceBuffers {
    std::vector<void*> owned;
    ~DeviceBuffers() {
        for (void* p : owned) cudaFree(p);
    }
    float* floats(size_t n, std::mt19937& rng, float lo, float hi) {
        std::vector<float> host(n);
        std::uniform_real_distribution<float> d(lo, hi);
        for (float& v : host) v = d(rng);
        void* p = nullptr;
        BENCH_CHECK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(float)));
        BENCH_CHECK(cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        owned.push_back(p);
        return static_cast<float*>(p);
    }
    float* zeros(size_t n) {
        void* p = nullptr;
        BENCH_CHECK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(float)));
        BENCH_CHECK(cudaMemset(p, 0, n * sizeof(float)));
        owned.push_back(p);
        return static_cast<float*>(p);
    }
};

// The fused kernels alone: ms per step over `steps` steps, then per-kernel times over as many (timed steps wait
// for their kernels, so only the per-kernel figures come from them).
void kernel_step_ms(const nmc::TrainingTarget& target, Row& row, int batch, int steps) {
    const auto channels = static_cast<int>(target.channels.size());
    const nmc::NetworkShape network = nmc::network_shape(row.shape.feature_count, channels);
    nmc::fused::ModelGeometry g;
    g.mip_count = target.mip_count;
    size_t texels = 0;
    for (int m = 0; m < target.mip_count; ++m) {
        g.mip_width[static_cast<size_t>(m)] = std::max(1, target.width >> m);
        g.mip_height[static_cast<size_t>(m)] = std::max(1, target.height >> m);
        texels += static_cast<size_t>(g.mip_width[static_cast<size_t>(m)]) * g.mip_height[static_cast<size_t>(m)];
    }
    g.level_count = row.shape.level_count;
    size_t latent_texels = 0;
    for (int k = 0; k < row.shape.level_count; ++k) {
        g.level_width[static_cast<size_t>(k)] = nmc::latent_level_size(target.width, row.shape.grid_scale, k);
        g.level_height[static_cast<size_t>(k)] = nmc::latent_level_size(target.height, row.shape.grid_scale, k);
        latent_texels += static_cast<size_t>(g.level_width[static_cast<size_t>(k)]) * g.level_height[static_cast<size_t>(k)];
    }
    g.feature_count = row.shape.feature_count;
    g.latent_bits = row.shape.bits;
    g.input_width = network.widths.front();
    g.channel_count = channels;
    for (int c = 0; c < channels; ++c) g.loss_weights[static_cast<size_t>(c)] = 1.0f / static_cast<float>(channels);
    const size_t latents = latent_texels * static_cast<size_t>(g.feature_count);
    row.latent_values = latents;

    std::mt19937 rng(5);
    DeviceBuffers d;
    nmc::fused::ModelBuffers b;
    b.latents = d.floats(latents, rng, -0.25f, 0.25f);
    b.latent_grad = d.zeros(latents);
    b.latent_m = d.zeros(latents);
    b.latent_v = d.zeros(latents);
    b.targets = d.floats(texels * static_cast<size_t>(channels), rng, 0.0f, 1.0f);
    for (size_t l = 0; l + 1 < network.widths.size(); ++l) {
        const auto n = static_cast<size_t>(network.widths[l + 1]);
        const auto i = static_cast<size_t>(network.widths[l]);
        const float bound = std::sqrt(6.0f / static_cast<float>(i));
        b.weights[l] = d.floats(n * i, rng, -bound, bound);
        b.biases[l] = d.zeros(n);
        b.weight_m[l] = d.zeros(n * i);
        b.weight_v[l] = d.zeros(n * i);
        b.bias_m[l] = d.zeros(n);
        b.bias_v[l] = d.zeros(n);
    }
    auto trainer = nmc::fused::FusedTrainer::create(0, g, b, batch, 1);
    check(trainer.status(), "creating the fused trainer");
    nmc::fused::FusedTrainer& t = **trainer;
    check(t.prepare(false), "preparing the weights");
    nmc::fused::StepSettings s;
    s.network_learning_rate = 0.005f;
    s.latent_learning_rate = 0.1f;
    int64_t step = 0;
    const auto run = [&](int count) {
        for (int i = 0; i < count; ++i) {
            s.step = step++;
            s.network_adam_step = s.latent_adam_step = step;
            check(t.step(s, batch), "running a step");
        }
    };
    run(20);
    check(t.synchronize(), "synchronising");
    // The trainer's stream is its own: time with the host clock between two synchronisations, over many steps.
    const auto start = std::chrono::steady_clock::now();
    run(steps);
    check(t.synchronize(), "synchronising");
    row.kernels_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / steps;
    t.enable_kernel_timing(true);
    run(steps);
    row.times = t.kernel_times();
    // The same steps with sparse latent Adam (LatentAdam::sparse): its update skips the latents a batch did not touch.
    s.sparse_latent_adam = true;
    t.enable_kernel_timing(true);
    run(steps);
    const nmc::fused::KernelTimes sparse = t.kernel_times();
    row.sparse_latent_update_ms = sparse.latent_update_ms / static_cast<double>(std::max<int64_t>(sparse.steps, 1));
}

}  // namespace

int main(int argc, char** argv) {
    Settings settings;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", arg.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (arg == "--materials") {
            settings.materials = value();
        } else if (arg == "--only") {
            settings.names.clear();
            std::stringstream list(value());
            for (std::string name; std::getline(list, name, ',');) settings.names.push_back(name);
        } else if (arg == "--batch") {
            settings.batch = std::atoi(value().c_str());
        } else if (arg == "--steps") {
            settings.fused_steps = std::atoi(value().c_str());
        } else if (arg == "--eager-steps") {
            settings.eager_steps = std::atoi(value().c_str());
        } else {
            std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
            return 2;
        }
    }
    cudaDeviceProp prop{};
    BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs; batch %d; fused: %d steps (%d timed), eager: %d steps (%d timed)\n", prop.name,
                prop.multiProcessorCount, settings.batch, settings.fused_steps, settings.fused_steps - 50,
                settings.eager_steps, settings.eager_steps - 10);
    std::vector<Row> rows;
    for (const std::string& name : settings.names) {
        auto material = nmc::load_material(settings.materials + "/" + name);
        check(material.status(), ("loading " + name).c_str());
        const nmc::TrainingTarget target = nmc::training_target_from_material(std::move(*material));
        for (const double bpp : {2.5, 5.0, 10.0}) {
            Row row;
            row.material = name;
            row.size = target.width;
            row.bpp = bpp;
            auto choice = nmc::choose_latent_shape(target.width, target.height,
                                                   static_cast<int>(target.channels.size()),
                                                   static_cast<int>(target.textures.size()), bpp, {},
                                                   nmc::shape_preference_for_steps(
                                                       nmc::preset_settings(nmc::QualityPreset::best).steps));
            check(choice.status(), "choosing the latent shape");
            row.shape = choice->shape;
            row.fused_ms =
                trainer_step_ms(target, row.shape, nmc::TrainerPath::fused, settings.fused_steps, 50, settings.batch);
            row.eager_ms =
                trainer_step_ms(target, row.shape, nmc::TrainerPath::eager, settings.eager_steps, 10, settings.batch);
            kernel_step_ms(target, row, settings.batch, settings.fused_steps - 50);
            std::printf("%s %g bpp: fused %.3f ms/step, eager %.3f ms/step, kernels alone %.3f ms/step\n", name.c_str(),
                        bpp, row.fused_ms, row.eager_ms, row.kernels_ms);
            std::fflush(stdout);
            rows.push_back(row);
        }
    }
    std::printf("\nms per training step at batch %d (fused: Compressor::train with the fused kernels and its default, "
                "sparse latent Adam; eager: its default, dense; kernels: the same kernels on random buffers, "
                "per-kernel cudaEvent times, dense latent Adam; latent update bytes = 8 floats read/written per latent "
                "value; lat-sparse: the latent update with sparse latent Adam)\n",
                settings.batch);
    std::printf("%-30s %5s %5s %-12s %9s %9s %9s %8s %9s | %8s %8s %8s %8s %10s\n", "material", "size", "bpp",
                "S,F,b,K", "latentsM", "fused", "eager", "speedup", "kernels", "train", "net-upd", "lat-upd", "lat GB/s",
                "lat-sparse");
    for (const Row& r : rows) {
        const double n = static_cast<double>(std::max<int64_t>(r.times.steps, 1));
        const double latent_ms = r.times.latent_update_ms / n;
        const double latent_gbs = latent_ms > 0 ? static_cast<double>(r.latent_values) * 32.0 / (latent_ms * 1e6) : 0;
        char shape[32];
        std::snprintf(shape, sizeof shape, "%d,%d,%d,%d", r.shape.grid_scale, r.shape.feature_count, r.shape.bits,
                      r.shape.level_count);
        std::printf("%-30s %5d %5.1f %-12s %9.2f %9.3f %9.3f %7.1fx %9.3f | %8.3f %8.3f %8.3f %8.0f %10.3f\n",
                    r.material.c_str(), r.size, r.bpp, shape, static_cast<double>(r.latent_values) / 1e6, r.fused_ms,
                    r.eager_ms, r.eager_ms / std::max(r.fused_ms, 1e-9), r.kernels_ms, r.times.train_ms / n,
                    r.times.network_update_ms / n, latent_ms, latent_gbs, r.sparse_latent_update_ms);
    }
    return 0;
}
