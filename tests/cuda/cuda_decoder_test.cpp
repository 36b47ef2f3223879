// The CUDA decoder against the CPU reference decoder on random valid packs: every texel of every mip, random
// queries, partial warps, warps mixing packs, both matmul paths, the wide-network kernels, GPU-side error sums
// against the CPU's, and the benchmark's timing variants. Skipped without a device; failed without one when
// NMC_REQUIRE_GPU is set.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_device.h"
#include "decoder/cpu/cpu_decoder.h"
#include "decoder/cuda/cuda_decode_variants.h"
#include "tests/cuda/binary16_variants.h"
#include "tests/cuda/gpu_requirement.h"
#include "tests/decoder/random_pack.h"

namespace nmc {
namespace {

using test::RandomPackOptions;

bool require_device() {
    return test::gpu_requirement_met(cuda_device_count() > 0, "no CUDA device was found");
}

// The paths this device runs: fp16 always (sm_75+), fp8 from compute capability 8.9.
std::vector<CudaMatmulPath> paths() {
    std::vector<CudaMatmulPath> result = {CudaMatmulPath::fp16};
    auto info = query_cuda_device(0);
    if (info.ok() && info->has_fp8_mma()) result.push_back(CudaMatmulPath::fp8);
    return result;
}

CudaDecoder make_cuda(const Pack& pack, CudaMatmulPath path, bool warpgroup = true) {
    Result<CudaDecoder> decoder = CudaDecoder::create(pack, {0, path, warpgroup});
    EXPECT_TRUE(decoder.ok()) << decoder.status().to_string();
    return std::move(decoder).value();
}

CpuDecoder make_cpu(const Pack& pack) {
    Result<CpuDecoder> decoder = CpuDecoder::create(pack, {2, CpuIsa::portable});
    EXPECT_TRUE(decoder.ok()) << decoder.status().to_string();
    return std::move(decoder).value();
}

template <typename Decoder>
std::vector<std::vector<float>> decode_mip(const Decoder& decoder, int mip) {
    std::vector<std::vector<float>> planes;
    const Status status = decoder.decode_mip_channels(mip, planes);
    EXPECT_TRUE(status.ok()) << status.to_string();
    return planes;
}

// Exact sums (test::exact_sum_cases(): every partial sum is a float32-exact multiple), so any summation order, the
// tensor cores' included, gives the exact sum, and the GPU must equal the CPU bit for bit on every texel. Two more
// cases here: the default network's shape with E4M3 scales, and the wide-network kernel (widths above 64), where
// |W| <= 0.125 and widths <= 128 keep sums below 48, with an E4M3 last layer (an Int8 one could reach
// 128 * 127 * 3 > 2^15).
using test::ExactCase;

// The default network's shape: 48 -> 64 -> 64 -> 64 -> 10, E4M3 scales.
RandomPackOptions default_shape_scaled() {
    RandomPackOptions scaled;
    scaled.feature_count = 16;
    scaled.channel_count = 10;
    scaled.extra_inputs = 3;
    scaled.e4m3_scales = true;
    scaled.seed = 6;
    return scaled;
}

// The production shape (hidden layers without scales, two latent levels) where the tiled kernel decodes binary16
// packs: a non-square size with clamp addressing (mips 0 and 1 tiled, levels 4 and 8 or 2 and 4 times coarser).
RandomPackOptions production_shape() {
    RandomPackOptions production = default_shape_scaled();
    production.width = 128;
    production.height = 64;
    production.address_mode = AddressMode::clamp;
    production.grid_scale = 4;
    production.level_count = 2;
    production.e4m3_scales = false;
    production.seed = 8;
    return production;
}

// The same with wrap addressing and grid scale 8, whose mip 0 has four tile classes (level k1 16 times coarser: a
// period of two tiles).
RandomPackOptions production_classes_shape() {
    RandomPackOptions classes = production_shape();
    classes.width = 64;
    classes.address_mode = AddressMode::wrap;
    classes.grid_scale = 8;
    classes.seed = 9;
    return classes;
}

std::vector<ExactCase> exact_cases() {
    std::vector<ExactCase> cases = test::exact_sum_cases();
    const RandomPackOptions base;
    cases.push_back({"default shape F16 C10 with E4M3 scales", default_shape_scaled()});
    RandomPackOptions wide = base;
    wide.width = 45;
    wide.height = 33;
    wide.hidden_widths = {128, 96};
    wide.max_e4m3_weight = 0.125f;
    wide.int8_last_layer = false;
    wide.seed = 7;
    cases.push_back({"wide network 128-96", wide});
    cases.push_back({"default shape unscaled 128x64 clamp, two levels", production_shape()});
    cases.push_back({"default shape unscaled 64x64 wrap, grid scale 8, two levels", production_classes_shape()});
    // NTC 0.9's hidden widths: the tiled kernel that leaves the padding out (TiledWidths::w64_48_32).
    RandomPackOptions narrow = production_shape();
    narrow.hidden_widths = {64, 48, 32};
    narrow.seed = 10;
    cases.push_back({"NTC 0.9 widths 64-48-32 unscaled 128x64 clamp, two levels", narrow});
    RandomPackOptions narrow_scaled = narrow;  // the same kernel's epilogue with scales
    narrow_scaled.e4m3_scales = true;
    narrow_scaled.seed = 12;
    cases.push_back({"NTC 0.9 widths 64-48-32 with E4M3 scales", narrow_scaled});
    return cases;
}

// Decodes run on the Hopper warpgroup kernels where the device and build allow it (the option's default), else on the
// warp kernels; the tests of whole mips, queries and error sums run both (on other GPUs, the warp kernels twice).
constexpr bool kWarpgroupOptions[] = {true, false};

// "fp16, warpgroup kernel": which decoder a failure comes from.
std::string decoder_name(CudaMatmulPath path, bool warpgroup) {
    return std::string(to_string(path)) + (warpgroup ? ", warpgroup kernel" : ", warp kernel");
}

// Both arithmetics of spec 5.6. The binary16 one's layer sums stay exact on these packs (inputs and activations
// within the same bounds). Its sampling sums are the CPU's whatever the pack on the warp and warpgroup kernels (they
// add the four exact products in the CPU decoder's order); the tiled kernel (whole mips of the default shape on
// Hopper) adds them on the tensor cores, in their order, which spec 8.3 allows. Those sums are not exact on every
// texel of these packs (a value near 0 beside one near 1 needs more than 24 bits), so bit-for-bit equality there
// is the H200's rounding matching the CPU's, observed on every run since 2026-12-02, not a property of the packs: a
// failure that differs in the last bit of a few texels of tiled mips would be allowed by the spec.
constexpr Arithmetic kArithmetics[] = {Arithmetic::float32, Arithmetic::binary16};

// case.options' pack in `arithmetic`.
Pack make_pack(const RandomPackOptions& options, Arithmetic arithmetic) {
    Pack pack = test::make_random_pack(options);
    pack.network.arithmetic = arithmetic;
    return pack;
}

TEST(CudaDecoder, ExactSumsEqualCpuBitForBitOnEveryMipAndPath) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    for (const ExactCase& c : exact_cases()) {
        for (Arithmetic arithmetic : kArithmetics) {
            SCOPED_TRACE(std::string(c.name) + ", " + to_string(arithmetic));
            const Pack pack = make_pack(c.options, arithmetic);
            const CpuDecoder cpu = make_cpu(pack);
            for (CudaMatmulPath path : paths()) {
                for (bool warpgroup : kWarpgroupOptions) {
                    SCOPED_TRACE(decoder_name(path, warpgroup));
                    const CudaDecoder gpu = make_cuda(pack, path, warpgroup);
                    for (int mip = 0; mip < pack.material.mip_count; ++mip) {
                        // == on float vectors: exact (and -0.0 == +0.0, the same value).
                        EXPECT_EQ(decode_mip(gpu, mip), decode_mip(cpu, mip)) << "mip " << mip;
                    }
                }
            }
        }
    }
}

// The warpgroup kernel runs exactly where it can: compute capability 9.0, a build with sm_90a code, networks of
// widths <= 64, and the option on.
TEST(CudaDecoder, WarpgroupKernelRunsWhereTheBuildAndDeviceAllow) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const std::vector<ExactCase> cases = exact_cases();
    const Pack small = test::make_random_pack(cases[5].options);  // default shape
    const Pack wide = test::make_random_pack(cases[6].options);
    const auto info = query_cuda_device(0);
    ASSERT_TRUE(info.ok());
#if defined(NMC_BUILD_HAS_SM90A)
    const bool hopper = info->compute_major == 9 && info->compute_minor == 0;
#else
    const bool hopper = false;
#endif
    for (CudaMatmulPath path : paths()) {
        SCOPED_TRACE(to_string(path));
        EXPECT_EQ(make_cuda(small, path).runs_warpgroup_kernel(), hopper);
        EXPECT_FALSE(make_cuda(small, path, false).runs_warpgroup_kernel());
        EXPECT_FALSE(make_cuda(wide, path).runs_warpgroup_kernel());
    }
}

