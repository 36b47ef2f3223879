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

// BC7 (16 bytes): RGBA in any of the format's eight modes. The encoder tries every mode (the partitioned ones on
// their best-ranked partitions, modes 4 and 5 under every rotation and index selection), keeps the candidates
// of least squared RGBA error and polishes them; `thorough` ranks and polishes more, at about a third of the
// speed. Without `alpha_held` (an image without alpha, given as 255) mode 6 spends nothing on alpha, which then
// decodes as 254 or 255 there. The decoder reads every mode; it fails (returns false, texels zeroed) only on the
// reserved mode, first byte 0.
enum class Bc7Effort { fast, thorough };
void encode_bc7_block(const uint8_t rgba[kBlockTexels * 4], uint8_t block[16], Bc7Effort effort, bool alpha_held);
// The fast encoding in mode `mode` (0..7) alone, so the tests round-trip every mode.
void encode_bc7_block_in_mode(const uint8_t rgba[kBlockTexels * 4], uint8_t block[16], int mode);
bool decode_bc7_block(const uint8_t block[16], uint8_t rgba[kBlockTexels * 4]);

// BC6H (16 bytes): RGB half floats, unsigned (BC6H_UF16) or signed (BC6H_SF16). The encoder writes UF16 in any of its
// fourteen modes, fitting the texels' half-float bit patterns (close to their logarithm); `rgb` is 16 texels x 3
// floats, negatives and NaN taken as 0 and values above 65504 as 65504. The decoder reads every mode of either
// type into half-float bit patterns; it fails (returns false, texels zeroed) only on the reserved modes (first
// five bits 19, 23, 27 or 31).
enum class Bc6hType { uf16, sf16 };
void encode_bc6h_block(const float rgb[kBlockTexels * 3], uint8_t block[16]);
bool decode_bc6h_block(const uint8_t block[16], uint16_t rgb[kBlockTexels * 3], Bc6hType type);

}  // namespace nmc::texture
