// Device code of the fused training step (included by fused_trainer.cu only; compiled with --fmad=false so every
// a * b + c below is two rounded operations, as docs/format-spec.md section 2 and the eager trainer have them).
//
// One block = 8 warps = 128 texels of the batch at a time ("block tile"), persistent over the batch. Per block tile:
//  Phase A, each warp on its own 16 texels (one m16 MMA tile):
//   - draws the texels (counter-based hash of seed, step and batch position: no host synchronisation),
//   - samples both latent levels, two lanes per texel (one per level), adds the noise, assembles layer 0's input
//     (spec 8.1-8.5) rounded to E4M3 (spec 8.6) into shared memory X0,
//   - runs the network with mma.sync m16n8k16 (fp16 operands, fp32 accumulation): E4M3 inputs and E4M3 / Int8
//     weights are exact in fp16; float weights are rounded to fp16 (a small deviation from the eager path). Every
//     layer output becomes the next layer's A fragments in registers; the E4M3-rounded activations also go to
//     shared memory (X1..X3) and hgelu_clamped's derivative into dY0..dY2, which the backward pass then overwrites
//     with the output gradients,
//   - computes the weighted MSE and its gradient, and runs the backward pass (dX = dY W, with W read transposed
//     by ldmatrix.trans from the same shared copy) down to layer 0's input, whose latent columns are scattered
//     into the latent gradient with the bilinear weights (float atomics; float2 / float4 ones on sm_90).
//  Phase B, all warps: the weight gradients dW = dY^T X of the 128 texels, read with ldmatrix.trans, as 16 x 16
//  tiles each owned by one warp for the whole kernel, so they accumulate in registers; bias gradients likewise
//  (dY^T times a ones matrix). At the end each block writes its partial sums, and the update kernel reduces them.
// Gradients inside the kernel carry a factor kGradientScale * batch (the 1/batch of the mean is left out and a
// power of two added) so that fp16 holds them without underflow; the update kernel and the latent scatter divide
// it out.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "compressor/cuda/fused_trainer.h"
#include "core/number_formats.h"
#include "format/limits.h"

namespace nmc::fused::kernels {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kTileTexels = 16;                     // one m16 MMA tile per warp
constexpr int kBlockTexels = kWarps * kTileTexels;  // 128
constexpr int kRowPad = 8;               // halves of padding per shared row: ldmatrix rows land in distinct banks
constexpr int kMaxInputWidth = 48;
constexpr int kOutputTileWidth = 16;     // the last layer's outputs, padded to one n16 tile
constexpr int kUnitSlots = 6;            // 16x16 weight-gradient tiles per warp: at most (3 + 4 + 4 + 1) * 4 / 8
constexpr int kBiasSlots = 2;            // 16-row bias-gradient strips per warp: at most 13 / 8, rounded up
constexpr int kScratchStride = 40;       // floats per texel row of the layer-0 input gradient (2F <= 32 used)
constexpr float kGradientScale = 16.0f;
constexpr float kMinScale = 1e-8f;         // as Model::quantize_layer: an all-zero row keeps a finite scale

// Layer l's widths: inputs I_l = {input_width, 64, 64, 64}; outputs padded to {64, 64, 64, 16}.
__host__ __device__ constexpr int layer_inputs(int layer, int input_width) {
    return layer == 0 ? input_width : kHiddenWidth;
}
__host__ __device__ constexpr int layer_padded_outputs(int layer) {
    return layer == kLayerCount - 1 ? kOutputTileWidth : kHiddenWidth;
}

// Lookup tables and the shared-memory layout, copied into shared memory by every block (indexed at run time).
struct Tables {
    int mip_offset[kMaxMips + 1];  // first texel of mip m in the flat target tensor; [M] = total
    int mip_width[kMaxMips];
    int mip_height[kMaxMips];
    int level_offset[kMaxLevels];  // first latent texel of level k
    int level_width[kMaxLevels];
    int level_height[kMaxLevels];
    float loss_weight[kMaxChannels];  // w_c
    float grad_weight[kMaxChannels];  // 2 * w_c * kGradientScale: d loss / d output, times kGradientScale * batch
    // In halves from the start of shared memory: the weight copy (rows of w_stride) and the per-texel tiles.
    int w_offset[kLayerCount];
    int w_stride[kLayerCount];
    int x_offset[kLayerCount];  // X_l: layer l's E4M3-rounded input, [128][x_stride]
    int x_stride[kLayerCount];
    int dy_offset[kLayerCount];  // dY_l: d loss / d layer l's output (before that, the activation's derivative)
    int dy_stride[kLayerCount];
    // In floats from the start of shared memory: effective biases and the last layer's scales.
    int bias_offset[kLayerCount];
    int scale_offset;
    // In floats within a gradient vector (BatchGradients::network, and each block's partial sums).
    int grad_weight_offset[kLayerCount];
    int grad_bias_offset[kLayerCount];
    int outputs[kLayerCount];  // real output counts (the last layer: C)
};

// Where everything lives in the step kernel's shared memory, in bytes. The first image_bytes are a copy of the
// device-side network image (fp16 weights in the padded row layout, then effective biases and scales).
struct SharedLayout {
    int image_bytes = 0;
    int tables_offset = 0;
    int scratch_offset = 0;  // per warp, 16 rows of kScratchStride floats
    int loss_offset = 0;     // per warp, 2 floats
    int total_bytes = 0;
};

__host__ inline SharedLayout make_layout(int input_width, int channel_count, Tables& t) {
    SharedLayout s;
    int halves = 0;
    for (int l = 0; l < kLayerCount; ++l) {
        t.w_offset[l] = halves;
        t.w_stride[l] = layer_inputs(l, input_width) + kRowPad;
        halves += layer_padded_outputs(l) * t.w_stride[l];
    }
    int floats = halves / 2;  // every row is a multiple of 8 halves: 16-byte aligned
    for (int l = 0; l < kLayerCount; ++l) {
        t.bias_offset[l] = floats;
        floats += layer_padded_outputs(l);
    }
    t.scale_offset = floats;
    floats += kOutputTileWidth;
    s.image_bytes = (floats * 4 + 15) / 16 * 16;
    s.tables_offset = s.image_bytes;
    halves = (s.tables_offset + static_cast<int>((sizeof(Tables) + 15) / 16 * 16)) / 2;
    for (int l = 0; l < kLayerCount; ++l) {
        t.x_offset[l] = halves;
        t.x_stride[l] = layer_inputs(l, input_width) + kRowPad;
        halves += kBlockTexels * t.x_stride[l];
    }
    for (int l = 0; l < kLayerCount; ++l) {
        t.dy_offset[l] = halves;
        t.dy_stride[l] = layer_padded_outputs(l) + kRowPad;
        halves += kBlockTexels * t.dy_stride[l];
    }
    s.scratch_offset = halves * 2;
    s.loss_offset = s.scratch_offset + kWarps * kTileTexels * kScratchStride * 4;
    s.total_bytes = s.loss_offset + kWarps * 2 * 4;
    int grads = 0;
    for (int l = 0; l < kLayerCount; ++l) {
        t.outputs[l] = l == kLayerCount - 1 ? channel_count : kHiddenWidth;
        t.grad_weight_offset[l] = grads;
        grads += t.outputs[l] * layer_inputs(l, input_width);
        t.grad_bias_offset[l] = grads;
        grads += t.outputs[l];
    }
    return s;
}

// Number of network parameters (the gradient vector's length).
__host__ inline int parameter_count(const Tables& t) {
    return t.grad_bias_offset[kLayerCount - 1] + t.outputs[kLayerCount - 1];
}

struct TrainArgs {
    const uint4* image = nullptr;   // network image (SharedLayout::image_bytes)
    const Tables* tables = nullptr;
    const float* latents = nullptr;
    float* latent_grad = nullptr;
    const float* targets = nullptr;
    const int32_t* given_texels = nullptr;  // the batch's texels, or null: drawn from the hash
    float* partials = nullptr;              // [gridDim.x][partial_stride]: gradient sums, loss, squared error
    int partial_stride = 0;
    int parameters = 0;
    int image_bytes = 0;
    int tables_offset = 0;
    int scratch_offset = 0;
    int loss_offset = 0;
    int batch = 0;
    int total_texels = 0;
    int mip_count = 0;
    int level_count = 0;
    int features = 0;
    int input_width = 0;
    int channels = 0;
    int wrap = 1;
    int latent_noise = 0;
    int round_latents = 0;  // sample the latents' code values (spec 6), gradients straight through
    int binary16 = 0;       // spec 5.6's binary16 arithmetic in the forward pass (its roundings straight through)
    int train_latents = 0;
    int weight_units = 0;  // 16x16 weight-gradient tiles
    int bias_units = 0;    // 16-row bias strips
    float latent_lo = 0;
    float latent_step = 0;
    float latent_grad_factor = 0;  // 1 / (kGradientScale * batch)
    uint64_t stream_key = 0;       // hash of (seed, step)
};

// ---- small helpers ---------------------------------------------------------------------------------------------

__host__ __device__ __forceinline__ uint64_t mix64(uint64_t z) {  // SplitMix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ uint32_t mix32(uint32_t x) {  // "lowbias32" integer hash
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

// Uniform in [0, 1) from 24 hash bits (like torch::rand, every value a multiple of 2^-24).
__device__ __forceinline__ float uniform01(uint32_t h) { return static_cast<float>(h >> 8) * (1.0f / 16777216.0f); }

__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address)
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address)
                 : "memory");
}

