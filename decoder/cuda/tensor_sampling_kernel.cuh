// The tiled Hopper kernel with the bilinear sums on the tensor cores (decode_tiles_tensor_sampling_kernel): the
// decoder of whole mips of format 2.0 packs (the binary16 arithmetic, spec 5.6) of the default network's shape, whose
// spec 8.3 leaves the order of those float32 sums free (docs/design-binary16-decoding.md, "Sampling on the tensor
// cores"); on float32 packs the timing variant tensor_sampling_binary16 (CudaDecodeVariant), which times that
// arithmetic (values close to the float32 spec's, not equal). Included by cuda_decoder.cu only, compiled with
// --fmad=false like the rest.
//
// A warpgroup decodes a tile of 8 x 8 texels of one mip at a time; tile row R (0 .. 63) is texel (R % 8, R / 8) of the
// tile, so warp w owns tile rows 2w and 2w + 1, as 16 consecutive rows of the wgmma's M. For each of the two levels,
// spec 8.3's bilinear sums of the 64 texels are one tensor-core product:
//   A (64 texels x the cells of the tile's window): row R holds texel R's four bilinear weights (spec 8.3's float32
//     weights rounded to binary16) at the columns of its four cells, zeros elsewhere;
//   B (cells x 16 features): the window's dequantised codes, f16(q * f16(step) + f16(lo)) (one HFMA2);
// and the sums of the exact products are float32, in the tensor cores' order. Level k0's window is 6 x 6 cells (36 of
// K = 48), level k1's 4 x 4 (K = 16): enough wherever a level has at most 4/7 (k0) or 2/7 (k1) latent texels a mip
// texel in each direction (the host picks those mips, tiled_sampling_end). The m64n16 accumulators are layer 0's A
// fragments for inputs 0 .. 31 in place (after the E4M3 rounding), the positional inputs are computed in registers
// (position_fragments), and the hidden layers take the binary16 activation.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "decoder/cuda/cuda_decoder_kernels.cuh"
#include "decoder/cuda/warpgroup_kernels.cuh"

