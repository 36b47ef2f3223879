// Random but valid Packs built in code (no files), for the decoder tests and the CPU decoder benchmark.
// Deterministic for a seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/number_formats.h"
#include "format/pack.h"

namespace nmc::test {

struct RandomPackOptions {
    int width = 64;
    int height = 64;
    int mip_count = 0;  // 0: the full chain
    AddressMode address_mode = AddressMode::wrap;
    int grid_scale = 2;
    int feature_count = 8;
    int level_count = 0;                         // 0: one more than the mip count, at most 16
    std::vector<int> level_bits = {4, 2, 8, 1};  // level k uses level_bits[k % size]
    int channel_count = 9;
    std::vector<int> hidden_widths = {64, 64, 64};
    int extra_inputs = 3;  // layer 0 input = 2F + 13 + extra_inputs (zero inputs)
    bool int8_last_layer = true;
    float max_e4m3_weight = 0.25f;     // |W| bound of E4M3 layers
    bool e4m3_scales = false;          // give E4M3 layers per-output scales of about 1 / (|W| * sqrt(I))
    bool wide_channel_ranges = false;  // channel ranges other than [0, 1]
    uint32_t seed = 1;
};

inline int full_mip_count(int width, int height) {
    int m = 1;
    while ((std::max(width, height) >> m) > 0) ++m;
    return m;
}

// One pack channel per channel of a single "packed" texture set: textures of up to 4 channels cover the C
// channels in order.
inline std::vector<TextureLayout> plain_textures(int channel_count) {
    std::vector<TextureLayout> textures;
    for (int c = 0; c < channel_count; c += 4) {
        TextureLayout t;
        t.name = "texture" + std::to_string(c / 4);
        t.file_name = t.name + ".png";
        t.file_format = "png";
        for (int i = c; i < std::min(channel_count, c + 4); ++i) {
            ChannelSource s;
            s.pack_channel = i;
            t.channels.push_back(s);
        }
        textures.push_back(t);
    }
    return textures;
}

inline Pack make_random_pack(const RandomPackOptions& o) {
    std::mt19937 rng(o.seed);
    auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
    Pack pack;
    pack.material.name = "random";
    pack.material.width = o.width;
    pack.material.height = o.height;
    pack.material.mip_count = o.mip_count > 0 ? o.mip_count : full_mip_count(o.width, o.height);
    pack.material.address_mode = o.address_mode;
    for (int c = 0; c < o.channel_count; ++c) {
        ChannelInfo ch;
        ch.name = "channel" + std::to_string(c);
        if (o.wide_channel_ranges) {
            ch.lo = uniform(-4.0f, 0.5f);
            ch.hi = ch.lo + uniform(0.25f, 8.0f);
        }
        pack.channels.push_back(ch);
    }
    pack.textures = plain_textures(o.channel_count);

    pack.latents.feature_count = o.feature_count;
    pack.latents.grid_scale = o.grid_scale;
    const int levels = o.level_count > 0 ? o.level_count : std::min(16, std::max(2, pack.material.mip_count + 1));
    for (int k = 0; k < levels; ++k) {
        LatentLevel l;
        l.width = latent_level_size(o.width, o.grid_scale, k);
        l.height = latent_level_size(o.height, o.grid_scale, k);
        l.bits = o.level_bits[static_cast<size_t>(k) % o.level_bits.size()];
        l.lo = uniform(-1.0f, -0.1f);
        l.hi = uniform(0.1f, 1.0f);
        l.codes.resize(static_cast<size_t>(l.width) * static_cast<size_t>(l.height) *
                       static_cast<size_t>(o.feature_count));
        std::uniform_int_distribution<int> code(0, (1 << l.bits) - 1);
        for (uint8_t& q : l.codes) q = static_cast<uint8_t>(code(rng));
        pack.latents.levels.push_back(std::move(l));
    }

    // spec 5.6 / 7: E4M3 hidden layers with |W| <= max_e4m3_weight, the last layer Int8 + scale (or E4M3).
    std::vector<int> widths = {network_input_count(o.feature_count) + o.extra_inputs};
    widths.insert(widths.end(), o.hidden_widths.begin(), o.hidden_widths.end());
    widths.push_back(o.channel_count);
    for (size_t l = 0; l + 1 < widths.size(); ++l) {
        Layer layer;
        layer.input_width = widths[l];
        layer.output_width = widths[l + 1];
        const bool last = l + 2 == widths.size();
        layer.weight_type = last && o.int8_last_layer ? WeightType::int8 : WeightType::e4m3;
        layer.weights.resize(static_cast<size_t>(layer.input_width) * static_cast<size_t>(layer.output_width));
        for (uint8_t& w : layer.weights) {
            if (layer.weight_type == WeightType::int8) {
                w = static_cast<uint8_t>(static_cast<int8_t>(std::uniform_int_distribution<int>(-127, 127)(rng)));
            } else {
                // Codes drawn uniformly (so exponents are too): large and tiny weights mix as in trained nets.
                std::uniform_int_distribution<int> code(0, 255);
                do {
                    w = static_cast<uint8_t>(code(rng));
                } while ((w & 0x7F) == 0x7F || std::fabs(fp8_e4m3_to_float(w)) > o.max_e4m3_weight);
            }
        }
        for (int n = 0; n < layer.output_width; ++n) {
            // Outputs of roughly unit size: a row of I random weights up to |W| sums to about |W| * sqrt(I) * |x|.
            const float max_weight = layer.weight_type == WeightType::int8 ? 127.0f : o.max_e4m3_weight;
            if (layer.weight_type == WeightType::int8 || o.e4m3_scales) {
                const float row_norm = max_weight * std::sqrt(static_cast<float>(layer.input_width));
                layer.scales.push_back(uniform(0.5f, 2.0f) / row_norm);
            }
            // Multiples of 2^-12 (exact in fp16 below 0.5): a term of the exact sums below (spec 8.6).
            layer.biases.push_back(float_to_fp16(std::round(uniform(last ? 0.0f : -0.5f, 0.5f) * 4096.0f) / 4096.0f));
        }
        pack.network.layers.push_back(std::move(layer));
    }
    return pack;
}

// A general pack: E4M3 weights over the whole E4M3 range (codes drawn uniformly, so tiny and large weights mix)
// scaled back to unit-sized outputs, and an E4M3 last layer, F = 16, C = 12, wide channel ranges. Partial sums reach
// thousands while products are multiples of 2^-18, so float32 sums round and the summation order shows in the output;
// activations reach far beyond [-3, 3].
inline RandomPackOptions general_pack_options() {
    RandomPackOptions o;
    o.width = 96;
    o.height = 80;
    o.feature_count = 16;
    o.channel_count = 12;
    o.max_e4m3_weight = 448.0f;
    o.e4m3_scales = true;
    o.int8_last_layer = false;
    o.wide_channel_ranges = true;
    o.seed = 11;
    return o;
}

// The CUDA benchmark's pack shape (bench/cuda_decoder_bench.cu, bench/vulkan_decoder_bench.cpp): size x size, full
// mip chain, grid scale 2, 16 features of 4 bits, the default network 48 -> 64 -> 64 -> 64 -> channels.
inline RandomPackOptions default_network_options(int size, int channels) {
    RandomPackOptions o;
    o.width = size;
    o.height = size;
    o.grid_scale = 2;
    o.feature_count = 16;
    o.level_bits = {4};
    o.channel_count = channels;
    o.extra_inputs = 3;  // 2 * 16 + 13 + 3 = 48 inputs
    o.seed = 42;
    return o;
}

// Packs on which every correct decoder must give the same bits, whatever its summation order. E4M3 values are
// multiples of 2^-9, so E4M3 x E4M3 products are multiples of 2^-18 and Int8 x E4M3 products multiples of 2^-9. A
// float32 multiple of 2^-18 below 2^6 (of 2^-9 below 2^15) is exact, so when every partial sum stays below that,
// every summation order (SIMD lanes, tensor cores) gives the exact sum. A layer without scales may add its bias as
// one more term of the sum (spec 8.6): biases are multiples of 2^-12 and at most 0.5, which keeps that true. These
// packs keep |W| <= 0.25 for E4M3 layers, widths <= 64, and inputs |x'| <= 3 (latents within [-1, 1], saw waves within
// [-1, 1], LOD at most 11 * 0.25, hgelu at most 3): partial sums are at most 64 * 0.25 * 3 = 48 < 64, and 64 * 127 * 3
// = 24384 < 2^15 for the Int8 layer.
struct ExactCase {
    const char* name;
    RandomPackOptions options;
};

inline std::vector<ExactCase> exact_sum_cases() {
    std::vector<ExactCase> cases;
    RandomPackOptions base;
    cases.push_back({"wrap 64x64 F8", base});
    RandomPackOptions clamp = base;
    clamp.address_mode = AddressMode::clamp;
    clamp.seed = 2;
    cases.push_back({"clamp 64x64 F8", clamp});
    RandomPackOptions odd = base;  // 37x19: every mip ends in a partial block or warp; F = 5: no aligned loads
    odd.width = 37;
    odd.height = 19;
    odd.grid_scale = 3;
    odd.feature_count = 5;
    odd.channel_count = 7;
    odd.hidden_widths = {40, 24};
    odd.extra_inputs = 0;
    odd.seed = 3;
    cases.push_back({"wrap 37x19 F5 odd widths", odd});
    RandomPackOptions odd_clamp = odd;
    odd_clamp.address_mode = AddressMode::clamp;
    odd_clamp.level_count = 2;
    odd_clamp.seed = 4;
    cases.push_back({"clamp 37x19 two levels", odd_clamp});
    RandomPackOptions ranges = base;
    ranges.feature_count = 16;
    ranges.channel_count = 16;
    ranges.wide_channel_ranges = true;
    ranges.int8_last_layer = false;
    ranges.seed = 5;
    cases.push_back({"F16 C16 wide ranges, E4M3 last layer", ranges});
    return cases;
}

}  // namespace nmc::test