// C += A B for one m16n8k16 tile: A row-major fp16 (a[0..3]), B column-major fp16 (b0, b1), C fp32.
__device__ __forceinline__ void mma_fp16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // check_device() rejects compute capability below 8.0: the step kernel's shared memory does not fit there.
    (void)c, (void)a, (void)b0, (void)b1;
    __trap();
#else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

__device__ __forceinline__ uint32_t half2_bits(__half2 h) { return *reinterpret_cast<uint32_t*>(&h); }

__device__ __forceinline__ __half2 bits_half2(uint32_t u) { return *reinterpret_cast<__half2*>(&u); }

// fp8(x) of spec 2.1 (nearest, ties to even, saturating at 448) for two values, as an fp16 pair (exact).
__device__ __forceinline__ uint32_t fp8_pair(float lo, float hi) {
    const __nv_fp8x2_storage_t codes = __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, __NV_E4M3);
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(codes, __NV_E4M3);
    return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

__device__ __forceinline__ __half fp8_half(float x) {
    const __nv_fp8_storage_t code = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    return __half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3));
}

__device__ __forceinline__ float fp8_value(float x) { return __half2float(fp8_half(x)); }

// A gradient pair as fp16, saturated so that an outlier cannot become infinite.
__device__ __forceinline__ uint32_t gradient_pair(float lo, float hi) {
    return half2_bits(__floats2half2_rn(fminf(fmaxf(lo, -kFp16Max), kFp16Max), fminf(fmaxf(hi, -kFp16Max), kFp16Max)));
}

// spec 8.3: wrap (non-negative modulo) or clamp into 0 .. size - 1.
__device__ __forceinline__ int address_texel(int x, int size, bool wrap) {
    if (!wrap) return x < 0 ? 0 : (x >= size ? size - 1 : x);
    const int r = x % size;
    return r < 0 ? r + size : r;
}

// spec 8.4: saw(t) = 2 * (t - floor(t)) - 1, in the eager trainer's order ((t - floor(t)) * 2 - 1).
// Latent features move in vectors of V floats: V = 4 when F is a multiple of 4, 2 when F is even, else 1. A latent
// texel's F floats start at a multiple of F, so the vectors are aligned; one load, and on sm_90 one float2/float4
// atomic, per vector instead of one per feature (F = 14, the long schedule's 2K shape at 5 bpp, took the per-feature
// path before: 0.187 ms against 0.109 for F = 16).
template <int V>
struct LatentVector {
    static constexpr int width = V;
};