TEST(CudaDecoder, RandomQueriesEqualCpuIncludingPartialWarpsAndOutsideTheUnitSquare) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    for (const ExactCase& c : exact_cases()) {
        for (Arithmetic arithmetic : kArithmetics) {
            SCOPED_TRACE(std::string(c.name) + ", " + to_string(arithmetic));
            const Pack pack = make_pack(c.options, arithmetic);
            std::mt19937 rng(11);
            std::uniform_real_distribution<float> coordinate(-1.5f, 2.5f);
            std::uniform_int_distribution<int> mip(0, pack.material.mip_count - 1);
            std::vector<TexelQuery> queries(1000 + 7);  // not a multiple of 32 or 64: the last warp or group is partial
            for (TexelQuery& q : queries) q = {coordinate(rng), coordinate(rng), mip(rng)};
            std::vector<float> expected;
            ASSERT_TRUE(make_cpu(pack).decode_queries(queries, expected).ok());
            for (CudaMatmulPath path : paths()) {
                for (bool warpgroup : kWarpgroupOptions) {
                    SCOPED_TRACE(decoder_name(path, warpgroup));
                    std::vector<float> out;
                    const Status s = make_cuda(pack, path, warpgroup).decode_queries(queries, out);
                    ASSERT_TRUE(s.ok()) << s.to_string();
                    EXPECT_EQ(out, expected);
                }
            }
        }
    }
}

