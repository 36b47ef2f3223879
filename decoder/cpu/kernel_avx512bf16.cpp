// The AVX-512 BF16 kernel: spec 8.1-8.7 for a tile of 16 texel queries, one texel per lane. Each layer is a
// (16 texels x I) by (I x N) product with vdpbf16ps: E4M3 and Int8 weights and E4M3 activations are exact in
// bf16 and their products exact in float32, so the result differs from the spec's maths only by the order of
// each float32 sum, which the spec leaves free. This file alone is compiled with AVX-512 flags.
#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "decoder/cpu/decoder_model.h"

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
    const __m512 t = _mm512_min_ps(
        _mm512_max_ps(_mm512_add_ps(_mm512_mul_ps(y, _mm512_set1_ps(0.333333343f)), _mm512_set1_ps(0.5f)),
                      _mm512_setzero_ps()),
        _mm512_set1_ps(1.0f));
    return _mm512_mul_ps(_mm512_min_ps(y, _mm512_set1_ps(3.0f)), t);
}

// spec 8.7: lo + (hi - lo) * min(max(o, 0), 1).
inline __m512 output_transform(__m512 o, float lo, float hi) {
    const __m512 clamped = _mm512_min_ps(_mm512_max_ps(o, _mm512_setzero_ps()), _mm512_set1_ps(1.0f));
    return _mm512_add_ps(_mm512_set1_ps(lo), _mm512_mul_ps(_mm512_set1_ps(hi - lo), clamped));
}

inline __m512bh as_bf16(__m512i v) { return reinterpret_cast<__m512bh&>(v); }

}  // namespace

bool avx512bf16_supported() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bf16");
}

void round_to_fp8_avx512(const float* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, round_to_fp8(_mm512_loadu_ps(in + i)));
    if (i < n) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(out + i, mask, round_to_fp8(_mm512_maskz_loadu_ps(mask, in + i)));
    }
}

void decode_tile_avx512bf16(const Model& model, const TexelQuery* queries, int count, float* out) {
    static_assert(kTileTexels == 16, "one texel per lane of a 512-bit register");
    alignas(64) float x[kMaxLayerWidth * kTileTexels];      // layer 0's input, [i * 16 + t]
    alignas(64) uint32_t pairs_a[kMaxLayerWidth / 2 * kTileTexels];  // a layer's input as bf16 pairs, [p * 16 + t]
    alignas(64) uint32_t pairs_b[kMaxLayerWidth / 2 * kTileTexels];
    float row[kMaxLayerWidth];

    // spec 8.1-8.5 per texel; lanes past `count` repeat the last query and are not stored by the caller.
    const ModelLayer& first = model.layers[0];
    for (int t = 0; t < kTileTexels; ++t) {
        model.assemble_input(queries[std::min(t, count - 1)], row);
        for (int i = 0; i < first.input_width; ++i) x[i * kTileTexels + t] = row[i];
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
                if (l < last) {
                    // the next layer's input, rounded to E4M3 (8.6) and packed as bf16 pairs.
                    _mm512_store_si512(next + n / 2 * kTileTexels,
                                       pack_pairs(round_to_fp8(hgelu_clamped(y0)), round_to_fp8(hgelu_clamped(y1))));
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
        }
        std::swap(input, next);
    }
}

}  // namespace nmc::cpu_detail
