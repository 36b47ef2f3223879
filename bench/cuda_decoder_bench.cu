// Throughput of the CUDA decoder on a random but valid default-network pack (4096x4096, full mip chain, grid scale 2,
// 16 features of 4 bits, 48 -> 64 -> 64 -> 64 -> C with an Int8 last layer): whole-material decoding into device
// memory (and with the copy to the host), random queries, on the fp8 and fp16 paths, on Hopper with the warpgroup
// kernels (wgmma) beside the warp kernels (mma.sync); the decoder's timing variants
// (the full decode built for 3 blocks a multiprocessor as before, network without sampling, MMAs without the
// elementwise epilogue, sampling without network) to show what binds;
// the mma.sync ceilings measured on this GPU and the texel rate they allow; and the CPU decoder on mip 0 of the same
// pack for the ratio. Usage: nmc_cuda_decoder_bench [channels (default 10)] [size (default 4096)]. GPU times are
// cudaEvent medians of 11 runs after 3 warm-ups. The main table comes last (scripts/gpu-check.sh prints the tail).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_exit_on_error.h"
#include "cuda/cuda_device.h"
#include "decoder/cpu/cpu_decoder.h"
#include "decoder/cuda/cuda_decode_variants.h"
#include "tests/cuda/binary16_variants.h"
#include "tests/decoder/random_pack.h"

namespace {

// Multiply-adds per texel of the default network (48*64 + 64*64 + 64*64 + 64*16), as the fp16 path runs it.
constexpr double kMacsPerTexel = 48.0 * 64 + 64.0 * 64 + 64.0 * 64 + 64.0 * 16;

void check(const nmc::Status& s) {
    nmc::bench::exit_on_error(s, "running the benchmark");
}

// The mma.sync ceiling: every warp runs kChains independent accumulator chains of kIterations MMAs on register
// operands, m16n8k16 fp16 or m16n8k32 E4M3, fp32 accumulation. A changes every iteration and B differs per chain, so
// no product is loop-invariant. An earlier version with loop-invariant operands reported 1.8 PFLOP/s for E4M3 on the
// H200; it probably hoisted the products out of the loop. This one measures about 1.04 PFLOP/s for E4M3 and 0.64 for
// fp16 there, a ratio bench/results/notes-cuda-decoder.txt ("Ceilings") leaves open.
constexpr int kChains = 8;
constexpr int kIterations = 4096;

template <bool kFp8>
__global__ void mma_ceiling_kernel(float* sink) {
    const uint32_t seed = threadIdx.x * 0x9E3779B9u;
    uint32_t a0 = seed & 0x3C3C3C3Cu, a1 = (seed >> 1) & 0x3C3C3C3Cu, a2 = (seed >> 2) & 0x3C3C3C3Cu,
             a3 = (seed >> 3) & 0x3C3C3C3Cu;
    const uint32_t b0 = (seed >> 4) & 0x3C3C3C3Cu, b1 = (seed >> 5) & 0x3C3C3C3Cu;
    float c[kChains][4] = {};
    for (int i = 0; i < kIterations; ++i) {
#pragma unroll
        for (int k = 0; k < kChains; ++k) {
            if constexpr (kFp8) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
                asm volatile(
                    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                    "{%0,%1,%2,%3};\n"
                    : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
                    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0 ^ (0x01010101u * k)), "r"(b1));
#endif
            } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
                asm volatile(
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                    "{%0,%1,%2,%3};\n"
                    : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
                    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0 ^ (0x00010001u * k)), "r"(b1));
#endif
            }
        }
        a0 ^= 0x01010101u, a1 ^= 0x01010101u, a2 ^= 0x01000100u, a3 ^= 0x00010001u;
    }
    float total = 0;
