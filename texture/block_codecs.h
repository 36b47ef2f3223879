// The block codecs, one 4x4 block at a time: encoders that search each block's endpoints for the least squared
// error, and decoders (as the Direct3D 11 functional specification decodes them) that the tests and quality
// figures use. Blocks hold texels in row-major order; pure functions, safe to call from any thread.
#pragma once

#include <cstdint>

namespace nmc::texture {

constexpr int kBlockTexels = 16;  // 4 x 4

// BC4 (8 bytes): one channel. `values` are the block's 16 samples.
void encode_bc4_block(const uint8_t values[kBlockTexels], uint8_t block[8]);
void decode_bc4_block(const uint8_t block[8], uint8_t values[kBlockTexels]);

// BC1 (8 bytes): RGB, opaque. `rgba` is 16 texels x 4 bytes; alpha is ignored by the encoder. The decoder
// follows DXGI: the three-colour mode's fourth entry is black with alpha 0 (the encoder never uses it), every
// other texel has alpha 255.
void encode_bc1_block(const uint8_t rgba[kBlockTexels * 4], uint8_t block[8]);
void decode_bc1_block(const uint8_t block[8], uint8_t rgba[kBlockTexels * 4]);

// BC7 (16 bytes): RGBA. The encoder writes mode 6 (one subset, RGBA endpoints of 7 bits and a p-bit each, 4-bit
// indices); the decoder reads mode 6 and fails (returns false, texels zeroed) on the modes the encoder never
// writes, so a test cannot mistake one for another.
void encode_bc7_block(const uint8_t rgba[kBlockTexels * 4], uint8_t block[16]);
bool decode_bc7_block(const uint8_t block[16], uint8_t rgba[kBlockTexels * 4]);

}  // namespace nmc::texture