// Calls body(LatentVector<V>{}) with the widest V for F features (4, 2 or 1).
template <typename Body>
__device__ __forceinline__ void with_latent_vector(int features, Body&& body) {
    if ((features & 3) == 0) {
        body(LatentVector<4>{});
    } else if ((features & 1) == 0) {
        body(LatentVector<2>{});
    } else {
        body(LatentVector<1>{});
    }
}

template <int V>
__device__ __forceinline__ void load_latents(const float* p, float (&out)[V]) {
    if constexpr (V == 4) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(p));
        out[0] = q.x;
        out[1] = q.y;
        out[2] = q.z;
        out[3] = q.w;
    } else if constexpr (V == 2) {
        const float2 q = __ldg(reinterpret_cast<const float2*>(p));
        out[0] = q.x;
        out[1] = q.y;
    } else {
        out[0] = __ldg(p);
    }
}

template <int V>
__device__ __forceinline__ void add_latent_gradient(float* p, const float (&d)[V]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (V == 4) {
        atomicAdd(reinterpret_cast<float4*>(p), make_float4(d[0], d[1], d[2], d[3]));
    } else if constexpr (V == 2) {
        atomicAdd(reinterpret_cast<float2*>(p), make_float2(d[0], d[1]));
    } else {
        atomicAdd(p, d[0]);
    }
#else
#pragma unroll
    for (int e = 0; e < V; ++e) atomicAdd(p + e, d[e]);
#endif
}

__device__ __forceinline__ float saw(float t) { return (t - floorf(t)) * 2.0f - 1.0f; }

// spec 8.6's hgelu_clamped and its derivative as LibTorch's autograd takes it (clamp passes the gradient at the
// bounds): a = min(y, 3) * t with t = clamp(y / 3 + 0.5, 0, 1).
__device__ __forceinline__ float hgelu(float y, float& derivative) {
    const float gate_raw = y * kOneThirdFloat32 + 0.5f;
    const float gate = fminf(fmaxf(gate_raw, 0.0f), 1.0f);
    const float capped = fminf(y, 3.0f);
    derivative = (y <= 3.0f ? gate : 0.0f) + (gate_raw >= 0.0f && gate_raw <= 1.0f ? capped * kOneThirdFloat32 : 0.0f);
    return capped * gate;
}

// spec 8.6's binary16 activation with hgelu's derivative at y (the roundings pass the gradient straight through):
// h = f16(y) (y clamped to +-65504 first: satfinite), t = sat(f16(h * c + 0.5)) (one HFMA rounding of the exact
// value, then the clamp), a = f16(min(h, 3) * t) (one HMUL rounding).
__device__ __forceinline__ float hgelu_binary16(float y, float& derivative) {
    hgelu(y, derivative);
    const __half h = __float2half_rn(fminf(fmaxf(y, -kFp16Max), kFp16Max));
    const __half t = __hfma_sat(h, __float2half_rn(kOneThirdBinary16), __float2half_rn(0.5f));
    return __half2float(__hmul(__hmin(h, __float2half_rn(3.0f)), t));
}

// ---- the step kernel -------------------------------------------------------------------------------------------

// Unit u of the weight-gradient tiles: layer l, 16-row strip p (outputs), 16-column tile q (inputs).
__device__ __forceinline__ void weight_unit(int u, int input_width, int& l, int& p, int& q) {
    l = 0;
    p = 0;
    q = 0;
#pragma unroll
    for (int layer = 0; layer < kLayerCount; ++layer) {
        const int strips = layer_padded_outputs(layer) / 16;
        const int tiles = layer_inputs(layer, input_width) / 16;
        if (u >= 0 && u < strips * tiles) {
            l = layer;
            p = u / tiles;
            q = u % tiles;
        }
        u -= strips * tiles;
    }
}

// Strip u of the bias gradients: layer l, 16-row strip p.
__device__ __forceinline__ void bias_unit(int u, int& l, int& p) {
    l = 0;
    p = 0;
#pragma unroll
    for (int layer = 0; layer < kLayerCount; ++layer) {
        const int strips = layer_padded_outputs(layer) / 16;
        if (u >= 0 && u < strips) {
            l = layer;
            p = u;
        }
        u -= strips;
    }
}

__global__ void __launch_bounds__(kThreads, 1) train_kernel(const __grid_constant__ TrainArgs a) {
    extern __shared__ __align__(16) uint8_t smem[];
    __half* const sh = reinterpret_cast<__half*>(smem);
    const float* const sf = reinterpret_cast<const float*>(smem);
    Tables& T = *reinterpret_cast<Tables*>(smem + a.tables_offset);
    {
        uint4* dst = reinterpret_cast<uint4*>(smem);
        for (int i = static_cast<int>(threadIdx.x); i < a.image_bytes / 16; i += kThreads) dst[i] = __ldg(a.image + i);
        const int* src = reinterpret_cast<const int*>(a.tables);
        int* tdst = reinterpret_cast<int*>(&T);
        for (int i = static_cast<int>(threadIdx.x); i < static_cast<int>(sizeof(Tables) / 4); i += kThreads)
            tdst[i] = __ldg(src + i);
    }
    __syncthreads();

    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int F = a.features;
    const int K0 = a.input_width;
    const int C = a.channels;
    const bool wrap = a.wrap != 0;
    float* const scratch = reinterpret_cast<float*>(smem + a.scratch_offset) + warp * kTileTexels * kScratchStride;
    const uint32_t ones = 0x3C003C00u;  // fp16 pair (1, 1)

    float weight_acc[kUnitSlots][2][4];
    float bias_acc[kBiasSlots][4];
#pragma unroll
    for (int s = 0; s < kUnitSlots; ++s)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 4; ++e) weight_acc[s][h][e] = 0.0f;
