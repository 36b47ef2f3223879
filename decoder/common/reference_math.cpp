// The spec section 8 steps of reference_math.h that are too long to inline; each quotes the step it implements.
#include "decoder/common/reference_math.h"

#include <cmath>

#include "core/hlg.h"

namespace nmc {

std::vector<float> latent_value_table(const LatentLevel& level, Arithmetic arithmetic) {
    // spec 6: step_k = (hi_k - lo_k) / (2^b_k - 1); value = lo_k + q * step_k, or f16(q * f16(step) + f16(lo)).
    const float step = latent_step(level.lo, level.hi, level.bits);
    std::vector<float> values(size_t{1} << level.bits);
    for (uint32_t q = 0; q < values.size(); ++q) {
        values[q] = arithmetic == Arithmetic::float32 ? dequantise_latent(level.lo, step, q)
                                                      : dequantise_latent_binary16(level.lo, step, q);
    }
    return values;
}

SamplePosition sample_position(float u, float v, int width, int height) {
    // spec 8.2: px = u * w_k - 0.5, py = v * h_k - 0.5 (a multiply, then a subtract).
    SamplePosition s;
    s.px = u * static_cast<float>(width) - 0.5f;
    s.py = v * static_cast<float>(height) - 0.5f;
    // x0 = floor(px), y0 = floor(py), fx = px - x0, fy = py - y0.
    const float fx0 = std::floor(s.px);
    const float fy0 = std::floor(s.py);
    s.x0 = static_cast<int>(fx0);
    s.y0 = static_cast<int>(fy0);
    s.fx = s.px - fx0;
    s.fy = s.py - fy0;
    return s;
}

SamplePosition sample_latents(const LatentLevelView& level, AddressMode mode, float u, float v, float* out) {
    const SamplePosition s = sample_position(u, v, level.width, level.height);
    // spec 8.3: the texels (x0, y0), (x0+1, y0), (x0, y0+1), (x0+1, y0+1), wrapped or clamped.
    const int xa = address_texel(s.x0, level.width, mode);
    const int xb = address_texel(s.x0 + 1, level.width, mode);
    const int ya = address_texel(s.y0, level.height, mode);
    const int yb = address_texel(s.y0 + 1, level.height, mode);
    const size_t f = static_cast<size_t>(level.feature_count);
    const size_t w = static_cast<size_t>(level.width);
    const uint8_t* a = level.codes + (static_cast<size_t>(ya) * w + static_cast<size_t>(xa)) * f;
    const uint8_t* b = level.codes + (static_cast<size_t>(ya) * w + static_cast<size_t>(xb)) * f;
    const uint8_t* c = level.codes + (static_cast<size_t>(yb) * w + static_cast<size_t>(xa)) * f;
    const uint8_t* d = level.codes + (static_cast<size_t>(yb) * w + static_cast<size_t>(xb)) * f;
    // w00 = (1 - fx) * (1 - fy) ... (binary16 arithmetic: then each rounded to binary16);
    // value = ((w00 * a + w10 * b) + w01 * c) + w11 * d, on dequantised values.
    const BilinearWeights weights =
        level.arithmetic == Arithmetic::float32 ? bilinear_weights(s.fx, s.fy) : bilinear_weights_binary16(s.fx, s.fy);
    for (size_t j = 0; j < f; ++j) {
        out[j] = bilinear(weights, level.values[a[j]], level.values[b[j]], level.values[c[j]], level.values[d[j]]);
    }
    return s;
}

void positional_encoding(float px, float py, float* out) {
    // spec 8.4: octave 0 first; s = 2^o is exact, so px * s and py * s are exact.
    for (int o = 0; o < 3; ++o) {
        const float s = static_cast<float>(1 << o);
        out[4 * o + 0] = saw(px * s);
        out[4 * o + 1] = saw(py * s);
        out[4 * o + 2] = saw(px * s + 0.25f);
        out[4 * o + 3] = saw(py * s + 0.25f);
    }
}

void assemble_input(const LatentLevelView& level0, const LatentLevelView& level1, AddressMode mode, float u, float v,
                    int mip, int input_width, float* x) {
    const int f = level0.feature_count;
    // spec 8.5: x[0 .. F-1] from level k0, x[F .. 2F-1] from level k1.
    const SamplePosition s0 = sample_latents(level0, mode, u, v, x);
    sample_latents(level1, mode, u, v, x + f);
    // x[2F .. 2F+11]: the positional encoding of level k0's position (8.4).
    positional_encoding(s0.px, s0.py, x + 2 * f);
    // x[2F+12]: the LOD input m * 0.25; the rest: 0.
    x[2 * f + 12] = static_cast<float>(mip) * 0.25f;
    for (int i = network_input_count(f); i < input_width; ++i) x[i] = 0.0f;
}

namespace {

// spec 8.8, both modes: len2 = (x*x + y*y) + z*z; if len2 > 0: r = 1 / sqrt(len2), (x*r, y*r, z*r), else (0, 0, 1);
// the channel values are x*0.5 + 0.5, y*0.5 + 0.5, z*0.5 + 0.5.
NormalChannels normalise(float x, float y, float z) {
    const float len2 = (x * x + y * y) + z * z;
    if (len2 > 0.0f) {
        const float r = 1.0f / std::sqrt(len2);
        x = x * r;
        y = y * r;
        z = z * r;
    } else {
        x = 0.0f;
        y = 0.0f;
        z = 1.0f;
    }
    return {x * 0.5f + 0.5f, y * 0.5f + 0.5f, z * 0.5f + 0.5f};
}

}  // namespace

NormalChannels normal_from_xy(float va, float vb) {
    // spec 8.8: x = 2 * value[a] - 1; y = 2 * value[b] - 1; z = sqrt(max((1 - x*x) - y*y, 0)).
    const float x = 2.0f * va - 1.0f;
    const float y = 2.0f * vb - 1.0f;
    const float z = std::sqrt(spec_max((1.0f - x * x) - y * y, 0.0f));
    return normalise(x, y, z);
}

NormalChannels normal_from_xyz(float va, float vb, float vc) {
    // spec 8.8: with xyz, z = 2 * value[c] - 1 for its third pack channel c.
    return normalise(2.0f * va - 1.0f, 2.0f * vb - 1.0f, 2.0f * vc - 1.0f);
}

void source_channel_values(const TextureLayout& texture, const float* pack_values, float* out) {
    using Kind = ChannelSource::Kind;
    const std::vector<ChannelSource>& sources = texture.channels;
    // spec 8.8: a normal map's first three channels are rebuilt from the pack values before any invert.
    NormalChannels normal;
    if (texture.normal_mode == NormalMode::xy) {
        normal = normal_from_xy(pack_values[sources[0].pack_channel], pack_values[sources[1].pack_channel]);
    } else if (texture.normal_mode == NormalMode::xyz) {
        normal = normal_from_xyz(pack_values[sources[0].pack_channel], pack_values[sources[1].pack_channel],
                                 pack_values[sources[2].pack_channel]);
    }
    const float normal_values[3] = {normal.x, normal.y, normal.z};
    // spec 8.9: pack gives value[pack_channel] (after 8.8 for normal maps), or 1 - that when invert, and in an hlg
    // texture peak * hlg_decode(value[pack_channel]); constant gives value; normal_z gives the rebuilt z*0.5 + 0.5.
    for (size_t i = 0; i < sources.size(); ++i) {
        const ChannelSource& source = sources[i];
        if (source.kind == Kind::constant) {
            out[i] = source.constant_value;
        } else if (source.kind == Kind::normal_z) {
            out[i] = normal.z;
        } else {
            const float value =
                texture.normal_mode != NormalMode::none && i < 3 ? normal_values[i] : pack_values[source.pack_channel];
            if (texture.value_encoding == ValueEncoding::hlg)
                out[i] = texture.peak * hlg_decode(value);
            else
                out[i] = source.invert ? 1.0f - value : value;
        }
    }
}

}  // namespace nmc
