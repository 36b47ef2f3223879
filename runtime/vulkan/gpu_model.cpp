// Pack -> GPU model buffer (runtime/vulkan/shaders/model_layout.h). The dequantisation tables and texel centres come
// from the reference decoder's own functions, so the GPU reads the values the CPU computes.
#include "runtime/vulkan/gpu_model.h"

#include <algorithm>
#include <string>

#include "core/hlg.h"
#include "core/number_formats.h"
#include "decoder/common/reference_math.h"
#include "format/payload.h"
#include "runtime/vulkan/shaders/model_layout.h"

namespace nmc {
namespace {

// Appends values to the buffer and returns the word offset where they start.
class WordWriter {
public:
    explicit WordWriter(std::vector<uint32_t>& words) : words_(words) {}
    uint32_t floats(const std::vector<float>& values) {
        const auto offset = static_cast<uint32_t>(words_.size());
        for (float v : values) words_.push_back(float_bits(v));
        return offset;
    }
    // Zero words up to a multiple of `words` (an alignment in words).
    void align(size_t words) { words_.resize((words_.size() + words - 1) / words * words, 0); }
    // binary16 codes, two a word (element 2i in the low half, as a GPU's 16-bit array reads them).
    uint32_t halves(const std::vector<uint16_t>& codes) {
        const auto offset = static_cast<uint32_t>(words_.size());
        words_.resize(words_.size() + (codes.size() + 1) / 2, 0);
        for (size_t i = 0; i < codes.size(); ++i)
            words_[offset + i / 2] |= static_cast<uint32_t>(codes[i]) << (16 * (i % 2));
        return offset;
    }
    uint32_t bytes(const uint8_t* data, size_t size) {
        const auto offset = static_cast<uint32_t>(words_.size());
        words_.resize(words_.size() + (size + 3) / 4, 0);
        for (size_t i = 0; i < size; ++i)
            words_[offset + i / 4] |= static_cast<uint32_t>(data[i]) << (8 * (i % 4));  // little-endian words
        return offset;
    }

private:
    std::vector<uint32_t>& words_;
};

int log2_of(int power_of_two) {
    int log = 0;
    while ((1 << log) < power_of_two) ++log;
    return log;
}

}  // namespace

Result<GpuModel> build_gpu_model(const Pack& pack) {
    const Status rules = check_pack(pack);
    if (!rules.ok()) return rules;
    const LatentGrids& latents = pack.latents;
    for (size_t k = 0; k < latents.levels.size(); ++k) {
        const uint64_t features = latents.levels[k].codes.size();
        if (features >> 32 != 0)
            return Status(StatusCode::limit_exceeded, "GPU runtime: latent level " + std::to_string(k) + " holds " +
                                                          std::to_string(features) +
                                                          " features; the runtime indexes at most 2^32 - 1 a level");
    }

    GpuModel model;
    std::vector<uint32_t>& words = model.words;
    words.assign(NMC_HEADER_WORDS, 0);
    WordWriter writer(words);
    words[NMC_HEADER_LAYOUT_VERSION] = NMC_MODEL_LAYOUT_VERSION;
    words[NMC_HEADER_WIDTH] = static_cast<uint32_t>(pack.material.width);
    words[NMC_HEADER_HEIGHT] = static_cast<uint32_t>(pack.material.height);
    words[NMC_HEADER_MIP_COUNT] = static_cast<uint32_t>(pack.material.mip_count);
    words[NMC_HEADER_ADDRESS_MODE] =
        pack.material.address_mode == AddressMode::clamp ? NMC_ADDRESS_CLAMP : NMC_ADDRESS_WRAP;
    words[NMC_HEADER_ARITHMETIC] =
        pack.network.arithmetic == Arithmetic::binary16 ? NMC_ARITHMETIC_BINARY16 : NMC_ARITHMETIC_FLOAT32;
    words[NMC_HEADER_FEATURE_COUNT] = static_cast<uint32_t>(latents.feature_count);
    words[NMC_HEADER_LEVEL_COUNT] = static_cast<uint32_t>(latents.levels.size());
    words[NMC_HEADER_LAYER_COUNT] = static_cast<uint32_t>(pack.network.layers.size());
    words[NMC_HEADER_CHANNEL_COUNT] = static_cast<uint32_t>(pack.channels.size());
    words[NMC_HEADER_ONE_THIRD_FLOAT32] = float_bits(kOneThirdFloat32);
    words[NMC_HEADER_ONE_THIRD_BINARY16] = float_bits(kOneThirdBinary16);
    words[NMC_HEADER_HLG] = float_bits(kHlgA);
    words[NMC_HEADER_HLG + 1] = float_bits(kHlgB);
    words[NMC_HEADER_HLG + 2] = float_bits(kHlgC);

    // spec 5.4: what decoding a texture's source channels and file values needs (8.8-8.10).
    words[NMC_HEADER_TEXTURE_COUNT] = static_cast<uint32_t>(pack.textures.size());
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        const TextureLayout& texture = pack.textures[t];
        uint32_t* w = &words[NMC_HEADER_TEXTURES + t * NMC_TEXTURE_WORDS];
        w[NMC_TEXTURE_CHANNEL_COUNT] = static_cast<uint32_t>(texture.channels.size());
        w[NMC_TEXTURE_NORMAL_MODE] = texture.normal_mode == NormalMode::xy    ? NMC_NORMAL_XY
                                     : texture.normal_mode == NormalMode::xyz ? NMC_NORMAL_XYZ
                                                                              : NMC_NORMAL_NONE;
        w[NMC_TEXTURE_SAMPLE_TYPE] = texture.sample_type == SampleType::uint16    ? NMC_SAMPLE_UINT16
                                     : texture.sample_type == SampleType::float16 ? NMC_SAMPLE_FLOAT16
                                     : texture.sample_type == SampleType::float32 ? NMC_SAMPLE_FLOAT32
                                                                                  : NMC_SAMPLE_UINT8;
        w[NMC_TEXTURE_COLOR_SPACE] = texture.color_space == ColorSpace::srgb ? NMC_COLOR_SRGB : NMC_COLOR_LINEAR;
        for (size_t i = 0; i < texture.channels.size(); ++i) {
            const ChannelSource& source = texture.channels[i];
            uint32_t* c = &w[NMC_TEXTURE_CHANNELS + 3 * i];
            c[NMC_CHANNEL_KIND] = source.kind == ChannelSource::Kind::constant   ? NMC_SOURCE_CONSTANT
                                  : source.kind == ChannelSource::Kind::normal_z ? NMC_SOURCE_NORMAL_Z
                                                                                 : NMC_SOURCE_PACK;
            if (source.invert) c[NMC_CHANNEL_KIND] |= NMC_SOURCE_INVERT;
            c[NMC_CHANNEL_PACK_CHANNEL] = source.pack_channel < 0 ? 0u : static_cast<uint32_t>(source.pack_channel);
            c[NMC_CHANNEL_CONSTANT] = float_bits(source.constant_value);
            if (source.kind == ChannelSource::Kind::pack && texture.value_encoding == ValueEncoding::hlg) {
                c[NMC_CHANNEL_KIND] |= NMC_SOURCE_HLG;
                c[NMC_CHANNEL_CONSTANT] = float_bits(texture.peak);
            }
        }
    }

