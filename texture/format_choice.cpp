// The --bc choice per texture and the encoding of a mip chain.
#include "texture/format_choice.h"

#include <algorithm>
#include <string>

namespace nmc::texture {

namespace {

bool holds_color(const TextureLayout& layout) {
    return std::any_of(layout.channels.begin(), layout.channels.end(),
                       [](const ChannelSource& c) { return is_color(c.semantic); });
}

}  // namespace

Result<BlockChoice> choose_block_format(const TextureLayout& layout, std::optional<BlockFormat> requested) {
    const std::string texture = "texture '" + layout.name + "'";
    if (is_float(layout.sample_type))
        return Status(StatusCode::backend_unavailable,
                      texture + " holds " + to_string(layout.sample_type) +
                          " samples (values outside [0, 1] kept): that needs BC6H, which nmc does not encode yet; "
                          "--format exr writes it");
    const int channels = int(layout.channels.size());
    const bool srgb_color = layout.color_space == ColorSpace::srgb && holds_color(layout);
    const bool normal_xy = layout.holds_normals() && layout.normal_mode == NormalMode::xy;
    BlockChoice choice;
    if (!requested) {
        choice.format = srgb_color || channels > 2 ? (normal_xy ? BlockFormat::bc5 : BlockFormat::bc7)
                        : channels == 1         ? BlockFormat::bc4
                                                : BlockFormat::bc5;
    } else {
        choice.format = *requested;
        const std::string format = to_string(choice.format);
        const bool normal_in_bc5 = choice.format == BlockFormat::bc5 && layout.holds_normals();
        if (channels > channels_held(choice.format) && !normal_in_bc5)
            return Status(StatusCode::invalid_argument,
                          "--bc " + format + " holds " + std::to_string(channels_held(choice.format)) + " channel(s): " +
                              texture + " has " + std::to_string(channels) +
                              (channels == 4 ? "; bc7 holds all four" : "; bc7 holds them"));
        if (srgb_color && !has_srgb_variant(choice.format))
            return Status(StatusCode::invalid_argument, "--bc " + format + " has no sRGB format: " + texture +
                                                            " holds sRGB colour; bc1 or bc7 keep it");
    }
    choice.srgb = srgb_color && has_srgb_variant(choice.format);
    return choice;
}

Result<EncodedTexture> encode_block_texture(const BlockChoice& choice, const std::vector<Image>& mips, int threads) {
    EncodedTexture out;
    BlockTexture& t = out.texture;
    t.format = choice.format;
    t.srgb = choice.srgb;
    if (mips.empty()) return Status(StatusCode::invalid_argument, "no mip to encode");
    t.width = mips[0].width;
    t.height = mips[0].height;
    for (size_t m = 0; m < mips.size(); ++m) {
        if (mips[m].width != mip_extent(t.width, int(m)) || mips[m].height != mip_extent(t.height, int(m)))
            return Status(StatusCode::invalid_argument,
                          "mip " + std::to_string(m) + ": expected " + std::to_string(mip_extent(t.width, int(m))) + "x" +
                              std::to_string(mip_extent(t.height, int(m))) + ", got " + std::to_string(mips[m].width) +
                              "x" + std::to_string(mips[m].height));
        const Rgba8Image texels = to_rgba8(mips[m]);
        t.levels.push_back(encode_blocks(t.format, texels, threads));
        if (m == 0) {
            out.compared_channels = std::min(mips[0].channels, channels_held(t.format));
            auto decoded = decode_blocks(t.format, t.width, t.height, t.levels[0]);
            if (!decoded.ok()) return decoded.status();
            out.mip0_mse8 = mean_squared_error8(texels, *decoded, out.compared_channels);
        }
    }
    return out;
}

}  // namespace nmc::texture
