// The AVX-512 BF16 kernel: spec 8.1-8.7 for a tile of 16 texel queries, one texel per lane. Each layer is a
// (16 texels x I) by (I x N) product with vdpbf16ps: E4M3 and Int8 weights and E4M3 activations are exact in
// bf16 and their products exact in float32, so the result differs from the spec's maths only by the order of
// each float32 sum, which the spec leaves free. vdpbf16ps treats denormal inputs and results as zero; none occur:
// E4M3 values are at least 2^-9 and products and partial sums are multiples of 2^-18, far above 2^-126.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "decoder/cpu/cpu_features.h"
#include "decoder/cpu/decoder_model.h"

// Only the code below is compiled for AVX-512: the headers above keep the build's baseline ISA, so an inline
// function they define can never reach the portable path in an AVX-512 copy (the linker keeps one copy of each).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")
#endif

namespace nmc::cpu_detail {
namespace {

// spec 2.1 rounding to E4M3 of 16 floats, the same integer operations as the portable kernel's round_to_fp8.
inline __m512 round_to_fp8(__m512 x) {
    const __m512i b = _mm512_castps_si512(x);
    const __m512i magnitude = _mm512_and_si512(b, _mm512_set1_epi32(0x7FFFFFFF));
    // normal: keep 3 mantissa bits, ties to even.
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(magnitude, 20), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(magnitude, _mm512_set1_epi32(0x7FFFF)), lsb);
    r = _mm512_and_si512(r, _mm512_set1_epi32(~0xFFFFF));
    // below 2^-6: multiples of 2^-9, ties to even, by adding and subtracting 2^14.
    const __m512 big = _mm512_set1_ps(16384.0f);
    const __m512 small = _mm512_sub_ps(_mm512_add_ps(_mm512_castsi512_ps(magnitude), big), big);
    r = _mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(magnitude, _mm512_set1_epi32(0x3C800000)), r,
                                _mm512_castps_si512(small));
    // above 448, infinity included: 448.
    r = _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x43E00000)), r,
                                _mm512_set1_epi32(0x43E00000));
    r = _mm512_or_si512(r, _mm512_and_si512(b, _mm512_set1_epi32(static_cast<int>(0x80000000u))));
    // NaN: E4M3 0x7F, the positive quiet NaN.
    r = _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7F800000)), r,
                                _mm512_set1_epi32(0x7FC00000));
    return _mm512_castsi512_ps(r);
}

// Two vectors of bf16-exact floats (inputs 2p and 2p+1 of 16 texels) as bf16 pairs, lane t = (hi << 16) | lo:
// the upper halves of the float32 bits, since the lower halves are zero.
inline __m512i pack_pairs(__m512 lo, __m512 hi) {
    return _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(hi), _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))),
                           _mm512_srli_epi32(_mm512_castps_si512(lo), 16));
}

// spec 8.6: t = min(max(y * 0.333333343 + 0.5, 0), 1); a = min(y, 3) * t. minps/maxps as spec_min/spec_max.
inline __m512 hgelu_clamped(__m512 y) {
    const __m512 t =
        _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(_mm512_mul_ps(y, _mm512_set1_ps(kOneThirdFloat32)), _mm512_set1_ps(0.5f)),
                                    _mm512_setzero_ps()),
                      _mm512_set1_ps(1.0f));
    return _mm512_mul_ps(_mm512_min_ps(y, _mm512_set1_ps(3.0f)), t);
}

