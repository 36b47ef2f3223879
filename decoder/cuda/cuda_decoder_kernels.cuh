// The CUDA decoder's device code: spec 8.2-8.5 input assembly per thread, and the cooperative matmul that runs a
// warp's 32 texel vectors through every layer with mma.sync. Its kernels are launch.cu's; compiled with
// --fmad=false (spec 2: no multiply-add contraction), so every a * b + c below is two rounded operations.
//
// Operand roles (chosen so that no shuffle is needed between layers):
//   A (16 x K, row-major) = 16 texels' input vectors, B (K x 8, column-major) = 8 outputs' weight rows, C = f32.
//   The warp's 32 texels are two m16 tiles: tile m holds texels 16m .. 16m+15; lane (g = lane / 4, t = lane % 4)
//   owns rows g and g + 8 of each tile in A and in C.
// The C fragments of a pair P of n8 tiles (outputs 16P .. 16P+15) give lane (g, t) outputs 16P + {2t, 2t+1, 8+2t,
// 9+2t} of rows g and g + 8. Between layers a lane keeps them as E4M3 codes (the next layer's rounded input), two
// registers per pair and m16 tile: register 2P holds row g's four codes in that order (low byte first), register
// 2P + 1 row g + 8's. Both MMAs read their A fragments from this packed form:
//   - fp8 (m16n8k32): chunk c's A fragment (byte positions 4t..4t+3 and 16+4t..16+4t+3 of rows g, g+8) is
//     registers 4c .. 4c+3 as they are. Position p of a chunk then carries input perm(p) (fp8_chunk_permutation),
//     and the weights are stored in that order at load time. Summation order is free (spec 8.6), so the permutation
//     changes nothing but the order.
//   - fp16 (m16n8k16): chunk c's A fragment (columns 2t, 2t+1, 2t+8, 2t+9 of rows g, g+8) is the four code pairs of
//     registers 2c and 2c + 1, converted to fp16x2 (exact) once at the start of the layer, in natural K order.
// The packed form takes half the registers of fp16 fragments, so a layer's input and output both fit beside its
// accumulators. Layer 0's input comes from shared memory (each thread writes its own texel's row in natural order)
// and is read into the same packed form.
//
// Weights are converted once (device_model.cu) into fragment order: for each pair P of n8 tiles and each K chunk,
// 512 bytes, lane L's 16 bytes at L * 16 = its B fragment of tile 2P (8 bytes) then of tile 2P + 1, so a warp
// loads one pair's fragments with one coalesced, bank-conflict-free 16-byte load per lane.
//
// Every layer's flavour (fp16 or fp8 MMA, per-output scales or none, hidden or last) is one of kLayerKinds, fixed at
// load time; the fast kernels run a copy of the layer code specialised for each, so a layer without scales does no
// multiply by 1 and no branch runs per value.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/number_formats.h"
#include "format/limits.h"