TEST(CudaDecoder, SingleQueryAndEmptyQueryList) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const Pack pack = test::make_random_pack(RandomPackOptions{});
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::automatic);
    std::vector<float> out = {1.0f};
    ASSERT_TRUE(gpu.decode_queries({}, out).ok());
    EXPECT_TRUE(out.empty());
    const std::vector<TexelQuery> one = {{0.3f, 0.7f, 1}};
    std::vector<float> expected;
    ASSERT_TRUE(make_cpu(pack).decode_queries(one, expected).ok());
    ASSERT_TRUE(gpu.decode_queries(one, out).ok());
    EXPECT_EQ(out, expected);
}

TEST(CudaDecoder, TextureImagesEqualCpu) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    RandomPackOptions o;
    o.width = 37;
    o.height = 19;
    Pack pack = test::make_random_pack(o);
    // Texture 0 becomes an xy normal map with an inverted Y (spec 8.8-8.9); the last one an HLG-encoded HDR map.
    TextureLayout& normal = pack.textures[0];
    normal.normal_mode = NormalMode::xy;
    normal.channels.resize(3);
    normal.channels[1].invert = true;
    normal.channels[2].kind = ChannelSource::Kind::normal_z;
    TextureLayout rest = pack.textures[2];  // pack channels 2 and 3 move to a texture of their own
    rest.name = "rest";
    rest.file_name = "rest.png";
    rest.channels.resize(2);
    rest.channels[0].pack_channel = 2;
    rest.channels[1].pack_channel = 3;
    rest.value_encoding = ValueEncoding::hlg;  // an HDR map on the HLG curve (spec 8.9): decoded to 0..16
    rest.peak = 16.0f;
    pack.textures.push_back(rest);
    const CpuDecoder cpu = make_cpu(pack);
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::automatic);
    for (int t = 0; t < static_cast<int>(pack.textures.size()); ++t) {
        for (int mip = 0; mip < pack.material.mip_count; ++mip) {
            auto a = gpu.decode_texture(t, mip);
            auto b = cpu.decode_texture(t, mip);
            ASSERT_TRUE(a.ok()) << a.status().to_string();
            ASSERT_TRUE(b.ok());
            EXPECT_EQ(a->pixels, b->pixels) << "texture " << t << " mip " << mip;
        }
    }
}

// Warps whose lanes use different packs: queries interleaved so every warp holds all three packs (different sizes,
// feature counts, channel counts and network widths, one on the wide kernel, one of the binary16 arithmetic), plus a
// tail that is a partial warp.
TEST(CudaDecoder, BatchWithMixedPacksInOneWarpEqualsEachPacksCpuDecode) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const std::vector<ExactCase> cases = exact_cases();
    const std::vector<Pack> packs = {make_pack(cases[0].options, Arithmetic::float32),
                                     make_pack(cases[2].options, Arithmetic::binary16),
                                     make_pack(cases[4].options, Arithmetic::float32)};
    for (CudaMatmulPath path : paths()) {
        SCOPED_TRACE(to_string(path));
        std::vector<CudaDecoder> gpus;
        for (const Pack& p : packs) gpus.push_back(make_cuda(p, path));
        std::vector<const CudaDecoder*> pointers;
        for (const CudaDecoder& g : gpus) pointers.push_back(&g);
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> coordinate(-0.5f, 1.5f);
        std::vector<BatchTexelQuery> batch(32 * 20 + 13);
        std::vector<std::vector<TexelQuery>> per_pack(packs.size());
        std::vector<std::vector<size_t>> index(packs.size());
        for (size_t i = 0; i < batch.size(); ++i) {
            const int p = static_cast<int>((i * 7 + i / 5) % packs.size());
            const int mip =
                std::uniform_int_distribution<int>(0, packs[static_cast<size_t>(p)].material.mip_count - 1)(rng);
            batch[i] = {p, coordinate(rng), coordinate(rng), mip};
            per_pack[static_cast<size_t>(p)].push_back({batch[i].u, batch[i].v, mip});
            index[static_cast<size_t>(p)].push_back(i);
        }
        std::vector<float> out;
        const Status s = CudaDecoder::decode_batch_queries(pointers, batch, out);
        ASSERT_TRUE(s.ok()) << s.to_string();
        ASSERT_EQ(out.size(), batch.size() * 16);
        for (size_t p = 0; p < packs.size(); ++p) {
            std::vector<float> expected;
            ASSERT_TRUE(make_cpu(packs[p]).decode_queries(per_pack[p], expected).ok());
            const size_t channels = packs[p].channels.size();
            for (size_t k = 0; k < index[p].size(); ++k)
                for (size_t c = 0; c < 16; ++c) {
                    const float want = c < channels ? expected[k * channels + c] : 0.0f;
                    ASSERT_EQ(out[index[p][k] * 16 + c], want)
                        << "pack " << p << " query " << index[p][k] << " c " << c;
                }
        }
    }
}

