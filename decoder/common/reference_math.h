// The scalar arithmetic of docs/format-spec.md section 8, one function per step, in the spec's order and number
// types; the `binary16` arithmetic's steps (spec 5.6) are the *_binary16 functions. The CPU decoder runs these for
// every texel; the trainer and the CUDA decoder test against them. Targets that link nmc_decoder_cpu compile with
// -ffp-contract=off: the spec forbids fusing a multiply and an add that it writes as two steps, and the inline steps
// below are compiled in the user's files.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/number_formats.h"
#include "core/texture_layout.h"
#include "format/pack.h"

namespace nmc {

// min and max as x86 minps/maxps compute them (the second operand when the two compare equal, so
// spec_max(-0.0f, 0.0f) is +0.0f): the scalar and the SIMD paths then agree on the sign of zero too.
inline float spec_min(float a, float b) {
    return a < b ? a : b;
}
inline float spec_max(float a, float b) {
    return a > b ? a : b;
}

// spec 6: step_k = (hi_k - lo_k) / (2^b_k - 1).
inline float latent_step(float lo, float hi, int bits) {
    return (hi - lo) / static_cast<float>((1 << bits) - 1);
}

// spec 6: a feature's value is lo_k + q * step_k (one multiply, then one add).
inline float dequantise_latent(float lo, float step, uint32_t q) {
    return lo + static_cast<float>(q) * step;
}

// spec 6, binary16 arithmetic: f16(q * f16(step) + f16(lo)), the exact value rounded once (binary64 holds it).
inline float dequantise_latent_binary16(float lo, float step, uint32_t q) {
    const double step16 = round_to_fp16_satfinite(step);
    const double lo16 = round_to_fp16_satfinite(lo);
    return round_to_fp16_satfinite(static_cast<double>(q) * step16 + lo16);
}

// spec 6: the value of every code of a level in the pack's arithmetic, values[q] for q in 0 .. 2^bits - 1.
std::vector<float> latent_value_table(const LatentLevel& level, Arithmetic arithmetic);

// A latent grid level as the sampler reads it. Pointers are borrowed.
struct LatentLevelView {
    int width = 0;
    int height = 0;
    int feature_count = 0;
    const uint8_t* codes = nullptr;  // (y * width + x) * feature_count + j
    const float* values = nullptr;   // latent_value_table of the level
    Arithmetic arithmetic = Arithmetic::float32;
};

// spec 8: whole-texture decoding queries texel x of a mip of width w at u = (x + 0.5) / w (one add, one divide).
inline float texel_centre(int x, int size) {
    return (static_cast<float>(x) + 0.5f) / static_cast<float>(size);
}

// spec 8.1: k0 = min(m, K - 2); k1 = k0 + 1.
inline int first_level_of_mip(int mip, int level_count) {
    return mip < level_count - 2 ? mip : level_count - 2;
}

// spec 8.2: px = u * w_k - 0.5, py = v * h_k - 0.5; x0 = floor(px), y0 = floor(py); fx = px - x0, fy = py - y0.
struct SamplePosition {
    float px = 0;
    float py = 0;
    int x0 = 0;
    int y0 = 0;
    float fx = 0;
    float fy = 0;
};
SamplePosition sample_position(float u, float v, int width, int height);

// spec 8.3: a texel coordinate wrapped (x mod size, non-negative) or clamped to 0 .. size-1.
inline int address_texel(int x, int size, AddressMode mode) {
    if (mode == AddressMode::clamp) return x < 0 ? 0 : (x >= size ? size - 1 : x);
    const int r = x % size;
    return r < 0 ? r + size : r;
}

// spec 8.3: the four bilinear weights, each rounded in the order written.
struct BilinearWeights {
    float w00 = 0;
    float w10 = 0;
    float w01 = 0;
    float w11 = 0;
};
inline BilinearWeights bilinear_weights(float fx, float fy) {
    const float gx = 1.0f - fx;
    const float gy = 1.0f - fy;
    return {gx * gy, fx * gy, gx * fy, fx * fy};
}

// spec 8.3, binary16 arithmetic: the float32 weights above, each rounded once to binary16.
inline BilinearWeights bilinear_weights_binary16(float fx, float fy) {
    const BilinearWeights w = bilinear_weights(fx, fy);
    return {round_to_fp16_satfinite(w.w00), round_to_fp16_satfinite(w.w10), round_to_fp16_satfinite(w.w01),
            round_to_fp16_satfinite(w.w11)};
}

// spec 8.3: value = ((w00 * a + w10 * b) + w01 * c) + w11 * d, every operation rounded separately. With the binary16
// arithmetic's weights and values every product is exact, so this is its float32 sum in the order written.
inline float bilinear(const BilinearWeights& w, float a, float b, float c, float d) {
    return ((w.w00 * a + w.w10 * b) + w.w01 * c) + w.w11 * d;
}

// spec 8.2-8.3 for one level: writes the F sampled features to out[0 .. F-1] and returns the sample position.
SamplePosition sample_latents(const LatentLevelView& level, AddressMode mode, float u, float v, float* out);

// spec 8.4: saw(t) = 2 * (t - floor(t)) - 1.
inline float saw(float t) {
    return 2.0f * (t - std::floor(t)) - 1.0f;
}

// spec 8.4: the 12 positional-encoding values from level k0's px, py: for octave o = 0, 1, 2 with s = 2^o,
// saw(px * s), saw(py * s), saw(px * s + 0.25), saw(py * s + 0.25).
void positional_encoding(float px, float py, float* out);

// spec 8.5: layer 0's input vector (before the FP8 rounding of 8.6) for query (u, v, mip): x[0 .. F-1] level
// k0's features, x[F .. 2F-1] level k1's, x[2F .. 2F+11] the positional encoding, x[2F+12] = mip * 0.25, the
// rest of the input_width entries 0. level0 and level1 are levels k0 and k1 of spec 8.1.
void assemble_input(const LatentLevelView& level0, const LatentLevelView& level1, AddressMode mode, float u, float v,
                    int mip, int input_width, float* x);

// spec 8.6: the hgelu_clamped activation.
//   t = min(max(y * 0.333333343 + 0.5, 0), 1)    (a multiply, then an add)
//   a = min(y, 3) * t
inline float hgelu_clamped(float y) {
    const float t = spec_min(spec_max(y * kOneThirdFloat32 + 0.5f, 0.0f), 1.0f);
    return spec_min(y, 3.0f) * t;
}

// spec 8.6, binary16 arithmetic:
//   h = f16(y)                                 satfinite
//   t = min(max(f16(h * c + 0.5), 0), 1)       c = f16(1/3); the exact h * c + 0.5 rounded once
//   a = f16(min(h, 3) * t)                     the exact product rounded once
inline float hgelu_clamped_binary16(float y) {
    const float h = round_to_fp16_satfinite(y);
    const float t =
        spec_min(spec_max(round_to_fp16_satfinite(static_cast<double>(h) * kOneThirdBinary16 + 0.5), 0.0f), 1.0f);
    return round_to_fp16_satfinite(spec_min(h, 3.0f) * t);  // the float32 product of two binary16 values is exact
}

// spec 8.6: y = acc * scale + bias (a multiply, then an add); layers without scales use scale 1, which is exact.
inline float layer_output(float acc, float scale, float bias) {
    return acc * scale + bias;
}

// spec 8.7: value = lo + (hi - lo) * min(max(o, 0), 1) (a subtract, a multiply, an add).
inline float output_transform(float o, float lo, float hi) {
    return lo + (hi - lo) * spec_min(spec_max(o, 0.0f), 1.0f);
}

// spec 8.8: a normal map's three channel values (x*0.5+0.5, y*0.5+0.5, z*0.5+0.5), before any invert.
struct NormalChannels {
    float x = 0;
    float y = 0;
    float z = 0;
};
// normal_mode xy: x and y from pack values va, vb; z = sqrt(max((1 - x*x) - y*y, 0)); then renormalised.
NormalChannels normal_from_xy(float va, float vb);
// normal_mode xyz: x, y, z from pack values va, vb, vc; then renormalised.
NormalChannels normal_from_xyz(float va, float vb, float vc);

// spec 8.8-8.9: the source-channel values of one texel of `texture` (texture.channels.size() values written
// to out) from that texel's pack-channel values (after 8.7). The layout must be valid (spec 5.4).
void source_channel_values(const TextureLayout& texture, const float* pack_values, float* out);

}  // namespace nmc
