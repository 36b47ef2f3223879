// The CUDA decoder's kernels (whole mips, random queries, batches over several packs, squared errors against
// reference planes) and their launch plan: which kernel, how many blocks, how much shared memory. The per-texel maths
// is in cuda_decoder_kernels.cuh, warpgroup_kernels.cuh and tiled_kernel.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "decoder/cuda/device_model.h"
#include "decoder/cuda/tiled_kernel.cuh"
#include "decoder/cuda/warpgroup_kernels.cuh"

namespace nmc {
namespace cuda_detail {
namespace {

constexpr int kBlockThreads = 128;
constexpr int kBlockWarps = kBlockThreads / 32;
// Fast kernels: two m16 tiles a warp (each B fragment feeds 4 MMAs). With weights in shared memory, at most
// 65536 / (4 * 128) = 128 registers a thread (4 blocks, 16 warps a multiprocessor). The timing variant full_3_blocks
// builds the same kernel for 3 blocks (at most 168 registers, 12 warps), the configuration measured fastest before
// the packed activations (bench/results/notes-cuda-decoder.txt), so that one benchmark run compares the two. The fast
// kernels that read weights from global memory (the batch kernel; models whose weights do not fit in shared memory)
// keep 3 blocks: at 4 they spill 260-330 bytes a thread.
constexpr int kSmallMTiles = 2;
constexpr int kSmallMinBlocks = 4;
constexpr int kSmallGlobalMinBlocks = 3;
constexpr int kFull3BlocksMinBlocks = 3;  // CudaDecodeVariant::full_3_blocks
constexpr int kLargeMinBlocks = 1;
// The Hopper warpgroup kernels: 5 warpgroups a multiprocessor (at most 96 registers a thread; 95 used). 4 (the timing
// variant warpgroup_4_blocks, 96 used) measured the same within the runs' spread: 6.80-6.91 against 6.80-6.86
// Gtexel/s on the H200.
constexpr int kWarpgroupMinBlocks = 5;
constexpr int kWarpgroup4BlocksMinBlocks = 4;

__host__ __device__ constexpr size_t staging_bytes_per_warp(int max_k) {
    return static_cast<size_t>(kWarpTexels) * static_cast<size_t>(max_k + 16) >
                   static_cast<size_t>(kWarpTexels) * kOutputStride * sizeof(float)
               ? static_cast<size_t>(kWarpTexels) * static_cast<size_t>(max_k + 16)
               : static_cast<size_t>(kWarpTexels) * kOutputStride * sizeof(float);
}

// Bytes between staged layer-0 rows: 4 mod 8 words, so the A-fragment reads of 8 rows hit 32 distinct banks.
__device__ __forceinline__ int staging_row_stride(const ModelDesc& md) {
    return (md.layers[0].k_pad + 31) / 32 * 32 + 16;
}

// Copies the model's weights and parameters into shared memory; returns the pointers the warps read.
__device__ __forceinline__ void load_weights_to_shared(const ModelDesc& md, uint8_t* shared, const uint8_t*& weights,
                                                       const float*& params) {
    const uint4* src = reinterpret_cast<const uint4*>(md.weights);
    uint4* dst = reinterpret_cast<uint4*>(shared);
    for (uint32_t i = threadIdx.x; i < md.weight_bytes / 16; i += blockDim.x) dst[i] = __ldg(src + i);
    float* p = reinterpret_cast<float*>(shared + md.weight_bytes);
    for (uint32_t i = threadIdx.x; i < md.param_floats; i += blockDim.x) p[i] = __ldg(md.params + i);
    __syncthreads();
    weights = shared;
    params = p;
}

// The warp's 32 texels (one per lane, given by (u, v, mip); `valid` false for lanes past the end) through the
// network; returns this lane's texel's pack-channel values (spec 8.7) in values[0 .. C-1]. Timing variants
// (kStages other than kStagesFull) synthesise layer 0's input from `seed` or skip the network.
template <int kMaxK, int kMTiles, bool kShared, bool kSpecialise, int kStages>
__device__ __forceinline__ void decode_warp(const ModelDesc& md, const uint8_t* weights, const float* params,
                                            uint8_t* staging, float u, float v, int mip, bool valid, uint32_t seed,
                                            float (&values)[kMaxChannels]) {
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int row_stride = staging_row_stride(md);
    uint8_t* row = staging + lane * row_stride;
    if (!valid) {
        for (int i = 0; i < md.layers[0].k_pad; i += 16) *reinterpret_cast<uint4*>(row + i) = make_uint4(0, 0, 0, 0);
    } else if constexpr ((kStages & kStageSample) != 0) {
        assemble_input<(kStages & kStageBinary16Sampling) != 0>(md, u, v, mip, row);
    } else {
        synthetic_input(md, seed, row);
    }
    __syncwarp();
    if constexpr ((kStages & kStageNetwork) == 0) {
        // Sampling only: the outputs are the staged codes, so nothing of the input assembly is optimised away.
#pragma unroll
        for (int c = 0; c < kMaxChannels; ++c)
            if (c < md.channel_count) values[c] = static_cast<float>(row[c] + row[c + md.feature_count]);
        __syncwarp();
    } else {
        float result[2][2][4];
#pragma unroll
        for (int mbase = 0; mbase < 2; mbase += kMTiles) {
            float part[kMTiles][2][4];
            run_network<kMaxK, kMTiles, kShared, kSpecialise, kStages>(md, weights, params, staging, row_stride, mbase,
                                                                       part);
#pragma unroll
            for (int m = 0; m < kMTiles; ++m)
#pragma unroll
                for (int j = 0; j < 2; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) result[mbase + m][j][e] = part[m][j][e];
        }
        // Each lane's fragment values to the texel rows they belong to, then each lane reads its own texel.
        __syncwarp();
        float* stage = reinterpret_cast<float*>(staging);
        const int g = lane >> 2;
        const int t = lane & 3;
#pragma unroll
        for (int m = 0; m < 2; ++m)
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int texel = 16 * m + g + 8 * (e >> 1);
                    const int channel = 8 * j + 2 * t + (e & 1);
                    stage[texel * kOutputStride + channel] = result[m][j][e];
                }
        __syncwarp();
        // spec 8.7: value = lo + (hi - lo) * min(max(o, 0), 1) (a subtract, a multiply, an add).
#pragma unroll
        for (int c = 0; c < kMaxChannels; ++c)  // unrolled: values stays in registers
            if (c < md.channel_count)
                values[c] = md.channel_lo[c] + md.channel_range[c] * __saturatef(stage[lane * kOutputStride + c]);
        __syncwarp();
    }
}

// validate's normalisation of one decoded value against its reference: (v - lo) / (hi - lo) in double, minus the
// reference value (in [0, 1] units).
__device__ __forceinline__ double normalised_error(const ModelDesc& md, int c, float value, float ref) {
    const double lo = md.channel_lo[c];
    return (static_cast<double>(value) - lo) / (static_cast<double>(md.channel_hi[c]) - lo) - static_cast<double>(ref);
}

// Adds this warp's squared errors and largest error of mip m, channel c to job.sse and job.max_error: the lanes'
// `sum` and `peak` are combined over the lanes that differ only in the bits from kLowestOffset up (xor shuffles, all
// lanes take part), then `writer` (one lane of each such set) adds them.
template <int kLowestOffset>
__device__ __forceinline__ void add_error_sums(const GridJob& job, int m, int c, double sum, double peak, bool writer) {
#pragma unroll
    for (int offset = 16; offset >= kLowestOffset; offset >>= 1) {
        sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
        peak = fmax(peak, __shfl_xor_sync(0xFFFFFFFFu, peak, offset));
    }
    if (writer) {
        atomicAdd(job.sse + m * kMaxChannels + c, sum);
        atomicMax(job.max_error + m * kMaxChannels + c, static_cast<unsigned long long>(__double_as_longlong(peak)));
    }
}

// Whole mips: warp tiles of 32 consecutive texels (row-major) of one mip; writes planes and/or error sums.
template <int kMaxK, int kMTiles, int kMinBlocks, bool kSharedWeights, int kStages>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocks)
    decode_grid_kernel(const __grid_constant__ ModelDesc md, const __grid_constant__ GridJob job) {
    extern __shared__ __align__(16) uint8_t shared[];
    const uint8_t* weights = md.weights;
    const float* params = md.params;
    size_t staging_offset = 0;
    if constexpr (kSharedWeights) {
        load_weights_to_shared(md, shared, weights, params);
        staging_offset = (md.weight_bytes + md.param_floats * sizeof(float) + 15) / 16 * 16;
    }
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    uint8_t* staging = shared + staging_offset + static_cast<size_t>(warp) * staging_bytes_per_warp(kMaxK);
    const uint32_t tiles = job.tile_start[job.mip_end - job.mip_first];
    for (uint32_t tile = blockIdx.x * kBlockWarps + static_cast<uint32_t>(warp); tile < tiles;
         tile += gridDim.x * kBlockWarps) {
        int m = job.mip_first;
        while (tile >= job.tile_start[m + 1 - job.mip_first]) ++m;
        // Texel indices fit 32 bits: a mip has at most 16384 * 16384 texels (spec 9).
        const uint32_t w = md.width >> m > 0 ? static_cast<uint32_t>(md.width >> m) : 1u;
        const uint32_t h = md.height >> m > 0 ? static_cast<uint32_t>(md.height >> m) : 1u;
        const uint32_t texels = w * h;
        const uint32_t i = (tile - job.tile_start[m - job.mip_first]) * kWarpTexels + static_cast<uint32_t>(lane);
        const bool valid = i < texels;
        const uint32_t y = valid ? i / w : 0u;
        const uint32_t x = valid ? i - y * w : 0u;
        // spec 8: u = (x + 0.5) / w_m (one add, one IEEE divide).
        const float u = (static_cast<float>(x) + 0.5f) / static_cast<float>(w);
        const float v = (static_cast<float>(y) + 0.5f) / static_cast<float>(h);
        float values[kMaxChannels];
        decode_warp<kMaxK, kMTiles, kSharedWeights, kMaxK == kSmallK, kStages>(
            md, weights, params, staging, u, v, m, valid, tile * kWarpTexels + lane, values);
        const size_t base = job.out_offset[m];
#pragma unroll
        for (int c = 0; c < kMaxChannels; ++c) {
            if (c >= md.channel_count) break;
            const size_t index = base + static_cast<size_t>(c) * texels + i;
            if (valid && job.out) job.out[index] = values[c];
            if (job.ref) {
                const double d = valid ? normalised_error(md, c, values[c], job.ref[index]) : 0.0;
                add_error_sums<1>(job, m, c, d * d, fabs(d), lane == 0);
            }
        }
    }
}

// Bytes of shared memory the warpgroup kernels' model takes (warpgroup_copy_model): weights and parameters, rounded
// up to 128.
__host__ __device__ constexpr uint32_t model_shared_bytes(const ModelDesc& md) {
    return (md.weight_bytes + md.param_floats * static_cast<uint32_t>(sizeof(float)) + 127u) / 128u * 128u;
}

// The warpgroup kernels' model in shared memory: the B-operand weights, then the parameters (copied once per block,
// then fenced for the tensor cores, which read them through the async proxy; the barrier at the end also orders
// every shared store the block made before). Returns model_shared_bytes(md).
__device__ __forceinline__ uint32_t warpgroup_copy_model(const ModelDesc& md, uint8_t* shared, const uint8_t*& weights,
                                                         const float*& params) {
    const uint4* src = reinterpret_cast<const uint4*>(md.weights);
    uint4* dst = reinterpret_cast<uint4*>(shared);
    for (uint32_t i = threadIdx.x; i < md.weight_bytes / 16; i += blockDim.x) dst[i] = __ldg(src + i);
    float* p = reinterpret_cast<float*>(shared + md.weight_bytes);
    for (uint32_t i = threadIdx.x; i < md.param_floats; i += blockDim.x) p[i] = __ldg(md.params + i);
#if NMC_HAS_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
    __syncthreads();
    weights = shared;
    params = p;
    return model_shared_bytes(md);
}

// The warpgroup kernels' shared memory: the model (warpgroup_copy_model), then 16 staged rows per warp; returns the
// staging of this thread's warp. Each lane clears its half of row lane % 16 once: inputs past 2F + 13 stay zero.
__device__ __forceinline__ uint8_t* warpgroup_shared_setup(const ModelDesc& md, uint8_t* shared,
                                                           const uint8_t*& weights, const float*& params) {
    const uint32_t model_bytes = warpgroup_copy_model(md, shared, weights, params);
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int row_stride = staging_row_stride(md);
    uint8_t* staging = shared + model_bytes + static_cast<size_t>(warp) * 16 * static_cast<size_t>(row_stride);
    const int half = lane >> 4;
    for (int i = half * row_stride / 2; i < (half + 1) * row_stride / 2; i += 4)
        *reinterpret_cast<uint32_t*>(staging + (lane & 15) * row_stride + i) = 0u;
    return staging;
}

// spec 8.1-8.6 for the warpgroup's 64 texels (warp w's 16 at rows 16w ..): lane (r = lane % 16, half = lane / 16)
// passes texel r's (u, v, mip) (both halves the same), samples level k0 + half of it and does half of spec 8.4-8.5,
// then every layer runs on wgmma. result[4j + e]:
// the last layer's y for channel 8j + 2t + (e & 1) of row g + 8 (e >> 1). kBinary16: in the binary16 arithmetic
// (spec 5.6). All 128 threads call it together.
template <bool kBinary16>
__device__ __forceinline__ void warpgroup_decode(const ModelDesc& md, const uint8_t* weights, const float* params,
                                                 uint8_t* staging, float u, float v, int mip, float (&result)[8]) {
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int r = lane & 15;
    const int half = lane >> 4;
    const int f = md.feature_count;
    const int row_stride = staging_row_stride(md);
    const bool wrap = md.wrap != 0;
    const int k0 = mip < md.level_count - 2 ? mip : md.level_count - 2;
    uint8_t* row = staging + r * row_stride;
    __syncwarp();  // the previous group's reads of these rows are done
    const float2 p = sample_level<kBinary16>(md.levels[k0 + half], f, wrap, u, v, row + half * f);
    // spec 8.4-8.5 from level k0's (px, py), split evenly (the same code in every lane): pairs 0-2 in half 0, pairs 3-5
    // in half 1 (its own p is level k0 + 1's: it recomputes level k0's with sample_level's operations), and the mip
    // in half 0.
    const LevelDesc& level0 = md.levels[k0];
    const float2 p0 =
        half ? make_float2(u * static_cast<float>(level0.width) - 0.5f, v * static_cast<float>(level0.height) - 0.5f)
             : p;
#pragma unroll
    for (int n = 0; n < 3; ++n) position_pair(p0, 3 * half + n, row + 2 * f);
    if (half == 0) row[2 * f + 12] = fp8_code(static_cast<float>(mip) * 0.25f);
    __syncwarp();
    // Layer 0's A fragments from the staged rows (E4M3 codes, natural order), converted to fp16x2.
    uint32_t in[4][4];
    const uint8_t* row_g = staging + g * row_stride;
    const uint8_t* row_g8 = row_g + 8 * row_stride;
#pragma unroll
    for (int kc = 0; kc < 4; ++kc) {
        const uint32_t codes_g = staged_codes(row_g, kc * 16 + 2 * t);
        const uint32_t codes_g8 = staged_codes(row_g8, kc * 16 + 2 * t);
        in[kc][0] = fp8x2_to_half2(codes_g);
        in[kc][1] = fp8x2_to_half2(codes_g8);
        in[kc][2] = fp8x2_to_half2(codes_g >> 16);
        in[kc][3] = fp8x2_to_half2(codes_g8 >> 16);
    }
    uint32_t out[4][4];
    for (int l = 0; l + 1 < md.layer_count; ++l) {
        const LayerDesc& layer = md.layers[l];
        warpgroup_layer_of_kind<false, kBinary16>(layer.kind, weights + layer.weight_offset,
                                                  params + layer.param_offset, in, out, result);
#pragma unroll
        for (int kc = 0; kc < 4; ++kc)
#pragma unroll
            for (int k = 0; k < 4; ++k) in[kc][k] = out[kc][k];
    }
    const LayerDesc& last = md.layers[md.layer_count - 1];
    warpgroup_layer_of_kind<true, kBinary16>(last.kind, weights + last.weight_offset, params + last.param_offset, in,
                                             out, result);
}

// This lane's four channels 8j + 2t + e (slot q = 2j + e): the channel, or -1 past the pack's channels, and spec
// 8.7's constants.
struct WarpgroupChannels {
    int channel[4];
    float lo[4];
    float range[4];
    __device__ explicit WarpgroupChannels(const ModelDesc& md) {
        const int t = static_cast<int>(threadIdx.x) & 3;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int c = 8 * (q >> 1) + 2 * t + (q & 1);
            channel[q] = c < md.channel_count ? c : -1;
            lo[q] = c < md.channel_count ? md.channel_lo[c] : 0.0f;
            range[q] = c < md.channel_count ? md.channel_range[c] : 0.0f;
        }
    }
    // spec 8.7 for slot q of row side (0: g, 1: g + 8): lo + (hi - lo) * min(max(o, 0), 1) (a subtract, a multiply,
    // an add).
    __device__ float value(const float (&result)[8], int q, int side) const {
        return lo[q] + range[q] * __saturatef(result[4 * (q >> 1) + 2 * side + (q & 1)]);
    }
    // write(channel, side, value) for each of this lane's channels and both of its rows.
    template <typename Write>
    __device__ void for_each_value(const float (&result)[8], Write write) const {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            if (channel[q] < 0) continue;
#pragma unroll
            for (int side = 0; side < 2; ++side) write(channel[q], side, value(result, q, side));
        }
    }
};