// spec 2.2: the binary16 value nearest each float32 lane, ties to even (vcvtps2ph), as float32.
inline __m512 round_to_fp16(__m512 x) {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// spec 8.6, binary16 arithmetic, as reference_math's hgelu_clamped_binary16 (see kernel_avx2.cpp's twin for why the
// round-to-odd step makes the two roundings of t one).
inline __m512 hgelu_clamped_binary16(__m512 y) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512 c = _mm512_set1_ps(kOneThirdBinary16);
    const __m512 h =
        round_to_fp16(_mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(-kFp16Max)), _mm512_set1_ps(kFp16Max)));
    const __m512 r = _mm512_fmadd_ps(h, c, half);
    const __m512 residual = _mm512_fmadd_ps(h, c, _mm512_sub_ps(half, r));
    const __mmask16 positive = _mm512_cmp_ps_mask(r, zero, _CMP_GT_OQ);
    const __mmask16 above = positive & _mm512_cmp_ps_mask(residual, zero, _CMP_LT_OQ);
    const __mmask16 inexact = positive & _mm512_cmp_ps_mask(residual, zero, _CMP_NEQ_OQ);
    __m512i bits = _mm512_castps_si512(r);
    bits = _mm512_mask_sub_epi32(bits, above, bits, _mm512_set1_epi32(1));
    bits = _mm512_mask_or_epi32(bits, inexact, bits, _mm512_set1_epi32(1));
    const __m512 t = _mm512_min_ps(_mm512_max_ps(round_to_fp16(_mm512_castsi512_ps(bits)), zero), _mm512_set1_ps(1.0f));
    return round_to_fp16(_mm512_mul_ps(_mm512_min_ps(h, _mm512_set1_ps(3.0f)), t));
}

#if NMC_HAVE_AVX512FP16
// The binary16 activation in AVX512-FP16's binary16 arithmetic (avx512fp16_supported()): these functions alone are
// compiled for it, so that the rest of the kernel stays runnable on AVX-512 CPUs without it.
#define NMC_TARGET_AVX512FP16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx512fp16")))

// spec 8.6, binary16 arithmetic, as reference_math's hgelu_clamped_binary16: every step is one binary16 instruction
// that rounds once, as the spec writes it (vfmadd rounds the exact h * c + 0.5; binary16 instructions keep
// subnormals whatever MXCSR says).
NMC_TARGET_AVX512FP16 inline __m512 hgelu_clamped_binary16_fp16(__m512 y) {
    const __m256h h =
        _mm512_cvtxps_ph(_mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(-kFp16Max)), _mm512_set1_ps(kFp16Max)));
    const __m256h t = _mm256_min_ph(
        _mm256_max_ph(_mm256_fmadd_ph(h, _mm256_set1_ph(kOneThirdBinary16), _mm256_set1_ph(0.5f)), _mm256_setzero_ph()),
        _mm256_set1_ph(1.0f));
    return _mm512_cvtxph_ps(_mm256_mul_ph(_mm256_min_ph(h, _mm256_set1_ph(3.0f)), t));
}

// The next layer's input from 16 outputs y[j * 16 + t] of 16 texels (j = 0 .. 15): the activation, then E4M3 (8.6),
// packed as bf16 pairs into next[(j / 2) * 16 + t]. Called once a block of outputs, after the block's accumulators
// are dead (a call while they live would spill them).
NMC_TARGET_AVX512FP16 __attribute__((noinline)) void activate_block_fp16(const float* y, uint32_t* next) {
#pragma GCC unroll 8
    for (int j = 0; j < kTileTexels; j += 2) {
        const __m512 a0 = hgelu_clamped_binary16_fp16(_mm512_load_ps(y + j * kTileTexels));
        const __m512 a1 = hgelu_clamped_binary16_fp16(_mm512_load_ps(y + (j + 1) * kTileTexels));
        _mm512_store_si512(next + j / 2 * kTileTexels, pack_pairs(round_to_fp8(a0), round_to_fp8(a1)));
    }
}
#endif

// spec 8.7: lo + (hi - lo) * min(max(o, 0), 1).
inline __m512 output_transform(__m512 o, float lo, float hi) {
    const __m512 clamped = _mm512_min_ps(_mm512_max_ps(o, _mm512_setzero_ps()), _mm512_set1_ps(1.0f));
    return _mm512_add_ps(_mm512_set1_ps(lo), _mm512_mul_ps(_mm512_set1_ps(hi - lo), clamped));
}

inline __m512bh as_bf16(__m512i v) {
    return reinterpret_cast<__m512bh&>(v);
}

// spec 8.2-8.3 for one level and 16 texels: the sample position, the four taps' first-code indices and the
// bilinear weights. The same operations as reference_math's sample_position / address_texel / bilinear_weights.
struct LevelTaps {
    __m512 px, py;
    __m512i a, b, c, d;  // index of feature 0 of taps (x0, y0), (x0+1, y0), (x0, y0+1), (x0+1, y0+1)
    __m512 w00, w10, w01, w11;
};