// A general pack (tests/decoder/cpu_decoder_test.cpp's inexact_options): E4M3 weights over the whole range, so float32
// sums round and the order shows. The bound is the CPU test's: two summation orders of I = 64 products differ by at
// most 2 * 63 * 2^-24 * sum|p|, 3.6e-4 in the output before a channel range of at most 8.25: 3e-3. The tensor cores
// align products to the largest exponent and drop the bits below their accumulator width, which is a rounding of the
// same size per addition (the Fasi et al. tensor-core study), so the same bound holds. A hidden activation within that
// error of an E4M3 rounding midpoint can round the other way and move the output by a weight times an E4M3 step: a
// few texels in 10^3 at most. A wrong kernel differs on nearly every texel.
TEST(CudaDecoder, InexactSumsAgreeWithCpuWithinSummationOrderTolerance) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const Pack pack = test::make_random_pack(test::general_pack_options());
    const CpuDecoder cpu = make_cpu(pack);
    constexpr float kSumOrderTolerance = 3e-3f;
    constexpr double kMaxFractionBeyondTolerance = 0.005;
    for (CudaMatmulPath path : paths()) {
        for (bool warpgroup : kWarpgroupOptions) {
            SCOPED_TRACE(decoder_name(path, warpgroup));
            const CudaDecoder gpu = make_cuda(pack, path, warpgroup);
            for (int mip = 0; mip < pack.material.mip_count; ++mip) {
                const auto a = decode_mip(gpu, mip);
                const auto b = decode_mip(cpu, mip);
                ASSERT_EQ(a.size(), b.size());
                size_t beyond = 0;
                size_t total = 0;
                size_t differing = 0;
                for (size_t c = 0; c < a.size(); ++c) {
                    ASSERT_EQ(a[c].size(), b[c].size());
                    for (size_t i = 0; i < a[c].size(); ++i) {
                        ASSERT_TRUE(std::isfinite(a[c][i]));
                        beyond += std::fabs(a[c][i] - b[c][i]) > kSumOrderTolerance;
                        differing += a[c][i] != b[c][i];
                    }
                    total += a[c].size();
                }
                EXPECT_LE(static_cast<double>(beyond), kMaxFractionBeyondTolerance * static_cast<double>(total))
                    << "mip " << mip << ": " << beyond << " of " << total << " values beyond " << kSumOrderTolerance
                    << " (" << differing << " differ at all)";
            }
        }
    }
}

