// Throughput of the CUDA decoder on a random but valid default-network pack (4096x4096, full mip chain, grid scale 2,
// 16 features of 4 bits, 48 -> 64 -> 64 -> 64 -> C with an Int8 last layer): whole-material decoding into device
// memory (and with the copy to the host), random queries, on the fp8 and fp16 paths, against the fp8 mma.sync bound;
// and the CPU decoder on mip 0 of the same pack for the ratio. Usage: nmc_cuda_decoder_bench [channels (default 10)]
// [size (default 4096)]. GPU times are cudaEvent medians of 11 runs after 3 warm-ups.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "decoder/cpu/cpu_decoder.h"
#include "decoder/cuda/cuda_decoder.h"
#include "decoder/cuda/cuda_device.h"
#include "tests/decoder/random_pack.h"

namespace {

// ~1.8 PFLOP/s fp8 mma.sync measured on the H200 / (2 * (48*64 + 64*64 + 64*64 + 64*16) MACs per texel).
constexpr double kFp8BoundGtexels = 74.0;

#define BENCH_CHECK(call)                                                                                \
    do {                                                                                                 \
        const cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

void check(const nmc::Status& s) {
    if (!s.ok()) {
        std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
        std::exit(1);
    }
}

// Median milliseconds of `run` over 11 timed runs after 3 warm-ups, each bracketed by cudaEvents.
template <typename Run>
double median_ms(const Run& run) {
    for (int i = 0; i < 3; ++i) run();
    cudaEvent_t start, stop;
    BENCH_CHECK(cudaEventCreate(&start));
    BENCH_CHECK(cudaEventCreate(&stop));
    std::vector<double> times;
    for (int i = 0; i < 11; ++i) {
        BENCH_CHECK(cudaEventRecord(start));
        run();
        BENCH_CHECK(cudaEventRecord(stop));
        BENCH_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        BENCH_CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    BENCH_CHECK(cudaEventDestroy(start));
    BENCH_CHECK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const int channels = argc > 1 ? std::atoi(argv[1]) : 10;
    const int size = argc > 2 ? std::atoi(argv[2]) : 4096;
    if (nmc::cuda_device_count() == 0) {
        std::printf("no CUDA device: nothing to measure\n");
        return 0;
    }
    auto info = nmc::query_cuda_device(0);
    check(info.status());
    nmc::test::RandomPackOptions o;
    o.width = size;
    o.height = size;
    o.grid_scale = 2;
    o.feature_count = 16;
    o.level_bits = {4};
    o.channel_count = channels;
    o.extra_inputs = 3;  // 2 * 16 + 13 + 3 = 48 inputs
    o.seed = 42;
    const nmc::Pack pack = nmc::test::make_random_pack(o);
    double texels_all = 0;
    for (int m = 0; m < pack.material.mip_count; ++m)
        texels_all += static_cast<double>(pack.material.mip_width(m)) * pack.material.mip_height(m);
    const double texels0 = static_cast<double>(size) * size;
    std::printf("%s (sm_%d%d, %d SMs); pack %dx%d, %d mips (%.1f Mtexels), F=16 4-bit, 48-64-64-64-%d, int8 last\n",
                info->name.c_str(), info->compute_major, info->compute_minor, info->multiprocessors, size, size,
                pack.material.mip_count, texels_all / 1e6, channels);
    std::printf("fp8 mma.sync bound for this network: ~%.0f Gtexel/s (1.8 PFLOP/s measured)\n\n", kFp8BoundGtexels);
    std::printf("%-6s %-34s %10s %12s %10s\n", "path", "what", "ms", "Gtexel/s", "of bound");

    // Random queries: uniform (u, v) at mip 0 (as many as mip 0 has texels), uploaded once.
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> coordinate(0.0f, 1.0f);
    std::vector<nmc::TexelQuery> queries(static_cast<size_t>(texels0));
    for (nmc::TexelQuery& q : queries) q = {coordinate(rng), coordinate(rng), 0};
    nmc::TexelQuery* d_queries = nullptr;
    float* d_query_out = nullptr;
    BENCH_CHECK(cudaMalloc(&d_queries, queries.size() * sizeof(nmc::TexelQuery)));
    BENCH_CHECK(cudaMalloc(&d_query_out, queries.size() * static_cast<size_t>(channels) * sizeof(float)));
    BENCH_CHECK(cudaMemcpy(d_queries, queries.data(), queries.size() * sizeof(nmc::TexelQuery), cudaMemcpyHostToDevice));

    std::vector<nmc::CudaMatmulPath> paths = {nmc::CudaMatmulPath::fp16};
    if (info->has_fp8_mma()) paths.insert(paths.begin(), nmc::CudaMatmulPath::fp8);
    for (nmc::CudaMatmulPath path : paths) {
        auto decoder = nmc::CudaDecoder::create(pack, {0, path});
        check(decoder.status());
        float* d_out = nullptr;
        BENCH_CHECK(cudaMalloc(&d_out, decoder->device_output_floats() * sizeof(float)));
        std::vector<float> host(decoder->device_output_floats());
        const char* name = nmc::to_string(path);
        auto report = [&](const char* what, double ms, double texels) {
            const double g = texels / (ms * 1e-3) / 1e9;
            std::printf("%-6s %-34s %10.3f %12.2f %9.1f%%\n", name, what, ms, g, 100.0 * g / kFp8BoundGtexels);
        };
        report("full decode, all mips, device", median_ms([&] { check(decoder->decode_all_mips_to_device(d_out)); }),
               texels_all);
        report("full decode, all mips, + host copy", median_ms([&] {
                   check(decoder->decode_all_mips_to_device(d_out));
                   BENCH_CHECK(cudaMemcpy(host.data(), d_out, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
               }),
               texels_all);
        report("random queries, mip 0, device", median_ms([&] {
                   check(decoder->decode_queries_on_device(d_queries, queries.size(), d_query_out));
               }),
               texels0);
        BENCH_CHECK(cudaFree(d_out));
    }

    auto cpu = nmc::CpuDecoder::create(pack);
    check(cpu.status());
    std::vector<std::vector<float>> planes;
    check(cpu->decode_mip_channels(pack.material.mip_count > 4 ? 4 : 0, planes));  // warm-up
    const auto start = std::chrono::steady_clock::now();
    check(cpu->decode_mip_channels(0, planes));
    const double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-6s %-34s %10.3f %12.3f   (%s kernel, %d threads)\n", "cpu", "mip 0, host", cpu_s * 1e3,
                texels0 / cpu_s / 1e9, cpu->isa_name(), cpu->threads());
    BENCH_CHECK(cudaFree(d_queries));
    BENCH_CHECK(cudaFree(d_query_out));
    return 0;
}