// Wrapped or clamped coordinates of x0 and x0 + 1 for x0 in [-1, size - 1] (the only case handled here).
inline void address_pair(__m512i x0, int size, AddressMode mode, __m512i& first, __m512i& second) {
    const __m512i x1 = _mm512_add_epi32(x0, _mm512_set1_epi32(1));
    const __m512i last = _mm512_set1_epi32(size - 1);
    if (mode == AddressMode::wrap) {
        first = _mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(x0, _mm512_setzero_si512()), x0, last);
        second = _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(x1, last), x1, _mm512_setzero_si512());
    } else {
        first = _mm512_max_epi32(x0, _mm512_setzero_si512());
        second = _mm512_min_epi32(x1, last);
    }
}

// False if a lane's x0 or y0 lies outside [-1, size - 1] (coordinates outside [0, 1] and a bit): the caller
// then samples with the scalar reference code, which handles any coordinate.
inline bool level_taps(const LatentLevelView& level, AddressMode mode, __m512 u, __m512 v, LevelTaps& taps) {
    const __m512 half = _mm512_set1_ps(0.5f);
    taps.px = _mm512_sub_ps(_mm512_mul_ps(u, _mm512_set1_ps(static_cast<float>(level.width))), half);
    taps.py = _mm512_sub_ps(_mm512_mul_ps(v, _mm512_set1_ps(static_cast<float>(level.height))), half);
    const __m512 fx0 = _mm512_roundscale_ps(taps.px, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 fy0 = _mm512_roundscale_ps(taps.py, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 minus_one = _mm512_set1_ps(-1.0f);
    const __mmask16 inside = _mm512_cmp_ps_mask(fx0, minus_one, _CMP_GE_OQ) &
                             _mm512_cmp_ps_mask(fx0, _mm512_set1_ps(static_cast<float>(level.width - 1)), _CMP_LE_OQ) &
                             _mm512_cmp_ps_mask(fy0, minus_one, _CMP_GE_OQ) &
                             _mm512_cmp_ps_mask(fy0, _mm512_set1_ps(static_cast<float>(level.height - 1)), _CMP_LE_OQ);
    if (inside != 0xFFFF) return false;
    __m512i xa, xb, ya, yb;
    address_pair(_mm512_cvtps_epi32(fx0), level.width, mode, xa, xb);
    address_pair(_mm512_cvtps_epi32(fy0), level.height, mode, ya, yb);
    const __m512i w = _mm512_set1_epi32(level.width);
    const __m512i f = _mm512_set1_epi32(level.feature_count);
    const __m512i row_a = _mm512_mullo_epi32(ya, w);
    const __m512i row_b = _mm512_mullo_epi32(yb, w);
    taps.a = _mm512_mullo_epi32(_mm512_add_epi32(row_a, xa), f);
    taps.b = _mm512_mullo_epi32(_mm512_add_epi32(row_a, xb), f);
    taps.c = _mm512_mullo_epi32(_mm512_add_epi32(row_b, xa), f);
    taps.d = _mm512_mullo_epi32(_mm512_add_epi32(row_b, xb), f);
    const __m512 fx = _mm512_sub_ps(taps.px, fx0);
    const __m512 fy = _mm512_sub_ps(taps.py, fy0);
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 gx = _mm512_sub_ps(one, fx);
    const __m512 gy = _mm512_sub_ps(one, fy);
    taps.w00 = _mm512_mul_ps(gx, gy);
    taps.w10 = _mm512_mul_ps(fx, gy);
    taps.w01 = _mm512_mul_ps(gx, fy);
    taps.w11 = _mm512_mul_ps(fx, fy);
    if (level.arithmetic == Arithmetic::binary16) {  // each weight rounded once to binary16
        taps.w00 = round_to_fp16(taps.w00);
        taps.w10 = round_to_fp16(taps.w10);
        taps.w01 = round_to_fp16(taps.w01);
        taps.w11 = round_to_fp16(taps.w11);
    }
    return true;
}

// spec 6: the value of 16 codes; through the level's value table (in a register) up to 4 bits; for 8 bits,
// lo + q * step in the float32 arithmetic (how the table's entries were computed), else a gather from the table.
inline __m512 dequantise(const ModelLevel& level, Arithmetic arithmetic, __m512 table, __m512i q) {
    if (level.bits <= 4) return _mm512_permutexvar_ps(q, table);
    if (arithmetic == Arithmetic::binary16) return _mm512_i32gather_ps(q, level.values.data(), 4);
    return _mm512_add_ps(_mm512_set1_ps(level.lo), _mm512_mul_ps(_mm512_cvtepi32_ps(q), _mm512_set1_ps(level.step)));
}

// spec 8.3: the F features of one level for 16 texels into x[(first + j) * 16 + t]. Each 32-bit gather fetches
// four consecutive codes of a tap (the level's codes are padded so the last one stays in bounds).
inline void sample_level(const ModelLevel& level, int feature_count, Arithmetic arithmetic, const LevelTaps& taps,
                         int first, float* x) {
    const unsigned entries = 1u << std::min(level.bits, 4);
    const __m512 table = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << entries) - 1u), level.values.data());
    const __m512i byte = _mm512_set1_epi32(0xFF);
    for (int g = 0; g < feature_count; g += 4) {
        const __m512i offset = _mm512_set1_epi32(g);
        __m512i qa = _mm512_i32gather_epi32(_mm512_add_epi32(taps.a, offset), level.codes.data(), 1);
        __m512i qb = _mm512_i32gather_epi32(_mm512_add_epi32(taps.b, offset), level.codes.data(), 1);
        __m512i qc = _mm512_i32gather_epi32(_mm512_add_epi32(taps.c, offset), level.codes.data(), 1);
        __m512i qd = _mm512_i32gather_epi32(_mm512_add_epi32(taps.d, offset), level.codes.data(), 1);
        for (int j = g; j < std::min(g + 4, feature_count); ++j) {
            const __m512 a = dequantise(level, arithmetic, table, _mm512_and_si512(qa, byte));
            const __m512 b = dequantise(level, arithmetic, table, _mm512_and_si512(qb, byte));
            const __m512 c = dequantise(level, arithmetic, table, _mm512_and_si512(qc, byte));
            const __m512 d = dequantise(level, arithmetic, table, _mm512_and_si512(qd, byte));
            // value = ((w00 * a + w10 * b) + w01 * c) + w11 * d
            const __m512 value =
                _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(taps.w00, a), _mm512_mul_ps(taps.w10, b)),
                                            _mm512_mul_ps(taps.w01, c)),
                              _mm512_mul_ps(taps.w11, d));
            _mm512_store_ps(x + (first + j) * kTileTexels, value);
            qa = _mm512_srli_epi32(qa, 8);
            qb = _mm512_srli_epi32(qb, 8);
            qc = _mm512_srli_epi32(qc, 8);
            qd = _mm512_srli_epi32(qd, 8);
        }
    }
}

