// Inference on load's commands (runtime/vulkan/texture_decoding.h).
#include "runtime/vulkan/texture_decoding.h"

#include <algorithm>

// SPIR-V compiled from runtime/vulkan/shaders at build time (runtime/vulkan/CMakeLists.txt).
#include "runtime/vulkan/spirv/decode_texture.h"

namespace nmc::vulkan_detail {

Result<std::unique_ptr<ComputePipeline>> create_texture_pipeline(Context& context, VkBuffer model, VkBuffer texel_chunk,
                                                                const std::vector<SpecializationConstant>& constants) {
    return ComputePipeline::create(context, nmc_spirv_decode_texture, sizeof(nmc_spirv_decode_texture),
                                   {model, texel_chunk}, constants, sizeof(TexturePushConstants));
}

TextureFormat texture_format(const TextureLayout& texture) {
    const int samples = texture.channels.size() == 3 ? 4 : static_cast<int>(texture.channels.size());
    const int row = samples == 1 ? 0 : (samples == 2 ? 1 : 2);
    switch (texture.sample_type) {
        case SampleType::uint8:
            if (texture.color_space == ColorSpace::srgb) {
                const TextureFormat srgb[3] = {{VK_FORMAT_R8_SRGB, "R8_SRGB", 1, 1},
                                               {VK_FORMAT_R8G8_SRGB, "R8G8_SRGB", 2, 1},
                                               {VK_FORMAT_R8G8B8A8_SRGB, "R8G8B8A8_SRGB", 4, 1}};
                return srgb[row];
            } else {
                const TextureFormat unorm[3] = {{VK_FORMAT_R8_UNORM, "R8_UNORM", 1, 1},
                                                {VK_FORMAT_R8G8_UNORM, "R8G8_UNORM", 2, 1},
                                                {VK_FORMAT_R8G8B8A8_UNORM, "R8G8B8A8_UNORM", 4, 1}};
                return unorm[row];
            }
        case SampleType::uint16: {
            const TextureFormat unorm16[3] = {{VK_FORMAT_R16_UNORM, "R16_UNORM", 1, 2},
                                              {VK_FORMAT_R16G16_UNORM, "R16G16_UNORM", 2, 2},
                                              {VK_FORMAT_R16G16B16A16_UNORM, "R16G16B16A16_UNORM", 4, 2}};
            return unorm16[row];
        }
        case SampleType::float16: {
            const TextureFormat half[3] = {{VK_FORMAT_R16_SFLOAT, "R16_SFLOAT", 1, 2},
                                           {VK_FORMAT_R16G16_SFLOAT, "R16G16_SFLOAT", 2, 2},
                                           {VK_FORMAT_R16G16B16A16_SFLOAT, "R16G16B16A16_SFLOAT", 4, 2}};
            return half[row];
        }
        case SampleType::float32:
            break;
    }
    const TextureFormat single[3] = {{VK_FORMAT_R32_SFLOAT, "R32_SFLOAT", 1, 4},
                                     {VK_FORMAT_R32G32_SFLOAT, "R32G32_SFLOAT", 2, 4},
                                     {VK_FORMAT_R32G32B32A32_SFLOAT, "R32G32B32A32_SFLOAT", 4, 4}};
    return single[row];
}

int texture_chunk_rows(const MaterialInfo& material, int mip, uint64_t chunk_texels) {
    const auto w = static_cast<uint64_t>(material.mip_width(mip));
    return static_cast<int>(std::clamp<uint64_t>(chunk_texels / w, 1, static_cast<uint64_t>(material.mip_height(mip))));
}

uint64_t texel_chunk_bytes(const MaterialInfo& material, uint64_t chunk_texels) {
    uint64_t most = 0;
    for (int m = 0; m < material.mip_count; ++m)
        most = std::max<uint64_t>(most, static_cast<uint64_t>(texture_chunk_rows(material, m, chunk_texels)) *
                                            static_cast<uint64_t>(material.mip_width(m)));
    return most * 16;
}

void record_texture_decode(const DeviceFunctions& vk, VkCommandBuffer commands, const ComputePipeline& pipeline,
                           VkBuffer texel_chunk, uint64_t chunk_texels, VkImage image, const MaterialInfo& material,
                           int texture, const TextureFormat& format) {
    const uint64_t texel_bytes = static_cast<uint64_t>(format.samples) * static_cast<uint64_t>(format.sample_bytes);
    const uint64_t per_invocation = texel_bytes < 4 ? 4 / texel_bytes : 1;  // whole words an invocation
    bool first_chunk = true;
    for (int m = 0; m < material.mip_count; ++m) {
        const auto w = static_cast<uint64_t>(material.mip_width(m));
        const int h = material.mip_height(m);
        const int rows_per_chunk = texture_chunk_rows(material, m, chunk_texels);
        for (int first = 0; first < h; first += rows_per_chunk) {
            const int rows = std::min(rows_per_chunk, h - first);
            if (!first_chunk) {  // the previous chunk's copy has read the texel buffer
                auto reuse = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
                reuse.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
                reuse.dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
                vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                        0, 1, &reuse, 0, nullptr, 0, nullptr);
            }
            first_chunk = false;
            const uint64_t texels = w * static_cast<uint64_t>(rows);
            const TexturePushConstants push{static_cast<uint32_t>(m), static_cast<uint32_t>(texture),
                                            static_cast<uint32_t>(first), static_cast<uint32_t>(rows)};
            pipeline.record_dispatch(commands, &push,
                                     static_cast<uint32_t>((texels + per_invocation * 64 - 1) / (per_invocation * 64)));
            auto written = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
            written.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
            written.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
            vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                                    1, &written, 0, nullptr, 0, nullptr);
            VkBufferImageCopy region{};
            region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, static_cast<uint32_t>(m), 0, 1};
            region.imageOffset = {0, first, 0};
            region.imageExtent = {static_cast<uint32_t>(w), static_cast<uint32_t>(rows), 1};
            vk.vkCmdCopyBufferToImage(commands, texel_chunk, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        }
    }
}

}  // namespace nmc::vulkan_detail