#pragma unroll
    for (int s = 0; s < kBiasSlots; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e) bias_acc[s][e] = 0.0f;
    float loss_sum = 0.0f;
    float squared_sum = 0.0f;

    const int tiles = (a.batch + kBlockTexels - 1) / kBlockTexels;
    for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
        const int row0 = warp * kTileTexels;  // the warp's first row in the block tile
        // ---- Phase A: draw, sample, forward, loss, backward -----------------------------------------------------
        const int r = lane & 15;   // texel of the warp tile
        const int level_sel = lane >> 4;  // 0: level k0, 1: level k0 + 1
        const int position = tile * kBlockTexels + row0 + r;
        const bool valid = position < a.batch;
        int texel;
        if (a.given_texels != nullptr) {
            texel = __ldg(a.given_texels + (valid ? position : 0));
        } else {
            const uint64_t h = mix64(a.stream_key + static_cast<uint64_t>(valid ? position : 0) * 0x9E3779B97F4A7C15ull);
            texel = static_cast<int>(__umul64hi(h, static_cast<uint64_t>(a.total_texels)));
        }
        // The mip: the last one starting at or before the texel.
        int m = 0;
        for (int j = 1; j < a.mip_count; ++j) m = texel >= T.mip_offset[j] ? j : m;
        const int local = texel - T.mip_offset[m];
        const int mip_w = T.mip_width[m];
        const int ty = local / mip_w;
        const int tx = local - ty * mip_w;
        // spec 8: u = (x + 0.5) / w_m; spec 8.1: k0 = min(m, K - 2).
        const float u = (static_cast<float>(tx) + 0.5f) / static_cast<float>(mip_w);
        const float v = (static_cast<float>(ty) + 0.5f) / static_cast<float>(T.mip_height[m]);
        const int k0 = m < a.level_count - 2 ? m : a.level_count - 2;
        const int k = k0 + level_sel;

        // spec 8.2-8.3 for this lane's level.
        const int lw = T.level_width[k];
        const int lh = T.level_height[k];
        const float px = u * static_cast<float>(lw) - 0.5f;
        const float py = v * static_cast<float>(lh) - 0.5f;
        const float x0f = floorf(px);
        const float y0f = floorf(py);
        const float fx = px - x0f;
        const float fy = py - y0f;
        const int ix = static_cast<int>(x0f);
        const int iy = static_cast<int>(y0f);
        const int xa = address_texel(ix, lw, wrap);
        const int xb = address_texel(ix + 1, lw, wrap);
        const int ya = address_texel(iy, lh, wrap);
        const int yb = address_texel(iy + 1, lh, wrap);
        const int base = T.level_offset[k];
        int corner[4];
        corner[0] = base + ya * lw + xa;
        corner[1] = base + ya * lw + xb;
        corner[2] = base + yb * lw + xa;
        corner[3] = base + yb * lw + xb;
        float weight[4];
        weight[0] = (1.0f - fx) * (1.0f - fy);
        weight[1] = fx * (1.0f - fy);
        weight[2] = (1.0f - fx) * fy;
        weight[3] = fx * fy;
        const bool binary16 = a.binary16 != 0;
        if (binary16) {  // spec 8.3, binary16 arithmetic: each weight rounded once (in the latent gradient too)
#pragma unroll
            for (int c = 0; c < 4; ++c) weight[c] = __half2float(__float2half_rn(weight[c]));
        }
        const uint64_t noise_key = mix64(a.stream_key ^ (0xD1B54A32D192ED03ull + static_cast<uint64_t>(position)));
        const uint32_t noise_lo = static_cast<uint32_t>(noise_key);
        const uint32_t noise_hi = static_cast<uint32_t>(noise_key >> 32);
        const bool noise = a.latent_noise != 0;
        const bool round_codes = a.round_latents != 0;
        const float noise_step = a.latent_step;
        const float latent_lo = a.latent_lo;
        // The corner value of corner c, feature f, as the eager trainer: its code value lo + q * step with
        // q = rint((value - lo) / step) (round_latents; the latents stay in [lo, hi], so q is a valid code, the
        // value Compressor's freeze writes; binary16: f16(q * f16(step) + f16(lo)), one HFMA rounding of the exact
        // value), or value + (rand - 0.5) * step (latent_noise), or the value itself.
        const __half step16 = __float2half_rn(noise_step);
        const __half lo16 = __float2half_rn(latent_lo);
        auto corner_value = [&](float value, int c, int f) {
            if (round_codes) {
                const float q = rintf((value - latent_lo) / noise_step);
                return binary16 ? __half2float(__hfma(__float2half_rn(q), step16, lo16)) : q * noise_step + latent_lo;
            }
            if (!noise) return value;
            const uint32_t h = mix32(noise_lo ^ mix32(noise_hi + static_cast<uint32_t>((level_sel * 4 + c) * 16 + f)));
            return value + (uniform01(h) - 0.5f) * noise_step;
        };
        __half* x0_row = sh + T.x_offset[0] + (row0 + r) * T.x_stride[0];
        auto sample = [&](float va, float vb, float vc, float vd) {
            return ((weight[0] * va + weight[1] * vb) + weight[2] * vc) + weight[3] * vd;
        };
        with_latent_vector(F, [&](auto vector) {
            constexpr int V = decltype(vector)::width;
            for (int f = 0; f < F; f += V) {
                float q[4][V];
#pragma unroll
                for (int c = 0; c < 4; ++c) load_latents<V>(a.latents + static_cast<size_t>(corner[c]) * F + f, q[c]);
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float s = sample(corner_value(q[0][e], 0, f + e), corner_value(q[1][e], 1, f + e),
                                           corner_value(q[2][e], 2, f + e), corner_value(q[3][e], 3, f + e));
                    x0_row[level_sel * F + f + e] = fp8_half(s);
                }
            }
        });
        if (level_sel == 0) {
            // spec 8.4 from level k0's px, py; spec 8.5: the LOD input m * 0.25.
            __half* pe = x0_row + 2 * F;
#pragma unroll
            for (int o = 0; o < 3; ++o) {
                const float s = static_cast<float>(1 << o);
                const float sx = px * s;
                const float sy = py * s;
                pe[4 * o + 0] = fp8_half(saw(sx));
                pe[4 * o + 1] = fp8_half(saw(sy));
                pe[4 * o + 2] = fp8_half(saw(sx + 0.25f));
                pe[4 * o + 3] = fp8_half(saw(sy + 0.25f));
            }
            pe[12] = fp8_half(static_cast<float>(m) * 0.25f);
        } else {
            for (int i = network_input_count(F); i < K0; ++i) x0_row[i] = __float2half_rn(0.0f);
        }
        __syncwarp();

        // Layer 0's A fragments from X0 (natural order).
        uint32_t in[4][4];