#pragma unroll
    for (int k = 0; k < kChains; ++k) total += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = total;
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
    const nmc::test::RandomPackOptions o = nmc::test::default_network_options(size, channels);
    const nmc::Pack pack = nmc::test::make_random_pack(o);
    double texels_all = 0;
    for (int m = 0; m < pack.material.mip_count; ++m)
        texels_all += static_cast<double>(pack.material.mip_width(m)) * pack.material.mip_height(m);
    const double texels0 = static_cast<double>(size) * size;
    std::printf("%s (sm_%d%d, %d SMs); pack %dx%d, %d mips (%.1f Mtexels), F=16 4-bit, 48-64-64-64-%d, int8 last\n",
                info->name.c_str(), info->compute_major, info->compute_minor, info->multiprocessors, size, size,
                pack.material.mip_count, texels_all / 1e6, channels);

    // mma.sync ceilings on this GPU: 8 blocks of 128 threads per SM.
    const int ceiling_blocks = info->multiprocessors * 8;
    float* d_sink = nullptr;
    BENCH_CHECK(cudaMalloc(&d_sink, static_cast<size_t>(ceiling_blocks) * 128 * sizeof(float)));
    auto ceiling_tflops = [&](auto kernel, double k) {
        const double ms = median_ms([&] {
            kernel<<<ceiling_blocks, 128>>>(d_sink);
            BENCH_CHECK(cudaGetLastError());
        });
        const double flops = 2.0 * 16 * 8 * k * kChains * kIterations * (ceiling_blocks * 4.0);
        return flops / (ms * 1e-3) / 1e12;
    };
    const double fp16_tflops = info->compute_major >= 8 ? ceiling_tflops(mma_ceiling_kernel<false>, 16) : 0.0;
    const double fp8_tflops = info->has_fp8_mma() ? ceiling_tflops(mma_ceiling_kernel<true>, 32) : 0.0;
    BENCH_CHECK(cudaFree(d_sink));
    // The decoder's bound: the ceiling of the path `automatic` takes over the network's 2 * MACs per texel (fp8 where
    // CudaDeviceInfo::fp8_path_is_faster, else fp16).
    const double best_tflops = info->fp8_path_is_faster() ? std::max(fp16_tflops, fp8_tflops) : fp16_tflops;
    const double bound = best_tflops * 1e12 / (2.0 * kMacsPerTexel) / 1e9;
    std::printf(
        "mma.sync ceilings measured here: fp16 m16n8k16 %.0f TFLOP/s, e4m3 m16n8k32 %.0f TFLOP/s (%s); "
        "bound for this network (%.0f MACs/texel): %.1f Gtexel/s\n",
        fp16_tflops, fp8_tflops,
        info->fp8_path_is_faster() ? "automatic takes fp8" : "automatic takes fp16: the faster decoder path here",
        kMacsPerTexel, bound);

    // Random queries: uniform (u, v) at mip 0 (as many as mip 0 has texels), uploaded once.
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> coordinate(0.0f, 1.0f);
    std::vector<nmc::TexelQuery> queries(static_cast<size_t>(texels0));
    for (nmc::TexelQuery& q : queries) q = {coordinate(rng), coordinate(rng), 0};
    nmc::TexelQuery* d_queries = nullptr;
    float* d_query_out = nullptr;
    BENCH_CHECK(cudaMalloc(&d_queries, queries.size() * sizeof(nmc::TexelQuery)));
    BENCH_CHECK(cudaMalloc(&d_query_out, queries.size() * static_cast<size_t>(channels) * sizeof(float)));
    BENCH_CHECK(
        cudaMemcpy(d_queries, queries.data(), queries.size() * sizeof(nmc::TexelQuery), cudaMemcpyHostToDevice));

    std::vector<nmc::CudaMatmulPath> paths = {nmc::CudaMatmulPath::fp16};
    if (info->has_fp8_mma()) paths.insert(paths.begin(), nmc::CudaMatmulPath::fp8);
    // One decoder of `p` per matmul path; `warpgroup`: whole mips and random queries on the Hopper warpgroup kernels
    // where they run.
    auto decoders_for = [&](const nmc::Pack& p, bool warpgroup = true) {
        std::vector<nmc::CudaDecoder> out;
        for (nmc::CudaMatmulPath path : paths) {
            auto decoder = nmc::CudaDecoder::create(p, {0, path, warpgroup});
            check(decoder.status());
            out.push_back(std::move(decoder).value());
        }
        return out;
    };
    const std::vector<nmc::CudaDecoder> decoders = decoders_for(pack);
    float* d_out = nullptr;
    BENCH_CHECK(cudaMalloc(&d_out, decoders[0].device_output_floats() * sizeof(float)));
    std::vector<float> host(decoders[0].device_output_floats());
    auto report = [&](const char* name, const char* what, double ms, double texels) {
        const double g = texels / (ms * 1e-3) / 1e9;
        std::printf("%-6s %-40s %10.3f %12.2f %9.1f%%\n", name, what, ms, g, 100.0 * g / bound);
    };

    // Timing variants of the full decode: full_3_blocks against full (the main table) = the register trade-off;
    // sampling = full - network_only, epilogue = network_only - matmul_only; the binary16 ones time the plan for 20
    // Gtexel/s (bench/results/notes-cuda-decoder.txt) and say how far their values are from the spec's; the
    // tiled_without_* ones against tensor_sampling_binary16 are the tiled kernel's breakdown (what a tile's activation,
    // stores and sampling products cost).
    std::printf(
        "\ntiming variants of the full decode (all mips, device); the spec's values only for full_3_blocks and "
        "warpgroup_*\n");
    std::printf("%-6s %-40s %10s %12s %10s\n", "path", "what", "ms", "Gtexel/s", "of bound");
    std::vector<float> spec_values(host.size());
    std::vector<std::string> differences;
    for (const nmc::CudaDecoder& decoder : decoders) {
        check(decoder.decode_all_mips_to_device(d_out));
        BENCH_CHECK(cudaMemcpy(spec_values.data(), d_out, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
        for (nmc::CudaDecodeVariant variant :
             {nmc::CudaDecodeVariant::full_3_blocks, nmc::CudaDecodeVariant::network_only,
              nmc::CudaDecodeVariant::matmul_only, nmc::CudaDecodeVariant::sampling_only,
              nmc::CudaDecodeVariant::binary16_activation, nmc::CudaDecodeVariant::binary16_activation_and_sampling,
              nmc::CudaDecodeVariant::warpgroup_4_blocks, nmc::CudaDecodeVariant::tensor_sampling_binary16,
              nmc::CudaDecodeVariant::tiled_without_activation, nmc::CudaDecodeVariant::tiled_without_stores,
              nmc::CudaDecodeVariant::tiled_without_sampling}) {
            if (nmc::test::is_warpgroup_variant(variant) && !decoder.runs_warpgroup_kernel()) continue;
            const std::string what = std::string("variant ") + nmc::to_string(variant);
            report(nmc::to_string(decoder.path()), what.c_str(),
                   median_ms([&] { check(decode_all_mips_to_device(decoder, d_out, variant)); }), texels_all);
            if (!nmc::test::is_binary16_variant(variant)) continue;
            // Every output value (all mips, all channels, pack units) against the spec's.
            BENCH_CHECK(cudaMemcpy(host.data(), d_out, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
            const nmc::test::ValueDifference d = nmc::test::value_difference(host, spec_values);
            char line[256];
            std::snprintf(line, sizeof line, "%-6s %-40s rms %.3g, largest %.3g, %.2f%% of values differ",
                          nmc::to_string(decoder.path()), nmc::to_string(variant), d.rms, d.largest,
                          100.0 * d.changed_fraction);
            differences.emplace_back(line);
        }
    }
    std::printf("binary16 variants against the spec's values (pack units; random pack, so only a sanity check):\n");
    for (const std::string& line : differences) std::printf("  %s\n", line.c_str());

    // Whole mips on the warp kernel (mma.sync) beside the warpgroup kernel (wgmma) where this GPU runs it.
    const std::vector<nmc::CudaDecoder> warp_decoders = decoders_for(pack, false);
    const auto kernel_name = [](const nmc::CudaDecoder& decoder) {
        return decoder.runs_warpgroup_kernel() ? "warpgroup kernel" : "warp kernel";
    };
    std::printf("\n%-6s %-40s %10s %12s %10s\n", "path", "what", "ms", "Gtexel/s", "of bound");
    if (decoders[0].runs_warpgroup_kernel())
        for (const nmc::CudaDecoder& decoder : warp_decoders) {
            report(nmc::to_string(decoder.path()), "full decode, all mips, warp kernel",
                   median_ms([&] { check(decoder.decode_all_mips_to_device(d_out)); }), texels_all);
            report(nmc::to_string(decoder.path()), "random queries, mip 0, warp kernel",
                   median_ms([&] { check(decoder.decode_queries_on_device(d_queries, queries.size(), d_query_out)); }),
                   texels0);
        }
    for (const nmc::CudaDecoder& decoder : decoders) {
        const char* name = nmc::to_string(decoder.path());
        const std::string full = std::string("full decode, all mips, ") + kernel_name(decoder);
        report(name, full.c_str(), median_ms([&] { check(decoder.decode_all_mips_to_device(d_out)); }), texels_all);
        report(name, "full decode, all mips, + host copy", median_ms([&] {
                   check(decoder.decode_all_mips_to_device(d_out));
                   BENCH_CHECK(cudaMemcpy(host.data(), d_out, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
               }),
               texels_all);
        const std::string random = std::string("random queries, mip 0, ") + kernel_name(decoder);
        report(name, random.c_str(),
               median_ms([&] { check(decoder.decode_queries_on_device(d_queries, queries.size(), d_query_out)); }),
               texels0);
    }
    // The same pack with two latent levels, what rate control writes since 2026-12-01: every mip reads levels 0 and
    // 1 (spec 8.1), so the small mips sample the largest levels sparsely instead of levels of their own size. The
    // rows above keep the full pyramid so that they stay comparable with earlier runs.
    nmc::test::RandomPackOptions two_levels = o;
    two_levels.level_count = 2;
    const nmc::Pack pack2 = nmc::test::make_random_pack(two_levels);
    for (const nmc::CudaDecoder& decoder : decoders_for(pack2)) {
        const std::string what = std::string("full decode, 2 levels, ") + kernel_name(decoder);
        report(nmc::to_string(decoder.path()), what.c_str(),
               median_ms([&] { check(decoder.decode_all_mips_to_device(d_out)); }), texels_all);
    }
    // The same pack in the binary16 arithmetic (spec 5.6, format 2.0): the decoder of 2.0 packs, whole mips and
    // random queries, on both kernels where the warpgroup kernel runs.
    nmc::Pack pack16 = pack;
    pack16.network.arithmetic = nmc::Arithmetic::binary16;
    for (const bool warpgroup : {true, false}) {
        if (!warpgroup && !decoders[0].runs_warpgroup_kernel()) continue;
        for (const nmc::CudaDecoder& decoder : decoders_for(pack16, warpgroup)) {
            // Whole mips of this default-shape pack run on the tiled kernel where the warpgroup kernel runs.
            const std::string full = std::string("full decode, binary16, ") +
                                     (decoder.runs_warpgroup_kernel() ? "tiled kernel" : kernel_name(decoder));
            report(nmc::to_string(decoder.path()), full.c_str(),
                   median_ms([&] { check(decoder.decode_all_mips_to_device(d_out)); }), texels_all);
            const std::string random = std::string("random queries, binary16, ") + kernel_name(decoder);
            report(nmc::to_string(decoder.path()), random.c_str(),
                   median_ms([&] { check(decoder.decode_queries_on_device(d_queries, queries.size(), d_query_out)); }),
                   texels0);
        }
    }
    // Latents as nmc writes them by default (two levels, grid scale 4: level 0 has a texel per 4 x 4 mip-0 texels),
    // binary16: the tiled kernel takes mips 0 and 1 (94% of the texels), the warpgroup kernel the rest.
    nmc::test::RandomPackOptions written = o;
    written.grid_scale = 4;
    written.level_count = 2;
    nmc::Pack pack_written = nmc::test::make_random_pack(written);
    pack_written.network.arithmetic = nmc::Arithmetic::binary16;
    for (const nmc::CudaDecoder& decoder : decoders_for(pack_written)) {
        report(nmc::to_string(decoder.path()), "full decode, S=4 2 levels, binary16",
               median_ms([&] { check(decoder.decode_all_mips_to_device(d_out)); }), texels_all);
    }
    // NTC 0.9's hidden layers (`nmc compress --hidden-layers 64,48,32`), binary16, the benchmark's latents: the tiled
    // kernel built for those widths where the warpgroup kernel runs. "of bound" stays the default network's (this one
    // has 8,192 multiply-adds a texel instead of 12,288).
    nmc::test::RandomPackOptions narrow = o;
    narrow.hidden_widths = {64, 48, 32};
    nmc::Pack pack_narrow = nmc::test::make_random_pack(narrow);
    pack_narrow.network.arithmetic = nmc::Arithmetic::binary16;
    for (const nmc::CudaDecoder& decoder : decoders_for(pack_narrow)) {
        report(nmc::to_string(decoder.path()), "full decode, 64-48-32, binary16",
               median_ms([&] { check(decoder.decode_all_mips_to_device(d_out)); }), texels_all);
    }
    BENCH_CHECK(cudaFree(d_out));

    auto cpu = nmc::CpuDecoder::create(pack);
    check(cpu.status());
    std::vector<std::vector<float>> planes;
    check(cpu->decode_mip_channels(pack.material.mip_count > 4 ? 4 : 0, planes));  // warm-up
    const auto start = std::chrono::steady_clock::now();
    check(cpu->decode_mip_channels(0, planes));
    const double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-6s %-40s %10.3f %12.3f   (%s kernel, %d threads)\n", "cpu", "mip 0, host", cpu_s * 1e3,
                texels0 / cpu_s / 1e9, cpu->isa_name(), cpu->threads());
    BENCH_CHECK(cudaFree(d_queries));
    BENCH_CHECK(cudaFree(d_query_out));
    return 0;
}
