// The AVX2 kernel: spec 8.1-8.7 for a tile of 16 texel queries, 8 texels per register. E4M3 and Int8 weights
// times E4M3 activations are exact in float32, so the fused multiply-adds of each layer's sum round only the sum
// (spec 8.6 leaves its order free); every other step is the spec's own operations. Sampling is the scalar
// reference code.
#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "decoder/cpu/cpu_features.h"
#include "decoder/cpu/decoder_model.h"

// Only the code below is compiled for AVX2: the headers above keep the build's baseline ISA, so an inline
// function they define can never reach the portable path in an AVX2 copy (the linker keeps one copy of each).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif

namespace nmc::cpu_detail {
namespace {

constexpr int kOutputBlock = 4;  // outputs per pass: 4 x 2 accumulators + 2 inputs + 1 weight of 16 registers

// spec 2.1 rounding to E4M3 of 8 floats, the same integer operations as the portable kernel's round_to_fp8.
inline __m256 round_to_fp8(__m256 x) {
    const __m256i b = _mm256_castps_si256(x);
    const __m256i magnitude = _mm256_and_si256(b, _mm256_set1_epi32(0x7FFFFFFF));
    // normal: keep 3 mantissa bits, ties to even.
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(magnitude, 20), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(magnitude, _mm256_set1_epi32(0x7FFFF)), lsb);
    r = _mm256_and_si256(r, _mm256_set1_epi32(~0xFFFFF));
    // below 2^-6: multiples of 2^-9, ties to even, by adding and subtracting 2^14.
    const __m256 big = _mm256_set1_ps(16384.0f);
    const __m256 small = _mm256_sub_ps(_mm256_add_ps(_mm256_castsi256_ps(magnitude), big), big);
    const __m256i is_small = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x3C800000), magnitude);
    r = _mm256_blendv_epi8(r, _mm256_castps_si256(small), is_small);
    // above 448, infinity included: 448.
    const __m256i is_large = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x43E00000));
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x43E00000), is_large);
    r = _mm256_or_si256(r, _mm256_and_si256(b, _mm256_set1_epi32(static_cast<int>(0x80000000u))));
    // NaN: E4M3 0x7F, the positive quiet NaN.
    const __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7FC00000), is_nan);
    return _mm256_castsi256_ps(r);
}

// spec 8.6: t = min(max(y * 0.333333343 + 0.5, 0), 1); a = min(y, 3) * t. minps/maxps as spec_min/spec_max.
inline __m256 hgelu_clamped(__m256 y) {
    const __m256 t =
        _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(y, _mm256_set1_ps(kOneThirdFloat32)), _mm256_set1_ps(0.5f)),
                                    _mm256_setzero_ps()),
                      _mm256_set1_ps(1.0f));
    return _mm256_mul_ps(_mm256_min_ps(y, _mm256_set1_ps(3.0f)), t);
}

// spec 2.2: the binary16 value nearest each float32 lane, ties to even (vcvtps2ph), as float32.
inline __m256 round_to_fp16(__m256 x) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// spec 8.6, binary16 arithmetic, as reference_math's hgelu_clamped_binary16:
// - h = f16(y): y clamped to +-65504 first, which is satfinite (y is never NaN).
// - t = f16(h * c + 0.5) with one rounding: the exact value needs up to 51 bits. r = fma(h, c, 0.5) rounds it to
//   float32; residual = fma(h, c, 0.5 - r) is exactly the error (for r in [0.25, 1], 0.5 - r is exact and the error
//   a multiple of 2^-36 below 2^-25; below 0.25 the value is exact in float32 and the residual 0). r made
//   round-to-odd (truncated towards zero, lowest bit set when inexact) rounds to binary16 as the exact value would,
//   since float32 keeps more than two bits beyond binary16's. Only r > 0 matters: t clamps the rest to 0.
// - a = f16(min(h, 3) * t): the float32 product of two binary16 values is exact, so one rounding.
inline __m256 hgelu_clamped_binary16(__m256 y) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 c = _mm256_set1_ps(kOneThirdBinary16);
    const __m256 h =
        round_to_fp16(_mm256_min_ps(_mm256_max_ps(y, _mm256_set1_ps(-kFp16Max)), _mm256_set1_ps(kFp16Max)));
    const __m256 r = _mm256_fmadd_ps(h, c, half);
    const __m256 residual = _mm256_fmadd_ps(h, c, _mm256_sub_ps(half, r));
    const __m256 positive = _mm256_cmp_ps(r, zero, _CMP_GT_OQ);
    const __m256i above = _mm256_castps_si256(_mm256_and_ps(positive, _mm256_cmp_ps(residual, zero, _CMP_LT_OQ)));
    const __m256i inexact = _mm256_castps_si256(_mm256_and_ps(positive, _mm256_cmp_ps(residual, zero, _CMP_NEQ_OQ)));
    __m256i bits = _mm256_add_epi32(_mm256_castps_si256(r), above);  // above is -1 where set: r - 1 ulp
    bits = _mm256_or_si256(bits, _mm256_and_si256(inexact, _mm256_set1_epi32(1)));
    const __m256 t = _mm256_min_ps(_mm256_max_ps(round_to_fp16(_mm256_castsi256_ps(bits)), zero), _mm256_set1_ps(1.0f));
    return round_to_fp16(_mm256_mul_ps(_mm256_min_ps(h, _mm256_set1_ps(3.0f)), t));
}