#pragma unroll
        for (int kc = 0; kc < 4; ++kc) {
            if (16 * kc < K0) {
                const __half* p = sh + T.x_offset[0] + (row0 + (lane & 7) + ((lane >> 3) & 1) * 8) * T.x_stride[0] +
                                  16 * kc + (lane >> 4) * 8;
                ldmatrix_x4(in[kc], shared_address(p));
            } else {
#pragma unroll
                for (int i = 0; i < 4; ++i) in[kc][i] = 0u;
            }
        }

        // Hidden layers: y = W x' + b (spec 8.6), a = hgelu_clamped(y), next input fp8(a).
#pragma unroll
        for (int l = 0; l < kLayerCount - 1; ++l) {
            const int chunks = layer_inputs(l, K0) / 16;
            const __half* w = sh + T.w_offset[l];
            const int ws = T.w_stride[l];
            const float* bias = sf + T.bias_offset[l];
            __half* x_next = sh + T.x_offset[l + 1];
            const int xs = T.x_stride[l + 1];
            __half* deriv = sh + T.dy_offset[l];
            const int ds = T.dy_stride[l];
            uint32_t next[4][4];
#pragma unroll
            for (int jp = 0; jp < kHiddenWidth / 16; ++jp) {
                float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
                for (int kc = 0; kc < 4; ++kc) {
                    if (kc < chunks) {
                        uint32_t b[4];
                        ldmatrix_x4(b, shared_address(w + (16 * jp + (lane & 7) + ((lane >> 4) & 1) * 8) * ws +
                                                      16 * kc + ((lane >> 3) & 1) * 8));
                        mma_fp16(acc[0], in[kc], b[0], b[1]);
                        mma_fp16(acc[1], in[kc], b[2], b[3]);
                    }
                }
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const int n = 16 * jp + 8 * j + 2 * t;
                    const float b0 = bias[n];
                    const float b1 = bias[n + 1];
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int row = row0 + g + 8 * h;
                        float d0, d1;
                        const float y0 = acc[j][2 * h] + b0;
                        const float y1 = acc[j][2 * h + 1] + b1;
                        const float a0 = a.binary16 ? hgelu_binary16(y0, d0) : hgelu(y0, d0);
                        const float a1 = a.binary16 ? hgelu_binary16(y1, d1) : hgelu(y1, d1);
                        const uint32_t x = fp8_pair(a0, a1);
                        *reinterpret_cast<uint32_t*>(x_next + row * xs + n) = x;
                        *reinterpret_cast<uint32_t*>(deriv + row * ds + n) = half2_bits(__floats2half2_rn(d0, d1));
                        next[jp][2 * j + h] = x;
                    }
                }
            }
#pragma unroll
            for (int kc = 0; kc < 4; ++kc)
#pragma unroll
                for (int i = 0; i < 4; ++i) in[kc][i] = next[kc][i];
        }

        // Output layer: o = (W x') * scale + b; the loss and d loss / d o (times kGradientScale * batch).
        uint32_t grad_a[4][4];  // A fragments of the output gradient for the backward product, per 16 outputs
        {
            constexpr int l = kLayerCount - 1;
            const __half* w = sh + T.w_offset[l];
            const int ws = T.w_stride[l];
            const float* bias = sf + T.bias_offset[l];
            const float* scale = sf + T.scale_offset;
            float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
            for (int kc = 0; kc < kHiddenWidth / 16; ++kc) {
                uint32_t b[4];
                ldmatrix_x4(b, shared_address(w + ((lane & 7) + ((lane >> 4) & 1) * 8) * ws + 16 * kc +
                                              ((lane >> 3) & 1) * 8));
                mma_fp16(acc[0], in[kc], b[0], b[1]);
                mma_fp16(acc[1], in[kc], b[2], b[3]);
            }
            __half* dy = sh + T.dy_offset[l];
            const int ds = T.dy_stride[l];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int rr = g + 8 * h;
                const int target_texel = __shfl_sync(0xFFFFFFFFu, texel, rr);
                const bool target_valid = __shfl_sync(0xFFFFFFFFu, valid ? 1 : 0, rr) != 0;
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    float grad[2];
                    float scaled[2];
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int c = 8 * j + 2 * t + e;
                        const float o = acc[j][2 * h + e] * scale[c] + bias[c];
                        grad[e] = 0.0f;
                        if (target_valid && c < C) {
                            const float expected = __ldg(a.targets + static_cast<size_t>(target_texel) * C + c);
                            const float diff = o - expected;
                            loss_sum += T.loss_weight[c] * (diff * diff);
                            const float clamped = fminf(fmaxf(o, 0.0f), 1.0f) - expected;
                            squared_sum += clamped * clamped;
                            grad[e] = diff * T.grad_weight[c];
                        }
                        // d o / d x' goes through the scaled weights; d o / d W (straight-through) does not.
                        scaled[e] = grad[e] * scale[c];
                    }
                    *reinterpret_cast<uint32_t*>(dy + (row0 + rr) * ds + 8 * j + 2 * t) = gradient_pair(grad[0], grad[1]);
                    grad_a[0][2 * j + h] = gradient_pair(scaled[0], scaled[1]);
                }
            }
        }

        // Backward through the hidden layers: dA_{l-1} = dY_l W_l, dY_{l-1} = dA_{l-1} * hgelu'(y_{l-1}).
