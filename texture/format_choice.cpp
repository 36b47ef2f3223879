// The --codec choice per texture and the encoding of a mip chain.
#include "texture/format_choice.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace nmc::texture {

namespace {

bool holds_color(const TextureLayout& layout) {
    return std::any_of(layout.channels.begin(), layout.channels.end(),
                       [](const ChannelSource& c) { return is_color(c.semantic); });
}

// Mip 0 of a BC6H texture decoded into the source's channels (1 to 3; a grey source, encoded as (v, v, v), from R),
// so that it compares with the source like with like.
Result<Image> decode_bc6h_mip0(const BlockTexture& t, int source_channels) {
    auto rgb = decode_bc6h_blocks(t.width, t.height, t.levels[0]);
    if (!rgb.ok() || source_channels == 3) return rgb;
    Image out(t.width, t.height, source_channels, SampleType::float16);
    for (size_t i = 0; i < out.texel_count(); ++i)
        for (int c = 0; c < source_channels; ++c)
            out.pixels[i * size_t(source_channels) + size_t(c)] = rgb->pixels[i * 3 + size_t(c)];
    return out;
}

}  // namespace

Result<BlockChoice> choose_block_format(const TextureLayout& layout, std::optional<BlockFormat> requested) {
    const std::string texture = "texture '" + layout.name + "'";
    const int channels = int(layout.channels.size());
    if (is_float(layout.sample_type)) {
        if (channels > channels_held(BlockFormat::bc6h))
            return Status(StatusCode::backend_unavailable,
                          texture + " holds " + to_string(layout.sample_type) +
                              " samples with alpha: BC6H holds RGB only and nmc does not encode ASTC HDR; --format "
                              "exr writes it");
        if (requested && *requested != BlockFormat::bc6h)
            return Status(StatusCode::invalid_argument,
                          "--codec " + std::string(to_string(*requested)) + " holds values in [0, 1]: " + texture +
                              " holds " + to_string(layout.sample_type) + " samples; bc6h holds them");
        BlockChoice choice;
        choice.format = BlockFormat::bc6h;
        return choice;
    }
    if (requested && is_astc(*requested) && !astc_in_build())
        return astc_availability().with_context(std::string("--codec ") + to_string(*requested));
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
                          "--codec " + format + " holds " + std::to_string(channels_held(choice.format)) + " channel(s): " +
                              texture + " has " + std::to_string(channels) +
                              (channels == 4 ? "; bc7 holds all four" : "; bc7 holds them"));
        if (srgb_color && !has_srgb_variant(choice.format))
            return Status(StatusCode::invalid_argument, "--codec " + format + " has no sRGB format: " + texture +
                                                            " holds sRGB colour; bc1 or bc7 keep it");
    }
    choice.srgb = srgb_color && has_srgb_variant(choice.format);
    choice.normal_xy = is_astc(choice.format) && normal_xy;
    return choice;
}

int compared_channels(const BlockChoice& choice, int texture_channels) {
    return std::min(texture_channels, choice.normal_xy ? 2 : channels_held(choice.format));
}