// spec 8.7: lo + (hi - lo) * min(max(o, 0), 1).
inline __m256 output_transform(__m256 o, float lo, float hi) {
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(o, _mm256_setzero_ps()), _mm256_set1_ps(1.0f));
    return _mm256_add_ps(_mm256_set1_ps(lo), _mm256_mul_ps(_mm256_set1_ps(hi - lo), clamped));
}

}  // namespace

bool avx2_supported() {
    const CpuFeatures& cpu = cpu_features();
    return cpu.avx2 && cpu.fma && cpu.f16c;
}

void round_to_fp8_avx2(const float* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, round_to_fp8(_mm256_loadu_ps(in + i)));
    alignas(32) float tail[8] = {};
    std::copy(in + i, in + n, tail);
    _mm256_store_ps(tail, round_to_fp8(_mm256_load_ps(tail)));
    std::copy(tail, tail + (n - i), out + i);
}

void hgelu_clamped_binary16_avx2(const float* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, hgelu_clamped_binary16(_mm256_loadu_ps(in + i)));
    alignas(32) float tail[8] = {};
    std::copy(in + i, in + n, tail);
    _mm256_store_ps(tail, hgelu_clamped_binary16(_mm256_load_ps(tail)));
    std::copy(tail, tail + (n - i), out + i);
}

void decode_tile_avx2(const Model& model, const TexelQuery* queries, int count, float* out) {
    static_assert(kTileTexels == 16, "two 8-lane registers per value");
    alignas(32) float buffer_a[kMaxLayerWidth * kTileTexels];  // a layer's input x', [i * 16 + t]
    alignas(32) float buffer_b[kMaxLayerWidth * kTileTexels];
    float row[kMaxLayerWidth];

    // spec 8.1-8.5 per texel; lanes past `count` repeat the last query and are not stored by the caller.
    const ModelLayer& first = model.layers[0];
    for (int t = 0; t < kTileTexels; ++t) {
        model.assemble_input(queries[std::min(t, count - 1)], row);
        for (int i = 0; i < first.input_width; ++i) buffer_a[i * kTileTexels + t] = row[i];
    }
    // spec 8.6: x'[i] = fp8(x[i]).
    for (int i = 0; i < first.input_width * kTileTexels; i += 8) {
        _mm256_store_ps(buffer_a + i, round_to_fp8(_mm256_load_ps(buffer_a + i)));
    }

    float* input = buffer_a;
    float* next = buffer_b;
    const size_t last = model.layers.size() - 1;
    for (size_t l = 0; l <= last; ++l) {
        const ModelLayer& layer = model.layers[l];
        const size_t stride = static_cast<size_t>(layer.padded_output_width);
        for (int block = 0; block < layer.padded_output_width; block += kOutputBlock) {
            // acc[n] = sum over i of W[n][i] * x'[i] for 4 outputs of 16 texels (lo and hi halves).
            __m256 acc[kOutputBlock][2];
            for (auto& a : acc) a[0] = a[1] = _mm256_setzero_ps();
            const float* w = layer.weights.data() + block;
            for (int i = 0; i < layer.input_width; ++i, w += stride) {
                const __m256 lo = _mm256_load_ps(input + i * kTileTexels);
                const __m256 hi = _mm256_load_ps(input + i * kTileTexels + 8);
                for (int j = 0; j < kOutputBlock; ++j) {
                    const __m256 wj = _mm256_set1_ps(w[j]);
                    acc[j][0] = _mm256_fmadd_ps(lo, wj, acc[j][0]);
                    acc[j][1] = _mm256_fmadd_ps(hi, wj, acc[j][1]);
                }
            }
            // y = acc * scale + bias (a multiply, then an add); then the activation or the output transform.
            for (int j = 0; j < kOutputBlock; ++j) {
                const int n = block + j;
                const __m256 scale = _mm256_set1_ps(layer.scales[static_cast<size_t>(n)]);
                const __m256 bias = _mm256_set1_ps(layer.biases[static_cast<size_t>(n)]);
                for (int h = 0; h < 2; ++h) {
                    const __m256 y = _mm256_add_ps(_mm256_mul_ps(acc[j][h], scale), bias);
                    if (l < last) {
                        const __m256 a =
                            model.arithmetic == Arithmetic::float32 ? hgelu_clamped(y) : hgelu_clamped_binary16(y);
                        _mm256_store_ps(next + n * kTileTexels + 8 * h, round_to_fp8(a));
                    } else if (n < layer.output_width) {
                        _mm256_storeu_ps(out + n * kTileTexels + 8 * h,
                                         output_transform(y, model.channel_lo[static_cast<size_t>(n)],
                                                          model.channel_hi[static_cast<size_t>(n)]));
                    }
                }
            }
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