// GPU-side squared-error sums against reference planes equal the CPU decoder's planes measured on the host the
// way validate does ((v - lo) / (hi - lo) - ref, in double); PSNR within 0.01 dB and the sums within 1e-9 relative
// (only the order of the double additions differs) on a pack whose decode is exact (so both decoders agree).
TEST(CudaDecoder, DeviceErrorSumsMatchHostMeasurementOfCpuDecode) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    RandomPackOptions o;
    o.width = 70;
    o.height = 45;
    o.wide_channel_ranges = true;
    o.seed = 21;
    for (Arithmetic arithmetic : kArithmetics) {
        SCOPED_TRACE(to_string(arithmetic));
        const Pack pack = make_pack(o, arithmetic);
        const CpuDecoder cpu = make_cpu(pack);
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> value(0.0f, 1.0f);
        std::vector<std::vector<std::vector<float>>> reference(static_cast<size_t>(pack.material.mip_count));
        for (int m = 0; m < pack.material.mip_count; ++m) {
            const size_t texels =
                static_cast<size_t>(pack.material.mip_width(m)) * static_cast<size_t>(pack.material.mip_height(m));
            for (size_t c = 0; c < pack.channels.size(); ++c) {
                std::vector<float> plane(texels);
                for (float& v : plane) v = value(rng);
                reference[static_cast<size_t>(m)].push_back(plane);
            }
        }
        for (CudaMatmulPath path : paths()) {
            for (bool warpgroup : kWarpgroupOptions) {
                SCOPED_TRACE(decoder_name(path, warpgroup));
                CudaDecoder gpu = make_cuda(pack, path, warpgroup);
                EXPECT_FALSE(gpu.measure_errors().ok());  // no reference yet
                ASSERT_TRUE(gpu.upload_reference(reference).ok());
                auto sums = gpu.measure_errors();
                ASSERT_TRUE(sums.ok()) << sums.status().to_string();
                double gpu_mse_sum = 0;
                double cpu_mse_sum = 0;
                for (int m = 0; m < pack.material.mip_count; ++m) {
                    const auto planes = decode_mip(cpu, m);
                    for (size_t c = 0; c < planes.size(); ++c) {
                        const double lo = pack.channels[c].lo;
                        const double hi = pack.channels[c].hi;
                        double sse = 0;
                        double peak = 0;
                        for (size_t i = 0; i < planes[c].size(); ++i) {
                            const double d = (static_cast<double>(planes[c][i]) - lo) / (hi - lo) -
                                             reference[static_cast<size_t>(m)][c][i];
                            sse += d * d;
                            peak = std::max(peak, std::fabs(d));
                        }
                        const double gpu_sse = sums->sse[static_cast<size_t>(m)][c];
                        EXPECT_NEAR(gpu_sse, sse, 1e-9 * sse + 1e-12) << "mip " << m << " channel " << c;
                        EXPECT_EQ(sums->max_abs_error[static_cast<size_t>(m)][c], peak)
                            << "mip " << m << " channel " << c;
                        EXPECT_EQ(sums->texels[static_cast<size_t>(m)], static_cast<double>(planes[c].size()));
                        gpu_mse_sum += gpu_sse / sums->texels[static_cast<size_t>(m)];
                        cpu_mse_sum += sse / static_cast<double>(planes[c].size());
                    }
                }
                EXPECT_NEAR(-10 * std::log10(gpu_mse_sum), -10 * std::log10(cpu_mse_sum), 0.01);
            }
        }
    }
}

TEST(CudaDecoder, DeviceOutputHoldsEveryMipAtItsOffset) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const Pack pack = test::make_random_pack(exact_cases()[2].options);
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::automatic);
    const CpuDecoder cpu = make_cpu(pack);
    // Round trip through the public device entry point via decode_mip_channels' host copy would hide offsets, so
    // compare the offsets' arithmetic and one mip's host decode: the offsets must tile the buffer exactly.
    size_t expected_offset = 0;
    for (int m = 0; m < pack.material.mip_count; ++m) {
        EXPECT_EQ(gpu.device_output_offset(m), expected_offset);
        expected_offset += static_cast<size_t>(pack.material.mip_width(m)) *
                           static_cast<size_t>(pack.material.mip_height(m)) * pack.channels.size();
    }
    EXPECT_EQ(gpu.device_output_floats(), expected_offset);
}

// The timing variants time arithmetics against a float32 pack: a binary16 pack has none (invalid_argument), and its
// full decode runs.
TEST(CudaDecoder, TimingVariantsRefuseBinary16Packs) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const Pack pack = make_pack(exact_cases()[5].options, Arithmetic::binary16);  // default shape
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::automatic);
    float* device_out = nullptr;
    ASSERT_EQ(cudaMalloc(&device_out, gpu.device_output_floats() * sizeof(float)), cudaSuccess);
    EXPECT_TRUE(decode_all_mips_to_device(gpu, device_out, CudaDecodeVariant::full).ok());
    for (CudaDecodeVariant variant :
         {CudaDecodeVariant::full_3_blocks, CudaDecodeVariant::binary16_activation_and_sampling,
          CudaDecodeVariant::warpgroup_4_blocks, CudaDecodeVariant::tensor_sampling_binary16,
          CudaDecodeVariant::tiled_without_activation, CudaDecodeVariant::tiled_without_stores,
          CudaDecodeVariant::tiled_without_sampling}) {
        const Status s = decode_all_mips_to_device(gpu, device_out, variant);
        EXPECT_EQ(s.code(), StatusCode::invalid_argument) << to_string(variant) << ": " << s.to_string();
    }
    cudaFree(device_out);
}