// What every warpgroup kernel sets up first: shared memory (warpgroup_shared_setup), this thread's warp and row g,
// and its channels.
struct WarpgroupThread {
    const uint8_t* weights = nullptr;
    const float* params = nullptr;
    uint8_t* staging = nullptr;
    int warp;
    int g;
    WarpgroupChannels channels;
    __device__ WarpgroupThread(const ModelDesc& md, uint8_t* shared)
        : warp(static_cast<int>(threadIdx.x) >> 5), g((static_cast<int>(threadIdx.x) & 31) >> 2), channels(md) {
        staging = warpgroup_shared_setup(md, shared, weights, params);
    }
};

// Whole mips on Hopper (warpgroup_kernels.cuh): one warpgroup a block takes group tiles of 64 consecutive texels
// (row-major) of one mip, `job.tile_start` counting group tiles; warp w owns texels 16w .. 16w + 15 of a group; each
// lane writes its own outputs (channels 8j + 2t + e of rows g and g + 8) straight from the accumulator layout (kErrors:
// the squared-error sums against job.ref, and job.out where not null). The loop conditions are uniform across the
// block, as wgmma needs. kBinary16: packs of the binary16 arithmetic (spec 5.6).
template <int kMinBlocks, bool kErrors, bool kBinary16>
__global__ void __launch_bounds__(kGroupThreads, kMinBlocks)
    decode_grid_warpgroup_kernel(const __grid_constant__ ModelDesc md, const __grid_constant__ GridJob job) {
    extern __shared__ __align__(128) uint8_t group_shared[];
    const WarpgroupThread self(md, group_shared);
    const int g = self.g;
    const uint32_t groups = job.tile_start[job.mip_end - job.mip_first];
    for (uint32_t group = blockIdx.x; group < groups; group += gridDim.x) {
        int m = job.mip_first;
        while (group >= job.tile_start[m + 1 - job.mip_first]) ++m;
        const uint32_t w = md.width >> m > 0 ? static_cast<uint32_t>(md.width >> m) : 1u;
        const uint32_t h = md.height >> m > 0 ? static_cast<uint32_t>(md.height >> m) : 1u;
        const uint32_t texels = w * h;
        const uint32_t first = (group - job.tile_start[m - job.mip_first]) * kGroupTexels + 16u * self.warp;
        // spec 8: u = (x + 0.5) / w_m; texels past the mip's end sample texel 0 (their outputs are not written).
        // Power-of-two sizes take shifts and a multiply by 2^-k, exactly the same values as the divisions.
        const uint32_t i = first + (threadIdx.x & 15u);
        const bool valid = i < texels;
        uint32_t x, y;
        float u, v;
        if (((w & (w - 1)) | (h & (h - 1))) == 0) {
            const int sw = __ffs(static_cast<int>(w)) - 1;
            const int sh = __ffs(static_cast<int>(h)) - 1;
            y = valid ? i >> sw : 0u;
            x = valid ? i & (w - 1) : 0u;
            u = (static_cast<float>(x) + 0.5f) * __int_as_float((127 - sw) << 23);
            v = (static_cast<float>(y) + 0.5f) * __int_as_float((127 - sh) << 23);
        } else {
            y = valid ? i / w : 0u;
            x = valid ? i - y * w : 0u;
            u = (static_cast<float>(x) + 0.5f) / static_cast<float>(w);
            v = (static_cast<float>(y) + 0.5f) / static_cast<float>(h);
        }
        float result[8];
        warpgroup_decode<kBinary16>(md, self.weights, self.params, self.staging, u, v, m, result);
        // Mip m's planes: channel c's texel i at c * texels + i (32-bit: at most 16 planes of 2^28 texels, spec 9).
        const size_t base = job.out_offset[m];
        if constexpr (!kErrors) {
            float* planes = job.out + base;
            self.channels.for_each_value(result, [&](int c, int side, float value) {
                const uint32_t texel = first + static_cast<uint32_t>(g + 8 * side);
                if (texel < texels) planes[static_cast<uint32_t>(c) * texels + texel] = value;
            });
        } else {
            const WarpgroupChannels& channels = self.channels;
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int c = channels.channel[q];
                double sum = 0.0;
                double peak = 0.0;
#pragma unroll
                for (int side = 0; side < 2; ++side) {
                    const uint32_t texel = first + static_cast<uint32_t>(g + 8 * side);
                    if (c < 0 || texel >= texels) continue;
                    const float value = channels.value(result, q, side);
                    const size_t index = base + static_cast<size_t>(c) * texels + texel;
                    if (job.out) job.out[index] = value;
                    const double d = normalised_error(md, c, value, job.ref[index]);
                    sum += d * d;
                    peak = fmax(peak, fabs(d));
                }
                // Lanes with the same t hold the same channel: combined over g (lane bits 2-4).
                add_error_sums<4>(job, m, c, sum, peak, g == 0 && c >= 0);
            }
        }
    }
}