    // spec 5.3: the output ranges.
    std::vector<float> ranges;
    for (const ChannelInfo& channel : pack.channels) {
        ranges.push_back(channel.lo);
        ranges.push_back(channel.hi);
    }
    words[NMC_HEADER_CHANNEL_RANGES] = writer.floats(ranges);

    // spec 8: the texel centres of every mip, u = (x + 0.5) / w_m and v = (y + 0.5) / h_m.
    for (int m = 0; m < pack.material.mip_count; ++m) {
        const int w = pack.material.mip_width(m);
        const int h = pack.material.mip_height(m);
        std::vector<float> u(static_cast<size_t>(w));
        std::vector<float> v(static_cast<size_t>(h));
        for (int x = 0; x < w; ++x) u[static_cast<size_t>(x)] = texel_centre(x, w);
        for (int y = 0; y < h; ++y) v[static_cast<size_t>(y)] = texel_centre(y, h);
        const uint32_t mip = NMC_HEADER_MIPS + static_cast<uint32_t>(m) * NMC_MIP_WORDS;
        words[mip + NMC_MIP_U_TABLE] = writer.floats(u);
        words[mip + NMC_MIP_V_TABLE] = writer.floats(v);
    }

    // spec 5.6 and 7: weights as float32 rows, scales, biases.
    for (size_t l = 0; l < pack.network.layers.size(); ++l) {
        const Layer& layer = pack.network.layers[l];
        std::vector<float> weights(layer.weights.size());
        for (size_t i = 0; i < weights.size(); ++i)
            weights[i] = layer.weight_type == WeightType::int8
                             ? static_cast<float>(static_cast<int8_t>(layer.weights[i]))
                             : fp8_e4m3_to_float(layer.weights[i]);
        std::vector<float> scales =
            layer.has_scale() ? layer.scales : std::vector<float>(static_cast<size_t>(layer.output_width), 1.0f);
        std::vector<float> biases(layer.biases.size());
        std::transform(layer.biases.begin(), layer.biases.end(), biases.begin(), fp16_to_float);
        const uint32_t header = NMC_HEADER_LAYERS + static_cast<uint32_t>(l) * NMC_LAYER_WORDS;
        words[header + NMC_LAYER_INPUT_WIDTH] = static_cast<uint32_t>(layer.input_width);
        words[header + NMC_LAYER_OUTPUT_WIDTH] = static_cast<uint32_t>(layer.output_width);
        // Groups of four outputs: words 4 (q I + i) .. +3 hold W[4q .. 4q + 3][i], zero past the last output.
        const size_t inputs = static_cast<size_t>(layer.input_width);
        const size_t outputs = static_cast<size_t>(layer.output_width);
        std::vector<float> quads((outputs + 3) / 4 * 4 * inputs, 0.0f);
        for (size_t n = 0; n < outputs; ++n)
            for (size_t i = 0; i < inputs; ++i) quads[((n / 4) * inputs + i) * 4 + n % 4] = weights[n * inputs + i];
        writer.align(4);
        words[header + NMC_LAYER_WEIGHT_QUADS] = writer.floats(quads);
        words[header + NMC_LAYER_SCALES] = writer.floats(scales);
        words[header + NMC_LAYER_BIASES] = writer.floats(biases);
        // The transposed, padded binary16 copy for cooperative-matrix products.
        const uint32_t rows = NMC_PADDED(static_cast<uint32_t>(layer.input_width));
        const uint32_t columns = NMC_PADDED(static_cast<uint32_t>(layer.output_width));
        std::vector<uint16_t> half(static_cast<size_t>(rows) * columns, 0);
        for (size_t n = 0; n < static_cast<size_t>(layer.output_width); ++n)
            for (size_t i = 0; i < static_cast<size_t>(layer.input_width); ++i)
                half[i * columns + n] = float_to_fp16(weights[n * static_cast<size_t>(layer.input_width) + i]);
        writer.align(4);
        words[header + NMC_LAYER_WEIGHTS_HALF] = writer.halves(half);
        model.max_width = std::max({model.max_width, layer.input_width, layer.output_width});
    }
    words[NMC_HEADER_MAX_WIDTH] = static_cast<uint32_t>(model.max_width);
    model.shape.assign(NMC_SHAPE_CONSTANTS, 0);
    model.shape[0] = static_cast<uint32_t>(pack.network.layers.size());
    for (size_t l = 0; l < pack.network.layers.size(); ++l) {
        model.shape[1 + l] = static_cast<uint32_t>(pack.network.layers[l].input_width);
        model.shape[2 + l] = static_cast<uint32_t>(pack.network.layers[l].output_width);
    }
    model.shape[NMC_SHAPE_CONSTANTS - 1] = static_cast<uint32_t>(latents.feature_count);

