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
    bc1,  // RGB, 4 bits per texel
    bc4,  // one channel (R), 4 bits per texel
    bc5,  // two channels (R, G), 8 bits per texel
    bc7,  // RGBA, 8 bits per texel
};
const char* to_string(BlockFormat f);  // "bc1", ...
std::optional<BlockFormat> block_format_from_string(const std::string& s);
int block_bytes(BlockFormat f);        // bytes of one 4x4 block: 8 or 16
int channels_held(BlockFormat f);      // channels the format stores: 3, 1, 2, 4
// Formats with an sRGB variant (the colour channels decoded through the sRGB transfer function by the GPU).
bool has_srgb_variant(BlockFormat f);
// Bytes of a width x height level: one block per started 4x4 tile. Both dimensions >= 1.
size_t level_bytes(BlockFormat f, int width, int height);

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

// Encodes one level into its blocks (level_bytes() bytes, blocks in row-major order). Texels of edge tiles
// beyond the image repeat the nearest edge texel, so they cost the encoder nothing. `threads` workers, 0 for every
// core; `bc7_effort` as encode_bc7_block(). Deterministic: the result does not depend on `threads`.
std::vector<uint8_t> encode_blocks(BlockFormat f, const Rgba8Image& image, int threads = 0,
                                   Bc7Effort bc7_effort = Bc7Effort::fast);

// Decodes one level of `f` with the codecs' reference decoders, channels the format does not hold as (0, 0, 255)
// in G, B, A (BC4) and B, A (BC5). invalid_argument when `blocks` has not level_bytes(); not_recognized on a BC7
// block of the reserved mode.
Result<Rgba8Image> decode_blocks(BlockFormat f, int width, int height, const std::vector<uint8_t>& blocks);

// Mean squared error over the first `channels` channels of two images of one size, in 8-bit codes scaled to
// [0, 1] (so validate's psnr_from_mse() turns it into psnr8).
double mean_squared_error8(const Rgba8Image& a, const Rgba8Image& b, int channels);

}  // namespace nmc::texture