// The tiled kernel (tiled_kernel.cuh): whole mips of binary16 packs of the default network's shape (F = 16, three
// hidden layers all with scales or all without, a last layer with scales; hidden widths up to 64, computed as kWidths
// says), and on float32 packs the timing variant
// tensor_sampling_binary16, on the mips the host planned (tiled_mip_plan, launch_tiled): tiles of 8 x 8 texels,
// job.tile_start counting them. The first job.pattern_count patterns are copied to shared memory after the model, then
// two B buffers. kWrap: the pack's wrap addressing, else clamp. Writes job.out (no error sums). Built for 4 blocks a
// multiprocessor (at most 128 registers a thread): 86 used, so 5 fit (up to 96 would), as many as shared memory allows.
// Two warpgroups a block sharing the model (6 a multiprocessor at 80 registers) measured slower:
// bench/results/notes-cuda-decoder.txt, "The tiled kernel on tile classes". kTiming: the part of the work a timing
// breakdown leaves out (TiledTiming::full: none). kWidths: the hidden layers' widths it computes (TiledWidths).
template <bool kHiddenScaled, bool kWrap, TiledTiming kTiming, TiledWidths kWidths>
__global__ void __launch_bounds__(kGroupThreads, kWarpgroup4BlocksMinBlocks)
    decode_tiles_kernel(const __grid_constant__ ModelDesc md, const __grid_constant__ TiledJob job) {
    extern __shared__ __align__(128) uint8_t group_shared[];
    uint8_t* patterns = group_shared + model_shared_bytes(md);
    for (int p = 0; p < job.pattern_count; ++p)
        for (uint32_t i = threadIdx.x; i < kPatternBytes / 16; i += blockDim.x)
            reinterpret_cast<uint4*>(patterns + p * kPatternBytes)[i] =
                __ldg(reinterpret_cast<const uint4*>(job.patterns[p]) + i);
    uint8_t* b_buffers = patterns + job.pattern_count * kPatternBytes;
    const uint8_t* weights = nullptr;
    const float* params = nullptr;
    warpgroup_copy_model(md, group_shared, weights, params);  // its barrier also orders the pattern copies
    const WarpgroupChannels channels(md);
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int g = (static_cast<int>(threadIdx.x) & 31) >> 2;
    const uint32_t ones = (threadIdx.x & 3) == 0 ? 0x3C00u : 0u;  // binary16 1.0 at input 0 of a chunk, rows g, g + 8
    uint64_t layer_b[4];
    const float* layer_params[4];
#pragma unroll
    for (int l = 0; l < 4; ++l) {
        layer_b[l] = wgmma_descriptor(weights + md.layers[l].weight_offset);
        layer_params[l] = params + md.layers[l].param_offset;
    }
    const uint64_t patterns_descriptor = wgmma_descriptor(patterns);
    const uint64_t b_descriptor = wgmma_descriptor(b_buffers);
    const uint32_t b_row = static_cast<uint32_t>(__cvta_generic_to_shared(b_buffers)) + tile_b_row_offset();
    const uint32_t tiles = job.tile_start[job.mip_count];
    // Tiles are handed out as blocks ask for them: each block's first two are blockIdx.x and blockIdx.x + gridDim.x,
    // the rest come from job.tile_tickets (zero at launch) in the order blocks draw them, so that blocks the
    // schedulers favour take more tiles instead of the kernel waiting for the slowest. Thread 0 draws the tile after
    // next while a tile is decoded and passes it on through handed_out[set] after the next barrier.
    __shared__ uint32_t handed_out[2];
    TileState current{};
    TileCells cells;
    uint4 position{};
    if (blockIdx.x < tiles) {
        current = tile_state(job, blockIdx.x);
        cells.load<kWrap>(md, job, current, patterns);
        position = __ldg(job.mips[current.mip].positions + current.cls * kGroupThreads + threadIdx.x);
    }
    uint32_t set = 0;
    uint32_t next_tile = blockIdx.x + gridDim.x;
    for (uint32_t tile = blockIdx.x, round = 0; tile < tiles; tile = next_tile, ++round, set ^= 1u) {
        cells.store(job, current, b_row + set * kTileBBytes);
#if NMC_HAS_WGMMA
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
        __syncthreads();  // this B buffer is written; every thread is past the tile that read the other one
        if (round > 0) next_tile = handed_out[set ^ 1u];  // drawn by thread 0 in the previous round
        uint32_t after_next = tiles;
        if (threadIdx.x == 0 && next_tile < tiles) after_next = 2u * gridDim.x + atomicAdd(job.tile_tickets, 1u);
        // The next tile's codes and positional inputs, loaded while this one is decoded.
        TileState next{};
        TileCells next_cells;
        uint4 next_position{};
        if (next_tile < tiles) {
            next = tile_state(job, next_tile);
            next_cells.load<kWrap>(md, job, next, patterns);
            next_position = __ldg(job.mips[next.mip].positions + next.cls * kGroupThreads + threadIdx.x);
        }
        // spec 8.3 for both levels: A = the pattern's weights, B = the window's values.
        const uint64_t sample_a = patterns_descriptor + static_cast<uint64_t>(current.pattern) * (kPatternBytes / 16);
        const uint64_t sample_b = b_descriptor + static_cast<uint64_t>(set) * (kTileBBytes / 16);
        float s0[8];
        float s1[8];
        if constexpr (kTiming == TiledTiming::without_sampling) {
            // Timing only: values that depend on the tile's codes, in place of the products.
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                s0[e] = __uint_as_float(cells.words[e & 1] & 0x3F00FFFFu);
                s1[e] = __uint_as_float(cells.words[(e + 1) & 1] & 0x3F00FFFFu);
            }
        } else {
            wgmma_fence();
            wgmma_fp16_shared_n16<false>(s0, sample_a, sample_b);
#pragma unroll
            for (int kc = 1; kc < kTileLevel0Cells / 16; ++kc)
                wgmma_fp16_shared_n16<true>(s0, sample_a + kc * chunk_step(kGroupTexels),
                                            sample_b + kc * chunk_step(16));
            wgmma_fp16_shared_n16<false>(s1, sample_a + kTileLevel1Chunk * chunk_step(kGroupTexels),
                                         sample_b + kTileLevel1Chunk * chunk_step(16));
            wgmma_commit_and_wait();
            wgmma_fence_operands(s0);
            wgmma_fence_operands(s1);
        }
        // Layer 0's A: K chunk 0 = level k0's 16 features, chunk 1 = level k1's (in tiled_feature_of_column order),
        // rounded to E4M3; chunk 2 = the mip's fragments for this class and thread (positional, mip and bias inputs;
        // layer 0 reads no more).
        uint32_t in[4][4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            in[0][e] = fp8_rounded_half2(s0[2 * e], s0[2 * e + 1]);
            in[1][e] = fp8_rounded_half2(s1[2 * e], s1[2 * e + 1]);
        }
        in[2][0] = position.x;
        in[2][1] = position.y;
        in[2][2] = position.z;
        in[2][3] = position.w;
        uint32_t hidden1[4][4];
        uint32_t hidden2[4][4];
        float result[8];
        constexpr bool kActivation = kTiming != TiledTiming::without_activation;
        constexpr int kN0 = tiled_hidden_width(kWidths, 0);
        constexpr int kN1 = tiled_hidden_width(kWidths, 1);
        constexpr int kN2 = tiled_hidden_width(kWidths, 2);
        tiled_hidden_layer<3, kN0, kHiddenScaled, false, kActivation>(in, ones, layer_b[0], layer_params[0], hidden1);
        tiled_hidden_layer<kN0 / 16, kN1, kHiddenScaled, !kHiddenScaled, kActivation>(hidden1, ones, layer_b[1],
                                                                                      layer_params[1], hidden2);
        tiled_hidden_layer<kN1 / 16, kN2, kHiddenScaled, !kHiddenScaled, kActivation>(hidden2, ones, layer_b[2],
                                                                                      layer_params[2], hidden1);
        tiled_last_layer<kN2 / 16>(hidden1, layer_b[3], layer_params[3], result);
        // Rows g and g + 8: texels (x, y) and (x + 1, y) of the tile, x = 2 (g % 4) even (every tile lies inside its
        // mip): one 8-byte store a channel (the host checked job.out's alignment; planes and rows have even sizes).
        // The values are computed on every lane and only the stores are predicated, so that no store needs a branch.
        const TiledMip& mp = job.mips[current.mip];
        float* const texel =
            job.out + mp.out_offset +
            static_cast<uint32_t>((current.y + tile_row_y(16 * warp + g)) * mp.width + current.x + tile_row_x(g));
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const float2 pair = make_float2(channels.value(result, q, 0), channels.value(result, q, 1));
            // The timing breakdown without stores keeps a condition the compiler cannot decide (channels are below
            // kMaxChannels), so that every value is still computed.
            if (kTiming == TiledTiming::without_stores ? channels.channel[q] >= kMaxChannels : channels.channel[q] >= 0)
                *reinterpret_cast<float2*>(texel + static_cast<uint32_t>(channels.channel[q]) * mp.texels) = pair;
        }
        if (threadIdx.x == 0) handed_out[set] = after_next;  // read after the next round's barrier
        current = next;
        cells = next_cells;
        position = next_position;
    }
}