#pragma unroll
        for (int l = kLayerCount - 1; l >= 1; --l) {
            const int chunks = layer_padded_outputs(l) / 16;  // reduction over layer l's outputs
            const __half* w = sh + T.w_offset[l];
            const int ws = T.w_stride[l];
            __half* dy = sh + T.dy_offset[l - 1];
            const int ds = T.dy_stride[l - 1];
            uint32_t next[4][4];
#pragma unroll
            for (int q = 0; q < kHiddenWidth / 16; ++q) {
                float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
                for (int kc = 0; kc < 4; ++kc) {
                    if (kc < chunks) {
                        uint32_t b[4];
                        ldmatrix_x4_trans(b, shared_address(w + (16 * kc + (lane & 7) + ((lane >> 3) & 1) * 8) * ws +
                                                            16 * q + ((lane >> 4) & 1) * 8));
                        mma_fp16(acc[0], grad_a[kc], b[0], b[1]);
                        mma_fp16(acc[1], grad_a[kc], b[2], b[3]);
                    }
                }
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const int n = 16 * q + 8 * j + 2 * t;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        uint32_t* slot = reinterpret_cast<uint32_t*>(dy + (row0 + g + 8 * h) * ds + n);
                        const float2 d = __half22float2(bits_half2(*slot));
                        const uint32_t packed = gradient_pair(acc[j][2 * h] * d.x, acc[j][2 * h + 1] * d.y);
                        *slot = packed;
                        next[q][2 * j + h] = packed;
                    }
                }
            }
#pragma unroll
            for (int kc = 0; kc < 4; ++kc)
#pragma unroll
                for (int i = 0; i < 4; ++i) grad_a[kc][i] = next[kc][i];
        }

        // Layer 0's input gradient, latent columns only, scattered into the latent gradient (spec 8.3 backwards:
        // d corner = bilinear weight * d value; the noise is additive).
        if (a.train_latents != 0) {
            const __half* w = sh + T.w_offset[0];
            const int ws = T.w_stride[0];
#pragma unroll
            for (int q = 0; q < 2; ++q) {
                if (16 * q < 2 * F) {
                    float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
                    for (int kc = 0; kc < kHiddenWidth / 16; ++kc) {
                        uint32_t b[4];
                        ldmatrix_x4_trans(b, shared_address(w + (16 * kc + (lane & 7) + ((lane >> 3) & 1) * 8) * ws +
                                                            16 * q + ((lane >> 4) & 1) * 8));
                        mma_fp16(acc[0], grad_a[kc], b[0], b[1]);
                        mma_fp16(acc[1], grad_a[kc], b[2], b[3]);
                    }
#pragma unroll
                    for (int j = 0; j < 2; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h)
                            *reinterpret_cast<float2*>(scratch + (g + 8 * h) * kScratchStride + 16 * q + 8 * j + 2 * t) =
                                make_float2(acc[j][2 * h], acc[j][2 * h + 1]);
                }
            }
            __syncwarp();
            if (valid) {
                const float* d = scratch + r * kScratchStride + level_sel * F;
                with_latent_vector(F, [&](auto vector) {
                    constexpr int V = decltype(vector)::width;
                    for (int f = 0; f < F; f += V) {
                        float df[V];
#pragma unroll
                        for (int e = 0; e < V; ++e) df[e] = d[f + e] * a.latent_grad_factor;
#pragma unroll
                        for (int c = 0; c < 4; ++c) {
                            float g[V];
#pragma unroll
                            for (int e = 0; e < V; ++e) g[e] = weight[c] * df[e];
                            add_latent_gradient<V>(a.latent_grad + static_cast<size_t>(corner[c]) * F + f, g);
                        }
                    }
                });
            }
            __syncwarp();
        }
        __syncthreads();

        // ---- Phase B: weight and bias gradients of the block tile ----------------------------------------------
#pragma unroll
        for (int s = 0; s < kUnitSlots; ++s) {
            const int unit = warp + kWarps * s;
            if (unit < a.weight_units) {
                int l, p, q;
                weight_unit(unit, K0, l, p, q);
                const __half* dy = sh + T.dy_offset[l];
                const int ds = T.dy_stride[l];
                const __half* x = sh + T.x_offset[l];
                const int xs = T.x_stride[l];
#pragma unroll 2
                for (int c = 0; c < kBlockTexels / 16; ++c) {
                    uint32_t fa[4];
                    uint32_t fb[4];
                    ldmatrix_x4_trans(fa, shared_address(dy + (16 * c + (lane & 7) + ((lane >> 4) & 1) * 8) * ds +
                                                         16 * p + ((lane >> 3) & 1) * 8));
                    ldmatrix_x4_trans(fb, shared_address(x + (16 * c + (lane & 7) + ((lane >> 3) & 1) * 8) * xs +
                                                         16 * q + ((lane >> 4) & 1) * 8));
                    mma_fp16(weight_acc[s][0], fa, fb[0], fb[1]);
                    mma_fp16(weight_acc[s][1], fa, fb[2], fb[3]);
                }
            }
        }
#pragma unroll
        for (int s = 0; s < kBiasSlots; ++s) {
            const int unit = warp + kWarps * s;
            if (unit < a.bias_units) {
                int l, p;
                bias_unit(unit, l, p);
                const __half* dy = sh + T.dy_offset[l];
                const int ds = T.dy_stride[l];
#pragma unroll 2
                for (int c = 0; c < kBlockTexels / 16; ++c) {
                    uint32_t fa[4];
                    ldmatrix_x4_trans(fa, shared_address(dy + (16 * c + (lane & 7) + ((lane >> 4) & 1) * 8) * ds +
                                                         16 * p + ((lane >> 3) & 1) * 8));
                    mma_fp16(bias_acc[s], fa, ones, ones);
                }
            }
        }
        __syncthreads();
    }

    // ---- This block's partial sums ------------------------------------------------------------------------------
    float* out = a.partials + static_cast<size_t>(blockIdx.x) * a.partial_stride;
#pragma unroll
    for (int s = 0; s < kUnitSlots; ++s) {
        const int unit = warp + kWarps * s;
        if (unit < a.weight_units) {
            int l, p, q;
            weight_unit(unit, K0, l, p, q);
            const int inputs = layer_inputs(l, K0);
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int n = 16 * p + g + 8 * (e >> 1);
                    const int kk = 16 * q + 8 * h + 2 * t + (e & 1);
                    if (n < T.outputs[l]) out[T.grad_weight_offset[l] + n * inputs + kk] = weight_acc[s][h][e];
                }
        }
    }
