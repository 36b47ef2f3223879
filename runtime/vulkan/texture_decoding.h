// Inference on load, shared by VulkanDecoder (its own device) and EngineTextureDecoder (an engine's): the image format
// of a texture as decode_texture.comp lays out its texels, and the commands that decode every mip of it into an image.
// Internal to runtime/vulkan.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/texture_layout.h"
#include "format/pack.h"
#include "runtime/vulkan/vulkan_context.h"

namespace nmc::vulkan_detail {

// decode_texture.comp's push constants.
struct TexturePushConstants {
    uint32_t mip;
    uint32_t texture;
    uint32_t first_row;
    uint32_t row_count;
};

// The image format of a texture (decode_texture.comp's texel layout) and its name.
struct TextureFormat {
    VkFormat format;
    const char* name;
    int samples;
    int sample_bytes;
};

TextureFormat texture_format(const TextureLayout& texture);

// decode_texture.comp's pipeline on `context`: binding 0 the model buffer, 1 the texel buffer; `constants` as
// decode_constants() gives them.
Result<std::unique_ptr<ComputePipeline>> create_texture_pipeline(Context& context, VkBuffer model, VkBuffer texel_chunk,
                                                                const std::vector<SpecializationConstant>& constants);

// Rows of mip `mip` in one chunk of record_texture_decode: as many whole rows as `chunk_texels` holds, at least one.
int texture_chunk_rows(const MaterialInfo& material, int mip, uint64_t chunk_texels);
// The bytes of the texel buffer record_texture_decode needs for chunks of `chunk_texels` texels: the largest chunk's
// texels, four samples of four bytes each at most, in whole words.
uint64_t texel_chunk_bytes(const MaterialInfo& material, uint64_t chunk_texels);

// Records into `commands` the decoding of every mip of texture `texture` into `image` (every mip in
// TRANSFER_DST_OPTIMAL layout, the material's size and mip count, the texture's format): per chunk of whole rows of
// at most `chunk_texels` texels, a dispatch of decode_texture.comp (`pipeline`, bound to the model buffer and
// `texel_chunk`) and a copy of the chunk into its rows. Consecutive chunks share `texel_chunk`: barriers order each
// copy before the next dispatch's writes. `format` is texture_format(the texture).
void record_texture_decode(const DeviceFunctions& vk, VkCommandBuffer commands, const ComputePipeline& pipeline,
                           VkBuffer texel_chunk, uint64_t chunk_texels, VkImage image, const MaterialInfo& material,
                           int texture, const TextureFormat& format);

}  // namespace nmc::vulkan_detail