namespace nmc::cuda_detail {

constexpr int kWarpTexels = 32;
constexpr int kOutputStride = kMaxChannels + 1;  // floats per texel in the output staging (odd: no bank conflicts)

struct LevelDesc {
    const uint8_t* codes = nullptr;  // one byte per feature, (y * width + x) * F + j, 16-byte aligned
    int width = 0;
    int height = 0;
    float lo = 0;  // spec 6: value = lo + q * step
    float step = 0;
};

// A layer's kind: bit 0 fp16 MMA (else E4M3), bit 1 per-output scales, bit 2 the last layer (its outputs are the
// network's y; else the next layer's input).
constexpr int kKindFp16 = 1;
constexpr int kKindScaled = 2;
constexpr int kKindLast = 4;
constexpr int kLayerKinds = 8;
__host__ __device__ constexpr int layer_kind(bool fp16, bool scaled, bool last) {
    return (fp16 ? kKindFp16 : 0) | (scaled ? kKindScaled : 0) | (last ? kKindLast : 0);
}

struct LayerDesc {
    uint32_t weight_offset = 0;  // bytes into ModelDesc::weights (a multiple of 512)
    uint32_t param_offset = 0;   // floats into ModelDesc::params: n_pad scales (only when scaled), then n_pad biases
    int k_pad = 0;               // input width rounded up to the MMA's K chunk (16 fp16, 32 fp8)
    int n_pad = 0;               // output width rounded up to the next layer's K chunk (the last layer: 16)
    int kind = 0;                // layer_kind(...)
};

struct ModelDesc {
    LevelDesc levels[kMaxLevels];
    LayerDesc layers[kMaxLayers];
    const uint8_t* weights = nullptr;  // fragment-ordered weights of every layer
    const float* params = nullptr;     // scales and biases of every layer (float32, zero padding)
    float channel_lo[kMaxChannels] = {};
    float channel_range[kMaxChannels] = {};  // hi - lo (spec 8.7's subtract, done once)
    float channel_hi[kMaxChannels] = {};     // for the error sums' normalisation
    int width = 0;
    int height = 0;
    int mip_count = 0;
    int wrap = 1;
    int feature_count = 0;
    int level_count = 0;
    int channel_count = 0;
    int layer_count = 0;
    uint32_t weight_bytes = 0;
    uint32_t param_floats = 0;
    int binary16 = 0;  // spec 5.6: the pack's arithmetic is binary16 (the kernels' kBinary16 copies decode it)
};

// A query's position in a whole-mip decode: texel i of mip m.
struct GridJob {
    int mip_first = 0;
    int mip_end = 0;
    uint32_t tile_start[kMaxLevels + 1] = {};  // first tile (a warp's 32 texels; a warpgroup kernel's 64) of each
                                               // mip (relative to mip_first), then the end
    size_t out_offset[kMaxLevels] = {};        // floats: mip m's planes start here (in out and in ref)
    float* out = nullptr;                      // may be null (errors only)
    const float* ref = nullptr;                // reference planes in [0, 1] units, or null
    double* sse = nullptr;                     // [mip * 16 + c]
    unsigned long long* max_error = nullptr;   // [mip * 16 + c], a non-negative double's bits
};

// Which stages a kernel runs, and in which arithmetic. kStagesFull is the decoder of float32 packs and
// kStagesFullBinary16 of binary16 ones (spec 5.6); the others are timing variants for the benchmark
// (bench/cuda_decoder_bench.cu), whose outputs are not the spec's values.
constexpr int kStageSample = 1;    // spec 8.2-8.5 (else layer 0 gets a synthetic input that reads no latents)
constexpr int kStageNetwork = 2;   // the layers' MMAs (else the output is made from the layer-0 input)
constexpr int kStageEpilogue = 4;  // scale, bias and activation between MMAs (else only the E4M3 rounding)
constexpr int kStagesFull = kStageSample | kStageNetwork | kStageEpilogue;
// The binary16 arithmetic's activation (spec 8.6) and sampling (spec 6 and 8.3). On a float32 pack (the timing
// variants binary16_activation and binary16_activation_and_sampling) they time that arithmetic's op counts.
constexpr int kStageBinary16Activation = 8;
constexpr int kStageBinary16Sampling = 16;
constexpr int kStagesFullBinary16 = kStagesFull | kStageBinary16Activation | kStageBinary16Sampling;

// spec 2.1 rounding to an E4M3 code (satfinite is the spec's saturation; the H200 run verified it bit-exact).
__device__ __forceinline__ uint8_t fp8_code(float x) {
    return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}

// Two E4M3 codes, x.x in the low byte.
__device__ __forceinline__ uint32_t fp8x2_codes(float a, float b) {
    return static_cast<uint32_t>(__nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3));
}

// Two E4M3 codes (low byte first) as an fp16x2 register (exact).
__device__ __forceinline__ uint32_t fp8x2_to_half2(uint32_t codes) {
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes & 0xFFFFu), __NV_E4M3);
    return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

__device__ __forceinline__ void mma_fp16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // Turing has no m16n8k16 f16 MMA: the same product as two m16n8k8 (A columns 0-7 are a0, a1 with b0; columns
    // 8-15 are a2, a3 with b1, in the same fragment layout).
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(b0));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a2), "r"(a3), "r"(b1));
#else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

__device__ __forceinline__ void mma_fp8(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                        uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    // The host never selects the fp8 path below compute capability 8.9 (CudaDecoder::create checks).
    (void)c, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
    __trap();
#endif
}