// spec 8.4: saw(t) = 2 * (t - floor(t)) - 1.
inline __m512 saw(__m512 t) {
    const __m512 frac = _mm512_sub_ps(t, _mm512_roundscale_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    return _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(2.0f), frac), _mm512_set1_ps(1.0f));
}

// spec 8.1-8.5 for 16 queries of one mip at once, into x[i * 16 + t]: the same operations as reference_math's
// assemble_input, lane by lane. False (x unspecified) where level_taps declines a lane.
bool assemble_input_x16(const Model& model, const TexelQuery* queries, float* x) {
    alignas(64) float u[kTileTexels];
    alignas(64) float v[kTileTexels];
    const int mip = queries[0].mip;
    for (int t = 0; t < kTileTexels; ++t) {
        if (queries[t].mip != mip) return false;
        u[t] = queries[t].u;
        v[t] = queries[t].v;
    }
    const int k0 = first_level_of_mip(mip, static_cast<int>(model.levels.size()));
    // The gathers index codes with int32 (levels up to 2 GiB of codes; larger ones take the scalar path).
    if (model.levels[static_cast<size_t>(k0)].codes.size() > static_cast<size_t>(INT32_MAX)) return false;
    const __m512 uv = _mm512_load_ps(u);
    const __m512 vv = _mm512_load_ps(v);
    LevelTaps taps0;
    LevelTaps taps1;
    if (!level_taps(model.level_view(k0), model.address_mode, uv, vv, taps0) ||
        !level_taps(model.level_view(k0 + 1), model.address_mode, uv, vv, taps1)) {
        return false;
    }
    const int f = model.feature_count;
    sample_level(model.levels[static_cast<size_t>(k0)], f, model.arithmetic, taps0, 0, x);
    sample_level(model.levels[static_cast<size_t>(k0) + 1], f, model.arithmetic, taps1, f, x);
    for (int o = 0; o < 3; ++o) {
        const __m512 s = _mm512_set1_ps(static_cast<float>(1 << o));
        const __m512 quarter = _mm512_set1_ps(0.25f);
        const __m512 pxs = _mm512_mul_ps(taps0.px, s);
        const __m512 pys = _mm512_mul_ps(taps0.py, s);
        _mm512_store_ps(x + (2 * f + 4 * o + 0) * kTileTexels, saw(pxs));
        _mm512_store_ps(x + (2 * f + 4 * o + 1) * kTileTexels, saw(pys));
        _mm512_store_ps(x + (2 * f + 4 * o + 2) * kTileTexels, saw(_mm512_add_ps(pxs, quarter)));
        _mm512_store_ps(x + (2 * f + 4 * o + 3) * kTileTexels, saw(_mm512_add_ps(pys, quarter)));
    }
    _mm512_store_ps(x + (2 * f + 12) * kTileTexels, _mm512_set1_ps(static_cast<float>(mip) * 0.25f));
    for (int i = network_input_count(f); i < model.layers[0].input_width; ++i) {
        _mm512_store_ps(x + i * kTileTexels, _mm512_setzero_ps());
    }
    return true;
}

}  // namespace

