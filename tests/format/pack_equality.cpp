// Field-by-field Pack comparison; floats by bit pattern so -0.0 and 0.0 differ.
#include "tests/format/pack_equality.h"

#include <gtest/gtest.h>

#include <cstring>

namespace nmc::testing {
namespace {

bool same_float(float a, float b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!same_float(a[i], b[i])) return false;
    return true;
}

bool same_source(const ChannelSource& a, const ChannelSource& b) {
    if (a.kind != b.kind || a.semantic != b.semantic) return false;
    if (a.kind == ChannelSource::Kind::pack) return a.pack_channel == b.pack_channel && a.invert == b.invert;
    if (a.kind == ChannelSource::Kind::constant) return same_float(a.constant_value, b.constant_value);
    return true;
}

bool same_texture(const TextureLayout& a, const TextureLayout& b) {
    if (a.name != b.name || a.file_name != b.file_name || a.file_format != b.file_format ||
        a.sample_type != b.sample_type || a.color_space != b.color_space ||
        a.normal_convention != b.normal_convention || a.normal_mode != b.normal_mode ||
        a.value_encoding != b.value_encoding || !same_float(a.peak, b.peak) ||
        a.source_sha256 != b.source_sha256 || a.channels.size() != b.channels.size())
        return false;
    for (size_t i = 0; i < a.channels.size(); ++i)
        if (!same_source(a.channels[i], b.channels[i])) return false;
    return true;
}

bool same_level(const LatentLevel& a, const LatentLevel& b) {
    return a.width == b.width && a.height == b.height && a.bits == b.bits && same_float(a.lo, b.lo) &&
           same_float(a.hi, b.hi) && a.codes == b.codes;
}

bool same_layer(const Layer& a, const Layer& b) {
    return a.input_width == b.input_width && a.output_width == b.output_width && a.weight_type == b.weight_type &&
           a.weights == b.weights && same_floats(a.scales, b.scales) && a.biases == b.biases;
}

bool same_texture_quality(const TextureQuality& a, const TextureQuality& b) {
    return a.texture == b.texture && a.psnr_db == b.psnr_db && a.channels == b.channels && a.mips == b.mips &&
           a.mean_angle_deg == b.mean_angle_deg && a.psnr8_mip0_db == b.psnr8_mip0_db;
}

}  // namespace

bool expect_same_pack(const Pack& a, const Pack& b) {
    const MaterialInfo& ma = a.material;
    const MaterialInfo& mb = b.material;
    const bool material = ma.name == mb.name && ma.width == mb.width && ma.height == mb.height &&
                          ma.mip_count == mb.mip_count && ma.address_mode == mb.address_mode;
    EXPECT_TRUE(material) << "material differs";

    bool channels = a.channels.size() == b.channels.size();
    for (size_t i = 0; channels && i < a.channels.size(); ++i)
        channels = a.channels[i].name == b.channels[i].name && same_float(a.channels[i].lo, b.channels[i].lo) &&
                   same_float(a.channels[i].hi, b.channels[i].hi);
    EXPECT_TRUE(channels) << "channels differ";

    bool textures = a.textures.size() == b.textures.size();
    for (size_t i = 0; textures && i < a.textures.size(); ++i) textures = same_texture(a.textures[i], b.textures[i]);
    EXPECT_TRUE(textures) << "textures differ";

    bool latents = a.latents.feature_count == b.latents.feature_count && a.latents.grid_scale == b.latents.grid_scale &&
                   a.latents.levels.size() == b.latents.levels.size();
    for (size_t k = 0; latents && k < a.latents.levels.size(); ++k)
        latents = same_level(a.latents.levels[k], b.latents.levels[k]);
    EXPECT_TRUE(latents) << "latents differ";

    bool network = a.network.activation == b.network.activation && a.network.arithmetic == b.network.arithmetic &&
                   a.network.layers.size() == b.network.layers.size();
    for (size_t l = 0; network && l < a.network.layers.size(); ++l)
        network = same_layer(a.network.layers[l], b.network.layers[l]);
    EXPECT_TRUE(network) << "network differs";

    const EncoderInfo& ea = a.encoder;
    const EncoderInfo& eb = b.encoder;
    const bool encoder = ea.tool == eb.tool && ea.preset == eb.preset && ea.target_bpp == eb.target_bpp &&
                         ea.steps == eb.steps && ea.seed == eb.seed && ea.device == eb.device &&
                         ea.training_seconds == eb.training_seconds && ea.source_folder == eb.source_folder &&
                         ea.trainer == eb.trainer && ea.batch_size == eb.batch_size &&
                         ea.latent_learning_rate == eb.latent_learning_rate &&
                         ea.network_learning_rate == eb.network_learning_rate &&
                         ea.latent_rounding == eb.latent_rounding && ea.latent_rounding_at == eb.latent_rounding_at &&
                         ea.weight_rounding_at == eb.weight_rounding_at && ea.latent_adam == eb.latent_adam;
    EXPECT_TRUE(encoder) << "encoder differs";

    const QualityReport& qa = a.quality;
    const QualityReport& qb = b.quality;
    bool quality = qa.present == qb.present && qa.psnr_db == qb.psnr_db && qa.bits_per_texel == qb.bits_per_texel &&
                   qa.psnr8_mip0_db == qb.psnr8_mip0_db && qa.channels == qb.channels && qa.mips == qb.mips &&
                   qa.textures.size() == qb.textures.size();
    for (size_t i = 0; quality && i < qa.textures.size(); ++i)
        quality = same_texture_quality(qa.textures[i], qb.textures[i]);
    EXPECT_TRUE(quality) << "quality differs";

    return material && channels && textures && latents && network && encoder && quality;
}

std::vector<uint8_t> pack_bytes_without_training_time(const std::string& path) {
    Result<Pack> pack = read_pack_file(path);
    EXPECT_TRUE(pack.ok()) << pack.status().to_string();
    if (!pack.ok()) return {};
    pack->encoder.training_seconds = 0;
    pack->quality.bits_per_texel = 0;
    Result<std::vector<uint8_t>> bytes = write_pack(pack.value());
    EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
    return bytes.ok() ? bytes.value() : std::vector<uint8_t>{};
}

}  // namespace nmc::testing