// spec 8.3: the two texel coordinates x0 and x0 + 1, wrapped (non-negative x mod size) or clamped. Wrapping takes
// the integer division only for coordinates outside 0..size-1 (queries outside the unit square).
__device__ __forceinline__ void address_pair(int x0, int size, bool wrap, uint32_t& a, uint32_t& b) {
    if (wrap) {
        int r = x0;
        if (static_cast<unsigned>(r) >= static_cast<unsigned>(size)) {
            r %= size;
            if (r < 0) r += size;
        }
        a = static_cast<uint32_t>(r);
        b = r + 1 == size ? 0u : static_cast<uint32_t>(r + 1);
    } else {
        a = static_cast<uint32_t>(x0 < 0 ? 0 : (x0 >= size ? size - 1 : x0));
        b = static_cast<uint32_t>(x0 + 1 < 0 ? 0 : (x0 + 1 >= size ? size - 1 : x0 + 1));
    }
}

// spec 8.4: saw(t) = 2 * (t - floor(t)) - 1.
__device__ __forceinline__ float saw(float t) {
    return 2.0f * (t - floorf(t)) - 1.0f;
}

// spec 6: lo + q * step (a multiply, then an add). q < 256 converts exactly.
__device__ __forceinline__ float dequantise(float lo, float step, uint32_t q) {
    return lo + static_cast<float>(q) * step;
}

// spec 6, binary16 arithmetic: f16(q * f16(step) + f16(lo)), one HFMA rounding of the exact value (q < 256 is exact in
// binary16; spec 9 keeps the value far below 65504, so no saturation is needed).
__device__ __forceinline__ float dequantise_binary16(__half lo16, __half step16, uint32_t q) {
    return __half2float(__hfma(__ushort2half_rn(static_cast<unsigned short>(q)), step16, lo16));
}

// The bilinear weights of spec 8.3 and the dequantisation of one level, applied to 4-code words of the four texels.
// kBinary16: the binary16 arithmetic's (weights rounded to binary16, binary16 values; every product is then exact, so
// the sum below is its float32 sum in the order the CPU decoder takes).
template <bool kBinary16>
struct Bilinear {
    float w00, w10, w01, w11, lo, step;
    __half lo16, step16;  // kBinary16: f16(lo), f16(step)

    __device__ __forceinline__ float value(uint32_t q) const {
        if constexpr (kBinary16) {
            return dequantise_binary16(lo16, step16, q);
        } else {
            return dequantise(lo, step, q);
        }
    }
    // spec 8.3: value = ((w00 * a + w10 * b) + w01 * c) + w11 * d of the dequantised codes.
    __device__ __forceinline__ float feature(uint32_t qa, uint32_t qb, uint32_t qc, uint32_t qd) const {
        return ((w00 * value(qa) + w10 * value(qb)) + w01 * value(qc)) + w11 * value(qd);
    }
    // Four features (one byte each of the four words) as four E4M3 codes in one word.
    __device__ __forceinline__ uint32_t codes4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) const {
        float v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int s = 8 * k;
            v[k] = feature((a >> s) & 0xFFu, (b >> s) & 0xFFu, (c >> s) & 0xFFu, (d >> s) & 0xFFu);
        }
        return fp8x2_codes(v[0], v[1]) | (fp8x2_codes(v[2], v[3]) << 16);
    }
};

// spec 6, binary16 arithmetic, for two codes at once (the tensor-sampling variant's B operand): the code bytes
// `selector` picks from `word`, with 0x64, the exponent of 1024, above each (one byte permute), are 1024 + q in
// binary16; one HSUB2 makes them q exactly, and one HFMA2 gives f16(q * f16(step) + f16(lo)), rounded once.
__device__ __forceinline__ __half2 dequantise_half2(uint32_t word, uint32_t selector, __half2 step, __half2 lo) {
    const uint32_t biased = __byte_perm(word, 0x64646464u, selector);
    const __half2 q = __hsub2(*reinterpret_cast<const __half2*>(&biased), __float2half2_rn(1024.0f));
    return __hfma2(q, step, lo);
}

// spec 8.2 on a level: px = u * w_k - 0.5 (a multiply, then a subtract); x0 = floor(px); fx = px - x0; likewise y.
struct LevelPosition {
    float px, py, x0, y0, fx, fy;
};

__device__ __forceinline__ LevelPosition level_position(const LevelDesc& l, float u, float v) {
    LevelPosition p;
    p.px = u * static_cast<float>(l.width) - 0.5f;
    p.py = v * static_cast<float>(l.height) - 0.5f;
    p.x0 = floorf(p.px);
    p.y0 = floorf(p.py);
    p.fx = p.px - p.x0;
    p.fy = p.py - p.y0;
    return p;
}

