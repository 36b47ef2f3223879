// Which block format holds a decoded texture (nmc decompress --format dds|ktx2 --codec), and the encoding of a
// texture's mip chain into it.
#pragma once

#include <optional>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "core/texture_layout.h"
#include "texture/astc.h"
#include "texture/block_image.h"
#include "texture/texture_file.h"

namespace nmc::texture {

// The block format of a texture: `requested`, or when none (--codec auto) BC4 for one channel, BC5 for a normal map
// stored as X and Y (normal_mode xy: the shader rebuilds Z, as nmc does) and for two channels, BC7 for the rest
// (colour, RGBA, packed maps, normal maps stored with Z); a one- or two-channel texture of sRGB colour takes BC7
// too, since BC4 and BC5 have no sRGB formats.
// An ASTC format holds every texture of 8- or 16-bit samples: sRGB colour in its sRGB variant, a normal map stored
// as X and Y as astcenc's normal maps (normal_xy).
// Refused before any work: float samples (an HDR map; backend_unavailable: BC6H and ASTC HDR are not encoded
// yet), ASTC in a build without libastcenc (backend_unavailable), and a requested format that cannot hold the
// texture (invalid_argument): more channels than it stores (a normal map in BC5 keeps X and Y), or sRGB colour in
// BC4/BC5. Messages name the texture and say what would do.
Result<BlockChoice> choose_block_format(const TextureLayout& layout, std::optional<BlockFormat> requested);

// The channels block compression is measured on: a normal map's X and Y where the format keeps only those (BC5,
// ASTC's normal-map mode), else the texture's channels up to the format's.
int compared_channels(const BlockChoice& choice, int texture_channels);

struct EncodedTexture {
    BlockTexture texture;
    // psnr8 inputs of mip 0 after block compression against the decoded texels it was made from, over the
    // channels the format keeps of the texture (X and Y of a normal map in BC5): mean squared error on [0, 1].
    double mip0_mse8 = 0;
    int compared_channels = 0;
    // BC6H: mip 0 decoded, in the source's channels (a grey source from R), for measures of values beyond [0, 1].
    std::optional<Image> mip0_decoded;
};

// Encodes `mips` (a texture's decoded mips, mip 0 first, each mip_extent() of mip 0) as `choice`, ASTC with
// `astc_effort`. `threads` as encode_blocks(). invalid_argument when the mips are not such a chain; ASTC's errors
// as encode_astc().
Result<EncodedTexture> encode_block_texture(const BlockChoice& choice, const std::vector<Image>& mips, int threads,
                                            AstcEffort astc_effort);

// --codec astc: the ASTC block size of a texture from a quality target. The largest block (fewest bits per
// texel, ASTC's 14 sizes in that order) whose block compression error on mip 0 (EncodedTexture::mip0_mse8) is at
// most `max_mse8`, found by bisection over that order (quality falls as blocks grow; each step encodes mip 0 once,
// four encodes in all). When even 4x4 misses the target, 4x4 (reached false). `choice` holds the texture's sRGB
// and normal_xy settings; its format is replaced. Errors as encode_astc().
struct AstcSizeChoice {
    BlockFormat format = BlockFormat::astc_4x4;
    double mip0_mse8 = 0;  // at that size
    bool reached = false;
};
Result<AstcSizeChoice> choose_astc_block_size(const BlockChoice& choice, const Image& mip0, double max_mse8,
                                              AstcEffort effort, int threads);

}  // namespace nmc::texture