// Random queries on Hopper: the warpgroup kernel over groups of 64 consecutive queries (warp w's 16 at 16w ..); each
// lane's mip picks its own levels. Queries past the end decode (0.5, 0.5, mip 0) and are not written.
template <int kMinBlocks, bool kBinary16>
__global__ void __launch_bounds__(kGroupThreads, kMinBlocks)
    decode_queries_warpgroup_kernel(const __grid_constant__ ModelDesc md, QueryJob job) {
    extern __shared__ __align__(128) uint8_t group_shared[];
    const WarpgroupThread self(md, group_shared);
    const size_t groups = (job.count + kGroupTexels - 1) / kGroupTexels;
    for (size_t group = blockIdx.x; group < groups; group += gridDim.x) {
        const size_t first = group * kGroupTexels + 16u * static_cast<size_t>(self.warp);
        const size_t i = first + (threadIdx.x & 15u);
        const TexelQuery q = i < job.count ? job.queries[i] : TexelQuery{0.5f, 0.5f, 0};
        float result[8];
        warpgroup_decode<kBinary16>(md, self.weights, self.params, self.staging, q.u, q.v, q.mip, result);
        self.channels.for_each_value(result, [&](int c, int side, float value) {
            const size_t query = first + static_cast<size_t>(self.g + 8 * side);
            if (query < job.count)
                job.out[query * static_cast<size_t>(job.out_stride) + static_cast<size_t>(c)] = value;
        });
    }
}

