// Builds the CPU decoder's Model from a Pack: checks the rules of spec sections 5-7 that decoding relies on,
// then converts weights (spec 7) and latent codes (spec 6) into the kernels' layouts once.
#include "decoder/cpu/decoder_model.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/number_formats.h"

namespace nmc::cpu_detail {
namespace {

Status invalid(const std::string& what) {
    return {StatusCode::invalid_argument, "pack: " + what};
}

std::string expected_got(const std::string& field, long long expected, long long got) {
    return field + ": expected " + std::to_string(expected) + ", got " + std::to_string(got);
}

bool is_range(float lo, float hi) {
    return std::isfinite(lo) && std::isfinite(hi) && lo < hi;
}

Status check_material(const Pack& pack) {
    const MaterialInfo& m = pack.material;
    if (m.width < 1 || m.width > 16384 || m.height < 1 || m.height > 16384) {
        return invalid("material size " + std::to_string(m.width) + "x" + std::to_string(m.height) +
                       " outside 1..16384");
    }
    int max_mips = 1;
    while ((std::max(m.width, m.height) >> max_mips) > 0) ++max_mips;
    if (m.mip_count < 1 || m.mip_count > max_mips) {
        return invalid("material.mip_count " + std::to_string(m.mip_count) + " outside 1.." + std::to_string(max_mips));
    }
    const size_t c = pack.channels.size();
    if (c < 1 || c > 16) return invalid("channel count " + std::to_string(c) + " outside 1..16");
    for (size_t i = 0; i < c; ++i) {
        if (!is_range(pack.channels[i].lo, pack.channels[i].hi)) {
            return invalid("channels[" + std::to_string(i) + "].range is not finite with lo < hi");
        }
    }
    return Status::success();
}

Status check_latents(const Pack& pack) {
    const LatentGrids& g = pack.latents;
    if (g.feature_count < 1 || g.feature_count > 16) {
        return invalid("latents.feature_count " + std::to_string(g.feature_count) + " outside 1..16");
    }
    if (g.grid_scale < 1 || g.grid_scale > 16) {
        return invalid("latents.grid_scale " + std::to_string(g.grid_scale) + " outside 1..16");
    }
    if (g.levels.size() < 2 || g.levels.size() > 16) {
        return invalid("latents.levels: " + std::to_string(g.levels.size()) + " levels, outside 2..16");
    }
    for (size_t k = 0; k < g.levels.size(); ++k) {
        const LatentLevel& l = g.levels[k];
        const std::string name = "latents.levels[" + std::to_string(k) + "]";
        const int w = latent_level_size(pack.material.width, g.grid_scale, static_cast<int>(k));
        const int h = latent_level_size(pack.material.height, g.grid_scale, static_cast<int>(k));
        if (l.width != w) return invalid(expected_got(name + ".width", w, l.width));
        if (l.height != h) return invalid(expected_got(name + ".height", h, l.height));
        if (l.bits != 1 && l.bits != 2 && l.bits != 4 && l.bits != 8) {
            return invalid(name + ".bits: expected 1, 2, 4 or 8, got " + std::to_string(l.bits));
        }
        if (!is_range(l.lo, l.hi)) return invalid(name + ".range is not finite with lo < hi");
        // spec 9: the binary16 arithmetic's ranges, which keep f16(step) and every value far from binary16's limit
        // (the CUDA decoder relies on it: it converts without saturating).
        const bool binary16 = pack.network.arithmetic == Arithmetic::binary16;
        const float limit = kMaxBinary16LatentMagnitude;
        if (binary16 && (std::fabs(l.lo) > limit || std::fabs(l.hi) > limit))
            return invalid(name + ".range: beyond [-16384, 16384], the limit of the binary16 arithmetic");
        const size_t count = static_cast<size_t>(w) * static_cast<size_t>(h) * static_cast<size_t>(g.feature_count);
        if (l.codes.size() != count) {
            return invalid(expected_got(name + ".codes size", static_cast<long long>(count),
                                        static_cast<long long>(l.codes.size())));
        }
        for (size_t i = 0; i < count; ++i) {
            if (l.codes[i] >> l.bits) {
                return invalid(name + ".codes[" + std::to_string(i) + "] = " + std::to_string(l.codes[i]) +
                               " does not fit in " + std::to_string(l.bits) + " bits");
            }
        }
    }
    return Status::success();
}

Status check_layer(const Layer& layer, const std::string& name) {
    const size_t n = static_cast<size_t>(layer.output_width);
    const size_t count = n * static_cast<size_t>(layer.input_width);
    if (layer.weights.size() != count) {
        return invalid(expected_got(name + ".weights size", static_cast<long long>(count),
                                    static_cast<long long>(layer.weights.size())));
    }
    for (size_t i = 0; i < count; ++i) {
        const uint8_t w = layer.weights[i];
        if (layer.weight_type == WeightType::e4m3 && (w & 0x7F) == 0x7F) {
            return invalid(name + ".weights[" + std::to_string(i) + "] is an E4M3 NaN code");
        }
        if (layer.weight_type == WeightType::int8 && w == 0x80) {
            return invalid(name + ".weights[" + std::to_string(i) + "] is the reserved Int8 value -128");
        }
    }
    if (layer.weight_type == WeightType::int8 && !layer.has_scale()) {
        return invalid(name + ": int8 weights need per-output scales");
    }
    if (layer.has_scale() && layer.scales.size() != n) {
        return invalid(expected_got(name + ".scales size", static_cast<long long>(n),
                                    static_cast<long long>(layer.scales.size())));
    }
    for (size_t i = 0; i < layer.scales.size(); ++i) {
        if (!std::isfinite(layer.scales[i])) return invalid(name + ".scales[" + std::to_string(i) + "] is not finite");
    }
    if (layer.biases.size() != n) {
        return invalid(expected_got(name + ".biases size", static_cast<long long>(n),
                                    static_cast<long long>(layer.biases.size())));
    }
    for (size_t i = 0; i < n; ++i) {
        if ((layer.biases[i] & 0x7C00) == 0x7C00) {
            return invalid(name + ".biases[" + std::to_string(i) + "] is not a finite binary16");
        }
    }
    return Status::success();
}

Status check_network(const Pack& pack) {
    const Network& net = pack.network;
    if (net.activation != "hgelu_clamped") {
        return invalid("network.activation: expected \"hgelu_clamped\", got \"" + net.activation + "\"");
    }
    if (net.layers.size() < 2 || net.layers.size() > 8) {
        return invalid("network.layers: " + std::to_string(net.layers.size()) + " layers, outside 2..8");
    }
    const int min_input = 2 * pack.latents.feature_count + 13;
    for (size_t l = 0; l < net.layers.size(); ++l) {
        const Layer& layer = net.layers[l];
        const std::string name = "network.layers[" + std::to_string(l) + "]";
        if (layer.input_width < 1 || layer.input_width > kMaxLayerWidth || layer.output_width < 1 ||
            layer.output_width > kMaxLayerWidth) {
            return invalid(name + ": widths " + std::to_string(layer.input_width) + " -> " +
                           std::to_string(layer.output_width) + " outside 1..256");
        }
        if (l == 0 && layer.input_width < min_input) {
            return invalid(name + ".input_width " + std::to_string(layer.input_width) +
                           " below 2F + 13 = " + std::to_string(min_input));
        }
        if (l > 0 && layer.input_width != net.layers[l - 1].output_width) {
            return invalid(expected_got(name + ".input_width", net.layers[l - 1].output_width, layer.input_width));
        }
        NMC_RETURN_IF_ERROR(check_layer(layer, name));
    }
    const int c = static_cast<int>(pack.channels.size());
    if (net.layers.back().output_width != c) {
        return invalid(
            expected_got("last layer's output_width (the channel count)", c, net.layers.back().output_width));
    }
    return Status::success();
}

// spec 5.4: the rules decoding relies on (pack channel indices, normal map shapes).
Status check_textures(const Pack& pack) {
    using Kind = ChannelSource::Kind;
    if (pack.textures.empty() || pack.textures.size() > 16) {
        return invalid("texture count " + std::to_string(pack.textures.size()) + " outside 1..16");
    }
    const int c = static_cast<int>(pack.channels.size());
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        const TextureLayout& tex = pack.textures[t];
        const std::string name = "textures[" + std::to_string(t) + "]";
        if (tex.channels.empty() || tex.channels.size() > 4) {
            return invalid(name + ": " + std::to_string(tex.channels.size()) + " channels, outside 1..4");
        }
        for (size_t i = 0; i < tex.channels.size(); ++i) {
            const ChannelSource& s = tex.channels[i];
            const bool normal_z_allowed = tex.normal_mode == NormalMode::xy && i == 2;
            if ((s.kind == Kind::normal_z) != normal_z_allowed) {
                return invalid(name + ".channels[" + std::to_string(i) +
                               "]: normal_z must be (only) the third "
                               "channel of an xy normal map");
            }
            if (s.kind == Kind::pack && (s.pack_channel < 0 || s.pack_channel >= c)) {
                return invalid(name + ".channels[" + std::to_string(i) + "].pack_channel " +
                               std::to_string(s.pack_channel) + " outside 0.." + std::to_string(c - 1));
            }
            if (s.kind == Kind::constant && !std::isfinite(s.constant_value)) {
                return invalid(name + ".channels[" + std::to_string(i) + "].value is not finite");
            }
        }
        if (tex.normal_mode != NormalMode::none) {
            const size_t pack_count = tex.normal_mode == NormalMode::xy ? 2 : 3;
            bool ok = tex.channels.size() == 3;
            for (size_t i = 0; ok && i < pack_count; ++i) ok = tex.channels[i].kind == Kind::pack;
            if (!ok) {
                return invalid(name + ": a normal map (" + to_string(tex.normal_mode) + ") needs exactly 3 channels, " +
                               "the first " + std::to_string(pack_count) + " from the pack");
            }
        }
    }
    return Status::success();
}

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
    m.padded_output_width = (layer.output_width + kTileTexels - 1) / kTileTexels * kTileTexels;
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
    NMC_RETURN_IF_ERROR(check_material(pack));
    NMC_RETURN_IF_ERROR(check_latents(pack));
    NMC_RETURN_IF_ERROR(check_network(pack));
    NMC_RETURN_IF_ERROR(check_textures(pack));

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