namespace nmc::cuda_detail {

constexpr int kTileSide = 8;  // texels a side of a tile (64 = the wgmma's M)
// Level k0's (level 0 here) and k1's (level 1) windows: cells across (and down), K chunks of 16 cells (36 -> 48,
// 16 -> 16), first chunk.
__host__ __device__ constexpr int window_width(int level) {
    return level ? 4 : 6;
}
__host__ __device__ constexpr int window_chunks(int level) {
    return level ? 1 : 3;
}
__host__ __device__ constexpr int window_first_chunk(int level) {
    return level ? 3 : 0;
}

// The tiled weight layout of hidden layer l: K chunks of inputs (layer 0's 48, then 64), and, for a layer without
// scales, the input that carries its bias (fed 1 by the kernel): the first input of one more chunk.
__host__ __device__ constexpr int tiled_input_chunks(int l) {
    return l == 0 ? 3 : 4;
}
__host__ __device__ constexpr int tiled_bias_input(int l) {
    return 16 * tiled_input_chunks(l);
}
constexpr uint32_t kTileAChunkBytes = kGroupTexels * kChunkBytes;  // 64 rows x 16 fp16
constexpr uint32_t kTileBChunkBytes = 16 * kChunkBytes;            // 16 features x 16 fp16
constexpr uint32_t kTileABytes = 4 * kTileAChunkBytes;
constexpr uint32_t kTileBBytes = 4 * kTileBChunkBytes;
// After the model (warpgroup_copy_model): A and B twice, so that one barrier a tile orders the writes of a tile's
// operands after the reads of the tile before the last.
constexpr uint32_t kTileSharedBytes = 2 * (kTileABytes + kTileBBytes);

// spec 8: texel centres (i + 0.5) / size of one direction of a mip; a power of two takes the multiply by 2^-shift,
// exactly the same value.
struct MipAxis {
    int size;
    float inverse;  // 2^-shift, or 0 when size is not a power of two
    __device__ float centre(int i) const {
        return inverse != 0.0f ? (static_cast<float>(i) + 0.5f) * inverse
                               : (static_cast<float>(i) + 0.5f) / static_cast<float>(size);
    }
};

__device__ __forceinline__ MipAxis mip_axis(int n) {
    return {n, (n & (n - 1)) == 0 ? __int_as_float((127 - (__ffs(n) - 1)) << 23) : 0.0f};
}

// spec 8.3: cell coordinate c of a level of `size` cells, wrapped (non-negative c mod size; the division only outside
// 0 .. size - 1) or clamped.
__device__ __forceinline__ uint32_t cell_coordinate(int c, int size, bool wrap) {
    if (static_cast<unsigned>(c) < static_cast<unsigned>(size)) return static_cast<uint32_t>(c);
    if (wrap) {
        int r = c % size;
        if (r < 0) r += size;
        return static_cast<uint32_t>(r);
    }
    return static_cast<uint32_t>(c < 0 ? 0 : size - 1);
}

// One tile: its mip, position and the origins of its two windows (floor(px) of the tile's first texel on each level:
// spec 8.2; px grows with the texel, so it is the smallest x0 of the tile).
struct TileSetup {
    int mip;
    int x_first;
    int y_first;
    int k0;
    int origin_x[2];
    int origin_y[2];
};

__device__ __forceinline__ TileSetup tile_setup(const ModelDesc& md, const GridJob& job, uint32_t tile) {
    TileSetup s;
    int m = job.mip_first;
    while (tile >= job.tile_start[m + 1 - job.mip_first]) ++m;
    s.mip = m;
    const int w = max(md.width >> m, 1);
    const int h = max(md.height >> m, 1);
    const int tiles_x = (w + kTileSide - 1) / kTileSide;
    const int local = static_cast<int>(tile - job.tile_start[m - job.mip_first]);
    const int row = (tiles_x & (tiles_x - 1)) == 0 ? local >> (__ffs(tiles_x) - 1) : local / tiles_x;
    s.x_first = (local - row * tiles_x) * kTileSide;
    s.y_first = row * kTileSide;
    s.k0 = m < md.level_count - 2 ? m : md.level_count - 2;
    const MipAxis ax = mip_axis(w);
    const MipAxis ay = mip_axis(h);
#pragma unroll
    for (int level = 0; level < 2; ++level) {
        const LevelPosition p = level_position(md.levels[s.k0 + level], ax.centre(s.x_first), ay.centre(s.y_first));
        s.origin_x[level] = static_cast<int>(p.x0);
        s.origin_y[level] = static_cast<int>(p.y0);
    }
    return s;
}

// This thread's share of B, loaded one tile ahead: item i = threadIdx.x covers cell i / 2 of a window, features
// 8 (i % 2) .. + 7 (72 items for level k0's window, then 32 for k1's; the last 24 threads have none).
struct WindowCells {
    uint2 codes = make_uint2(0u, 0u);
    int level = -1;  // 0: level k0, 1: level k1, -1: no item
    int cell = 0;
    int features = 0;

    __device__ void load(const ModelDesc& md, const TileSetup& s, bool wrap) {
        int item = static_cast<int>(threadIdx.x);
        level = 0;
        if (item >= 2 * window_width(0) * window_width(0)) {
            item -= 2 * window_width(0) * window_width(0);
            level = item < 2 * window_width(1) * window_width(1) ? 1 : -1;
        }
        if (level < 0) return;
        const LevelDesc& l = md.levels[s.k0 + level];
        const int window = window_width(level);
        cell = item >> 1;
        features = 8 * (item & 1);
        const int origin_x = level ? s.origin_x[1] : s.origin_x[0];  // no dynamic index: the arrays stay in registers
        const int origin_y = level ? s.origin_y[1] : s.origin_y[0];
        const uint32_t x = cell_coordinate(origin_x + cell % window, l.width, wrap);
        const uint32_t y = cell_coordinate(origin_y + cell / window, l.height, wrap);
        codes =
            __ldg(reinterpret_cast<const uint2*>(l.codes + (y * static_cast<uint32_t>(l.width) + x) * 16u + features));
    }