// spec 8.2-8.3 for one level: writes the E4M3 codes of the F sampled features to row[0 .. F-1] (spec 8.6 rounds
// every layer input; `row` is 4-byte aligned, and 16-byte aligned when F is 16) and returns px, py. kBinary16: in the
// binary16 arithmetic (spec 6 and 8.3).
template <bool kBinary16 = false>
__device__ __forceinline__ float2 sample_level(const LevelDesc& l, int f, bool wrap, float u, float v, uint8_t* row) {
    const LevelPosition p = level_position(l, u, v);
    uint32_t xa, xb, ya, yb;
    address_pair(static_cast<int>(p.x0), l.width, wrap, xa, xb);
    address_pair(static_cast<int>(p.y0), l.height, wrap, ya, yb);
    // Byte offsets fit 32 bits: (y * w + x) * F < 16384 * 16384 * 16 = 2^32 (spec 9).
    const uint32_t w = static_cast<uint32_t>(l.width);
    const uint32_t fu = static_cast<uint32_t>(f);
    const uint8_t* a = l.codes + (ya * w + xa) * fu;
    const uint8_t* b = l.codes + (ya * w + xb) * fu;
    const uint8_t* c = l.codes + (yb * w + xa) * fu;
    const uint8_t* d = l.codes + (yb * w + xb) * fu;
    // spec 8.3: w00 = (1 - fx) * (1 - fy); w10 = fx * (1 - fy); w01 = (1 - fx) * fy; w11 = fx * fy.
    const float gx = 1.0f - p.fx;
    const float gy = 1.0f - p.fy;
    // Binary16 arithmetic: each float32 weight rounded once to binary16, the level's f16(lo) and f16(step).
    const auto weight = [](float w) { return kBinary16 ? __half2float(__float2half_rn(w)) : w; };
    const Bilinear<kBinary16> bl{weight(gx * gy),         weight(p.fx * gy),         weight(gx * p.fy),
                                 weight(p.fx * p.fy),     l.lo,                      l.step,
                                 __float2half_rn(l.lo),   __float2half_rn(l.step)};
    if (f == 16) {
        // One 16-byte load per texel (rows start at multiples of 16 in a 16-byte aligned array).
        const uint4 wa = __ldg(reinterpret_cast<const uint4*>(a));
        const uint4 wb = __ldg(reinterpret_cast<const uint4*>(b));
        const uint4 wc = __ldg(reinterpret_cast<const uint4*>(c));
        const uint4 wd = __ldg(reinterpret_cast<const uint4*>(d));
        *reinterpret_cast<uint4*>(row) =
            make_uint4(bl.codes4(wa.x, wb.x, wc.x, wd.x), bl.codes4(wa.y, wb.y, wc.y, wd.y),
                       bl.codes4(wa.z, wb.z, wc.z, wd.z), bl.codes4(wa.w, wb.w, wc.w, wd.w));
    } else if ((f & 3) == 0) {
        // Four codes per 32-bit load (rows start at multiples of F, a multiple of 4, in a 4-byte aligned array).
        for (int j = 0; j < f; j += 4) {
            *reinterpret_cast<uint32_t*>(row + j) = bl.codes4(
                __ldg(reinterpret_cast<const uint32_t*>(a + j)), __ldg(reinterpret_cast<const uint32_t*>(b + j)),
                __ldg(reinterpret_cast<const uint32_t*>(c + j)), __ldg(reinterpret_cast<const uint32_t*>(d + j)));
        }
    } else {
        for (int j = 0; j < f; ++j)
            row[j] = fp8_code(bl.feature(__ldg(a + j), __ldg(b + j), __ldg(c + j), __ldg(d + j)));
    }
    return make_float2(p.px, p.py);
}

// spec 8.4 pair k = 0 .. 5 as two E4M3 codes (low byte first), from level k0's (px, py): octave o = k / 2 with
// s = 2^o (exact), phase 0 (k even) or 0.25: saw(px*s + phase), saw(py*s + phase). Adding a phase of 0 changes
// nothing (x + 0 = x, and saw(-0) = saw(+0)), so every pair runs the same operations.
__device__ __forceinline__ uint32_t position_pair_codes(float2 p, int k) {
    const float s = static_cast<float>(1 << (k >> 1));
    const float phase = (k & 1) ? 0.25f : 0.0f;
    return fp8x2_codes(saw(p.x * s + phase), saw(p.y * s + phase));
}