bool avx512bf16_supported() {
    const CpuFeatures& cpu = cpu_features();
    return cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512dq && cpu.avx512bf16;
}

bool avx512fp16_supported() {
#if NMC_HAVE_AVX512FP16
    return avx512bf16_supported() && cpu_features().avx512fp16;
#else
    return false;
#endif
}

void round_to_fp8_avx512(const float* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, round_to_fp8(_mm512_loadu_ps(in + i)));
    if (i < n) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(out + i, mask, round_to_fp8(_mm512_maskz_loadu_ps(mask, in + i)));
    }
}

void hgelu_clamped_binary16_avx512(const float* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, hgelu_clamped_binary16(_mm512_loadu_ps(in + i)));
    if (i < n) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(out + i, mask, hgelu_clamped_binary16(_mm512_maskz_loadu_ps(mask, in + i)));
    }
}

#if NMC_HAVE_AVX512FP16
NMC_TARGET_AVX512FP16 void hgelu_clamped_binary16_avx512fp16(const float* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, hgelu_clamped_binary16_fp16(_mm512_loadu_ps(in + i)));
    if (i < n) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(out + i, mask, hgelu_clamped_binary16_fp16(_mm512_maskz_loadu_ps(mask, in + i)));
    }
}
#endif

void decode_tile_avx512bf16(const Model& model, const TexelQuery* queries, int count, float* out,
                            bool fp16_activation) {
    static_assert(kTileTexels == 16, "one texel per lane of a 512-bit register");
#if NMC_HAVE_AVX512FP16
    fp16_activation = fp16_activation && model.arithmetic == Arithmetic::binary16;
    alignas(64) float y_block[kTileTexels * kTileTexels];  // with fp16_activation: a block's y, [j * 16 + t]
#else
    fp16_activation = false;
#endif
    alignas(64) float x[kMaxLayerWidth * kTileTexels];               // layer 0's input, [i * 16 + t]
    alignas(64) uint32_t pairs_a[kMaxLayerWidth / 2 * kTileTexels];  // a layer's input as bf16 pairs, [p * 16 + t]
    alignas(64) uint32_t pairs_b[kMaxLayerWidth / 2 * kTileTexels];

    // spec 8.1-8.5; lanes past `count` repeat the last query and are not stored by the caller. Tiles of one mip
    // near the unit square are sampled 16 texels at a time, others texel by texel with the scalar reference code.
    const ModelLayer& first = model.layers[0];
    TexelQuery tile[kTileTexels];
    for (int t = 0; t < kTileTexels; ++t) tile[t] = queries[std::min(t, count - 1)];
    if (!assemble_input_x16(model, tile, x)) {
        float row[kMaxLayerWidth];
        for (int t = 0; t < kTileTexels; ++t) {
            model.assemble_input(tile[t], row);
            for (int i = 0; i < first.input_width; ++i) x[i * kTileTexels + t] = row[i];
        }
    }
    // spec 8.6: x'[i] = fp8(x[i]), held as bf16 pairs (exact).
    for (int p = 0; p < first.input_pairs(); ++p) {
        const __m512 lo = round_to_fp8(_mm512_load_ps(x + 2 * p * kTileTexels));
        const __m512 hi = 2 * p + 1 < first.input_width ? round_to_fp8(_mm512_load_ps(x + (2 * p + 1) * kTileTexels))
                                                        : _mm512_setzero_ps();
        _mm512_store_si512(pairs_a + p * kTileTexels, pack_pairs(lo, hi));
    }

    uint32_t* input = pairs_a;
    uint32_t* next = pairs_b;
    const size_t last = model.layers.size() - 1;
    for (size_t l = 0; l <= last; ++l) {
        const ModelLayer& layer = model.layers[l];
        const size_t stride = static_cast<size_t>(layer.padded_output_width);
        for (int block = 0; block < layer.padded_output_width; block += kTileTexels) {
            // acc[n] = sum over i of W[n][i] * x'[i] for 16 outputs n of 16 texels, two inputs per step.
            __m512 acc[kTileTexels];
            for (__m512& a : acc) a = _mm512_setzero_ps();
            const uint32_t* w = layer.weight_pairs.data() + block;
            for (int p = 0; p < layer.input_pairs(); ++p, w += stride) {
                const __m512bh xp = as_bf16(_mm512_load_si512(input + p * kTileTexels));
#pragma GCC unroll 16
                for (int j = 0; j < kTileTexels; ++j) {
                    acc[j] = _mm512_dpbf16_ps(acc[j], xp, as_bf16(_mm512_set1_epi32(static_cast<int>(w[j]))));
                }
            }
            // y = acc * scale + bias (a multiply, then an add); then the activation or the output transform.
#pragma GCC unroll 16
            for (int j = 0; j < kTileTexels; j += 2) {
                const int n = block + j;
                const __m512 y0 = _mm512_add_ps(_mm512_mul_ps(acc[j], _mm512_set1_ps(layer.scales[n])),
                                                _mm512_set1_ps(layer.biases[n]));
                const __m512 y1 = _mm512_add_ps(_mm512_mul_ps(acc[j + 1], _mm512_set1_ps(layer.scales[n + 1])),
                                                _mm512_set1_ps(layer.biases[n + 1]));
                if (l < last && fp16_activation) {
#if NMC_HAVE_AVX512FP16
                    _mm512_store_ps(y_block + j * kTileTexels, y0);  // activate_block_fp16 below
                    _mm512_store_ps(y_block + (j + 1) * kTileTexels, y1);
#endif
                } else if (l < last) {
                    // the next layer's input, rounded to E4M3 (8.6) and packed as bf16 pairs.
                    const bool float32 = model.arithmetic == Arithmetic::float32;
                    const __m512 a0 = float32 ? hgelu_clamped(y0) : hgelu_clamped_binary16(y0);
                    const __m512 a1 = float32 ? hgelu_clamped(y1) : hgelu_clamped_binary16(y1);
                    _mm512_store_si512(next + n / 2 * kTileTexels, pack_pairs(round_to_fp8(a0), round_to_fp8(a1)));
                } else {
                    if (n < layer.output_width) {
                        _mm512_storeu_ps(out + n * kTileTexels,
                                         output_transform(y0, model.channel_lo[n], model.channel_hi[n]));
                    }
                    if (n + 1 < layer.output_width) {
                        _mm512_storeu_ps(out + (n + 1) * kTileTexels,
                                         output_transform(y1, model.channel_lo[n + 1], model.channel_hi[n + 1]));
                    }
                }
            }
#if NMC_HAVE_AVX512FP16
            if (l < last && fp16_activation) activate_block_fp16(y_block, next + block / 2 * kTileTexels);
#endif
        }
        std::swap(input, next);
    }
}

}  // namespace nmc::cpu_detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
