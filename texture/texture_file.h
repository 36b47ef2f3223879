// Engine texture files: a block-compressed texture with its mip chain, written as DDS (with the DX10 header) or
// KTX2 (Khronos KTX 2.0: level index and data format descriptor, no supercompression or zstd), field by field and
// little-endian, and read back with every field checked (the tests' reader, and a check of what was written).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "texture/block_image.h"

namespace nmc::texture {

// A 2D texture of one block format with mips 0..levels.size()-1.
struct BlockTexture {
    BlockFormat format = BlockFormat::bc7;
    bool srgb = false;  // colour decoded through the sRGB transfer function (bc1, bc7 and ASTC have such formats)
    int width = 0;      // of mip 0, >= 1
    int height = 0;
    std::vector<std::vector<uint8_t>> levels;  // mip m: level_bytes(format, mip_extent(width, m), ...(height, m))
};

// Extent of mip `m` of a dimension: max(1, extent >> m).
int mip_extent(int extent, int m);

enum class ContainerFormat { dds, ktx2 };
const char* to_string(ContainerFormat c);  // "dds", "ktx2": also the file extension
std::optional<ContainerFormat> container_format_from_string(const std::string& s);

// KTX2's supercompression of the levels (KTX 2.0 section 3.10): none, or each level one zstd frame (scheme 2).
enum class Supercompression { none, zstd };
const char* to_string(Supercompression s);  // "none", "zstd"
std::optional<Supercompression> supercompression_from_string(const std::string& s);

// What a container cannot hold, said before any work: ASTC or supercompression in DDS (invalid_argument, naming
// what would do).
Status check_container(ContainerFormat c, BlockFormat f, Supercompression s);

// The DXGI format (DDS; 0 for ASTC, which DXGI lacks) and the Vulkan format (KTX2) of a block format, sRGB or not.
uint32_t dxgi_format(BlockFormat f, bool srgb);
uint32_t vk_format(BlockFormat f, bool srgb);

// The file's bytes. invalid_argument when check_container() refuses, or when `texture` is inconsistent: no level,
// more levels than the full chain, a level of the wrong size, sRGB asked of a format without an sRGB variant, a
// dimension of 0 or above 65536.
Result<std::vector<uint8_t>> encode_texture_file(ContainerFormat c, const BlockTexture& texture,
                                                 Supercompression s = Supercompression::none);

// Parses a file encode_texture_file() could have written, and only such a file: every header byte must be the
// one nmc writes for the texture it describes. not_recognized: not a DDS / KTX2 file, or a format other than
// nmc's BC1/BC4/BC5/BC6H (UF16)/BC7 (DDS) and those and ASTC LDR (KTX2); corrupt: truncated, trailing bytes, a field
// out of range or inconsistent (sizes, offsets, the data format descriptor against vkFormat), a zstd frame that is not
// one frame of the level's size. Messages say which field, expected and got.
Result<BlockTexture> decode_texture_file(ContainerFormat c, const std::vector<uint8_t>& bytes);

// encode_texture_file() written to `path` atomically (write_file_atomically: a temporary file renamed into
// place). io_error naming `path`; refuses to replace an existing file unless `overwrite`.
Status write_texture_file(const std::string& path, ContainerFormat c, const BlockTexture& texture, Supercompression s,
                          bool overwrite);

}  // namespace nmc::texture