// 1 in `out` where this build has sm_90a code for the device (the warpgroup kernel's wgmma), else 0.
__global__ void warpgroup_probe_kernel(int* out) {
    *out = NMC_HAS_WGMMA;
}

// Random queries: warp tiles of 32 consecutive queries, in kStages' arithmetic (kStagesFull or kStagesFullBinary16);
// batch kernels read each query's pack from `models`, and decode each in its own arithmetic (kStages unused).
template <int kMaxK, int kMTiles, int kMinBlocks, bool kSharedWeights, bool kBatch, int kStages = kStagesFull>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocks)
    decode_queries_kernel(const __grid_constant__ ModelDesc md, const ModelDesc* models, QueryJob job) {
    extern __shared__ __align__(16) uint8_t shared[];
    const uint8_t* weights = md.weights;
    const float* params = md.params;
    size_t staging_offset = 0;
    if constexpr (kSharedWeights) {
        load_weights_to_shared(md, shared, weights, params);
        staging_offset = (md.weight_bytes + md.param_floats * sizeof(float) + 15) / 16 * 16;
    }
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    uint8_t* staging = shared + staging_offset + static_cast<size_t>(warp) * staging_bytes_per_warp(kMaxK);
    const size_t tiles = (job.count + kWarpTexels - 1) / kWarpTexels;
    constexpr bool kSpecialise = kMaxK == kSmallK && !kBatch;
    for (size_t tile = blockIdx.x * kBlockWarps + static_cast<size_t>(warp); tile < tiles;
         tile += static_cast<size_t>(gridDim.x) * kBlockWarps) {
        const size_t i = tile * kWarpTexels + static_cast<size_t>(lane);
        const bool valid = i < job.count;
        if constexpr (!kBatch) {
            const TexelQuery q = valid ? job.queries[i] : TexelQuery{};
            float values[kMaxChannels];
            decode_warp<kMaxK, kMTiles, kSharedWeights, kSpecialise, kStages>(md, weights, params, staging, q.u, q.v,
                                                                              q.mip, valid, 0u, values);
            if (valid)
#pragma unroll
                for (int c = 0; c < kMaxChannels; ++c)
                    if (c < md.channel_count) job.out[i * job.out_stride + c] = values[c];
        } else {
            // Divergent packs: the warp runs once per distinct pack among its lanes (lowest lane's pack first);
            // every lane takes its values from the run with its own pack. Rows of other lanes only feed rows of
            // the MMA that nobody reads (each output row depends on its own input row only).
            const BatchTexelQuery q = valid ? job.batch[i] : BatchTexelQuery{};
            unsigned pending = __ballot_sync(0xFFFFFFFFu, valid);
            while (pending) {
                const int leader = __ffs(static_cast<int>(pending)) - 1;
                const int pack = __shfl_sync(0xFFFFFFFFu, q.pack, leader);
                const bool mine = valid && q.pack == pack;
                const unsigned members = __ballot_sync(0xFFFFFFFFu, mine);
                const ModelDesc& model = models[pack];
                float values[kMaxChannels];
                if (model.binary16) {  // uniform: every lane of the warp runs `pack`
                    decode_warp<kMaxK, kMTiles, kSharedWeights, kSpecialise, kStagesFullBinary16>(
                        model, model.weights, model.params, staging, q.u, q.v, q.mip, mine, 0u, values);
                } else {
                    decode_warp<kMaxK, kMTiles, kSharedWeights, kSpecialise, kStagesFull>(
                        model, model.weights, model.params, staging, q.u, q.v, q.mip, mine, 0u, values);
                }
                if (mine)
#pragma unroll
                    for (int c = 0; c < kMaxChannels; ++c)
                        if (c < model.channel_count) job.out[i * job.out_stride + c] = values[c];
                pending &= ~members;
            }
        }
    }
}

}  // namespace