    // Dequantises the codes (dequantise_half2: f16(q * f16(step) + f16(lo))) into column `cell` of B (chunk
    // window_first_chunk + cell / 16, byte 2 (cell % 16) of feature row f: warpgroup_b_offset).
    __device__ void store(const ModelDesc& md, const TileSetup& s, uint8_t* tile_b) const {
        if (level < 0) return;
        const LevelDesc& l = md.levels[s.k0 + level];
        const __half2 step = __float2half2_rn(l.step);
        const __half2 lo = __float2half2_rn(l.lo);
        uint8_t* chunk = tile_b + static_cast<uint32_t>(window_first_chunk(level) + cell / 16) * kTileBChunkBytes;
        const int column = 2 * (cell % 16);
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            const __half2 value = dequantise_half2(p < 2 ? codes.x : codes.y, (p & 1) ? 0x4342u : 0x4140u, step, lo);
            const int f = features + 2 * p;
            *reinterpret_cast<__half*>(chunk + warpgroup_b_offset(f, column)) = __low2half(value);
            *reinterpret_cast<__half*>(chunk + warpgroup_b_offset(f + 1, column)) = __high2half(value);
        }
    }
};

// A's row for one texel and level kLevel (warps 0-1: level k0's rows, warps 2-3: level k1's, so no warp diverges):
// zeros over the level's chunks, then spec 8.3's four weights, binary16, at the columns of the texel's cells relative
// to the window origin. The clamp into the window keeps the stores inside the level's chunks; with the host's choice
// of mips (tiled_sampling_end) no texel's cells leave the window, so it never changes a column.
template <int kLevel>
__device__ __forceinline__ void fill_texel_weights(const LevelDesc& l, float u, float v, int origin_x, int origin_y,
                                                   int row, uint8_t* tile_a) {
    constexpr int kWindow = window_width(kLevel);
    uint8_t* first = tile_a + static_cast<uint32_t>(window_first_chunk(kLevel)) * kTileAChunkBytes;
    const uint32_t row_offset =
        static_cast<uint32_t>(row / 8) * kCoreStrideBytes + static_cast<uint32_t>(row % 8) * 16u;
#pragma unroll
    for (int kc = 0; kc < window_chunks(kLevel); ++kc) {
        *reinterpret_cast<uint4*>(first + kc * kTileAChunkBytes + row_offset) = make_uint4(0u, 0u, 0u, 0u);
        *reinterpret_cast<uint4*>(first + kc * kTileAChunkBytes + row_offset + kCoreLeadingBytes) =
            make_uint4(0u, 0u, 0u, 0u);
    }
    // spec 8.2-8.3's position and float32 weights.
    const LevelPosition p = level_position(l, u, v);
    const float fx = p.fx;
    const float fy = p.fy;
    const float gx = 1.0f - fx;
    const float gy = 1.0f - fy;
    const int dx = min(max(static_cast<int>(p.x0) - origin_x, 0), kWindow - 2);
    const int dy = min(max(static_cast<int>(p.y0) - origin_y, 0), kWindow - 2);
    const int column = dy * kWindow + dx;
    const auto put = [&](int c, float weight) {
        *reinterpret_cast<__half*>(first + static_cast<uint32_t>(c / 16) * kTileAChunkBytes +
                                   warpgroup_b_offset(row, 2 * (c % 16))) = __float2half_rn(weight);
    };
    put(column, gx * gy);
    put(column + 1, fx * gy);
    put(column + kWindow, gx * fy);
    put(column + kWindow + 1, fx * fy);
}

// spec 8.4-8.5 as layer 0's A fragment of K chunk 2 (inputs 32 .. 47: the 12 positional inputs, the mip's, zeros) for
// rows g and g + 8, from level k0's (px, py) of each: lane t holds inputs 2t, 2t + 1 (position_pair k = t) and
// 2t + 8, 2t + 9 (pair k = 4 + t for t < 2; then the mip input and zeros). F = 16 only. Every lane computes both pairs
// (no divergence) and keeps what its t needs.
__device__ __forceinline__ void position_fragments(float2 p_g, float2 p_g8, int mip, uint32_t (&chunk)[4]) {
    const int t = static_cast<int>(threadIdx.x) & 3;
    const auto pair = [](float2 p, int k) { return fp8x2_to_half2(position_pair_codes(p, k)); };
    chunk[0] = pair(p_g, t);
    chunk[1] = pair(p_g8, t);
    const uint32_t mip_input = t == 2 ? fp8x2_to_half2(fp8_code(static_cast<float>(mip) * 0.25f)) : 0u;
    const uint32_t high_g = pair(p_g, 4 + (t & 1));
    const uint32_t high_g8 = pair(p_g8, 4 + (t & 1));
    chunk[2] = t < 2 ? high_g : mip_input;
    chunk[3] = t < 2 ? high_g8 : mip_input;
}

