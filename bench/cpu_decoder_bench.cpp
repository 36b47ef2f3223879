// Throughput of the CPU decoder on a random but valid default-network pack (2048x2048, full mip chain, grid
// scale 2, 16 features of 4 bits, 48 -> 64 -> 64 -> 64 -> C): whole-material decoding and random texel queries,
// for every ISA path this CPU runs. Usage: nmc_cpu_decoder_bench [threads (0: all cores)] [channels (default 10)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "decoder/cpu/cpu_decoder.h"
#include "tests/decoder/random_pack.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Decodes every mip of every channel; returns Mtexel/s (texels of all mips per second), best of `repeats`.
double bench_all_mips(const nmc::CpuDecoder& decoder, const nmc::Pack& pack, int repeats) {
    double texels = 0;
    for (int m = 0; m < pack.material.mip_count; ++m) {
        texels += static_cast<double>(pack.material.mip_width(m)) * pack.material.mip_height(m);
    }
    double best = 1e30;
    std::vector<std::vector<float>> planes;
    for (int r = 0; r < repeats; ++r) {
        const Clock::time_point start = Clock::now();
        for (int m = 0; m < pack.material.mip_count; ++m) {
            if (!decoder.decode_mip_channels(m, planes).ok()) std::abort();
        }
        best = std::min(best, seconds_since(start));
    }
    return texels / best * 1e-6;
}

// Random (u, v, mip) queries, mips drawn in proportion to their area as a renderer's minification would.
double bench_queries(const nmc::CpuDecoder& decoder, const nmc::Pack& pack, size_t count, int repeats) {
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
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const Clock::time_point start = Clock::now();
        if (!decoder.decode_queries(queries, out).ok()) std::abort();
        best = std::min(best, seconds_since(start));
    }
    return static_cast<double>(count) / best * 1e-6;
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
    const nmc::Pack pack = nmc::test::make_random_pack(options);
    std::printf("pack: %dx%d, %d mips, %zu levels, F=%d (4 bits), network 48-64-64-64-%d, threads=%d\n",
                pack.material.width, pack.material.height, pack.material.mip_count, pack.latents.levels.size(),
                options.feature_count, options.channel_count, threads);

    for (nmc::CpuIsa isa : {nmc::CpuIsa::portable, nmc::CpuIsa::avx2, nmc::CpuIsa::avx512bf16}) {
        nmc::Result<nmc::CpuDecoder> decoder = nmc::CpuDecoder::create(pack, {threads, isa});
        if (!decoder.ok()) {
            std::printf("%-11s unavailable: %s\n", nmc::to_string(isa), decoder.status().to_string().c_str());
            continue;
        }
        const bool fast = isa != nmc::CpuIsa::portable;
        const double whole = bench_all_mips(*decoder, pack, fast ? 3 : 1);
        const double queries = bench_queries(*decoder, pack, fast ? 4000000 : 500000, fast ? 3 : 1);
        std::printf("%-11s all mips: %7.2f Mtexel/s   random queries: %7.2f Mtexel/s  (%d threads)\n",
                    decoder->isa_name(), whole, queries, decoder->threads());
    }
    return 0;
}