// The tiled kernel's breakdown variants are built for the default widths (64-64-64): a float32 pack of NTC 0.9's
// widths has none (invalid_argument), while tensor_sampling_binary16 runs, on the kernel for its widths (whose values
// ExactSumsEqualCpuBitForBitOnEveryMipAndPath checks on the binary16 pack). Only where the tiled kernel runs.
TEST(CudaDecoder, TiledBreakdownVariantsRefuseOtherWidths) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const std::vector<ExactCase> cases = exact_cases();
    const ExactCase& narrow = cases[cases.size() - 2];  // the unscaled one
    ASSERT_EQ(narrow.options.hidden_widths, (std::vector<int>{64, 48, 32})) << narrow.name;
    const Pack pack = make_pack(narrow.options, Arithmetic::float32);
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::automatic);
    if (!gpu.runs_warpgroup_kernel()) GTEST_SKIP() << "no tiled kernel on this device or build";
    float* device_out = nullptr;
    ASSERT_EQ(cudaMalloc(&device_out, gpu.device_output_floats() * sizeof(float)), cudaSuccess);
    EXPECT_TRUE(decode_all_mips_to_device(gpu, device_out, CudaDecodeVariant::tensor_sampling_binary16).ok());
    for (CudaDecodeVariant variant :
         {CudaDecodeVariant::tiled_without_activation, CudaDecodeVariant::tiled_without_stores,
          CudaDecodeVariant::tiled_without_sampling}) {
        const Status s = decode_all_mips_to_device(gpu, device_out, variant);
        EXPECT_EQ(s.code(), StatusCode::invalid_argument) << to_string(variant) << ": " << s.to_string();
    }
    cudaFree(device_out);
}

