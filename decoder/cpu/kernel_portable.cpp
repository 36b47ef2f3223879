// The portable kernel: spec 8.1-8.7 for a tile of 16 texel queries in plain C++, summing each layer's products in
// input order. Runs on any CPU; the loops over the tile's texels auto-vectorise for the baseline ISA.
#include <algorithm>
#include <utility>

#include "core/number_formats.h"
#include "decoder/cpu/decoder_model.h"

namespace nmc::cpu_detail {
namespace {

// spec 2.1 rounding of a float32 to E4M3 (as a float), by integer operations on its bits.
inline float round_to_fp8(float x) {
    const uint32_t b = float_bits(x);
    const uint32_t magnitude = b & 0x7FFFFFFFu;
    uint32_t r;
    if (magnitude > 0x7F800000u) {
        r = 0x7FC00000u;  // NaN: E4M3 0x7F, which reads back as the positive quiet NaN
    } else {
        if (magnitude > 0x43E00000u) {
            r = 0x43E00000u;  // above 448, infinity included: saturate to 448
        } else if (magnitude < 0x3C800000u) {
            // below 2^-6: multiples of 2^-9, ties to even. In [2^14, 2^15) float32's step is 2^-9, so adding and
            // subtracting 2^14 rounds exactly that way.
            r = float_bits((float_from_bits(magnitude) + 16384.0f) - 16384.0f);
        } else {
            // normal: keep 3 mantissa bits, ties to even (a carry into the exponent is the right result).
            r = (magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u)) & ~0xFFFFFu;
        }
        r |= b & 0x80000000u;
    }
    return float_from_bits(r);
}

}  // namespace

void round_to_fp8_portable(const float* in, float* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = round_to_fp8(in[i]);
}

void decode_tile_portable(const Model& model, const TexelQuery* queries, int count, float* out) {
    float buffer_a[kMaxLayerWidth * kTileTexels];  // a layer's input x', [i * 16 + t]
    float buffer_b[kMaxLayerWidth * kTileTexels];
    float row[kMaxLayerWidth];

    // spec 8.1-8.5 per texel, then x'[i] = fp8(x[i]) (8.6); lanes past `count` repeat the last query.
    for (int t = 0; t < kTileTexels; ++t) {
        model.assemble_input(queries[std::min(t, count - 1)], row);
        for (int i = 0; i < model.layers[0].input_width; ++i) buffer_a[i * kTileTexels + t] = round_to_fp8(row[i]);
    }

    float* input = buffer_a;
    float* next = buffer_b;
    const size_t last = model.layers.size() - 1;
    for (size_t l = 0; l <= last; ++l) {
        const ModelLayer& layer = model.layers[l];
        const size_t stride = static_cast<size_t>(layer.padded_output_width);
        // Two outputs at a time (the padded width is even), their 16 texels' sums in registers.
        for (size_t n = 0; n < static_cast<size_t>(layer.output_width); n += 2) {
            // spec 8.6: acc[n] = sum over i of W[n][i] * x'[i] (float32, in input order).
            float acc0[kTileTexels] = {};
            float acc1[kTileTexels] = {};
            for (size_t i = 0; i < static_cast<size_t>(layer.input_width); ++i) {
                const float w0 = layer.weights[i * stride + n];
                const float w1 = layer.weights[i * stride + n + 1];
                const float* x = input + i * kTileTexels;
                for (int t = 0; t < kTileTexels; ++t) {
                    acc0[t] += w0 * x[t];
                    acc1[t] += w1 * x[t];
                }
            }
            // y = acc * scale + bias; hidden layers: the activation, rounded for the next layer; the last: 8.7.
            for (size_t k = 0; k < 2; ++k) {
                const float* acc = k == 0 ? acc0 : acc1;
                const size_t m = n + k;
                for (int t = 0; t < kTileTexels; ++t) {
                    const float y = layer_output(acc[t], layer.scales[m], layer.biases[m]);
                    if (l < last) {
                        const float a =
                            model.arithmetic == Arithmetic::float32 ? hgelu_clamped(y) : hgelu_clamped_binary16(y);
                        next[m * kTileTexels + static_cast<size_t>(t)] = round_to_fp8(a);
                    } else if (m < static_cast<size_t>(layer.output_width)) {
                        out[m * kTileTexels + static_cast<size_t>(t)] =
                            output_transform(y, model.channel_lo[m], model.channel_hi[m]);
                    }
                }
            }
        }
        std::swap(input, next);
    }
}

}  // namespace nmc::cpu_detail
