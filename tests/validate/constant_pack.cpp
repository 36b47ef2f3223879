// Builds the constant-output packs of constant_pack.h and writes their sources.
#include "tests/validate/constant_pack.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/number_formats.h"
#include "decoder/cpu/cpu_decoder.h"
#include "material/image_io.h"
#include "quality/quality_measurement.h"

namespace nmc::testing {

Pack constant_pack(int width, int height, int mips, const std::vector<ChannelInfo>& channels,
                   const std::vector<float>& outputs) {
    Pack pack;
    pack.material = {"constant", width, height, mips, AddressMode::wrap};
    pack.channels = channels;

    // F = 1 (layer 0 needs at least 2F + 13 = 15 inputs), two 1-bit levels of zero codes: the latents do not
    // matter, every weight is zero.
    pack.latents.feature_count = 1;
    pack.latents.grid_scale = 2;
    for (int k = 0; k < 2; ++k) {
        LatentLevel level;
        level.width = latent_level_size(width, pack.latents.grid_scale, k);
        level.height = latent_level_size(height, pack.latents.grid_scale, k);
        level.bits = 1;
        level.codes.assign(static_cast<size_t>(level.width) * static_cast<size_t>(level.height), 0);
        pack.latents.levels.push_back(std::move(level));
    }

    // Layer 0: 16 -> 16 E4M3, zero weights and biases, so every activation is hgelu(0) = 0.
    Layer hidden;
    hidden.input_width = 16;
    hidden.output_width = 16;
    hidden.weights.assign(16 * 16, 0);
    hidden.biases.assign(16, float_to_fp16(0.0f));
    // Layer 1: 16 -> C Int8 + scale, zero weights: o[c] = 0 * scale + bias[c] = outputs[c].
    Layer last;
    last.input_width = 16;
    last.output_width = static_cast<int>(channels.size());
    last.weight_type = WeightType::int8;
    last.weights.assign(16 * channels.size(), 0);
    last.scales.assign(channels.size(), 1.0f);
    for (float o : outputs) last.biases.push_back(float_to_fp16(o));
    pack.network.layers = {hidden, last};
    pack.encoder.tool = "constant_pack (tests)";
    return pack;
}

ChannelSource from_pack(int pack_channel, Semantic semantic, bool invert) {
    ChannelSource s;
    s.kind = ChannelSource::Kind::pack;
    s.pack_channel = pack_channel;
    s.semantic = semantic;
    s.invert = invert;
    return s;
}

ChannelSource constant_channel(float value, Semantic semantic) {
    ChannelSource s;
    s.kind = ChannelSource::Kind::constant;
    s.constant_value = value;
    s.semantic = semantic;
    return s;
}

ChannelSource normal_z_channel() {
    ChannelSource s;
    s.kind = ChannelSource::Kind::normal_z;
    s.semantic = Semantic::normal;
    return s;
}

TextureLayout texture_layout(const std::string& file_name, SampleType sample_type, ColorSpace color_space,
                             std::vector<ChannelSource> channels) {
    TextureLayout t;
    t.name = file_name.substr(0, file_name.rfind('.'));
    t.file_name = file_name;
    t.file_format = image_format_from_file_name(file_name);
    t.sample_type = sample_type;
    t.color_space = color_space;
    t.channels = std::move(channels);
    return t;
}

Status write_sources(Pack& pack, const std::string& folder, const std::vector<Image>& images) {
    if (images.size() != pack.textures.size())
        return Status(StatusCode::invalid_argument, "write_sources: one image per texture");
    for (size_t t = 0; t < images.size(); ++t) {
        TextureLayout& layout = pack.textures[t];
        Image image = images[t];
        image.sample_type = layout.sample_type;
        const std::string path = folder + "/" + layout.file_name;
        NMC_RETURN_IF_ERROR(write_image(path, image, layout.file_format, true));
        auto file = read_image_file(path);
        if (!file.ok()) return file.status();
        layout.source_sha256 = file->sha256;
    }
    pack.encoder.source_folder = folder;
    return Status::success();
}

Status store_measured_quality(Pack& pack, const std::string& folder) {
    auto reference = load_reference(folder, pack);
    if (!reference.ok()) return reference.status();
    auto decoder = CpuDecoder::create(pack);
    if (!decoder.ok()) return decoder.status();
    auto quality = measure_quality(cpu_pack_decoder(decoder.value()), pack, reference.value());
    if (!quality.ok()) return quality.status();
    auto bytes = write_pack(pack);
    if (!bytes.ok()) return bytes.status();
    const double bpp = static_cast<double>(bytes->size()) * 8.0 /
                       (static_cast<double>(pack.material.width) * static_cast<double>(pack.material.height));
    pack.quality = to_quality_report(quality.value(), bpp);
    return Status::success();
}

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nmc-validate-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

bool file_exists(const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace nmc::testing