// position_pair_codes at pe[2k], pe[2k + 1] (pe = row + 2F, 2-byte aligned).
__device__ __forceinline__ void position_pair(float2 p, int k, uint8_t* pe) {
    reinterpret_cast<uint16_t*>(pe)[k] = static_cast<uint16_t>(position_pair_codes(p, k));
}

// spec 8.4-8.5: the six pairs of position_pair, then x[2F+12] = m * 0.25 at pe[12].
__device__ __forceinline__ void position_inputs(float2 p, int mip, uint8_t* pe) {
#pragma unroll
    for (int k = 0; k < 6; ++k) position_pair(p, k, pe);
    pe[12] = fp8_code(static_cast<float>(mip) * 0.25f);
}

// spec 8.1-8.5 and the E4M3 rounding of 8.6: layer 0's input of query (u, v, mip) as E4M3 codes in
// row[0 .. k_pad-1] (zero beyond 2F + 13). `row` is 16-byte aligned. kBinary16: see sample_level.
template <bool kBinary16 = false>
__device__ void assemble_input(const ModelDesc& md, float u, float v, int mip, uint8_t* row) {
    const int f = md.feature_count;
    const int k0 = mip < md.level_count - 2 ? mip : md.level_count - 2;
    const bool wrap = md.wrap != 0;
    // Zero first (the positions past 2F + 13 are zero inputs), then the values over it.
    const int k_pad = md.layers[0].k_pad;
    for (int i = 0; i < k_pad; i += 16) *reinterpret_cast<uint4*>(row + i) = make_uint4(0u, 0u, 0u, 0u);
    const float2 p = sample_level<kBinary16>(md.levels[k0], f, wrap, u, v, row);
    sample_level<kBinary16>(md.levels[k0 + 1], f, wrap, u, v, row + f);
    position_inputs(p, mip, row + 2 * f);
}

// A timing variant's layer-0 input without the latents: E4M3 codes of magnitude <= 0.5 that vary by lane and tile
// (no zeros, which could run faster than real data), zero beyond 2F + 13 like a real input.
__device__ __forceinline__ void synthetic_input(const ModelDesc& md, uint32_t seed, uint8_t* row) {
    const int used = network_input_count(md.feature_count);
    for (int i = 0; i < md.layers[0].k_pad; i += 4) {
        uint32_t word = 0;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const uint32_t code =
                i + k < used ? ((seed * 2654435761u + static_cast<uint32_t>(i + k) * 40503u) >> 24) & 0xAFu : 0u;
            word |= code << (8 * k);
        }
        *reinterpret_cast<uint32_t*>(row + i) = word;
    }
}

// spec 8.6: hgelu_clamped. t = min(max(y * 0.333333343 + 0.5, 0), 1) (a multiply, then an add); a = min(y, 3) * t.
// __saturatef is that clamp for every finite value.
__device__ __forceinline__ float hgelu_clamped(float y) {
    const float t = __saturatef(y * kOneThirdFloat32 + 0.5f);
    return fminf(y, 3.0f) * t;
}

// spec 2.2's f16 of two float32 values, saturating to +-65504 (satfinite), y0 in the low half.
__device__ __forceinline__ __half2 half2_satfinite(float y0, float y1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t bits;
    asm("cvt.rn.satfinite.f16x2.f32 %0, %1, %2;\n" : "=r"(bits) : "f"(y1), "f"(y0));  // the first source: high half
    return *reinterpret_cast<const __half2*>(&bits);
#else
    return __floats2half2_rn(fminf(fmaxf(y0, -65504.0f), 65504.0f), fminf(fmaxf(y1, -65504.0f), 65504.0f));
#endif
}

// spec 8.6, binary16 arithmetic, for a pair, and the E4M3 codes of the results (low byte first): h = f16(y)
// (satfinite; y is never NaN), t = min(max(f16(h * c + 0.5), 0), 1) (one HFMA2.SAT: one rounding of the exact value,
// then the clamp), a = f16(min(h, 3) * t) (one HMUL2), then fp8(a), the next layer's input.
__device__ __forceinline__ uint32_t hgelu_clamped_binary16_codes(float y0, float y1) {
    const __half2 h = half2_satfinite(y0, y1);
    const __half2 t = __hfma2_sat(h, __float2half2_rn(kOneThirdBinary16), __float2half2_rn(0.5f));
    const __half2 a = __hmul2(__hmin2(h, __float2half2_rn(3.0f)), t);
    return static_cast<uint32_t>(__nv_cvt_halfraw2_to_fp8x2(static_cast<__half2_raw>(a), __NV_SATFINITE, __NV_E4M3));
}