// Descriptor units: a descriptor's address field counts 16 bytes, so K chunk kc of a B operand of N rows is at
// descriptor b + kc * chunk_step(N).
__host__ __device__ constexpr uint64_t chunk_step(int n) {
    return static_cast<uint64_t>(n) * kChunkBytes / 16u;
}

// One hidden layer of the tiled kernel (64 outputs) on the A fragments `in`: kChunks K chunks, then, for a layer
// without scales, the bias chunk, whose only input is 1 (`ones`: 1.0 in lane t = 0's low half, input 16 kChunks of
// rows g and g + 8) and whose weights are the biases (warpgroup_weights' bias input on the host); the first product
// starts the sums (scale-d 0), so nothing sets the accumulators up. Then y = acc * scale + bias for a layer with scales
// (params: 64 scales, 64 biases), the binary16 activation and the E4M3 rounding into the next layer's fragments `out`.
template <int kChunks, bool kScaled>
__device__ __forceinline__ void tiled_hidden_layer(uint32_t (&in)[4][4], uint32_t ones, uint64_t b, const float* params,
                                                   uint32_t (&out)[4][4]) {
    float acc[32];
    uint32_t bias_input[1][4] = {{ones, ones, 0u, 0u}};
    // The A registers are written before the fence (else ptxas adds a warpgroup.arrive of its own).
    wgmma_fence_operands(in);
    wgmma_fence_operands(bias_input);
    wgmma_fence();
    wgmma_fp16<64, false>(acc, in[0], b);
#pragma unroll
    for (int kc = 1; kc < kChunks; ++kc) wgmma_fp16<64>(acc, in[kc], b + kc * chunk_step(64));
    if constexpr (!kScaled) wgmma_fp16<64>(acc, bias_input[0], b + kChunks * chunk_step(64));
    wgmma_commit_and_wait();
    wgmma_fence_operands(acc);
    const int t = static_cast<int>(threadIdx.x) & 3;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        float y[4] = {acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]};
        if constexpr (kScaled) {
            const float2 s = *reinterpret_cast<const float2*>(params + 8 * j + 2 * t);
            const float2 bias = *reinterpret_cast<const float2*>(params + 64 + 8 * j + 2 * t);
#pragma unroll
            for (int e = 0; e < 4; ++e) y[e] = y[e] * ((e & 1) ? s.y : s.x) + ((e & 1) ? bias.y : bias.x);
        }
        out[j / 2][2 * (j % 2)] = fp8x2_to_half2(hgelu_clamped_binary16_codes(y[0], y[1]));      // row g
        out[j / 2][2 * (j % 2) + 1] = fp8x2_to_half2(hgelu_clamped_binary16_codes(y[2], y[3]));  // row g + 8
    }
}

// The last layer (16 padded outputs, with scales: params 16 scales, 16 biases): result[4j + e] = y of channel
// 8j + 2t + (e & 1), row g + 8 (e >> 1), as warpgroup_layer.
__device__ __forceinline__ void tiled_last_layer(uint32_t (&in)[4][4], uint64_t b, const float* params,
                                                 float (&result)[8]) {
    float acc[8];
    wgmma_fence_operands(in);
    wgmma_fence();
    wgmma_fp16<16, false>(acc, in[0], b);
#pragma unroll
    for (int kc = 1; kc < 4; ++kc) wgmma_fp16<16>(acc, in[kc], b + kc * chunk_step(16));
    wgmma_commit_and_wait();
    wgmma_fence_operands(acc);
    const int t = static_cast<int>(threadIdx.x) & 3;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        const float2 s = *reinterpret_cast<const float2*>(params + 8 * j + 2 * t);
        const float2 bias = *reinterpret_cast<const float2*>(params + 16 + 8 * j + 2 * t);
#pragma unroll
        for (int e = 0; e < 4; ++e)
            result[4 * j + e] = acc[4 * j + e] * ((e & 1) ? s.y : s.x) + ((e & 1) ? bias.y : bias.x);
    }
}

}  // namespace nmc::cuda_detail