// The benchmark's timing variants run on the default-shape network and leave `full` untouched; full_3_blocks and
// warpgroup_4_blocks give the spec's values, the binary16 ones (tensor_sampling_binary16 among them) values close to
// them; tiled_without_stores writes nothing where the tiled kernel runs; the warpgroup ones (the tiled breakdown
// among them) run where the warpgroup kernel runs (else invalid_argument); networks wider than 64 have none
// (invalid_argument).
TEST(CudaDecoder, TimingVariantsRunOnTheFastKernelOnly) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const std::vector<ExactCase> cases = exact_cases();
    const Pack pack = test::make_random_pack(cases[5].options);  // default shape
    const Pack wide = test::make_random_pack(cases[6].options);
    const CpuDecoder cpu = make_cpu(pack);
    for (CudaMatmulPath path : paths()) {
        SCOPED_TRACE(to_string(path));
        const CudaDecoder gpu = make_cuda(pack, path);
        float* device_out = nullptr;
        ASSERT_EQ(cudaMalloc(&device_out, gpu.device_output_floats() * sizeof(float)), cudaSuccess);
        std::vector<std::pair<CudaDecodeVariant, std::vector<float>>> binary16;
        std::vector<std::pair<CudaDecodeVariant, std::vector<float>>> exact;  // the spec's values, other kernels
        for (CudaDecodeVariant variant :
             {CudaDecodeVariant::full_3_blocks, CudaDecodeVariant::network_only, CudaDecodeVariant::matmul_only,
              CudaDecodeVariant::sampling_only, CudaDecodeVariant::binary16_activation,
              CudaDecodeVariant::binary16_activation_and_sampling, CudaDecodeVariant::warpgroup_4_blocks,
              CudaDecodeVariant::tensor_sampling_binary16, CudaDecodeVariant::tiled_without_activation,
              CudaDecodeVariant::tiled_without_stores, CudaDecodeVariant::tiled_without_sampling}) {
            // NaN everywhere first: what a variant leaves unwritten stays NaN.
            ASSERT_EQ(cudaMemset(device_out, 0xFF, gpu.device_output_floats() * sizeof(float)), cudaSuccess);
            const Status s = decode_all_mips_to_device(gpu, device_out, variant);
            if (test::is_warpgroup_variant(variant) && !gpu.runs_warpgroup_kernel()) {
                EXPECT_EQ(s.code(), StatusCode::invalid_argument) << to_string(variant);
                continue;
            }
            EXPECT_TRUE(s.ok()) << to_string(variant) << ": " << s.to_string();
            std::vector<float> values(gpu.device_output_floats());
            ASSERT_EQ(cudaMemcpy(values.data(), device_out, values.size() * sizeof(float), cudaMemcpyDeviceToHost),
                      cudaSuccess);
            const auto is_nan = [](float v) { return std::isnan(v); };
            if (variant == CudaDecodeVariant::tiled_without_stores) {
                // Mip 0 of this pack is tiled: nothing written there. The other variants write every value.
                const auto mip0_end = values.begin() + static_cast<std::ptrdiff_t>(gpu.device_output_offset(1));
                const auto written = std::count_if(values.begin(), mip0_end, [&](float v) { return !is_nan(v); });
                EXPECT_EQ(written, 0) << "tiled_without_stores wrote " << written << " values of mip 0";
            } else {
                EXPECT_TRUE(std::none_of(values.begin(), values.end(), is_nan))
                    << to_string(variant) << " left values unwritten";
            }
            if (variant == CudaDecodeVariant::warpgroup_4_blocks || variant == CudaDecodeVariant::full_3_blocks)
                exact.emplace_back(variant, std::move(values));
            else if (test::is_binary16_variant(variant))
                binary16.emplace_back(variant, std::move(values));
        }
        ASSERT_TRUE(gpu.decode_all_mips_to_device(device_out).ok());
        std::vector<float> all(gpu.device_output_floats());
        ASSERT_EQ(cudaMemcpy(all.data(), device_out, all.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        cudaFree(device_out);
        const auto planes = decode_mip(cpu, 0);
        const size_t texels = planes[0].size();
        for (size_t c = 0; c < planes.size(); ++c)
            EXPECT_TRUE(std::equal(planes[c].begin(), planes[c].end(), all.begin() + c * texels)) << "channel " << c;
        for (const auto& [variant, values] : exact) EXPECT_EQ(values, all) << to_string(variant);
        // The binary16 variants compute the plan's maths, close to the spec's: E4M3 roundings that flip move values a
        // little, a wrong byte or lane order would move them by the whole output range. Bounds from the benchmark's
        // 4096^2 random pack (RMS 0.0019, largest 0.037 pack units), with room for this smaller pack.
        for (const auto& [variant, values] : binary16) {
            const test::ValueDifference d = test::value_difference(values, all);
            EXPECT_LT(d.rms, 0.01) << to_string(variant);
            EXPECT_LT(d.largest, 0.1) << to_string(variant);
        }
        const CudaDecoder gpu_wide = make_cuda(wide, path);
        EXPECT_EQ(decode_all_mips_to_device(gpu_wide, nullptr, CudaDecodeVariant::network_only).code(),
                  StatusCode::invalid_argument);
    }
}

// The timing variant tensor_sampling_binary16 on the shapes its tiled kernel must handle: hidden layers without
// scales (the bias as a product: the benchmark's configuration), clamp addressing on a non-square size with two latent
// levels, and four tile classes (grid scale 8). Values within the binary16 variants' bounds of the spec's (see above),
// and not equal to them (the binary16 maths ran). A size that is not a power of two runs no mip tiled: the variant's
// values are then the spec's (the warpgroup kernel in the float32 arithmetic). invalid_argument where the warpgroup
// kernel does not run.
TEST(CudaDecoder, TensorSamplingVariantStaysCloseToTheSpecOnEveryShape) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    RandomPackOptions unscaled;  // default-network shape, 48 -> 64 -> 64 -> 64 -> 10
    unscaled.feature_count = 16;
    unscaled.channel_count = 10;
    unscaled.extra_inputs = 3;
    unscaled.seed = 21;
    RandomPackOptions odd = unscaled;
    odd.width = 45;
    odd.height = 33;
    odd.address_mode = AddressMode::clamp;
    odd.seed = 24;
    struct Shape {
        const char* name;
        RandomPackOptions options;
        bool tiled;
    };
    for (const Shape& shape :
         {Shape{"unscaled 64x64 wrap", unscaled, true}, Shape{"production 128x64 clamp", production_shape(), true},
          Shape{"production 64x64 wrap, grid scale 8", production_classes_shape(), true},
          Shape{"45x33 clamp (not tiled)", odd, false}}) {
        SCOPED_TRACE(shape.name);
        const Pack pack = test::make_random_pack(shape.options);
        const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::fp16);
        float* device_out = nullptr;
        ASSERT_EQ(cudaMalloc(&device_out, gpu.device_output_floats() * sizeof(float)), cudaSuccess);
        std::vector<float> spec(gpu.device_output_floats());
        std::vector<float> variant(gpu.device_output_floats());
        ASSERT_TRUE(gpu.decode_all_mips_to_device(device_out).ok());
        ASSERT_EQ(cudaMemcpy(spec.data(), device_out, spec.size() * sizeof(float), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        const Status s = decode_all_mips_to_device(gpu, device_out, CudaDecodeVariant::tensor_sampling_binary16);
        if (!gpu.runs_warpgroup_kernel()) {
            EXPECT_EQ(s.code(), StatusCode::invalid_argument);
        } else {
            EXPECT_TRUE(s.ok()) << s.to_string();
            ASSERT_EQ(cudaMemcpy(variant.data(), device_out, variant.size() * sizeof(float), cudaMemcpyDeviceToHost),
                      cudaSuccess);
            const test::ValueDifference d = test::value_difference(variant, spec);
            EXPECT_LT(d.rms, 0.01);
            EXPECT_LT(d.largest, 0.1);
            if (shape.tiled)
                EXPECT_GT(d.changed_fraction, 0.0);  // the binary16 maths, not the spec's kernel
            else
                EXPECT_EQ(d.changed_fraction, 0.0);
        }
        cudaFree(device_out);
    }
}

// The tiled kernel writes texel pairs with 8-byte stores; an output buffer at an odd float offset takes the warpgroup
// kernel for those mips instead, with the same values (the binary16 production shape, whole mips on the device). Equal
// bit for bit: the tiled kernel's sampling sums (tensor-core order) equal the CPU order's on the H200 on this pack, as
// observed in ExactSumsEqualCpuBitForBitOnEveryMipAndPath (see kArithmetics), which this test relies on.
TEST(CudaDecoder, WholeMipsAtAnOddOutputOffsetEqualTheAlignedOnes) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const Pack pack = make_pack(production_shape(), Arithmetic::binary16);
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::fp16);
    const size_t floats = gpu.device_output_floats();
    float* device_out = nullptr;
    ASSERT_EQ(cudaMalloc(&device_out, (floats + 1) * sizeof(float)), cudaSuccess);
    std::vector<float> aligned(floats);
    std::vector<float> odd(floats);
    ASSERT_TRUE(gpu.decode_all_mips_to_device(device_out).ok());
    ASSERT_EQ(cudaMemcpy(aligned.data(), device_out, floats * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_TRUE(gpu.decode_all_mips_to_device(device_out + 1).ok());
    ASSERT_EQ(cudaMemcpy(odd.data(), device_out + 1, floats * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(device_out);
    EXPECT_EQ(odd, aligned);
}

// Tiles are handed out to the tiled kernel's blocks on demand (each block's first two, then from a counter cleared
// before each launch). The small packs above have fewer tiles than the grid has blocks; here 1024 x 1024 (16384 +
// 4096 tiled tiles against at most a few thousand blocks) makes every block draw many. Every value is written (the
// buffer is filled with NaN before each of two decodes in a row: a tile skipped would stay NaN) and every tile is the
// right one: equal to the CPU decoder's values but for rare last-bit differences of a sampling sum (spec 8.3 leaves
// its order free; one that flips an E4M3 rounding moves a few values by a tenth of the range at most), where a tile
// decoded at the wrong place would differ on most of its values, by a good part of the range.
TEST(CudaDecoder, TiledKernelDecodesEveryTileOnceWhenBlocksDrawMany) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    RandomPackOptions options = production_shape();
    options.width = 1024;
    options.height = 1024;
    options.seed = 31;
    const Pack pack = make_pack(options, Arithmetic::binary16);
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::fp16);
    const CpuDecoder cpu = make_cpu(pack);
    std::vector<float> expected;
    for (int m = 0; m < pack.material.mip_count; ++m)
        for (const std::vector<float>& plane : decode_mip(cpu, m))
            expected.insert(expected.end(), plane.begin(), plane.end());
    ASSERT_EQ(expected.size(), gpu.device_output_floats());
    float* device_out = nullptr;
    ASSERT_EQ(cudaMalloc(&device_out, expected.size() * sizeof(float)), cudaSuccess);
    const std::vector<float> poison(expected.size(), NAN);
    for (int run = 0; run < 2; ++run) {
        SCOPED_TRACE("decode " + std::to_string(run + 1));
        ASSERT_EQ(cudaMemcpy(device_out, poison.data(), poison.size() * sizeof(float), cudaMemcpyHostToDevice),
                  cudaSuccess);
        ASSERT_TRUE(gpu.decode_all_mips_to_device(device_out).ok());
        std::vector<float> decoded(expected.size());
        ASSERT_EQ(cudaMemcpy(decoded.data(), device_out, decoded.size() * sizeof(float), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        EXPECT_EQ(std::count_if(decoded.begin(), decoded.end(), [](float v) { return std::isnan(v); }), 0);
        const test::ValueDifference d = test::value_difference(decoded, expected);
        EXPECT_LT(d.largest, 0.2);
        EXPECT_LT(d.changed_fraction, 0.001);
    }
    cudaFree(device_out);
}

TEST(CudaDecoder, RejectsInvalidRequests) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    const Pack pack = test::make_random_pack(RandomPackOptions{});
    const CudaDecoder gpu = make_cuda(pack, CudaMatmulPath::automatic);
    std::vector<std::vector<float>> planes;
    EXPECT_EQ(gpu.decode_mip_channels(pack.material.mip_count, planes).code(), StatusCode::invalid_argument);
    std::vector<float> out;
    EXPECT_EQ(gpu.decode_queries({{0.5f, 0.5f, -1}}, out).code(), StatusCode::invalid_argument);
    EXPECT_EQ(gpu.decode_queries({{NAN, 0.5f, 0}}, out).code(), StatusCode::invalid_argument);
    EXPECT_FALSE(gpu.decode_texture(99, 0).ok());
    EXPECT_EQ(CudaDecoder::decode_batch_queries({&gpu}, {{1, 0.5f, 0.5f, 0}}, out).code(),
              StatusCode::invalid_argument);
    Pack broken = pack;
    broken.network.layers[0].weights.pop_back();
    auto bad = CudaDecoder::create(broken);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);
    EXPECT_FALSE(CudaDecoder::create(pack, {cuda_device_count(), CudaMatmulPath::automatic}).ok());
}

}  // namespace
}  // namespace nmc
