// The tiled kernel's device code (Hopper, sm_90a): whole mips of binary16 packs (spec 5.6) of the default network's
// shape, with spec 8.3's bilinear sums on the tensor cores too. Its kernel is launch.cu's
// decode_tiles_kernel, compiled with --fmad=false like the rest.
//
// A warpgroup decodes a tile of 8 x 8 texels of one mip at a time; tile row R (0 .. 63, the wgmma's M) is texel
// (tile_row_x(R), tile_row_y(R)): warp w owns texel rows 2w and 2w + 1 of the tile, and a lane's rows g and g + 8 of
// its 16 are two neighbours in x, so that it writes each channel's pair with one 8-byte store. The kernel runs only on
// mips where every size is a power of two and the levels are at least 2 times coarser than the mip (the host's
// tiled_mip_plan), and whose planes start 8-byte aligned in the output (launch_tiled). There spec 8.2's positions are
// exact in float32 and repeat from tile to tile: a tile's bilinear weights, which latent cells they fall on relative
// to the tile's window origin, and its positional inputs depend only on the tile's class (tile x and y modulo 1 or 2)
// and mip. The host computes them once per class (the pattern) with the CPU reference's arithmetic, so the kernel does
// per tile only what varies:
//   - the window's latent codes: B (cells x 16 features) of the sampling product, dequantised in binary16
//     (f16(q * f16(step) + f16(lo)), one HFMA2) and written to shared memory transposed by stmatrix;
//   - the sampling products s_k = A_k x B_k on the tensor cores, where A (64 texels x 64 cells, the pattern, in shared
//     memory) holds each texel's four binary16 weights at its cells' columns: level k0's window in K chunks 0-2 (at
//     most 48 cells), level k1's in chunk 3 (at most 16). Each product of binary16 values is exact, so these are the
//     float32 sums of spec 8.3 in the tensor cores' order (which the binary16 arithmetic leaves free);
//   - the network: layer 0's A is s_k0, s_k1 (the m64n16 accumulators are A fragments in place, after the E4M3
//     rounding) and K chunk 2 from the mip's per-class table of the threads' fragments (TiledMip::positions:
//     positional inputs, the mip input, and, when the hidden layers have no scales, 1 at input kTiledBiasInput, which
//     carries layer 0's bias); every hidden layer takes the binary16 activation; layers 1 and 2 without scales get
//     their bias as one more product (input 1, weights = biases), as spec 8.6 allows (the bias is a term of the sum,
//     in any order).
// Sampling's B columns are a permutation of the features (tiled_feature_of_column) so that each lane reads its 4
// codes of a cell with one 32-bit load; the host permutes layer 0's weight columns to match.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "decoder/cuda/cuda_decoder_kernels.cuh"
#include "decoder/cuda/warpgroup_kernels.cuh"