// One 16-byte B-fragment load: LDS.128 from shared memory, or a read-only global load.
template <bool kShared>
__device__ __forceinline__ uint4 load_fragment(const uint4* p) {
    if constexpr (kShared) {
        return *p;
    } else {
        return __ldg(p);
    }
}

// Four E4M3 codes of a staged row in the packed form between layers: row[col], row[col + 1] (low half) and
// row[col + 8], row[col + 9] (high half).
__device__ __forceinline__ uint32_t staged_codes(const uint8_t* row, int col) {
    return static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(row + col)) |
           (static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(row + col + 8)) << 16);
}

// One layer of the cooperative matmul for the warp's kMTiles m16 tiles: in = its input in the packed form (see the top
// of this file), out = the next layer's input in the same form (hidden layers, kLast false) or result = its y (the
// last layer, kLast true). kKind >= 0: the layer's kind (layer.kind), fixed at compile time, and the layer padded to
// kMaxK inputs and kMaxK outputs (16 for the last layer: the fast kernels' models), so the layer is straight-line
// code that ptxas can interleave (MMAs of one pair of n8 tiles with the epilogue of the previous); -1: kind and padded
// widths read at run time (one copy of the code).
template <int kMaxK, int kMTiles, int kKind, bool kLast, bool kShared, int kStages>
__device__ __forceinline__ void run_layer(const LayerDesc& layer, const uint8_t* weights, const float* params,
                                          const uint32_t (&in)[kMTiles][kMaxK / 8], uint32_t (&out)[kMTiles][kMaxK / 8],
                                          float (&result)[kMTiles][2][4]) {
    constexpr bool kFixed = kKind >= 0;
    static_assert(!kFixed || ((kKind & kKindLast) != 0) == kLast, "kLast must match the kind");
    const int kind = kFixed ? kKind : layer.kind;
    const bool fp16 = (kind & kKindFp16) != 0;
    const bool scaled = (kind & kKindScaled) != 0;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int t = lane & 3;
    const uint8_t* w = weights + layer.weight_offset;
    const float* scale = params + layer.param_offset;
    const float* bias = scaled ? scale + layer.n_pad : scale;  // n_pad floats of scales first
    const int chunks = kFixed ? (fp16 ? kMaxK / 16 : kMaxK / 32) : (fp16 ? layer.k_pad / 16 : layer.k_pad / 32);
    const int n_pad = kFixed ? (kLast ? 16 : kMaxK) : layer.n_pad;
    // Whether this layer runs spec 8.6's bias (the timing variants without the epilogue leave it out of hidden layers).
    const bool with_bias = (kStages & kStageEpilogue) || kLast;
    if (!kFixed && !kLast) {
#pragma unroll
        for (int m = 0; m < kMTiles; ++m)
#pragma unroll
            for (int r = 0; r < kMaxK / 8; ++r) out[m][r] = 0u;  // past n_pad: zero inputs of the next layer
    }
    // The fp16 MMA's A fragments, converted from the packed codes once for the whole layer.
    uint32_t a16[kMTiles][kMaxK / 4];
    if (fp16) {
#pragma unroll
        for (int m = 0; m < kMTiles; ++m)
#pragma unroll
            for (int kc = 0; kc < kMaxK / 16; ++kc) {
                if (kc >= chunks) break;
                a16[m][4 * kc + 0] = fp8x2_to_half2(in[m][2 * kc]);            // row g, columns 2t, 2t+1
                a16[m][4 * kc + 1] = fp8x2_to_half2(in[m][2 * kc + 1]);        // row g+8, columns 2t, 2t+1
                a16[m][4 * kc + 2] = fp8x2_to_half2(in[m][2 * kc] >> 16);      // row g, columns 2t+8, 2t+9
                a16[m][4 * kc + 3] = fp8x2_to_half2(in[m][2 * kc + 1] >> 16);  // row g+8, columns 2t+8, 2t+9
            }
    }
#pragma unroll
    for (int pair = 0; pair < kMaxK / 16; ++pair) {
        if (pair * 16 >= n_pad) break;
        // spec 8.6: a layer without scales starts its float32 sum at the bias (bias[n] is a term of the sum, in any
        // order); a layer with scales sums the products alone and adds the bias after the multiply.
        float acc[kMTiles][2][4];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int n = pair * 16 + 8 * j + 2 * t;
            const float2 start =
                with_bias && !scaled ? *reinterpret_cast<const float2*>(bias + n) : make_float2(0.0f, 0.0f);
#pragma unroll
            for (int m = 0; m < kMTiles; ++m)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[m][j][e] = (e & 1) ? start.y : start.x;
        }
        const uint4* frag = reinterpret_cast<const uint4*>(w) + static_cast<size_t>(pair) * chunks * 32 + lane;
        if (fp16) {
#pragma unroll
            for (int kc = 0; kc < kMaxK / 16; ++kc) {
                if (kc >= chunks) break;
                const uint4 b = load_fragment<kShared>(frag + kc * 32);
#pragma unroll
                for (int m = 0; m < kMTiles; ++m) {
                    const uint32_t* a = &a16[m][4 * kc];
                    mma_fp16(acc[m][0], a[0], a[1], a[2], a[3], b.x, b.y);
                    mma_fp16(acc[m][1], a[0], a[1], a[2], a[3], b.z, b.w);
                }
            }
        } else {
#pragma unroll
            for (int kc = 0; kc < kMaxK / 32; ++kc) {
                if (kc >= chunks) break;
                const uint4 b = load_fragment<kShared>(frag + kc * 32);
#pragma unroll
                for (int m = 0; m < kMTiles; ++m) {
                    const uint32_t* a = &in[m][4 * kc];
                    mma_fp8(acc[m][0], a[0], a[1], a[2], a[3], b.x, b.y);
                    mma_fp8(acc[m][1], a[0], a[1], a[2], a[3], b.z, b.w);
                }
            }
        }
        // spec 8.6: y = acc * scale + bias for a layer with scales (a multiply, then an add), then for hidden layers
        // the activation and the E4M3 rounding of the next layer's input, packed (see the top of this file).
        float act[kMTiles][2][4];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int n = pair * 16 + 8 * j + 2 * t;
            const bool add_after = with_bias && scaled;
            const float2 bb = add_after ? *reinterpret_cast<const float2*>(bias + n) : make_float2(0.0f, 0.0f);
            const float2 s = add_after ? *reinterpret_cast<const float2*>(scale + n) : make_float2(1.0f, 1.0f);
#pragma unroll
            for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    float y = acc[m][j][e];
                    if (add_after) y = y * ((e & 1) ? s.y : s.x) + ((e & 1) ? bb.y : bb.x);
                    if (kLast) {
                        result[m][j][e] = y;
                    } else {
                        const bool float_activation =
                            (kStages & kStageEpilogue) && !(kStages & kStageBinary16Activation);
                        act[m][j][e] = float_activation ? hgelu_clamped(y) : y;
                    }
                }
            }
        }
        if constexpr (!kLast && (kStages & kStageBinary16Activation) != 0) {
#pragma unroll
            for (int m = 0; m < kMTiles; ++m) {
                out[m][2 * pair] = hgelu_clamped_binary16_codes(act[m][0][0], act[m][0][1]) |
                                   (hgelu_clamped_binary16_codes(act[m][1][0], act[m][1][1]) << 16);
                out[m][2 * pair + 1] = hgelu_clamped_binary16_codes(act[m][0][2], act[m][0][3]) |
                                       (hgelu_clamped_binary16_codes(act[m][1][2], act[m][1][3]) << 16);
            }
        } else if (!kLast) {
#pragma unroll
            for (int m = 0; m < kMTiles; ++m) {
                out[m][2 * pair] =
                    fp8x2_codes(act[m][0][0], act[m][0][1]) | (fp8x2_codes(act[m][1][0], act[m][1][1]) << 16);
                out[m][2 * pair + 1] =
                    fp8x2_codes(act[m][0][2], act[m][0][3]) | (fp8x2_codes(act[m][1][2], act[m][1][3]) << 16);
            }
        }
    }
}

