// Builds the CPU decoder's Model from a Pack: checks it against the spec's rules (format's check_pack), then converts
// weights (spec 7) and latent codes (spec 6) into the kernels' layouts once.
#include "decoder/cpu/decoder_model.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/number_formats.h"

namespace nmc::cpu_detail {
namespace {

float weight_value(const Layer& layer, size_t index) {
    const uint8_t w = layer.weights[index];
    if (layer.weight_type == WeightType::int8) return static_cast<float>(static_cast<int8_t>(w));
    return fp8_e4m3_to_float(w);
}

// bf16 code of a float that bf16 holds exactly (E4M3 and Int8 values): its upper 16 bits.
uint32_t bf16_bits(float x) { return float_bits(x) >> 16; }

// spec 7: the layer's weights, scales and biases in both kernels' layouts.
ModelLayer convert_layer(const Layer& layer) {
    ModelLayer m;
    m.input_width = layer.input_width;
    m.output_width = layer.output_width;
    m.padded_output_width = round_up(layer.output_width, kTileTexels);
    const size_t in = static_cast<size_t>(m.input_width);
    const size_t out = static_cast<size_t>(m.output_width);
    const size_t padded = static_cast<size_t>(m.padded_output_width);
    m.weights.assign(in * padded, 0.0f);
    m.weight_pairs.assign(static_cast<size_t>(m.input_pairs()) * padded, 0u);
    m.scales.assign(padded, 1.0f);
    m.biases.assign(padded, 0.0f);
    for (size_t n = 0; n < out; ++n) {
        for (size_t i = 0; i < in; ++i) {
            const float w = weight_value(layer, n * in + i);
            m.weights[i * padded + n] = w;
            m.weight_pairs[(i / 2) * padded + n] |= bf16_bits(w) << (16 * (i % 2));
        }
        if (layer.has_scale()) m.scales[n] = layer.scales[n];
        m.biases[n] = fp16_to_float(layer.biases[n]);
    }
    return m;
}

}  // namespace

Result<Model> build_model(const Pack& pack) {
    NMC_RETURN_IF_ERROR(check_pack(pack));

    Model model;
    model.width = pack.material.width;
    model.height = pack.material.height;
    model.mip_count = pack.material.mip_count;
    model.address_mode = pack.material.address_mode;
    model.arithmetic = pack.network.arithmetic;
    model.feature_count = pack.latents.feature_count;
    for (const LatentLevel& level : pack.latents.levels) {
        ModelLevel m{level.width,
                     level.height,
                     level.bits,
                     level.lo,
                     latent_step(level.lo, level.hi, level.bits),
                     level.codes,
                     latent_value_table(level, pack.network.arithmetic)};
        m.codes.resize(m.codes.size() + kCodePadding, 0);
        model.levels.push_back(std::move(m));
    }
    for (const Layer& layer : pack.network.layers) model.layers.push_back(convert_layer(layer));
    for (const ChannelInfo& channel : pack.channels) {
        model.channel_lo.push_back(channel.lo);
        model.channel_hi.push_back(channel.hi);
    }
    model.textures = pack.textures;
    return model;
}

}  // namespace nmc::cpu_detail