namespace nmc::cuda_detail {

constexpr int kTileSide = 8;                                       // texels a side of a tile (64 = the wgmma's M)
constexpr int kTileCells = 64;                                     // K of the sampling product: 4 chunks
constexpr int kTileLevel0Cells = 48;                               // level k0's window: K chunks 0-2
constexpr int kTileLevel1Chunk = 3;                                // level k1's window: K chunk 3
constexpr int kTiledBiasInput = 47;                                // layer 0's input fed 1 (a zero input of spec 8.5)
constexpr int kMaxTiledPatterns = 4;                               // patterns one launch holds in shared memory
constexpr uint32_t kTileAChunkBytes = kGroupTexels * kChunkBytes;  // 64 rows x 16 fp16
constexpr uint32_t kTileBChunkBytes = 16 * kChunkBytes;            // 16 features x 16 fp16
constexpr uint32_t kPatternWeightBytes = 4 * kTileAChunkBytes;     // A of the sampling product
constexpr uint32_t kPatternBytes = kPatternWeightBytes + 8 * kTileCells;  // then (dx, dy) of each cell, int32
constexpr uint32_t kTileBBytes = 4 * kTileBChunkBytes;

// The hidden layers' widths a tiled kernel is built for: the default network's 64-64-64, or NTC 0.9's 64-48-32 (`nmc
// compress --hidden-layers 64,48,32`; any narrower widths too). Both read the pack's weights as the host lays them out,
// padded to 64 (warpgroup_weights); the narrow kernel leaves the padding out of its products (layer 1 has 48 outputs,
// layer 2 48 inputs and 32 outputs, the last layer 32 inputs). That changes no sum: a padded output is 0 after the
// activation (zero weights, zero bias, hgelu(0) = 0) and a padded input's weights are 0.
enum class TiledWidths { w64_64_64, w64_48_32 };

// Outputs of hidden layer `layer` (0 .. 2) in a kernel built for `widths`.
__host__ __device__ constexpr int tiled_hidden_width(TiledWidths widths, int layer) {
    return widths == TiledWidths::w64_64_64 || layer == 0 ? 64 : layer == 1 ? 48 : 32;
}

// The bias chunk of layers 1 and 2 without scales: after their four (padded) K chunks, whatever the widths.
constexpr int kTiledBiasChunk = 4;

// What a launch of the tiled kernel leaves out: nothing (the decoder), or one part of a tile's work for the timing
// breakdown (CudaDecodeVariant::tiled_without_*, whose values are not the spec's).
enum class TiledTiming { full, without_activation, without_stores, without_sampling };

// The texel of tile row R = 16w + 8 side + g (g = 0 .. 7: the accumulator layout's row within warp w's 16):
// (2 (g % 4) + side, 2w + g / 4).
__host__ __device__ constexpr int tile_row_x(int r) {
    return 2 * (r % 4) + (r / 8) % 2;
}
__host__ __device__ constexpr int tile_row_y(int r) {
    return 2 * (r / 16) + (r % 8) / 4;
}

// Feature read by column n of the sampling product's B (and carried by layer 0's input n of each level): lane t of a
// warp holds columns 2t, 2t + 1 and 8 + 2t, 9 + 2t (stmatrix's fragment), features 4t .. 4t + 3, one 32-bit word.
__host__ __device__ constexpr int tiled_feature_of_column(int n) {
    return 4 * ((n & 7) >> 1) + 2 * (n >> 3) + (n & 1);
}

// One mip of a tiled launch (host: tiled_mip_plan). A tile's window origin on level l (0: k0, 1: k1) along an axis is
// floor(p) of the tile's first texel, p = ((2 * 8i + 1) * w_l - w_m) / (2 w_m) for tile index i (spec 8.2, exact for
// powers of two): (16 i + origin_bias) >> origin_shift, with origin_bias = 1 - w_m / w_l and origin_shift =
// log2(w_m / w_l) + 1.
struct TiledMip {
    size_t out_offset = 0;             // floats: the mip's planes in job.out
    const uint4* positions = nullptr;  // [class][128 threads]: layer 0's A fragment of K chunk 2
    uint32_t texels = 0;               // w * h
    int width = 0;                     // w
    int tiles_x_shift = 0;             // tiles across = 2^tiles_x_shift
    int class_mask_x = 0;              // the tile's class: (x & class_mask_x) | (y & class_mask_y) << 1
    int class_mask_y = 0;
    int k0 = 0;                  // spec 8.1
    uint32_t step_lo[2] = {};    // levels k0, k1: binary16 f16(step) | f16(lo) << 16 (spec 6)
    int origin_bias[2][2] = {};  // [level][axis]
    int origin_shift[2][2] = {};
    int pattern[4] = {};  // the shared-memory pattern slot of each class

    // The window origin of tile `tile` (its index along `axis`, 0: x, 1: y) on level `level`; the host's patterns
    // (tiled_class) take their cells relative to it.
    __host__ __device__ int origin(int level, int axis, int tile) const {
        return (16 * tile + origin_bias[level][axis]) >> origin_shift[level][axis];
    }
};

struct TiledJob {
    uint32_t tile_start[kMaxLevels + 1] = {};  // first tile of each of the job's mips, then the end
    TiledMip mips[kMaxLevels];
    const uint8_t* patterns[kMaxTiledPatterns] = {};  // global copies of the launch's patterns (kPatternBytes each)
    float* out = nullptr;
    uint32_t* tile_tickets = nullptr;  // tiles drawn past each block's first two; zero at launch (launch_tiled)
    int mip_count = 0;
    int pattern_count = 0;
};

// Where a tile is: its mip (index into job.mips), position in tiles, class and window origins.
struct TileState {
    int mip = 0;
    int x = 0;  // first texel
    int y = 0;
    int pattern = 0;
    int cls = 0;
    int origin[2][2] = {};  // [level][axis]
};

__device__ __forceinline__ TileState tile_state(const TiledJob& job, uint32_t tile) {
    TileState s;
    int i = 0;
    while (tile >= job.tile_start[i + 1]) ++i;
    const TiledMip& mp = job.mips[i];
    s.mip = i;
    const int local = static_cast<int>(tile - job.tile_start[i]);
    const int ty = local >> mp.tiles_x_shift;
    const int tx = local & ((1 << mp.tiles_x_shift) - 1);
    s.x = tx * kTileSide;
    s.y = ty * kTileSide;
    s.cls = (tx & mp.class_mask_x) | ((ty & mp.class_mask_y) << 1);
    s.pattern = mp.pattern[s.cls];
#pragma unroll
    for (int l = 0; l < 2; ++l) {
        s.origin[l][0] = mp.origin(l, 0, tx);
        s.origin[l][1] = mp.origin(l, 1, ty);
    }
    return s;
}

// stmatrix.x4.trans: four 8 x 8 matrices of 16-bit values, lane 4r + c holding row r, columns 2c, 2c + 1 of matrix i
// in reg[i]; lane 8i + j gives the address of stored row j of matrix i, which receives column j (the transpose).
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t address, const uint32_t (&reg)[4]) {
#if NMC_HAS_WGMMA
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address), "r"(reg[0]),
                 "r"(reg[1]), "r"(reg[2]), "r"(reg[3])
                 : "memory");