namespace {

Status launch_error(const char* what) {
    NMC_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return cuda_status(e, what, __FILE__, __LINE__);
    return Status::success();
}

size_t shared_bytes(const DeviceModel& m, bool shared_weights) {
    size_t bytes = static_cast<size_t>(kBlockWarps) * staging_bytes_per_warp(m.max_k);
    if (shared_weights) bytes += (m.desc.weight_bytes + m.desc.param_floats * sizeof(float) + 15) / 16 * 16;
    return bytes;
}

// The fast kernels keep weights in shared memory when they fit the device's per-block limit.
bool use_shared_weights(const DeviceModel& m) {
    if (m.max_k != kSmallK) return false;
    int limit = 0;
    if (cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, m.device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return shared_bytes(m, true) <= static_cast<size_t>(limit);
}

template <typename Kernel>
Status prepare_kernel(Kernel kernel, size_t smem) {
    NMC_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    return Status::success();
}

// Enough blocks of `threads` threads to fill the device, at most `wanted` (one per unit of work a block takes at a
// time: the blocks stride over the rest).
template <typename Kernel>
Status grid_size(Kernel kernel, int threads, size_t smem, const DeviceModel& m, size_t wanted, int& blocks) {
    int per_sm = 0;
    NMC_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    blocks =
        static_cast<int>(std::max<size_t>(1, std::min<size_t>(wanted, static_cast<size_t>(std::max(per_sm, 1)) *
                                                                          static_cast<size_t>(m.multiprocessors))));
    return Status::success();
}

// Fills job.tile_start over the job's mips, mip m having tiles_of(m) tiles; returns the number of tiles.
template <typename TilesOf>
uint32_t fill_tile_starts(GridJob& job, TilesOf tiles_of) {
    uint32_t tiles = 0;
    for (int mip = job.mip_first; mip < job.mip_end; ++mip) {
        job.tile_start[mip - job.mip_first] = tiles;
        tiles += static_cast<uint32_t>(tiles_of(mip));
    }
    job.tile_start[job.mip_end - job.mip_first] = tiles;
    return tiles;
}

// The same for tiles of `tile_texels` consecutive texels (a warp kernel's 32, a warpgroup kernel's 64).
uint32_t fill_tile_starts(const DeviceModel& m, GridJob& job, size_t tile_texels) {
    return fill_tile_starts(job, [&](int mip) { return (m.mip_texels(mip) + tile_texels - 1) / tile_texels; });
}

}  // namespace

// The warpgroup kernel's shared memory: weights and parameters, then 4 warps x 16 staged rows.
size_t warpgroup_shared_bytes(const ModelDesc& d) {
    return model_shared_bytes(d) +
           static_cast<size_t>(kGroupThreads / 32) * 16 * static_cast<size_t>((d.layers[0].k_pad + 31) / 32 * 32 + 16);
}

// Whether the current device runs the warpgroup kernel: compute capability 9.0 and sm_90a code in this build. The
// probe launches once per device and process; the answer cannot change.
bool warpgroup_code_present(const CudaDeviceInfo& info) {
    if (info.compute_major != 9 || info.compute_minor != 0) return false;
    static std::mutex mutex;
    static std::map<int, bool> present_on;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto known = present_on.find(info.index);
    if (known != present_on.end()) return known->second;
    int* flag = nullptr;
    if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    int present = 0;
    warpgroup_probe_kernel<<<1, 1>>>(flag);
    const bool ran = cudaGetLastError() == cudaSuccess &&
                     cudaMemcpy(&present, flag, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(flag);
    cudaGetLastError();
    if (ran) present_on[info.index] = present == 1;
    return ran && present == 1;
}

namespace {

// Launches a kernel of one warpgroup a block on model `desc` for `groups` units of work (blocks stride over them), with
// `smem` bytes of dynamic shared memory (the kernel's limit raised to it), on `job`.
template <typename Kernel, typename Job>
Status launch_group_kernel(Kernel kernel, const DeviceModel& m, const ModelDesc& desc, size_t smem, size_t groups,
                           const Job& job, const char* name) {
    NMC_RETURN_IF_ERROR(prepare_kernel(kernel, smem));
    int blocks = 0;
    NMC_RETURN_IF_ERROR(grid_size(kernel, kGroupThreads, smem, m, groups, blocks));
    kernel<<<blocks, kGroupThreads, smem>>>(desc, job);
    return launch_error(name);
}

// The warpgroup kernel `kernel` for `groups` groups of 64 on `job`.
template <typename Kernel, typename Job>
Status launch_warpgroup(Kernel kernel, const DeviceModel& m, size_t groups, const Job& job, const char* name) {
    return launch_group_kernel(kernel, m, m.warpgroup_desc, warpgroup_shared_bytes(m.warpgroup_desc), groups, job,
                               name);
}

template <int kMinBlocks, bool kBinary16>
Status launch_grid_warpgroup_typed(const DeviceModel& m, const GridJob& job, uint32_t groups) {
    if (job.ref)
        return launch_warpgroup(decode_grid_warpgroup_kernel<kMinBlocks, true, kBinary16>, m, groups, job,
                                "decode_grid_warpgroup_kernel");
    return launch_warpgroup(decode_grid_warpgroup_kernel<kMinBlocks, false, kBinary16>, m, groups, job,
                            "decode_grid_warpgroup_kernel");
}

// The warpgroup kernel over the job's mips, in the pack's arithmetic (the timing variant warpgroup_4_blocks: float32
// packs only).
template <int kMinBlocks>
Status launch_grid_warpgroup(const DeviceModel& m, GridJob job) {
    const uint32_t groups = fill_tile_starts(m, job, kGroupTexels);
    if constexpr (kMinBlocks == kWarpgroupMinBlocks) {
        if (m.desc.binary16) return launch_grid_warpgroup_typed<kMinBlocks, true>(m, job, groups);
    }
    return launch_grid_warpgroup_typed<kMinBlocks, false>(m, job, groups);
}

// The tiled kernel for a pack's layers (hidden layers with or without scales) and addressing (wrap or clamp).
template <TiledTiming kTiming, TiledWidths kWidths = TiledWidths::w64_64_64>
auto tiled_kernel(bool hidden_scaled, bool wrap) {
    return hidden_scaled ? (wrap ? decode_tiles_kernel<true, true, kTiming, kWidths>
                                 : decode_tiles_kernel<true, false, kTiming, kWidths>)
                         : (wrap ? decode_tiles_kernel<false, true, kTiming, kWidths>
                                 : decode_tiles_kernel<false, false, kTiming, kWidths>);
}

// The tiled kernel over the job's mips that it takes (tiled_mip_plan), consecutive ones in one launch while their
// patterns fit kMaxTiledPatterns, and the warpgroup kernel (in the pack's arithmetic) over the others: whole mips of a
// binary16 pack (without error sums), and the timing variant tensor_sampling_binary16 on a float32 one. Each pattern
// of a launch takes 8.7 KB of every block's shared memory: one pattern fits 5 blocks a multiprocessor, two (nmc's
// two-level latents: mips 0 and 1) 4, four 3. Fewer mips a launch would trade that for more launches and tails.
// `timing`: the decoder, or one of its timing breakdowns.
Status launch_tiled(const DeviceModel& m, const GridJob& job, TiledTiming timing = TiledTiming::full) {
    if (timing != TiledTiming::full && m.tiled_widths != TiledWidths::w64_64_64)
        return {StatusCode::invalid_argument,
                "the tiled kernel's timing breakdowns are built for hidden layers "
                "64-64-64 (the default network)"};
    // The tiled kernel writes texel pairs with 8-byte stores: a mip whose planes do not start 8-byte aligned (an odd
    // offset into the caller's buffer, or an odd number of floats in the mips before it: an odd size times an odd
    // channel count) takes the warpgroup kernel. Rows and planes of tiled mips have even sizes.
    const auto tiled_here = [&](int mip) {
        return m.tiled_mips[static_cast<size_t>(mip)].tiled &&
               reinterpret_cast<uintptr_t>(job.out + job.out_offset[mip]) % sizeof(float2) == 0;
    };
    int mip = job.mip_first;
    while (mip < job.mip_end) {
        if (!tiled_here(mip)) {
            GridJob rest = job;
            rest.mip_first = mip;
            while (mip < job.mip_end && !tiled_here(mip)) ++mip;
            rest.mip_end = mip;
            NMC_RETURN_IF_ERROR(launch_grid_warpgroup<kWarpgroupMinBlocks>(m, rest));
            continue;
        }
        TiledJob tiled;
        tiled.out = job.out;
        std::vector<int> slots;  // the launch's patterns (indices into m.tiled_patterns)
        uint32_t tiles = 0;
        while (mip < job.mip_end && tiled_here(mip)) {
            const TiledMipPlan& plan = m.tiled_mips[static_cast<size_t>(mip)];
            std::vector<int> wanted = slots;
            for (int c = 0; c < 4; ++c)
                if ((c & 1) <= plan.mip.class_mask_x && (c >> 1) <= plan.mip.class_mask_y &&
                    std::find(wanted.begin(), wanted.end(), plan.class_pattern[c]) == wanted.end())
                    wanted.push_back(plan.class_pattern[c]);
            if (wanted.size() > static_cast<size_t>(kMaxTiledPatterns)) break;  // the next launch takes it
            slots = std::move(wanted);
            TiledMip tm = plan.mip;
            tm.out_offset = job.out_offset[mip];
            for (int c = 0; c < 4; ++c) {
                const auto slot = std::find(slots.begin(), slots.end(), plan.class_pattern[c]);
                tm.pattern[c] = slot == slots.end() ? 0 : static_cast<int>(slot - slots.begin());  // 0: no such class
            }
            tiled.tile_start[tiled.mip_count] = tiles;
            tiled.mips[tiled.mip_count] = tm;
            tiles += (static_cast<uint32_t>(m.mip_width(mip)) / kTileSide) *
                     (static_cast<uint32_t>(m.mip_height(mip)) / kTileSide);
            ++tiled.mip_count;
            ++mip;
        }
        tiled.tile_start[tiled.mip_count] = tiles;
        tiled.pattern_count = static_cast<int>(slots.size());
        for (size_t i = 0; i < slots.size(); ++i) tiled.patterns[i] = m.tiled_patterns[static_cast<size_t>(slots[i])];
        const bool scaled = m.tiled_hidden_scaled;
        const bool wrap = m.desc.wrap != 0;
        // The timing breakdowns are built for the default widths only (checked above).
        const auto kernel =
            m.tiled_widths == TiledWidths::w64_48_32
                ? tiled_kernel<TiledTiming::full, TiledWidths::w64_48_32>(scaled, wrap)
            : timing == TiledTiming::without_activation ? tiled_kernel<TiledTiming::without_activation>(scaled, wrap)
            : timing == TiledTiming::without_stores     ? tiled_kernel<TiledTiming::without_stores>(scaled, wrap)
            : timing == TiledTiming::without_sampling   ? tiled_kernel<TiledTiming::without_sampling>(scaled, wrap)
                                                        : tiled_kernel<TiledTiming::full>(scaled, wrap);
        const size_t smem = model_shared_bytes(m.tiled_desc) + slots.size() * kPatternBytes + 2 * kTileBBytes;
        const std::lock_guard<std::mutex> lock(m.tiled_tickets_mutex);
        tiled.tile_tickets = m.tiled_tickets;
        NMC_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(m.tiled_tickets, 0, sizeof(uint32_t)));
        NMC_RETURN_IF_ERROR(launch_group_kernel(kernel, m, m.tiled_desc, smem, tiles, tiled, "decode_tiles_kernel"));
    }
    return Status::success();
}

template <int kMaxK, int kMTiles, int kMinBlocks, bool kShared, int kStages>
Status launch_grid_typed(const DeviceModel& m, const GridJob& job, size_t tiles) {
    auto kernel = decode_grid_kernel<kMaxK, kMTiles, kMinBlocks, kShared, kStages>;
    const size_t smem = shared_bytes(m, kShared);
    NMC_RETURN_IF_ERROR(prepare_kernel(kernel, smem));
    int blocks = 0;
    NMC_RETURN_IF_ERROR(grid_size(kernel, kBlockThreads, smem, m, (tiles + kBlockWarps - 1) / kBlockWarps, blocks));
    kernel<<<blocks, kBlockThreads, smem>>>(m.desc, job);
    return launch_error("decode_grid_kernel");
}

}  // namespace

// Whole mips with the kernel that fits the model: the warpgroup kernel where the model has one (Hopper), else a warp
// kernel. The timing variants (CudaDecodeVariant other than full) exist for the fast warp kernel with weights in shared
// memory, and warpgroup_4_blocks for the warpgroup kernel.
Status launch_grid(const DeviceModel& m, GridJob job, CudaDecodeVariant variant) {
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    if (variant != CudaDecodeVariant::full && m.desc.binary16)
        return {StatusCode::invalid_argument, std::string("timing variant ") + to_string(variant) +
                                                  " runs on packs of the float32 arithmetic (the variants time "
                                                  "arithmetics against it)"};
    if (variant == CudaDecodeVariant::full && m.warpgroup_ready) {
        // Binary16 packs of the default network's shape: the tiled kernel, whose bilinear sums are tensor-core
        // products (their order is free in that arithmetic, spec 8.3). It writes values only: error sums (job.ref)
        // take the warpgroup kernel.
        if (m.desc.binary16 && m.tiled_ready && !job.ref) return launch_tiled(m, job);
        return launch_grid_warpgroup<kWarpgroupMinBlocks>(m, job);
    }
    if (variant == CudaDecodeVariant::warpgroup_4_blocks) {
        if (!m.warpgroup_ready)
            return {StatusCode::invalid_argument, std::string("timing variant ") + to_string(variant) +
                                                      " needs the warpgroup kernel (compute capability 9.0, sm_90a "
                                                      "code in this build, a network of widths <= 64)"};
        return launch_grid_warpgroup<kWarpgroup4BlocksMinBlocks>(m, job);
    }
    const TiledTiming tiled_timing =
        variant == CudaDecodeVariant::tiled_without_activation ? TiledTiming::without_activation
        : variant == CudaDecodeVariant::tiled_without_stores   ? TiledTiming::without_stores
        : variant == CudaDecodeVariant::tiled_without_sampling ? TiledTiming::without_sampling
                                                               : TiledTiming::full;
    if (variant == CudaDecodeVariant::tensor_sampling_binary16 || tiled_timing != TiledTiming::full) {
        if (!m.tiled_ready)
            return {StatusCode::invalid_argument,
                    std::string("timing variant ") + to_string(variant) +
                        " needs the warpgroup kernel (compute capability 9.0, sm_90a code in this build, a network of "
                        "widths <= 64), F = 16 and the default network's shape"};
        return launch_tiled(m, job, tiled_timing);  // invalid_argument for a breakdown of other widths
    }
    const uint32_t tiles = fill_tile_starts(m, job, kWarpTexels);
    const bool fast_shared = m.max_k == kSmallK && use_shared_weights(m);
    if (variant != CudaDecodeVariant::full && !fast_shared)
        return {StatusCode::invalid_argument, std::string("timing variant ") + to_string(variant) +
                                                  " needs a network of widths <= 64 with weights in shared memory"};
    switch (variant) {
        case CudaDecodeVariant::full:
        case CudaDecodeVariant::warpgroup_4_blocks:  // launched above
        case CudaDecodeVariant::tensor_sampling_binary16:
        case CudaDecodeVariant::tiled_without_activation:
        case CudaDecodeVariant::tiled_without_stores:
        case CudaDecodeVariant::tiled_without_sampling:
            break;
        case CudaDecodeVariant::full_3_blocks:
            return launch_grid_typed<kSmallK, kSmallMTiles, kFull3BlocksMinBlocks, true, kStagesFull>(m, job, tiles);
        case CudaDecodeVariant::network_only:
            return launch_grid_typed<kSmallK, kSmallMTiles, kSmallMinBlocks, true, kStageNetwork | kStageEpilogue>(
                m, job, tiles);
        case CudaDecodeVariant::matmul_only:
            return launch_grid_typed<kSmallK, kSmallMTiles, kSmallMinBlocks, true, kStageNetwork>(m, job, tiles);
        case CudaDecodeVariant::sampling_only:
            return launch_grid_typed<kSmallK, kSmallMTiles, kSmallMinBlocks, true, kStageSample>(m, job, tiles);
        // At 3 blocks, as full_3_blocks (no spills; at 4 blocks these spill twice what full does): compare with it.
        case CudaDecodeVariant::binary16_activation:
            return launch_grid_typed<kSmallK, kSmallMTiles, kFull3BlocksMinBlocks, true,
                                     kStagesFull | kStageBinary16Activation>(m, job, tiles);
        case CudaDecodeVariant::binary16_activation_and_sampling:
            return launch_grid_typed<kSmallK, kSmallMTiles, kFull3BlocksMinBlocks, true,
                                     kStagesFull | kStageBinary16Activation | kStageBinary16Sampling>(m, job, tiles);
    }
    if (m.desc.binary16) {
        // The binary16 arithmetic (spec 5.6). Its fast kernel is the timing variant binary16_activation_and_sampling's
        // (3 blocks: at 4 it spills), the same code on a pack that asks for it.
        if (fast_shared)
            return launch_grid_typed<kSmallK, kSmallMTiles, kFull3BlocksMinBlocks, true, kStagesFullBinary16>(m, job,
                                                                                                              tiles);
        if (m.max_k == kSmallK)
            return launch_grid_typed<kSmallK, kSmallMTiles, kSmallGlobalMinBlocks, false, kStagesFullBinary16>(m, job,
                                                                                                               tiles);
        return launch_grid_typed<kLargeK, 1, kLargeMinBlocks, false, kStagesFullBinary16>(m, job, tiles);
    }
    if (fast_shared) return launch_grid_typed<kSmallK, kSmallMTiles, kSmallMinBlocks, true, kStagesFull>(m, job, tiles);
    if (m.max_k == kSmallK)
        return launch_grid_typed<kSmallK, kSmallMTiles, kSmallGlobalMinBlocks, false, kStagesFull>(m, job, tiles);
    return launch_grid_typed<kLargeK, 1, kLargeMinBlocks, false, kStagesFull>(m, job, tiles);
}

namespace {

template <int kMaxK, int kMTiles, int kMinBlocks, bool kShared, bool kBatch, int kStages = kStagesFull>
Status launch_queries_typed(const DeviceModel& m, const ModelDesc* models, const QueryJob& job) {
    auto kernel = decode_queries_kernel<kMaxK, kMTiles, kMinBlocks, kShared, kBatch, kStages>;
    const size_t smem = shared_bytes(m, kShared);
    NMC_RETURN_IF_ERROR(prepare_kernel(kernel, smem));
    int blocks = 0;
    const size_t tiles = (job.count + kWarpTexels - 1) / kWarpTexels;
    NMC_RETURN_IF_ERROR(grid_size(kernel, kBlockThreads, smem, m, (tiles + kBlockWarps - 1) / kBlockWarps, blocks));
    kernel<<<blocks, kBlockThreads, smem>>>(m.desc, models, job);
    return launch_error("decode_queries_kernel");
}

// Random queries in the arithmetic kBinary16 says (the pack's).
template <bool kBinary16>
Status launch_queries_in(const DeviceModel& m, const QueryJob& job) {
    constexpr int kStages = kBinary16 ? kStagesFullBinary16 : kStagesFull;
    // The binary16 warp kernel at 3 blocks where the float32 one takes 4 (see launch_grid).
    constexpr int kSharedMinBlocks = kBinary16 ? kFull3BlocksMinBlocks : kSmallMinBlocks;
    if (m.warpgroup_ready)
        return launch_warpgroup(decode_queries_warpgroup_kernel<kWarpgroupMinBlocks, kBinary16>, m,
                                (job.count + kGroupTexels - 1) / kGroupTexels, job, "decode_queries_warpgroup_kernel");
    if (m.max_k == kSmallK) {
        if (use_shared_weights(m))
            return launch_queries_typed<kSmallK, kSmallMTiles, kSharedMinBlocks, true, false, kStages>(m, nullptr, job);
        return launch_queries_typed<kSmallK, kSmallMTiles, kSmallGlobalMinBlocks, false, false, kStages>(m, nullptr,
                                                                                                         job);
    }
    return launch_queries_typed<kLargeK, 1, kLargeMinBlocks, false, false, kStages>(m, nullptr, job);
}

}  // namespace

Status launch_queries(const DeviceModel& m, const QueryJob& job) {
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    if (job.count == 0) return Status::success();
    return m.desc.binary16 ? launch_queries_in<true>(m, job) : launch_queries_in<false>(m, job);
}

Status launch_batch_queries(const DeviceModel& sizing, const ModelDesc* models, const QueryJob& job) {
    return sizing.max_k == kSmallK
               ? launch_queries_typed<kSmallK, kSmallMTiles, kSmallGlobalMinBlocks, false, true>(sizing, models, job)
               : launch_queries_typed<kLargeK, 1, kLargeMinBlocks, false, true>(sizing, models, job);
}

}  // namespace cuda_detail

const char* to_string(CudaDecodeVariant variant) {
    switch (variant) {
        case CudaDecodeVariant::full:
            return "full";
        case CudaDecodeVariant::full_3_blocks:
            return "full_3_blocks";
        case CudaDecodeVariant::network_only:
            return "network_only";
        case CudaDecodeVariant::matmul_only:
            return "matmul_only";
        case CudaDecodeVariant::sampling_only:
            return "sampling_only";
        case CudaDecodeVariant::binary16_activation:
            return "binary16_activation";
        case CudaDecodeVariant::binary16_activation_and_sampling:
            return "binary16_activation_and_sampling";
        case CudaDecodeVariant::warpgroup_4_blocks:
            return "warpgroup_4_blocks";
        case CudaDecodeVariant::tensor_sampling_binary16:
            return "tensor_sampling_binary16";
        case CudaDecodeVariant::tiled_without_activation:
            return "tiled_without_activation";
        case CudaDecodeVariant::tiled_without_stores:
            return "tiled_without_stores";
        case CudaDecodeVariant::tiled_without_sampling:
            return "tiled_without_sampling";
    }
    return "unknown";
}

}  // namespace nmc