// run_layer with kKind = kind, found among the kinds kFirst .. kLayerKinds - 1 of hidden layers (kLast false) or of
// last layers (kLast true): one specialised copy of the layer per kind.
template <int kMaxK, int kMTiles, bool kLast, bool kShared, int kStages, int kFirst = 0>
__device__ __forceinline__ void run_layer_of_kind(int kind, const LayerDesc& layer, const uint8_t* weights,
                                                  const float* params, const uint32_t (&in)[kMTiles][kMaxK / 8],
                                                  uint32_t (&out)[kMTiles][kMaxK / 8], float (&result)[kMTiles][2][4]) {
    if constexpr (kFirst < kLayerKinds) {
        if constexpr (((kFirst & kKindLast) != 0) == kLast) {
            if (kind == kFirst) {
                run_layer<kMaxK, kMTiles, kFirst, kLast, kShared, kStages>(layer, weights, params, in, out, result);
                return;
            }
        }
        run_layer_of_kind<kMaxK, kMTiles, kLast, kShared, kStages, kFirst + 1>(kind, layer, weights, params, in, out,
                                                                               result);
    }
}

// The cooperative matmul chain: every layer of the network for the warp's m16 tiles mbase .. mbase + kMTiles - 1,
// whose layer-0 inputs are rows of `staging` (E4M3 codes, `row_stride` bytes apart, texel r at row r).
// result[m][j][e]: the last layer's y (spec 8.6) for channel 8j + 2t + (e & 1) of texel 16(mbase+m) + g + 8(e >> 1).
// kMaxK bounds every padded width (registers: kMTiles * kMaxK / 4 words of packed input and output); kSpecialise:
// one copy of the layer code per layer kind (else one generic copy). All lanes must call it together (mma.sync);
// every condition below is uniform across the warp.
template <int kMaxK, int kMTiles, bool kShared, bool kSpecialise, int kStages>
__device__ __forceinline__ void run_network(const ModelDesc& md, const uint8_t* weights, const float* params,
                                            const uint8_t* staging, int row_stride, int mbase,
                                            float (&result)[kMTiles][2][4]) {
    constexpr int kRegs = kMaxK / 8;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
    uint32_t in[kMTiles][kRegs];
    uint32_t out[kMTiles][kRegs];

    // Layer 0's input from the staged rows, packed (zero past k_pad).
    const int k_pad0 = md.layers[0].k_pad;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
        const uint8_t* row_g = staging + (16 * (mbase + m) + g) * row_stride;
        const uint8_t* row_g8 = row_g + 8 * row_stride;
#pragma unroll
        for (int pair = 0; pair < kMaxK / 16; ++pair) {
            const bool used = pair * 16 < k_pad0;
            in[m][2 * pair] = used ? staged_codes(row_g, pair * 16 + 2 * t) : 0u;
            in[m][2 * pair + 1] = used ? staged_codes(row_g8, pair * 16 + 2 * t) : 0u;
        }
    }

    // The hidden layers, then the last one (two dispatches, so result is not live through the loop).
    for (int l = 0; l + 1 < md.layer_count; ++l) {
        const LayerDesc& layer = md.layers[l];
        if constexpr (kSpecialise) {
            run_layer_of_kind<kMaxK, kMTiles, false, kShared, kStages>(layer.kind, layer, weights, params, in, out,
                                                                       result);
        } else {
            run_layer<kMaxK, kMTiles, -1, false, kShared, kStages>(layer, weights, params, in, out, result);
        }
#pragma unroll
        for (int m = 0; m < kMTiles; ++m)
#pragma unroll
            for (int r = 0; r < kRegs; ++r) in[m][r] = out[m][r];
    }
    const LayerDesc& last = md.layers[md.layer_count - 1];
    if constexpr (kSpecialise) {
        run_layer_of_kind<kMaxK, kMTiles, true, kShared, kStages>(last.kind, last, weights, params, in, out, result);
    } else {
        run_layer<kMaxK, kMTiles, -1, true, kShared, kStages>(last, weights, params, in, out, result);
    }
}

// Host-side twin of the fp8 K permutation above: position p of a k32 chunk carries input index perm(p).
__host__ __device__ constexpr int fp8_chunk_permutation(int p) {
    return (p & 16) + 2 * ((p & 15) >> 2) + (p & 1) + 8 * ((p >> 1) & 1);
}

}  // namespace nmc::cuda_detail
