// Inference on load inside an engine's own Vulkan device (docs/runtime.md, "Inference on load in the engine's
// device"): nmc records the decoding of a pack's textures into the engine's command buffer, into images the engine
// created, so the textures never leave the GPU and the engine samples them as ordinary images.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "format/pack.h"

namespace nmc {
namespace vulkan_detail {
struct EngineSession;
}

// The engine's Vulkan objects (Vulkan 1.1 or newer). nmc enables nothing on the device and keeps none of them alive:
// they must outlive the decoder.
struct EngineVulkanDevice {
    PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;  // the engine's loader entry point
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
};

// One pack's textures on an engine's device. Holds the model buffer (host-visible memory, device-local where the
// device has such), a texel buffer and the decode_texture.comp pipeline; record_decode only records, so one decoder
// serves any number of command buffers, but the commands must have run before it is destroyed.
class EngineTextureDecoder {
public:
    // Checks the pack (format's check_pack: a pack that breaks a rule never reaches the GPU) and creates the buffers
    // and the pipeline on the engine's device. invalid_argument for a broken pack or missing handles;
    // backend_unavailable below Vulkan 1.1; io_error where the device cannot allocate; limit_exceeded beyond the
    // device's storage buffer range.
    // `texel_buffer_bytes` bounds the device memory decoded texels pass through (chunks of whole rows; at least one
    // row of 16-byte texels of mip 0 is always held).
    static Result<EngineTextureDecoder> create(const Pack& pack, const EngineVulkanDevice& device,
                                               uint64_t texel_buffer_bytes = uint64_t{16} << 20);

    // The format of texture `texture`'s image (index into pack.textures), as VulkanDecoder::decode_texture_image
    // documents them: R, RG or RGBA (RGB gains alpha 1) of 8-bit UNORM or SRGB, 16-bit UNORM, 16- or 32-bit float.
    // The engine creates the image: 2D, the pack's width, height and mip count, this format, optimal tiling, usage
    // TRANSFER_DST plus its own (SAMPLED). invalid_argument for a texture index out of range; backend_unavailable
    // where the device cannot copy into or sample this format.
    Result<VkFormat> image_format(int texture) const;

    // Records into `commands` (recording, on a queue with compute): `image` from UNDEFINED to TRANSFER_DST_OPTIMAL,
    // every mip decoded (spec 8.1-8.10, the scalar path: the values VulkanDecoder::decode_texture_image gives) and
    // copied in, then every mip to `final_layout` (e.g. SHADER_READ_ONLY_OPTIMAL), visible to shader reads and
    // transfers that follow. Nothing runs until the engine submits.
    Status record_decode(VkCommandBuffer commands, int texture, VkImage image, VkImageLayout final_layout) const;

    int texture_count() const;

private:
    explicit EngineTextureDecoder(std::shared_ptr<vulkan_detail::EngineSession> session)
        : session_(std::move(session)) {}
    std::shared_ptr<vulkan_detail::EngineSession> session_;
};

}  // namespace nmc
