// Throughput of the CPU decoder on a random but valid default-network pack (2048x2048, full mip chain, grid
// scale 2, 16 features of 4 bits, 48 -> 64 -> 64 -> 64 -> C): whole-material decoding and random texel queries,
// for every ISA path this CPU runs, in both decoding arithmetics (spec 5.6: float32 packs, then the same pack as
// binary16, its rows named ISA/binary16). Usage: nmc_cpu_decoder_bench [threads (0: all cores)] [channels (default 10)]
// Mtexel/s is wall-clock (best of a few runs); "per core" divides by process CPU time instead, which a busy
// shared machine disturbs less.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "decoder/cpu/cpu_decoder.h"
#include "tests/decoder/random_pack.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Mtexel/s over wall-clock time and per second of CPU time (all threads), best run of each.
struct Throughput {
    double wall = 0;
    double per_core = 0;
};

template <typename Run>
Throughput measure(double texels, int repeats, const Run& run) {
    double best_wall = 1e30;
    double best_cpu = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const Clock::time_point start = Clock::now();
        const std::clock_t cpu_start = std::clock();
        run();
        best_cpu = std::min(best_cpu, static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
        best_wall = std::min(best_wall, seconds_since(start));
    }
    return {texels / best_wall * 1e-6, texels / best_cpu * 1e-6};
}

// Decodes every mip of every channel: texels of all mips per second.
Throughput bench_all_mips(const nmc::CpuDecoder& decoder, const nmc::Pack& pack, int repeats) {
    double texels = 0;
    for (int m = 0; m < pack.material.mip_count; ++m) {
        texels += static_cast<double>(pack.material.mip_width(m)) * pack.material.mip_height(m);
    }
    std::vector<std::vector<float>> planes;
    return measure(texels, repeats, [&] {
        for (int m = 0; m < pack.material.mip_count; ++m) {
            if (!decoder.decode_mip_channels(m, planes).ok()) std::abort();
        }
    });
}

// Random (u, v, mip) queries, mips drawn in proportion to their area as a renderer's minification would.
Throughput bench_queries(const nmc::CpuDecoder& decoder, const nmc::Pack& pack, size_t count, int repeats) {
    std::mt19937 rng(5);
    std::vector<double> areas;
    for (int m = 0; m < pack.material.mip_count; ++m) {
        areas.push_back(static_cast<double>(pack.material.mip_width(m)) * pack.material.mip_height(m));
    }
    std::discrete_distribution<int> mip(areas.begin(), areas.end());
    std::uniform_real_distribution<float> coordinate(0.0f, 1.0f);
    std::vector<nmc::TexelQuery> queries(count);
    for (nmc::TexelQuery& q : queries) q = {coordinate(rng), coordinate(rng), mip(rng)};
    std::vector<float> out;
    return measure(static_cast<double>(count), repeats, [&] {
        if (!decoder.decode_queries(queries, out).ok()) std::abort();
    });
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
    nmc::test::RandomPackOptions options;
    options.width = 2048;
    options.height = 2048;
    options.grid_scale = 2;
    options.feature_count = 16;
    options.level_bits = {4};
    options.channel_count = argc > 2 ? std::atoi(argv[2]) : 10;
    options.hidden_widths = {64, 64, 64};
    options.extra_inputs = 3;  // 2 * 16 + 13 + 3 = 48 inputs
    nmc::Pack pack = nmc::test::make_random_pack(options);
    std::printf("pack: %dx%d, %d mips, %zu levels, F=%d (4 bits), network 48-64-64-64-%d, threads=%d\n",
                pack.material.width, pack.material.height, pack.material.mip_count, pack.latents.levels.size(),
                options.feature_count, options.channel_count, threads);

    for (nmc::Arithmetic arithmetic : {nmc::Arithmetic::float32, nmc::Arithmetic::binary16}) {
        pack.network.arithmetic = arithmetic;  // the random pack's latent ranges are within binary16's (spec 9)
        const std::string suffix = arithmetic == nmc::Arithmetic::float32 ? "" : "/binary16";
        for (nmc::CpuIsa isa :
             {nmc::CpuIsa::portable, nmc::CpuIsa::avx2, nmc::CpuIsa::avx512bf16, nmc::CpuIsa::avx512fp16}) {
            // avx512fp16 runs float32 packs as avx512bf16 (the same code): time it on binary16 only.
            if (isa == nmc::CpuIsa::avx512fp16 && arithmetic == nmc::Arithmetic::float32) continue;
            nmc::Result<nmc::CpuDecoder> decoder = nmc::CpuDecoder::create(pack, {threads, isa});
            if (!decoder.ok()) {
                std::printf("%-11s unavailable: %s\n", (nmc::to_string(isa) + suffix).c_str(),
                            decoder.status().to_string().c_str());
                continue;
            }
            const bool fast = isa != nmc::CpuIsa::portable;
            const Throughput whole = bench_all_mips(*decoder, pack, fast ? 3 : 1);
            const Throughput queries = bench_queries(*decoder, pack, fast ? 4000000 : 500000, fast ? 3 : 1);
            std::printf(
                "%-11s all mips: %6.2f Mtexel/s (%5.2f per core)   random queries: %6.2f Mtexel/s (%5.2f per core)   "
                "%d threads\n",
                (decoder->isa_name() + suffix).c_str(), whole.wall, whole.per_core, queries.wall, queries.per_core,
                decoder->threads());
        }
    }
    return 0;
}