#else
    (void)address, (void)reg;
    __trap();
#endif
}

// This lane's share of a tile's B: cells 16w + r and 16w + 8 + r of the window (warp w: warps 0-2 level k0's cells,
// warp 3 level k1's), features 4t .. 4t + 3 of each (one 32-bit word of codes), loaded a tile ahead.
struct TileCells {
    uint32_t words[2] = {0u, 0u};

    // kWrap: the pack's wrap addressing (sizes are powers of two), else clamp.
    template <bool kWrap>
    __device__ void load(const ModelDesc& md, const TiledJob& job, const TileState& s, const uint8_t* patterns) {
        const int warp = static_cast<int>(threadIdx.x) >> 5;
        const int lane = static_cast<int>(threadIdx.x) & 31;
        const int level = warp == 3 ? 1 : 0;
        const LevelDesc& l = md.levels[job.mips[s.mip].k0 + level];
        const int2* offsets = reinterpret_cast<const int2*>(patterns + s.pattern * kPatternBytes + kPatternWeightBytes);
        const int ox = level ? s.origin[1][0] : s.origin[0][0];  // no dynamic index: the origins stay in registers
        const int oy = level ? s.origin[1][1] : s.origin[0][1];
        const uint8_t* codes = l.codes + 4 * (lane & 3);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int2 d = offsets[16 * warp + 8 * half + (lane >> 2)];
            int x = ox + d.x;
            int y = oy + d.y;
            if constexpr (kWrap) {
                x &= l.width - 1;
                y &= l.height - 1;
            } else {
                x = min(max(x, 0), l.width - 1);
                y = min(max(y, 0), l.height - 1);
            }
            words[half] =
                __ldg(reinterpret_cast<const uint32_t*>(codes + static_cast<uint32_t>(y * l.width + x) * 16u));
        }
    }

    // Dequantises the codes (spec 6, binary16) and writes them into B (K-major, warpgroup_b_offset layout) with one
    // stmatrix: matrix i of warp w is K block 2w + i / 2 (8 cells) by columns 8 (i % 2) .. + 7; `row_address` is this
    // lane's row of it in the B buffer being written.
    __device__ void store(const TiledJob& job, const TileState& s, uint32_t row_address) const {
        const int level = (threadIdx.x >> 5) == 3 ? 1 : 0;
        const __half2 step_lo = *reinterpret_cast<const __half2*>(&job.mips[s.mip].step_lo[level]);
        const __half2 step = __low2half2(step_lo);
        const __half2 lo = __high2half2(step_lo);
        uint32_t reg[4];
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const __half2 low = dequantise_half2(words[half], 0x4140u, step, lo);   // features 4t, 4t + 1
            const __half2 high = dequantise_half2(words[half], 0x4342u, step, lo);  // features 4t + 2, 4t + 3
            reg[2 * half] = *reinterpret_cast<const uint32_t*>(&low);
            reg[2 * half + 1] = *reinterpret_cast<const uint32_t*>(&high);
        }
        stmatrix_x4_trans(row_address, reg);
    }
};

// This lane's stmatrix row address within a B buffer (see TileCells::store): matrix i = lane / 8, row j = lane % 8 is
// column 8 (i % 2) + j of K block 2w + i / 2.
__device__ __forceinline__ uint32_t tile_b_row_offset() {
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int i = lane >> 3;
    const int block = 2 * warp + (i >> 1);
    return static_cast<uint32_t>(block >> 1) * kTileBChunkBytes +
           warpgroup_b_offset(8 * (i & 1) + (lane & 7), 16 * (block & 1));
}