#pragma unroll
    for (int s = 0; s < kBiasSlots; ++s) {
        const int unit = warp + kWarps * s;
        if (unit < a.bias_units && t == 0) {
            int l, p;
            bias_unit(unit, l, p);
#pragma unroll
            for (int e = 0; e < 4; e += 2) {
                const int n = 16 * p + g + 8 * (e >> 1);
                if (n < T.outputs[l]) out[T.grad_bias_offset[l] + n] = bias_acc[s][e];
            }
        }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        loss_sum += __shfl_xor_sync(0xFFFFFFFFu, loss_sum, offset);
        squared_sum += __shfl_xor_sync(0xFFFFFFFFu, squared_sum, offset);
    }
    float* loss_shared = reinterpret_cast<float*>(smem + a.loss_offset);
    if (lane == 0) {
        loss_shared[2 * warp] = loss_sum;
        loss_shared[2 * warp + 1] = squared_sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float loss = 0.0f;
        float squared = 0.0f;
        for (int w = 0; w < kWarps; ++w) {
            loss += loss_shared[2 * w];
            squared += loss_shared[2 * w + 1];
        }
        out[a.parameters] = loss;
        out[a.parameters + 1] = squared;
    }
}

// ---- the network update ------------------------------------------------------------------------------------------

struct UpdateArgs {
    const float* partials = nullptr;
    int partial_blocks = 0;   // rows of partials to sum; 0: prepare only (no gradients, no Adam)
    int partial_stride = 0;
    const Tables* tables = nullptr;
    int input_width = 0;
    int parameters = 0;
    int row_start[kLayerCount + 1] = {};  // block b handles layer l's output row b - row_start[l]
    float* weights[kLayerCount] = {};
    float* biases[kLayerCount] = {};
    float* weight_m[kLayerCount] = {};
    float* weight_v[kLayerCount] = {};
    float* bias_m[kLayerCount] = {};
    float* bias_v[kLayerCount] = {};
    float* gradient_out = nullptr;  // if set: the mean gradient is written here and Adam is skipped
    float gradient_factor = 0;      // 1 / (kGradientScale * batch)
    int adam = 0;
    float step_size = 0;            // lr / (1 - beta1^t)
    float bias_correction2_sqrt = 0;  // sqrt(1 - beta2^t)
    int quantize = 0;               // the weights to prepare: the stored formats, or fp16 copies of the floats
    int output_weights = 0;         // OutputWeights
    uint8_t* image = nullptr;       // the network image the step kernel copies
    float* loss_out = nullptr;      // [2]: the batch's loss and mean squared error (from partial_blocks > 0)
    float loss_factor = 0;          // 1 / batch
    float squared_factor = 0;       // 1 / (batch * C)
};

template <bool kLatent = false>
__device__ __forceinline__ void adam_update(float& p, float& m, float& v, float grad, float step_size,
                                            float bias_correction2_sqrt) {
    constexpr float kEpsilon = static_cast<float>(kLatent ? kLatentAdamEpsilon : kAdamEpsilon);
    // torch::optim::Adam: m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
    // p -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
    m = m * static_cast<float>(kAdamBeta1) + grad * static_cast<float>(1.0 - kAdamBeta1);
    v = v * static_cast<float>(kAdamBeta2) + (grad * grad) * static_cast<float>(1.0 - kAdamBeta2);
    const float denominator = sqrtf(v) / bias_correction2_sqrt + kEpsilon;
    p = p + -step_size * (m / denominator);
}

