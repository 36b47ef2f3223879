// Builds the golden Pack deterministically (a fixed linear congruential sequence, no platform randomness).
#include "tests/format/golden_pack.h"

#include "core/checksum.h"
#include "core/number_formats.h"

namespace nmc::testing {
namespace {

// Numerical Recipes' 32-bit LCG: the same sequence on every platform.
class Sequence {
public:
    uint32_t next() {
        state_ = state_ * 1664525u + 1013904223u;
        return state_ >> 8;
    }

private:
    uint32_t state_ = 12345u;
};

ChannelSource pack_source(Semantic semantic, int channel, bool invert = false) {
    ChannelSource s;
    s.kind = ChannelSource::Kind::pack;
    s.semantic = semantic;
    s.pack_channel = channel;
    s.invert = invert;
    return s;
}

ChannelSource constant_source(Semantic semantic, float value) {
    ChannelSource s;
    s.kind = ChannelSource::Kind::constant;
    s.semantic = semantic;
    s.constant_value = value;
    return s;
}

TextureLayout texture(const std::string& name, const std::string& extension, SampleType sample_type,
                      ColorSpace color_space, std::vector<ChannelSource> channels) {
    TextureLayout t;
    t.name = name;
    t.file_name = name + "." + extension;
    t.file_format = extension;
    t.sample_type = sample_type;
    t.color_space = color_space;
    t.channels = std::move(channels);
    t.source_sha256 = Sha256::hex_digest(name.data(), name.size());
    return t;
}

Layer layer(Sequence& seq, int input_width, int output_width, WeightType type, bool scaled) {
    Layer l;
    l.input_width = input_width;
    l.output_width = output_width;
    l.weight_type = type;
    for (int i = 0; i < input_width * output_width; ++i) {
        if (type == WeightType::e4m3) {
            const auto code = static_cast<uint8_t>(seq.next());
            l.weights.push_back((code & 0x7F) == 0x7F ? uint8_t{0} : code);  // no NaN codes
        } else {
            l.weights.push_back(static_cast<uint8_t>(static_cast<int>(seq.next() % 255) - 127));
        }
    }
    for (int n = 0; n < output_width; ++n) {
        if (scaled) l.scales.push_back(0.001f * static_cast<float>(n + 1) + 1.0f / 127.0f);
        l.biases.push_back(float_to_fp16(static_cast<float>(n - 8) * 0.0625f));
    }
    return l;
}

}  // namespace

Pack make_golden_pack() {
    Pack p;
    p.material = {"golden_small", 32, 16, 3, AddressMode::wrap};
    p.channels = {{"albedo.r", 0.0f, 1.0f}, {"albedo.g", 0.0f, 1.0f}, {"albedo.b", 0.0f, 1.0f},
                  {"normal.x", 0.0f, 1.0f}, {"normal.y", 0.0f, 1.0f}, {"roughness", 0.0f, 1.0f},
                  {"height", -0.1f, 2.5f}};

    p.textures.push_back(texture(
        "golden_Color", "png", SampleType::uint8, ColorSpace::srgb,
        {pack_source(Semantic::albedo, 0), pack_source(Semantic::albedo, 1), pack_source(Semantic::albedo, 2)}));
    ChannelSource z;
    z.kind = ChannelSource::Kind::normal_z;
    z.semantic = Semantic::normal;
    TextureLayout normal = texture("golden_NormalDX", "png", SampleType::uint8, ColorSpace::linear,
                                   {pack_source(Semantic::normal, 3), pack_source(Semantic::normal, 4, true), z});
    normal.normal_mode = NormalMode::xy;
    normal.normal_convention = NormalConvention::directx;
    p.textures.push_back(normal);
    p.textures.push_back(
        texture("golden_ORM", "png", SampleType::uint8, ColorSpace::linear,
                {constant_source(Semantic::ambient_occlusion, 1.0f), pack_source(Semantic::roughness, 5),
                 constant_source(Semantic::metalness, 1.0f / 3.0f)}));
    p.textures.push_back(
        texture("golden_Height", "exr", SampleType::float32, ColorSpace::linear, {pack_source(Semantic::height, 6)}));
    p.textures.back().source_sha256 = "";

    Sequence seq;
    p.latents.feature_count = 4;
    p.latents.grid_scale = 2;
    const int bits[] = {4, 2, 1, 8};
    const float ranges[][2] = {{-1.0f, 1.0f}, {-0.5f, 0.75f}, {-2.0f, 2.0f}, {-1.5f, 1.25f}};
    for (int k = 0; k < 4; ++k) {
        LatentLevel l;
        l.width = latent_level_size(p.material.width, p.latents.grid_scale, k);
        l.height = latent_level_size(p.material.height, p.latents.grid_scale, k);
        l.bits = bits[k];
        l.lo = ranges[k][0];
        l.hi = ranges[k][1];
        const size_t count = static_cast<size_t>(l.width * l.height * p.latents.feature_count);
        for (size_t i = 0; i < count; ++i) l.codes.push_back(static_cast<uint8_t>(seq.next() & ((1u << l.bits) - 1u)));
        p.latents.levels.push_back(std::move(l));
    }

    p.network.layers.push_back(layer(seq, 32, 16, WeightType::e4m3, false));
    p.network.layers.push_back(layer(seq, 16, 16, WeightType::e4m3, true));
    p.network.layers.push_back(layer(seq, 16, 7, WeightType::int8, true));

    p.encoder.tool = "nmc 0.1.0";
    p.encoder.preset = "golden";
    p.encoder.target_bpp = 0.1;
    p.encoder.steps = 1000;
    p.encoder.seed = 42;
    p.encoder.device = "cpu";
    p.encoder.training_seconds = 1.25;
    p.encoder.source_folder = "materials/golden_small";  // no training schedule: another tool's pack

    p.quality.present = true;
    p.quality.psnr_db = 38.5;
    p.quality.bits_per_texel = 0.3;
    p.quality.psnr8_mip0_db = 37.25;
    p.quality.channels = {40.1, 40.2, 40.3, 35.5, 35.25, 99.0, 41.0};
    p.quality.mips = {38.0, 39.5, 41.75};
    p.quality.textures = {{"golden_Color", 40.2, {40.1, 40.2, 40.3}, {39.0, 40.0, 41.0}, -1},
                          {"golden_NormalDX", 35.4, {35.5, 35.25, 36.0}, {35.0, 35.5, 36.5}, 2.5},
                          {"golden_ORM", 99.0, {99.0, 99.0, 99.0}, {99.0, 99.0, 99.0}, -1},
                          {"golden_Height", 41.0, {41.0}, {40.5, 41.0, 42.0}, -1}};
    return p;
}

Pack make_golden_pack_2_0() {
    Pack p = make_golden_pack();
    p.network.arithmetic = Arithmetic::binary16;
    p.encoder.tool = "nmc 0.2.0";
    p.encoder.trainer = "fused";
    p.encoder.batch_size = 65536;
    p.encoder.latent_learning_rate = 0.015;
    p.encoder.network_learning_rate = 0.004;
    p.encoder.latent_rounding = "straight-through";
    p.encoder.latent_rounding_at = 0.9;
    p.encoder.weight_rounding_at = 0.96;
    p.encoder.latent_adam = "sparse";
    return p;
}

std::string golden_pack_path(int version_major) {
    return std::string(NMC_SOURCE_DIR) + "/data/golden/v" + std::to_string(version_major) + "_0_small.nmc";
}

WriteOptions golden_write_options() {
    WriteOptions options;
    options.compress = false;
    return options;
}

}  // namespace nmc::testing
