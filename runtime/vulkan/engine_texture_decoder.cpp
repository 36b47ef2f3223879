// EngineTextureDecoder: inference on load recorded into an engine's command buffer (runtime/vulkan/
// engine_texture_decoder.h).
#include "runtime/vulkan/engine_texture_decoder.h"

#include <algorithm>
#include <cstring>

#include "runtime/vulkan/gpu_model.h"
#include "runtime/vulkan/texture_decoding.h"
#include "runtime/vulkan/vulkan_context.h"

namespace nmc {
namespace vulkan_detail {

// The decoder's objects on the engine's device; destroyed in reverse order of creation.
struct EngineSession {
    std::unique_ptr<Context> context;
    Buffer model;
    Buffer texel_chunk;
    std::unique_ptr<ComputePipeline> pipeline;
    MaterialInfo material;
    std::vector<TextureLayout> textures;
    uint64_t chunk_texels = 0;  // texels a dispatch decodes at most (whole rows, at least one)

    EngineSession() = default;
    EngineSession(const EngineSession&) = delete;
    EngineSession& operator=(const EngineSession&) = delete;
    ~EngineSession() {
        if (!context) return;
        pipeline.reset();
        context->destroy(texel_chunk);
        context->destroy(model);
    }
};

}  // namespace vulkan_detail

Result<EngineTextureDecoder> EngineTextureDecoder::create(const Pack& pack, const EngineVulkanDevice& device,
                                                         uint64_t texel_buffer_bytes) {
    Result<GpuModel> model = build_gpu_model(pack);  // checks the pack first
    if (!model.ok()) return model.status();
    auto session = std::make_shared<vulkan_detail::EngineSession>();
    Result<std::unique_ptr<vulkan_detail::Context>> adopted =
        vulkan_detail::Context::adopt(device.get_instance_proc_addr, device.instance, device.physical_device,
                                      device.device);
    if (!adopted.ok()) return adopted.status();
    session->context = std::move(adopted).value();
    vulkan_detail::Context& context = *session->context;
    session->material = pack.material;
    session->textures = pack.textures;
    // 16 bytes a texel at most (four float32 samples); dispatches stay within 65535 workgroups of 64 invocations.
    session->chunk_texels = std::clamp<uint64_t>(texel_buffer_bytes / 16, 1, uint64_t{65535} * 64);

    const VkDeviceSize model_bytes = model->words.size() * sizeof(uint32_t);
    if (model_bytes > context.limits().maxStorageBufferRange)
        return Status(StatusCode::limit_exceeded, "the engine's Vulkan device (" + context.info().name +
                                                      "): the pack's model buffer is " + std::to_string(model_bytes) +
                                                      " bytes, beyond its storage buffer range of " +
                                                      std::to_string(context.limits().maxStorageBufferRange));
    // Written once through a mapping: the engine's queues are its own, so nothing is staged.
    NMC_RETURN_IF_ERROR(context.create_buffer(model_bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, session->model));
    std::memcpy(session->model.mapped, model->words.data(), model_bytes);
    NMC_RETURN_IF_ERROR(context.create_buffer(vulkan_detail::texel_chunk_bytes(pack.material, session->chunk_texels),
                                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0,
                                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, session->texel_chunk));
    Result<std::unique_ptr<vulkan_detail::ComputePipeline>> pipeline = vulkan_detail::create_texture_pipeline(
        context, session->model.buffer, session->texel_chunk.buffer,
        vulkan_detail::decode_constants(model->shape, model->max_width));
    if (!pipeline.ok()) return pipeline.status();
    session->pipeline = std::move(pipeline).value();
    return EngineTextureDecoder(std::move(session));
}

Result<VkFormat> EngineTextureDecoder::image_format(int texture) const {
    const vulkan_detail::EngineSession& s = *session_;
    if (texture < 0 || texture >= static_cast<int>(s.textures.size()))
        return Status(StatusCode::invalid_argument, "texture " + std::to_string(texture) + " outside 0.." +
                                                        std::to_string(s.textures.size() - 1));
    const vulkan_detail::TextureFormat format = vulkan_detail::texture_format(s.textures[static_cast<size_t>(texture)]);
    if (!s.context->format_supports(format.format, VK_FORMAT_FEATURE_TRANSFER_DST_BIT |
                                                       VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT))
        return Status(StatusCode::backend_unavailable, "the engine's Vulkan device (" + s.context->info().name +
                                                           ") cannot copy into or sample " + format.name + " images");
    return format.format;
}

Status EngineTextureDecoder::record_decode(VkCommandBuffer commands, int texture, VkImage image,
                                           VkImageLayout final_layout) const {
    Result<VkFormat> checked = image_format(texture);
    if (!checked.ok()) return checked.status();
    if (commands == VK_NULL_HANDLE || image == VK_NULL_HANDLE)
        return Status(StatusCode::invalid_argument, "record_decode: a command buffer and an image are needed");
    const vulkan_detail::EngineSession& s = *session_;
    const auto mips = static_cast<uint32_t>(s.material.mip_count);
    s.context->image_barrier(commands, image, mips, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                             VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_ACCESS_TRANSFER_WRITE_BIT);
    vulkan_detail::record_texture_decode(s.context->vk(), commands, *s.pipeline, s.texel_chunk.buffer,
                                         s.chunk_texels, image, s.material, texture,
                                         vulkan_detail::texture_format(s.textures[static_cast<size_t>(texture)]));
    s.context->image_barrier(commands, image, mips, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, final_layout,
                             VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                             VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                             VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
    return Status::success();
}

int EngineTextureDecoder::texture_count() const {
    return static_cast<int>(session_->textures.size());
}

}  // namespace nmc