    // spec 6: the LATN bit streams as the pack stores them (levels at 16-byte offsets), and each level's values.
    const std::vector<uint8_t> stream = pack_latents(latents);
    const uint32_t codes = writer.bytes(stream.data(), stream.size());
    const std::vector<uint64_t> offsets = latent_level_offsets(latents);
    for (size_t k = 0; k < latents.levels.size(); ++k) {
        const LatentLevel& level = latents.levels[k];
        const uint32_t header = NMC_HEADER_LEVELS + static_cast<uint32_t>(k) * NMC_LEVEL_WORDS;
        words[header + NMC_LEVEL_WIDTH] = static_cast<uint32_t>(level.width);
        words[header + NMC_LEVEL_HEIGHT] = static_cast<uint32_t>(level.height);
        words[header + NMC_LEVEL_BITS] = static_cast<uint32_t>(level.bits);
        words[header + NMC_LEVEL_CODES_PER_WORD_LOG2] = static_cast<uint32_t>(log2_of(32 / level.bits));
        words[header + NMC_LEVEL_CODES] = codes + static_cast<uint32_t>(offsets[k] / 4);  // 16-byte aligned
        words[header + NMC_LEVEL_VALUES] = writer.floats(latent_value_table(level, pack.network.arithmetic));
    }
    if (words.size() >= (uint64_t{1} << 30))
        return Status(StatusCode::limit_exceeded, "GPU runtime: the model buffer would be " +
                                                      std::to_string(words.size() * 4) +
                                                      " bytes; the runtime addresses under 4 GiB");
    return model;
}

}  // namespace nmc