Result<EncodedTexture> encode_block_texture(const BlockChoice& choice, const std::vector<Image>& mips, int threads,
                                            AstcEffort astc_effort) {
    EncodedTexture out;
    BlockTexture& t = out.texture;
    if (choice.format == BlockFormat::bc6h) {
        // BC6H_UF16 holds no negative value: refused rather than clamped to 0.
        for (const Image& mip : mips)
            for (float v : mip.pixels)
                if (!(v >= 0))
                    return Status(StatusCode::backend_unavailable,
                                  "holds a negative value (" + std::to_string(v) +
                                      ") that BC6H_UF16 cannot hold; nmc does not encode BC6H_SF16 yet; --format "
                                      "exr keeps it");
    }
    t.format = choice.format;
    t.srgb = choice.srgb;
    if (mips.empty()) return Status(StatusCode::invalid_argument, "no mip to encode");
    t.width = mips[0].width;
    t.height = mips[0].height;
    std::vector<Rgba8Image> levels;
    for (size_t m = 0; m < mips.size(); ++m) {
        if (mips[m].width != mip_extent(t.width, int(m)) || mips[m].height != mip_extent(t.height, int(m)))
            return Status(StatusCode::invalid_argument,
                          "mip " + std::to_string(m) + ": expected " + std::to_string(mip_extent(t.width, int(m))) + "x" +
                              std::to_string(mip_extent(t.height, int(m))) + ", got " + std::to_string(mips[m].width) +
                              "x" + std::to_string(mips[m].height));
        levels.push_back(to_rgba8(mips[m]));
    }
    if (is_astc(t.format)) {
        auto blocks = encode_astc(choice, astc_effort, levels, threads);
        if (!blocks.ok()) return blocks.status();
        t.levels = std::move(blocks).value();
    } else if (t.format == BlockFormat::bc6h) {
        for (const Image& mip : mips) t.levels.push_back(encode_bc6h_blocks(mip, threads));
    } else {
        for (const Rgba8Image& level : levels) t.levels.push_back(encode_blocks(t.format, level, threads));
    }
    if (t.format == BlockFormat::bc6h) {
        auto mip0 = decode_bc6h_mip0(t, mips[0].channels);
        if (!mip0.ok()) return mip0.status();
        out.mip0_decoded = std::move(mip0).value();
    }
    auto decoded = t.format == BlockFormat::bc6h ? Result<Rgba8Image>(to_rgba8(*out.mip0_decoded))
                   : is_astc(t.format)           ? decode_astc(choice, t.width, t.height, t.levels[0])
                                                 : decode_blocks(t.format, t.width, t.height, t.levels[0]);
    if (!decoded.ok()) return decoded.status();
    out.compared_channels = compared_channels(choice, mips[0].channels);
    out.mip0_mse8 = mean_squared_error8(levels[0], *decoded, out.compared_channels);
    return out;
}

Result<AstcSizeChoice> choose_astc_block_size(const BlockChoice& choice, const Image& mip0, double max_mse8,
                                              AstcEffort effort, int threads) {
    std::vector<BlockFormat> sizes;  // most bits per texel first
    for (BlockFormat f : all_block_formats())
        if (is_astc(f)) sizes.push_back(f);
    std::stable_sort(sizes.begin(), sizes.end(),
                     [](BlockFormat a, BlockFormat b) { return bits_per_texel(a) > bits_per_texel(b); });
    const Rgba8Image texels = to_rgba8(mip0);
    const int channels = compared_channels(choice, mip0.channels);
    // The error of mip 0 at sizes[i], each measured once.
    std::vector<double> mse(sizes.size(), std::nan(""));
    const auto measure = [&](size_t i) -> Status {
        if (!std::isnan(mse[i])) return Status::success();
        BlockChoice c = choice;
        c.format = sizes[i];
        auto blocks = encode_astc(c, effort, {texels}, threads);
        if (!blocks.ok()) return blocks.status();
        auto decoded = decode_astc(c, texels.width, texels.height, (*blocks)[0]);
        if (!decoded.ok()) return decoded.status();
        mse[i] = mean_squared_error8(texels, *decoded, channels);
        return Status::success();
    };
    // Bisection for the last size that reaches the target: sizes[good] reaches it (or good = -1), sizes[bad] not.
    long good = -1, bad = long(sizes.size());
    while (bad - good > 1) {
        const long mid = (good + bad) / 2;
        NMC_RETURN_IF_ERROR(measure(size_t(mid)));
        (mse[size_t(mid)] <= max_mse8 ? good : bad) = mid;
    }
    AstcSizeChoice out;
    out.reached = good >= 0;
    const size_t chosen = out.reached ? size_t(good) : 0;
    NMC_RETURN_IF_ERROR(measure(chosen));
    out.format = sizes[chosen];
    out.mip0_mse8 = mse[chosen];
    return out;
}

}  // namespace nmc::texture