// Descriptor units: a descriptor's address field counts 16 bytes, so K chunk kc of a K-major operand of N rows is at
// descriptor b + kc * chunk_step(N).
__host__ __device__ constexpr uint64_t chunk_step(int n) {
    return static_cast<uint64_t>(n) * kChunkBytes / 16u;
}

// One hidden layer of the tiled kernel (kN outputs: 64, 48 or 32) on the A fragments `in`: kChunks K chunks, then,
// with kBiasChunk, the bias chunk (kTiledBiasChunk in the padded layout), whose only input is 1 (`ones`: 1.0 in lane t
// = 0's low half, input 16 kTiledBiasChunk of rows g and g + 8) and whose weights are the biases; the first product
// starts the sums (scale-d 0), so nothing sets the accumulators up. Then y = acc * scale + bias for a layer with scales
// (params: 64 scales, 64 biases), the binary16 activation and the E4M3 rounding into the next layer's fragments `out`;
// without kActivation (a timing breakdown only) the values go on as fp16 (one conversion a pair instead of the
// activation, the rounding and the conversion back). `out` gets K chunks 0 .. kN / 16 - 1 of the next layer.
template <int kChunks, int kN, bool kScaled, bool kBiasChunk, bool kActivation = true>
__device__ __forceinline__ void tiled_hidden_layer(uint32_t (&in)[4][4], uint32_t ones, uint64_t b, const float* params,
                                                   uint32_t (&out)[4][4]) {
    float acc[kN / 2];
    uint32_t bias_input[1][4] = {{ones, ones, 0u, 0u}};
    // The A registers are written before the fence (else ptxas adds a warpgroup.arrive of its own).
    wgmma_fence_operands(in);
    if constexpr (kBiasChunk) wgmma_fence_operands(bias_input);
    wgmma_fence();
    wgmma_fp16<kN, false>(acc, in[0], b);
#pragma unroll
    for (int kc = 1; kc < kChunks; ++kc) wgmma_fp16<kN>(acc, in[kc], b + kc * chunk_step(64));
    if constexpr (kBiasChunk) wgmma_fp16<kN>(acc, bias_input[0], b + kTiledBiasChunk * chunk_step(64));
    wgmma_commit_and_wait();
    wgmma_fence_operands(acc);
    const int t = static_cast<int>(threadIdx.x) & 3;
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
        float y[4] = {acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]};
        if constexpr (kScaled) {
            const float2 s = *reinterpret_cast<const float2*>(params + 8 * j + 2 * t);
            const float2 bias = *reinterpret_cast<const float2*>(params + 64 + 8 * j + 2 * t);
#pragma unroll
            for (int e = 0; e < 4; ++e) y[e] = y[e] * ((e & 1) ? s.y : s.x) + ((e & 1) ? bias.y : bias.x);
        }
        if constexpr (kActivation) {
            out[j / 2][2 * (j % 2)] = fp8x2_to_half2(hgelu_clamped_binary16_codes(y[0], y[1]));      // row g
            out[j / 2][2 * (j % 2) + 1] = fp8x2_to_half2(hgelu_clamped_binary16_codes(y[2], y[3]));  // row g + 8
        } else {
            const __half2 low = half2_satfinite(y[0], y[1]);
            const __half2 high = half2_satfinite(y[2], y[3]);
            out[j / 2][2 * (j % 2)] = *reinterpret_cast<const uint32_t*>(&low);
            out[j / 2][2 * (j % 2) + 1] = *reinterpret_cast<const uint32_t*>(&high);
        }
    }
}

// The last layer (kChunks K chunks, 16 padded outputs, with scales: params 16 scales, 16 biases): result[4j + e] = y
// of channel 8j + 2t + (e & 1), row g + 8 (e >> 1), as warpgroup_layer.
template <int kChunks>
__device__ __forceinline__ void tiled_last_layer(uint32_t (&in)[4][4], uint64_t b, const float* params,
                                                 float (&result)[8]) {
    float acc[8];
    wgmma_fence_operands(in);
    wgmma_fence();
    wgmma_fp16<16, false>(acc, in[0], b);
#pragma unroll
    for (int kc = 1; kc < kChunks; ++kc) wgmma_fp16<16>(acc, in[kc], b + kc * chunk_step(16));
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