__global__ void __launch_bounds__(kThreads) network_update_kernel(const __grid_constant__ UpdateArgs a) {
    __shared__ float sums[kWarps][2 * 32 + 1];
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int block = static_cast<int>(blockIdx.x);
    int l = 0;
#pragma unroll
    for (int j = 1; j < kLayerCount; ++j) l = block >= a.row_start[j] ? j : l;
    const int n = block - a.row_start[l];
    const int inputs = layer_inputs(l, a.input_width);
    const Tables& T = *a.tables;
    const int weight_index = T.grad_weight_offset[l] + n * inputs;
    const int bias_index = T.grad_bias_offset[l] + n;
    const bool reduce = a.partial_blocks > 0;

    if (reduce) {
        float s0 = 0.0f, s1 = 0.0f, sb = 0.0f;
        for (int b = warp; b < a.partial_blocks; b += kWarps) {
            const float* row = a.partials + static_cast<size_t>(b) * a.partial_stride;
            if (lane < inputs) s0 += row[weight_index + lane];
            if (lane + 32 < inputs) s1 += row[weight_index + lane + 32];
            if (lane == 0) sb += row[bias_index];
        }
        sums[warp][lane] = s0;
        sums[warp][lane + 32] = s1;
        if (lane == 0) sums[warp][64] = sb;
    }
    __syncthreads();
    if (warp == 0) {
        float* w = a.weights[l] + static_cast<size_t>(n) * inputs;
        float* bias = a.biases[l] + n;
        // Lane i holds inputs i and i + 32 (widths 16..64); lanes past the width hold zeros and write nothing.
        const bool has0 = lane < inputs;
        const bool has1 = lane + 32 < inputs;
        float w0 = has0 ? w[lane] : 0.0f;
        float w1 = has1 ? w[lane + 32] : 0.0f;
        float b = *bias;
        if (reduce) {
            float g0 = 0.0f, g1 = 0.0f, gb = 0.0f;
            for (int i = 0; i < kWarps; ++i) {
                g0 += sums[i][lane];
                g1 += sums[i][lane + 32];
                gb += sums[i][64];
            }
            g0 *= a.gradient_factor;
            g1 *= a.gradient_factor;
            gb *= a.gradient_factor;
            if (a.gradient_out != nullptr) {
                if (has0) a.gradient_out[weight_index + lane] = g0;
                if (has1) a.gradient_out[weight_index + lane + 32] = g1;
                if (lane == 0) a.gradient_out[bias_index] = gb;
            } else if (a.adam != 0) {
                float* wm = a.weight_m[l] + static_cast<size_t>(n) * inputs;
                float* wv = a.weight_v[l] + static_cast<size_t>(n) * inputs;
                if (has0) {
                    float m0 = wm[lane], v0 = wv[lane];
                    adam_update(w0, m0, v0, g0, a.step_size, a.bias_correction2_sqrt);
                    w[lane] = w0;
                    wm[lane] = m0;
                    wv[lane] = v0;
                }
                if (has1) {
                    float m1 = wm[lane + 32], v1 = wv[lane + 32];
                    adam_update(w1, m1, v1, g1, a.step_size, a.bias_correction2_sqrt);
                    w[lane + 32] = w1;
                    wm[lane + 32] = m1;
                    wv[lane + 32] = v1;
                }
                if (lane == 0) {
                    float bm = a.bias_m[l][n], bv = a.bias_v[l][n];
                    adam_update(b, bm, bv, gb, a.step_size, a.bias_correction2_sqrt);
                    *bias = b;
                    a.bias_m[l][n] = bm;
                    a.bias_v[l][n] = bv;
                }
            }
        }
        // The weights the next step's forward pass uses (Model::quantize_layer; fp16 copies of the floats before
        // the quantised phase).
        const bool last = l == kLayerCount - 1;
        float e0 = w0, e1 = w1, scale = 1.0f, effective_bias = b;
        if (a.quantize != 0) {
            effective_bias = __half2float(__float2half_rn(b));
            const auto format = static_cast<OutputWeights>(a.output_weights);
            if (!last || format == OutputWeights::e4m3) {
                e0 = fp8_value(w0);
                e1 = fp8_value(w1);
            } else {
                float largest = fmaxf(fabsf(w0), fabsf(w1));
#pragma unroll
                for (int offset = 16; offset > 0; offset >>= 1)
                    largest = fmaxf(largest, __shfl_xor_sync(0xFFFFFFFFu, largest, offset));
                const bool int8 = format == OutputWeights::int8_scaled;
                scale = fmaxf(largest / (int8 ? 127.0f : 448.0f), kMinScale);
                if (int8) {
                    e0 = fminf(fmaxf(rintf(w0 / scale), -127.0f), 127.0f);
                    e1 = fminf(fmaxf(rintf(w1 / scale), -127.0f), 127.0f);
                } else {
                    e0 = fp8_value(w0 / scale);
                    e1 = fp8_value(w1 / scale);
                }
            }
        }
        __half* image_w = reinterpret_cast<__half*>(a.image) + T.w_offset[l] + n * T.w_stride[l];
        if (has0) image_w[lane] = __float2half_rn(e0);
        if (has1) image_w[lane + 32] = __float2half_rn(e1);
        if (lane == 0) {
            float* image_f = reinterpret_cast<float*>(a.image);
            image_f[T.bias_offset[l] + n] = effective_bias;
            if (last) image_f[T.scale_offset + n] = scale;
        }
    }
    if (reduce && block == 0) {
        // The batch's loss figures from the blocks' partial sums (deterministic order).
        __syncthreads();
        float loss = 0.0f, squared = 0.0f;
        for (int b = static_cast<int>(threadIdx.x); b < a.partial_blocks; b += kThreads) {
            loss += a.partials[static_cast<size_t>(b) * a.partial_stride + a.parameters];
            squared += a.partials[static_cast<size_t>(b) * a.partial_stride + a.parameters + 1];
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            loss += __shfl_xor_sync(0xFFFFFFFFu, loss, offset);
            squared += __shfl_xor_sync(0xFFFFFFFFu, squared, offset);
        }
        if (lane == 0) {
            sums[warp][0] = loss;
            sums[warp][1] = squared;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            float total = 0.0f, total_squared = 0.0f;
            for (int i = 0; i < kWarps; ++i) {
                total += sums[i][0];
                total_squared += sums[i][1];
            }
            a.loss_out[0] = total * a.loss_factor;
            a.loss_out[1] = total_squared * a.squared_factor;
        }
    }
}

// ---- the latent update -------------------------------------------------------------------------------------------

// Adam over the latents, then the clamp to [lo, hi] and the gradient reset for the next step. kSparse: only the
// latents this batch touched (a non-zero gradient) move, and only their moments decay (NTC's sparse update; the
// eager trainer's sparse_latent_adam_step); untouched ones are not read beyond their gradient. Otherwise dense Adam over
// every latent (torch::optim::Adam). n4 float4 groups (the latent count is a multiple of 4 when F is).
template <bool kSparse>
__global__ void __launch_bounds__(kThreads) latent_update_kernel(float4* latents, float4* grad, float4* m, float4* v,
                                                                 size_t n4, float step_size,
                                                                 float bias_correction2_sqrt, float lo, float hi) {
    for (size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n4;
         i += static_cast<size_t>(gridDim.x) * kThreads) {
        const float4 gr = grad[i];
        if (kSparse && gr.x == 0.0f && gr.y == 0.0f && gr.z == 0.0f && gr.w == 0.0f) continue;
        float4 p = latents[i];
        float4 mm = m[i];
        float4 vv = v[i];
        const auto update = [&](float& pc, float& mc, float& vc, float gc) {
            if (kSparse && gc == 0.0f) return;
            adam_update<true>(pc, mc, vc, gc, step_size, bias_correction2_sqrt);
            pc = fminf(fmaxf(pc, lo), hi);
        };
        update(p.x, mm.x, vv.x, gr.x);
        update(p.y, mm.y, vv.y, gr.y);
        update(p.z, mm.z, vv.z, gr.z);
        update(p.w, mm.w, vv.w, gr.w);
        latents[i] = p;
        m[i] = mm;
        v[i] = vv;
        grad[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}

// The same for latent counts that are not a multiple of 4 (F not a multiple of 4), one float per thread.
template <bool kSparse>
__global__ void __launch_bounds__(kThreads) latent_update_scalar_kernel(float* latents, float* grad, float* m, float* v,
                                                                        size_t n, float step_size,
                                                                        float bias_correction2_sqrt, float lo, float hi) {
    for (size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * kThreads) {
        const float g = grad[i];
        if (kSparse && g == 0.0f) continue;
        float p = latents[i], mm = m[i], vv = v[i];
        adam_update<true>(p, mm, vv, g, step_size, bias_correction2_sqrt);
        latents[i] = fminf(fmaxf(p, lo), hi);
        m[i] = mm;
        v[i] = vv;
        grad[i] = 0.0f;
    }
}

}  // namespace nmc::fused::kernels
