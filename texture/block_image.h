// Whole images in GPU block-compressed formats: the formats nmc writes, their sizes, and encoding / decoding of a
// mip level through the block codecs (texture/block_codecs.h), spread over threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "texture/block_codecs.h"

namespace nmc::texture {

enum class BlockFormat {
    bc1,   // RGB, 4 bits per texel
    bc4,   // one channel (R), 4 bits per texel
    bc5,   // two channels (R, G), 8 bits per texel
    bc6h,  // RGB half floats, unsigned (BC6H_UF16), 8 bits per texel
    bc7,   // RGBA, 8 bits per texel
    // ASTC LDR (RGBA), 128 bits per block of W x H texels: 8 bits per texel at 4x4 down to 0.89 at 12x12. Every 2D
    // block size of the specification, in its order (the order of the Vulkan formats too).
    astc_4x4,
    astc_5x4,
    astc_5x5,
    astc_6x5,
    astc_6x6,
    astc_8x5,
    astc_8x6,
    astc_8x8,
    astc_10x5,
    astc_10x6,
    astc_10x8,
    astc_10x10,
    astc_12x10,
    astc_12x12,
};
const char* to_string(BlockFormat f);  // "bc1", ..., "astc-4x4", ...: the --codec names
std::optional<BlockFormat> block_format_from_string(const std::string& s);
const std::vector<BlockFormat>& all_block_formats();  // in the enum's order
bool is_astc(BlockFormat f);
int block_width(BlockFormat f);        // texels of one block: 4 for BCn, 4..12 for ASTC
int block_height(BlockFormat f);
int block_bytes(BlockFormat f);        // bytes of one block: 8 or 16
int channels_held(BlockFormat f);      // channels the format stores: 3, 1, 2, 3, 4 (ASTC: 4)
double bits_per_texel(BlockFormat f);  // block_bytes * 8 / block texels
// Formats with an sRGB variant (the colour channels decoded through the sRGB transfer function by the GPU).
bool has_srgb_variant(BlockFormat f);
// Bytes of a width x height level: one block per started block_width x block_height tile. Both dimensions >= 1.
size_t level_bytes(BlockFormat f, int width, int height);

// How a texture's texels go into a block format.
struct BlockChoice {
    BlockFormat format = BlockFormat::bc7;
    bool srgb = false;  // the sRGB variant: the texture's colour space is sRGB and it holds colour (is_color())
    // ASTC: a normal map stored as X and Y, encoded as astcenc's normal maps are (X in R, G and B, Y in alpha; the
    // shader reads .ga and rebuilds Z), so the encoder spends its bits on the two channels the shader reads.
    bool normal_xy = false;
};

// An image of 8-bit RGBA texels, the block codecs' input and the decoders' output.
struct Rgba8Image {
    int width = 0;
    int height = 0;
    std::vector<uint8_t> texels;  // (y * width + x) * 4 + c
    bool alpha_held = true;       // false: the source has no alpha, A is 255 filled in (BC7 may decode it as 254)
};

// Quantises a decoded texture to 8 bits (spec 8.10: floor(clamp(v, 0, 1) * 255 + 0.5)) and spreads its channels
// over RGBA: 1 channel as grey (v, v, v, 1), 2 as (x, y, 0, 1), 3 as (r, g, b, 1), 4 as they are. So BC4 takes
// the first channel, BC5 the first two (a normal map's X and Y), BC1 RGB and BC7 everything; alpha_held is
// whether there are 4 channels.
Rgba8Image to_rgba8(const Image& image);

// BC6H levels, from and to float texels: `image`'s first three channels (one channel as grey, two as (x, y, 0)),
// values as encode_bc6h_block() takes them; edge tiles and threads as encode_blocks(). The decoder gives 3
// channels of float32 (the half floats' values); invalid_argument when `blocks` has not level_bytes().
std::vector<uint8_t> encode_bc6h_blocks(const Image& image, int threads = 0);
Result<Image> decode_bc6h_blocks(int width, int height, const std::vector<uint8_t>& blocks);

// Encodes one level of an 8-bit BCn format into its blocks (level_bytes() bytes, blocks in row-major order). Texels of
// edge tiles beyond the image repeat the nearest edge texel, so they cost the encoder nothing. `threads` workers, 0 for
// every core; `bc7_effort` as encode_bc7_block(). Deterministic: the result does not depend on `threads`.
std::vector<uint8_t> encode_blocks(BlockFormat f, const Rgba8Image& image, int threads = 0,
                                   Bc7Effort bc7_effort = Bc7Effort::fast);

// Decodes one level of an 8-bit BCn format `f` (not BC6H) with the codecs' reference decoders, channels the format does
// not hold as (0, 0, 255) in G, B, A (BC4) and B, A (BC5). invalid_argument when `blocks` has not level_bytes();
// not_recognized on a BC7 block of the reserved mode. ASTC levels go through texture/astc.h (their decoding depends on
// the sRGB profile).
Result<Rgba8Image> decode_blocks(BlockFormat f, int width, int height, const std::vector<uint8_t>& blocks);

// Mean squared error over the first `channels` channels of two images of one size, in 8-bit codes scaled to
// [0, 1] (so validate's psnr_from_mse() turns it into psnr8).
double mean_squared_error8(const Rgba8Image& a, const Rgba8Image& b, int channels);

}  // namespace nmc::texture
