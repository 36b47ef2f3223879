// The portable kernel: spec 8.1-8.7 for a tile of texel queries in plain C++, one texel at a time, summing each
// layer's products in input order. Runs on any CPU; the loops over outputs auto-vectorise for the baseline ISA.
#include <cstring>

#include "decoder/cpu/decoder_model.h"

namespace nmc::cpu_detail {
namespace {

// spec 2.1 rounding of a float32 to E4M3 (as a float), by integer operations on its bits.
inline float round_to_fp8(float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
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
            float m;
            std::memcpy(&m, &magnitude, sizeof m);
            const float rounded = (m + 16384.0f) - 16384.0f;
            std::memcpy(&r, &rounded, sizeof r);
        } else {
            // normal: keep 3 mantissa bits, ties to even (a carry into the exponent is the right result).
            r = (magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u)) & ~0xFFFFFu;
        }
        r |= b & 0x80000000u;
    }
    float result;
    std::memcpy(&result, &r, sizeof r);
    return result;
}

}  // namespace

void round_to_fp8_portable(const float* in, float* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = round_to_fp8(in[i]);
}

void decode_tile_portable(const Model& model, const TexelQuery* queries, int count, float* out) {
    float x[kMaxLayerWidth];
    float y[kMaxLayerWidth];
    const size_t last = model.layers.size() - 1;
    for (int t = 0; t < count; ++t) {
        // spec 8.1-8.5: layer 0's input.
        model.assemble_input(queries[t], x);
        for (size_t l = 0; l <= last; ++l) {
            const ModelLayer& layer = model.layers[l];
            const size_t n_out = static_cast<size_t>(layer.output_width);
            const size_t stride = static_cast<size_t>(layer.padded_output_width);
            // spec 8.6: x'[i] = fp8(x[i]); acc[n] = sum over i of W[n][i] * x'[i] (float32, input order; each
            // product is exact, so a contracted multiply-add would give the same sum).
            for (size_t n = 0; n < n_out; ++n) y[n] = 0.0f;
            for (size_t i = 0; i < static_cast<size_t>(layer.input_width); ++i) {
                const float xi = round_to_fp8(x[i]);
                if (xi == 0.0f) continue;  // adding a zero product leaves a sum that started at +0 unchanged
                const float* w = &layer.weights[i * stride];
                for (size_t n = 0; n < n_out; ++n) y[n] += w[n] * xi;
            }
            // y[n] = acc[n] * scale[n] + bias[n]; hidden layers then the activation, the last the output (8.7).
            for (size_t n = 0; n < n_out; ++n) {
                const float yn = layer_output(y[n], layer.scales[n], layer.biases[n]);
                if (l < last) {
                    x[n] = hgelu_clamped(yn);
                } else {
                    out[n * kTileTexels + static_cast<size_t>(t)] =
                        output_transform(yn, model.channel_lo[n], model.channel_hi[n]);
                }
            }
        }
    }
}

}  // namespace nmc::cpu_detail
